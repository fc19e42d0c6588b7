"""The llm_serving flow end to end on kubesim (OpenShift profile): RHOAI with KServe, the GPU operator and the
model on a PVC prepared, then each point of the matrix deploys the model with its deployment factors, validates
it, loads it with the LLM load harness (the InferenceService's URL points at a local OpenAI-compatible server),
captures its state and undeploys it; a point whose runtime crashes fails alone and is still undeployed; the
llm_load workload's KPIs carry the deployment factors."""

import glob
import json
import os

from conftest import read
from fake_openai import FakeServerThread

MODEL = "granite-3.1-8b-instruct"
BROKEN_RUNTIME = "quay.io/modh/vllm:broken"


def test_the_llm_serving_flow_deploys_loads_and_undeploys_each_point(playbook, sim, kube, tmp_path):
    sim.image_behaviours.add(BROKEN_RUNTIME, log="RuntimeError: CUDA error: no kernel image is available",
                             outcome="CrashLoopBackOff", **{"exit-code": "1", "duration-s": "1"})
    overrides = {"tests.llm_serving.benchmark.matrix": {
        "factors": {"replicas": [2], "rate": [10]}, "common_settings": {},
        "include": [{"replicas": 3, "rate": 10, "runtime_image": BROKEN_RUNTIME}],
        "exclude": []}}
    with FakeServerThread(ttft=0.002, itl=0.001, model=MODEL) as server:
        sim.settings.inference_url = server.url
        try:
            run = playbook("playbooks/llm_serving.yml", "-e", "preset=llm_serving_smoke",
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
    commands = sorted(d[5:] for d in os.listdir(points[0]) if d[:3].isdigit())
    assert commands == ["kserve__capture_state_llm_serving", "kserve__deploy_model_llm_serving",
                        "kserve__undeploy_model_llm_serving", "kserve__validate_model_llm_serving",
                        "llm_load__run_llm_serving"], commands
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
