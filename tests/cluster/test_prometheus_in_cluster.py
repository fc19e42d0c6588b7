"""The cluster's own Prometheus, no URL: the Prometheus commands find its pod by label and reach it
through the API server's pod proxy (kubesim forwards a pod's port to 127.0.0.1, where a real
Debian prometheus, scraping an exporter with known values, stands in for the pod)."""

import json
import os
import sys
import time
import urllib.request

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from prometheus_server import INSTALLED, instant, running  # noqa: E402

pytestmark = pytest.mark.skipif(
    not INSTALLED, reason="Debian's prometheus is not installed (make setup-test installs it as root)")
SIM_SETTINGS = dict(profile="vanilla")
LABEL = "app.kubernetes.io/component=prometheus"


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    with running(tmp_path_factory.mktemp("prometheus")) as server:
        yield server


@pytest.fixture(scope="module")
def prometheus_pod(sim, kube, prometheus):
    """A StatefulSet-like pod in namespace monitoring: its web port is the local Prometheus's."""
    pods = kube.dynamic.resources.get(api_version="v1", kind="Pod")
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "monitoring"}})
    for name, phase in (("prometheus-k8s-1", "Failed"), ("prometheus-k8s-0", "Running")):
        pods.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": name, "namespace": "monitoring", "labels": {"app.kubernetes.io/component": "prometheus"},
            "annotations": {"kubesim.perfscale.io/outcome": phase}},
            "spec": {"containers": [{"name": "prometheus", "image": "quay.io/prometheus/prometheus:v2.42.0",
                                     "ports": [{"name": "web", "containerPort": prometheus["port"]}]}]}})
    deadline = time.monotonic() + 30
    while ((pods.get(name="prometheus-k8s-0", namespace="monitoring").to_dict().get("status") or {}).get("phase")
           != "Running"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return prometheus


def test_reset_query_dump_through_the_api_server(toolbox, prometheus_pod, tmp_path):
    where = {"namespace": "monitoring", "label": LABEL, "prometheus_port": "web"}
    assert instant(prometheus_pod["url"], "perfscale_test_gpu_utilization")
    reset = toolbox("cluster reset_prometheus_db", where, tmp_path)
    assert reset.returncode == 0, reset.output
    record = json.loads(open(os.path.join(reset.command_dir, "reset.json")).read())
    assert record["prometheus_url"] == "pod monitoring/prometheus-k8s-0:web (through the API server)"
    # the reset reached it: what was scraped before it is gone (the next scrapes come in at once)
    with urllib.request.urlopen("%s/api/v1/query_range?query=perfscale_test_gpu_utilization&start=%f&end=%f&step=1s"
                                % (prometheus_pod["url"], record["ts"] - 120, record["ts"] - 1), timeout=5) as answer:
        assert json.load(answer)["data"]["result"] == []
    time.sleep(3)
    queries = tmp_path / "queries.yml"
    queries.write_text("gpu: {query: perfscale_test_gpu_utilization, unit: '%'}\n")
    query = toolbox("cluster query_prometheus_db", dict(where, promquery_file=str(queries), step_s=1), tmp_path)
    assert query.returncode == 0, query.output
    index = json.loads(open(os.path.join(query.command_dir, "queries.json")).read())
    assert index["start"] == record["ts"] and index["queries"]["gpu"]["series"] == 2
    values = {series["metric"]["gpu"]: {v for _ts, v in series["values"]}
              for series in json.loads(open(os.path.join(query.command_dir, "gpu.json")).read())["data"]["result"]}
    assert values == {"0": {"42"}, "1": {"77"}}
    dump = toolbox("cluster dump_prometheus_db", where, tmp_path)
    assert dump.returncode == 0, dump.output
    snapshot = json.loads(open(os.path.join(dump.command_dir, "snapshot.json")).read())
    assert snapshot["snapshot"] and snapshot["archive"] is None
    assert os.path.isdir(os.path.join(prometheus_pod["data_dir"], "snapshots", snapshot["snapshot"]))


def test_no_prometheus_pod_is_one_line(toolbox, sim, tmp_path):
    run = toolbox("cluster reset_prometheus_db", {"namespace": "default", "label": "app=nothing"}, tmp_path)
    assert run.returncode != 0
    assert "no Running pod labelled app=nothing in namespace default (0 pod(s) found); is Prometheus there, " \
           "or give prometheus_url" in run.flat, run.output


def test_rhods_own_prometheus_is_reset_and_dumped(toolbox, kube, prometheus, tmp_path):
    """rhods reset_prometheus_db / dump_prometheus_db: the same commands on RHOAI's Prometheus
    (redhat-ods-monitoring, deployment=prometheus), none of the cluster commands' parameters needed."""
    missing = toolbox("rhods reset_prometheus_db", {}, tmp_path / "missing")
    assert missing.returncode != 0
    assert "no Running pod labelled deployment=prometheus in namespace redhat-ods-monitoring" in missing.flat, \
        missing.output[-2000:]
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "redhat-ods-monitoring"}})
    pods = kube.dynamic.resources.get(api_version="v1", kind="Pod")
    pods.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "prometheus-6c8d5d9f7b-x2x4z", "namespace": "redhat-ods-monitoring", "labels": {"deployment": "prometheus"}},
        "spec": {"containers": [{"name": "prometheus", "image": "quay.io/prometheus/prometheus:v2.42.0",
                                 "ports": [{"name": "web", "containerPort": prometheus["port"]}]}]}})
    deadline = time.monotonic() + 30
    while ((pods.get(name="prometheus-6c8d5d9f7b-x2x4z", namespace="redhat-ods-monitoring").to_dict().get("status")
            or {}).get("phase") != "Running"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    reset = toolbox("rhods reset_prometheus_db", {"prometheus_port": "web"}, tmp_path)
    assert reset.returncode == 0, reset.output
    record = json.loads(open(os.path.join(reset.command_dir, "reset.json")).read())
    assert record["mode"] == "reset"
    assert record["prometheus_url"] == "pod redhat-ods-monitoring/prometheus-6c8d5d9f7b-x2x4z:web (through the API server)"
    dump = toolbox("rhods dump_prometheus_db", {"prometheus_port": "web", "dump_name_prefix": "rhoai"}, tmp_path)
    assert dump.returncode == 0, dump.output
    assert os.path.basename(dump.command_dir).endswith("__rhods__dump_prometheus_db")
    snapshot = json.loads(open(os.path.join(dump.command_dir, "snapshot.json")).read())
    assert snapshot["snapshot"] and os.path.isdir(os.path.join(prometheus["data_dir"], "snapshots", snapshot["snapshot"]))
