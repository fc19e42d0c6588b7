"""cluster capture_servicemonitor_metrics on kubesim: a ServiceMonitor (and a PodMonitor) over two
"vLLM" pods whose metrics port is a local exporter (kubesim's pod-ip 127.0.0.1), a capture pod that
runs its scrape loop as a local process (sh + curl), then the finalize splits what it scraped."""

import json
import os
import sys
import time

import pytest
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from prometheus_server import exporter  # noqa: E402

SIM_SETTINGS = dict(profile="vanilla", addons=["prometheus-operator"])
NAMESPACE = "llm"


@pytest.fixture(scope="module")
def monitored(sim, kube):
    servers = [exporter("vllm:num_requests_running %d\n" % value) for value in (3, 7)]
    sim.image_behaviours.add("*/ubi-minimal:*", **{"run-local": "true"})
    dynamic = kube.dynamic.resources
    dynamic.get(api_version="v1", kind="Namespace").create({"metadata": {"name": NAMESPACE}})
    pods = dynamic.get(api_version="v1", kind="Pod")
    for index, server in enumerate(servers):
        pods.create(namespace=NAMESPACE, body={"metadata": {
            "name": "vllm-%d" % index, "labels": {"app": "vllm"},
            "annotations": {"kubesim.perfscale.io/pod-ip": "127.0.0.1"}},
            "spec": {"containers": [{"name": "vllm", "image": "quay.io/x/vllm:1", "ports": [
                {"name": "http-metrics", "containerPort": server.server_address[1]}]}]}})
    dynamic.get(api_version="v1", kind="Service").create(namespace=NAMESPACE, body={
        "metadata": {"name": "vllm", "labels": {"app": "vllm"}},
        "spec": {"selector": {"app": "vllm"}, "ports": [{"name": "metrics", "port": 8000, "targetPort": "http-metrics"}]}})
    dynamic.get(api_version="monitoring.coreos.com/v1", kind="ServiceMonitor").create(namespace=NAMESPACE, body={
        "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "vllm"},
        "spec": {"selector": {"matchLabels": {"app": "vllm"}}, "endpoints": [{"port": "metrics", "interval": "15s"}]}})
    dynamic.get(api_version="monitoring.coreos.com/v1", kind="PodMonitor").create(namespace=NAMESPACE, body={
        "apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor", "metadata": {"name": "vllm-pods"},
        "spec": {"selector": {"matchLabels": {"app": "vllm"}}, "podMetricsEndpoints": [{"port": "http-metrics"}]}})
    deadline = time.monotonic() + 30
    while any((kube.get("Pod", "vllm-%d" % i, NAMESPACE).get("status") or {}).get("phase") != "Running" for i in (0, 1)):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    yield [server.server_address[1] for server in servers]
    sim.image_behaviours.clear()
    for server in servers:
        server.shutdown()


def read_yaml(directory, name):
    with open(os.path.join(directory, name), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.mark.parametrize("monitor, podmonitor", [("vllm", False), ("vllm-pods", True)])
def test_start_scrapes_every_target_and_finalize_collects_and_cleans_up(toolbox, kube, monitored, tmp_path,
                                                                        monitor, podmonitor):
    args = {"service_name": monitor, "namespace": NAMESPACE, "capture_frequency": 1, "is_podmonitor": podmonitor}
    start = toolbox("cluster capture_servicemonitor_metrics", args, tmp_path)
    assert start.returncode == 0, start.output
    targets = read_yaml(start.command_dir, "targets.yaml")
    assert sorted(t["url"] for t in targets) == ["http://127.0.0.1:%d/metrics" % port for port in sorted(monitored)]
    assert read_yaml(start.command_dir, "%s.yaml" % ("podmonitor" if podmonitor else "servicemonitor"))
    pod_name = "perfscale-metrics-%s%s" % (monitor, "-pod" if podmonitor else "")
    first_uid = kube.get("Pod", pod_name, NAMESPACE)["metadata"]["uid"]
    # started again: the capture is replaced, never doubled
    again = toolbox("cluster capture_servicemonitor_metrics", args, tmp_path)
    assert again.returncode == 0, again.output
    captures = [p for p in kube.get("Pod", namespace=NAMESPACE) if p["metadata"]["name"].startswith("perfscale-metrics-")]
    assert [p["metadata"]["name"] for p in captures] == [pod_name] and captures[0]["metadata"]["uid"] != first_uid
    time.sleep(4)
    done = toolbox("cluster capture_servicemonitor_metrics", dict(args, finalize=True), tmp_path,
                   "-e", "suffix=finalize", suffix="finalize")
    assert done.returncode == 0, done.output
    scrapes = json.load(open(os.path.join(done.command_dir, "scrapes.json")))
    assert len(scrapes) == 2
    for target in targets:
        entry = scrapes[target["name"]]
        assert entry["scrapes"] >= 2 and entry["errors"] == 0 and entry["incomplete"] <= 1 and entry["url"] == target["url"]
        text = open(os.path.join(done.command_dir, "metrics", target["name"] + ".txt")).read()
        value = 3 if target["port"] == monitored[0] else 7
        assert text.count("# scraped at ") == entry["scrapes"]
        assert text.count("vllm:num_requests_running %d\n" % value) == entry["scrapes"]
    assert kube.get("Pod", pod_name, NAMESPACE) is None


def test_what_cannot_be_captured_is_one_line(toolbox, monitored, tmp_path):
    missing = toolbox("cluster capture_servicemonitor_metrics", {"service_name": "nope", "namespace": NAMESPACE}, tmp_path)
    assert missing.returncode != 0 and "ServiceMonitor nope not found in namespace llm" in missing.flat, missing.output
    never = toolbox("cluster capture_servicemonitor_metrics",
                    {"service_name": "vllm", "namespace": NAMESPACE, "finalize": True}, tmp_path)
    assert never.returncode != 0
    assert "no capture pod perfscale-metrics-vllm in namespace llm: was capture_servicemonitor_metrics started " \
           "(finalize=false) for vllm?" in never.flat, never.output
