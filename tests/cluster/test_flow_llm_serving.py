"""The llm_serving flow end to end on kubesim (OpenShift profile): RHOAI with KServe, the GPU operator and the
model on a PVC prepared, then each point of the matrix deploys the model with its deployment factors, validates
it, loads it with the LLM load harness (the InferenceService's URL points at a local OpenAI-compatible server),
captures its state and undeploys it; a point whose runtime crashes fails alone and is still undeployed; the
llm_load workload's KPIs carry the deployment factors. With the llm_serving_prometheus preset, each point marks
the cluster's Prometheus before its load and queries it after (the Prometheus pod of openshift-monitoring is a
real Debian prometheus on 127.0.0.1, reached through kubesim's pod proxy): the prom workload's KPIs carry the
point's factors too and are stored as kind prom."""

import contextlib
import glob
import json
import os
import sqlite3
import sys
import time

from conftest import read
from fake_openai import FakeServerThread

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from prometheus_server import INSTALLED, running  # noqa: E402

MODEL = "granite-3.1-8b-instruct"
BROKEN_RUNTIME = "quay.io/modh/vllm:broken"


@contextlib.contextmanager
def cluster_prometheus(kube, base):
    """The Prometheus pod of openshift-monitoring, served by a local prometheus (None when it is not installed)."""
    if not INSTALLED:
        yield None
        return
    base.mkdir()
    with running(base) as prometheus:
        kube.dynamic.resources.get(api_version="v1", kind="Pod").create(namespace="openshift-monitoring", body={
            "metadata": {"name": "prometheus-k8s-0", "labels": {"app.kubernetes.io/component": "prometheus"}},
            "spec": {"containers": [{"name": "prometheus", "image": "quay.io/prometheus/prometheus:v2.42.0",
                                     "ports": [{"name": "web", "containerPort": prometheus["port"]}]}]}})
        deadline = time.monotonic() + 30
        while (kube.get("Pod", "prometheus-k8s-0", "openshift-monitoring").get("status") or {}).get("phase") != "Running":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        yield prometheus


def test_the_llm_serving_flow_deploys_loads_and_undeploys_each_point(playbook, sim, kube, tmp_path):
    sim.image_behaviours.add(BROKEN_RUNTIME, log="RuntimeError: CUDA error: no kernel image is available",
                             outcome="CrashLoopBackOff", **{"exit-code": "1", "duration-s": "1"})
    overrides = {"tests.llm_serving.benchmark.matrix": {
        "factors": {"replicas": [2], "rate": [10]}, "common_settings": {},
        "include": [{"replicas": 3, "rate": 10, "runtime_image": BROKEN_RUNTIME}],
        "exclude": []}}
    queries = tmp_path / "queries.yml"
    queries.write_text("gpu_utilization: {query: perfscale_test_gpu_utilization, unit: '%'}\n")
    with cluster_prometheus(kube, tmp_path / "prometheus") as prometheus, \
            FakeServerThread(ttft=0.002, itl=0.001, model=MODEL) as server:
        presets = "llm_serving_smoke" + (",llm_serving_prometheus" if prometheus else "")
        if prometheus:
            overrides.update({"prometheus.promquery_file": str(queries), "prometheus.port": "web",
                              "prometheus.step_s": 1, "export.sqlite.path": str(tmp_path / "results.sqlite")})
        sim.settings.inference_url = server.url
        try:
            run = playbook("playbooks/llm_serving.yml", "-e", "preset=%s" % presets,
                           "-e", json.dumps({"overrides": overrides}), "-e", "artifact_dir=%s" % tmp_path, timeout=900)
        finally:
            sim.settings.inference_url = None
    assert run.returncode != 0
    assert "1 point(s) failed: r3_rate10" in run.flat, run.output[-3000:]
    flow = read(tmp_path, "flow.json")
    assert flow["outcomes"] == {"cleanup_before": "ok", "prepare": "ok", "test": "ok", "cleanup_after": "ok"}, flow

    points = sorted(glob.glob(str(tmp_path / "*__llm_serving" / "*__r*")))
    assert [os.path.basename(p)[5:] for p in points] == ["r2_rate10", "r3_rate10"]
    # a point: deploy, validate, load, capture, then undeploy - each command in its directory
    commands = [d[5:] for d in sorted(os.listdir(points[0])) if d[:3].isdigit()]
    prometheus_steps = ["cluster__reset_prometheus_db", "llm_load__run_llm_serving", "cluster__query_prometheus_db"]
    assert commands == ["kserve__deploy_model_llm_serving", "kserve__validate_model_llm_serving"] + (
        prometheus_steps if prometheus else ["llm_load__run_llm_serving"]) + [
        "kserve__capture_state_llm_serving", "kserve__undeploy_model_llm_serving"], commands
    deployed = read(glob.glob(os.path.join(points[0], "*__kserve__deploy_model_llm_serving"))[0], "_params.yaml")
    assert "inference_service_min_replicas: 2" in deployed
    output = read(points[0], "output.json")
    assert output["@result"]["completed_requests"] > 0 and output["@parameters"]["model"] == MODEL
    assert output["@parameters"]["url"] == server.url

    # the broken runtime: its point failed at the deployment, and was undeployed all the same
    failure = " ".join(read(points[1], "FAILURE").split())
    assert "kserve__deploy_model_llm_serving" in failure, failure
    assert os.path.isdir(glob.glob(os.path.join(points[1], "*__kserve__undeploy_model_llm_serving"))[0])
    assert not glob.glob(os.path.join(points[1], "*__llm_load__run_llm_serving"))

    # the llm_load workload: a KPI payload per successful point, labelled with its deployment factors
    plots = sorted(glob.glob(str(tmp_path / "*__plots")))[-1]
    payloads = [p for p in read(plots, "kpis.json") if p["kpis"]["output_token_throughput"]["value"] is not None]
    assert [p["labels"]["replicas"] for p in payloads] == [2]
    assert all(p["labels"]["model"] == MODEL and p["labels"]["rate"] == 10 for p in payloads)
    assert os.path.exists(os.path.join(plots, "llm_load_latency_throughput.html"))
    assert kube.get("InferenceService", namespace="llm-serving-testing", api_version="serving.kserve.io/v1beta1") in (None, [])

    if not prometheus:
        return
    # the point's Prometheus window: marked before the load, queried after it
    reset = read(glob.glob(os.path.join(points[0], "*__cluster__reset_prometheus_db"))[0], "reset.json")
    assert reset["mode"] == "mark" and "openshift-monitoring/prometheus-k8s-0:web" in reset["prometheus_url"]
    index = read(glob.glob(os.path.join(points[0], "*__cluster__query_prometheus_db"))[0], "queries.json")
    assert index["start"] == reset["ts"] and index["queries"]["gpu_utilization"]["series"] == 2
    records = read(plots, "prom_kpi_records.json")
    values = {(r["kpi_name"], r["prom_series"].split(",")[0]): r["value"] for r in records}
    assert values[("gpu_utilization_max", 'gpu="0"')] == 42.0 and values[("gpu_utilization_mean", 'gpu="1"')] == 77.0
    assert all(r["replicas"] == 2 and r["rate"] == 10 and r["model"] == MODEL for r in records)
    assert os.path.exists(os.path.join(plots, "prometheus_report.html"))
    with sqlite3.connect(str(tmp_path / "results.sqlite")) as connection:
        assert connection.execute("SELECT COUNT(*) FROM documents WHERE kind = 'prom'").fetchone()[0] == len(records) == 4
