"""The llm_serving flow with the llm_serving_prometheus preset on kubesim: each point marks the cluster's
Prometheus before its load and queries it after (the Prometheus pod of openshift-monitoring is a real
Debian prometheus on 127.0.0.1, reached through kubesim's pod proxy); the prom workload turns the
captures into KPIs labelled like the point's own and exports them as kind prom."""

import glob
import json
import os
import sqlite3
import sys
import time

import pytest

from conftest import read
from fake_openai import FakeServerThread

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from prometheus_server import INSTALLED, running  # noqa: E402

pytestmark = pytest.mark.skipif(
    not INSTALLED, reason="Debian's prometheus is not installed (make setup-test installs it as root)")
MODEL = "granite-3.1-8b-instruct"


def test_each_point_gets_the_prometheus_kpis_of_its_load(playbook, sim, kube, tmp_path):
    (tmp_path / "prometheus").mkdir()
    with running(tmp_path / "prometheus") as prometheus:
        kube.dynamic.resources.get(api_version="v1", kind="Pod").create(namespace="openshift-monitoring", body={
            "metadata": {"name": "prometheus-k8s-0", "labels": {"app.kubernetes.io/component": "prometheus"}},
            "spec": {"containers": [{"name": "prometheus", "image": "quay.io/prometheus/prometheus:v2.42.0",
                                     "ports": [{"name": "web", "containerPort": prometheus["port"]}]}]}})
        deadline = time.monotonic() + 30
        while (kube.get("Pod", "prometheus-k8s-0", "openshift-monitoring").get("status") or {}).get("phase") != "Running":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        queries = tmp_path / "queries.yml"
        queries.write_text("gpu_utilization: {query: perfscale_test_gpu_utilization, unit: '%'}\n")
        overrides = {"prometheus.promquery_file": str(queries), "prometheus.port": "web", "prometheus.step_s": 1,
                     "export.sqlite.path": str(tmp_path / "results.sqlite"),
                     "tests.llm_serving.benchmark.matrix": {"factors": {"replicas": [1], "rate": [10]},
                                                            "common_settings": {}, "include": [], "exclude": []}}
        with FakeServerThread(ttft=0.002, itl=0.001, model=MODEL) as server:
            sim.settings.inference_url = server.url
            try:
                run = playbook("playbooks/llm_serving.yml", "-e", "preset=llm_serving_smoke,llm_serving_prometheus",
                               "-e", json.dumps({"overrides": overrides}), "-e", "artifact_dir=%s" % tmp_path,
                               timeout=900)
            finally:
                sim.settings.inference_url = None
    assert run.returncode == 0, run.output[-3000:]
    point = glob.glob(str(tmp_path / "*__llm_serving" / "*__r1_rate10"))[0]
    commands = [d[5:] for d in sorted(os.listdir(point)) if d[:3].isdigit()]
    assert commands.index("cluster__reset_prometheus_db") < commands.index("llm_load__run_llm_serving") \
        < commands.index("cluster__query_prometheus_db"), commands
    reset = read(glob.glob(os.path.join(point, "*__cluster__reset_prometheus_db"))[0], "reset.json")
    assert reset["mode"] == "mark" and "openshift-monitoring/prometheus-k8s-0:web" in reset["prometheus_url"]
    index = read(glob.glob(os.path.join(point, "*__cluster__query_prometheus_db"))[0], "queries.json")
    assert index["start"] == reset["ts"] and index["queries"]["gpu_utilization"]["series"] == 2

    plots = sorted(glob.glob(str(tmp_path / "*__plots")))[-1]
    records = read(plots, "prom_kpi_records.json")
    values = {(r["kpi_name"], r["prom_series"].split(",")[0]): r["value"] for r in records}
    assert values[("gpu_utilization_max", 'gpu="0"')] == 42.0 and values[("gpu_utilization_mean", 'gpu="1"')] == 77.0
    assert all(r["replicas"] == 1 and r["rate"] == 10 and r["model"] == MODEL for r in records)
    assert os.path.exists(os.path.join(plots, "prometheus_report.html"))
    with sqlite3.connect(str(tmp_path / "results.sqlite")) as connection:
        assert connection.execute("SELECT COUNT(*) FROM documents WHERE kind = 'prom'").fetchone()[0] == len(records) == 4
