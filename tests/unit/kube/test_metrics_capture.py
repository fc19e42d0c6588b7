"""Resolving a monitor's targets and splitting the capture pod's log (no cluster: plain data)."""

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import metrics_capture as capture


def pod(name, labels, ip="10.0.0.%d", phase="Running", ports=(("metrics", 8080),), namespace="ns"):
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"containers": [{"ports": [{"name": n, "containerPort": p} for n, p in ports]}]},
            "status": {"phase": phase, "podIP": ip % (len(name)) if "%" in ip else ip}}


def test_a_service_monitor_follows_its_services_to_their_running_pods_and_ports():
    monitor = {"kind": "ServiceMonitor", "metadata": {"name": "m", "namespace": "ns"},
               "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a"]}]},
                        "endpoints": [{"port": "web", "path": "/stats", "scheme": "https"}, {"port": "other"}]}}
    services = [{"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "a"}},
                 "spec": {"selector": {"run": "a"}, "ports": [
                     {"name": "web", "port": 80, "targetPort": "metrics"}, {"name": "other", "port": 81, "targetPort": 9090}]}},
                {"metadata": {"name": "b", "namespace": "ns", "labels": {"app": "b"}}, "spec": {"selector": {"run": "b"}}}]
    pods = [pod("a-1", {"run": "a"}, "10.0.0.1"), pod("a-2", {"run": "a"}, "10.0.0.2", phase="Pending"),
            pod("b-1", {"run": "b"}, "10.0.0.3")]
    targets = capture.service_monitor_targets(monitor, services, pods)
    assert [(t["name"], t["url"]) for t in targets] == [
        ("a-1_8080", "https://10.0.0.1:8080/stats"), ("a-1_9090_1", "http://10.0.0.1:9090/metrics")]


def test_a_pod_monitor_takes_the_named_container_port_of_its_pods():
    monitor = {"kind": "PodMonitor", "metadata": {"name": "m", "namespace": "ns"},
               "spec": {"selector": {"matchLabels": {"app": "v"}}, "podMetricsEndpoints": [{"port": "metrics"}]}}
    pods = [pod("v-0", {"app": "v"}, "10.0.0.5"), pod("v-1", {"app": "v"}, "10.0.0.6", ports=(("http", 80),)),
            pod("x", {"app": "x"}, "10.0.0.7")]
    assert [t["url"] for t in capture.pod_monitor_targets(monitor, pods)] == ["http://10.0.0.5:8080/metrics"]
    assert capture.monitor_namespaces(monitor) == ["ns"]
    monitor["spec"]["namespaceSelector"] = {"any": True}
    with pytest.raises(capture.CaptureError, match="namespaceSelector.any is not captured"):
        capture.monitor_namespaces(monitor)


def test_the_capture_pod_passes_the_targets_as_data_and_finalize_splits_its_log():
    targets = [{"name": "p_1", "url": "http://10.0.0.1:1/metrics"}, {"name": "q_2", "url": "http://10.0.0.2:2/metrics"}]
    manifest = capture.capture_pod(capture.capture_pod_name("vllm", True), "ns", "vllm", targets, 5, "img")
    assert manifest["metadata"]["name"] == "perfscale-metrics-vllm-pod"
    assert capture.targets_of_pod(manifest) == targets
    assert "$PERFSCALE_TARGETS" in manifest["spec"]["containers"][0]["command"][2]
    log = ("### perfscale-scrape 2026-11-25T10:00:00Z p_1\nm 1\n### perfscale-scrape 2026-11-25T10:00:00Z q_2\n"
           "curl: (7) refused\n### perfscale-scrape-error q_2 curl exit 7\n### perfscale-scrape 2026-11-25T10:00:05Z p_1\nm 2\n")
    files, index = capture.finalize_files(log, targets)
    assert files["metrics/p_1.txt"] == "# scraped at 2026-11-25T10:00:00Z\nm 1\n# scraped at 2026-11-25T10:00:05Z\nm 2\n"
    assert index["p_1"]["scrapes"] == 2 and index["p_1"]["last"] == "2026-11-25T10:00:05Z"
    assert index["q_2"]["errors"] == 1 and index["q_2"]["last_error"] == "curl exit 7"
    long_name = capture.capture_pod_name("x" * 80, False)
    assert len(long_name) <= 63 and long_name != capture.capture_pod_name("x" * 81, False)


def test_a_scrape_the_pod_was_still_writing_when_the_log_was_read_is_left_out_and_counted():
    targets = [{"name": "p_1", "url": "http://10.0.0.1:1/metrics"}]
    assert "### perfscale-scrape-end $name" in capture.CAPTURE_SCRIPT
    whole = ("### perfscale-scrape 2026-11-25T10:00:00Z p_1\nm 1\nn 1\n### perfscale-scrape-end p_1\n"
             "### perfscale-scrape 2026-11-25T10:00:01Z p_1\nm 2\n### perfscale-scrape-end p_1\n")
    for cut in ("### perfscale-scrape 2026-11-25T10:00:02Z p_1\n",
                "### perfscale-scrape 2026-11-25T10:00:02Z p_1\nm 3\n",
                "### perfscale-scrape 2026-11-25T10:00:02Z p_1\nm 3\n### perfscale-scrape-en"):
        files, index = capture.finalize_files(whole + cut, targets)
        assert files["metrics/p_1.txt"] == ("# scraped at 2026-11-25T10:00:00Z\nm 1\nn 1\n"
                                            "# scraped at 2026-11-25T10:00:01Z\nm 2\n")
        assert index["p_1"]["scrapes"] == 2 and index["p_1"]["incomplete"] == 1
        assert index["p_1"]["last"] == "2026-11-25T10:00:01Z"
    files, index = capture.finalize_files(whole, targets)
    assert index["p_1"]["scrapes"] == 2 and index["p_1"]["incomplete"] == 0
    # a failed scrape still ends: it counts, with its error
    failed = whole + ("### perfscale-scrape 2026-11-25T10:00:02Z p_1\ncurl: (7) refused\n"
                      "### perfscale-scrape-error p_1 curl exit 7\n### perfscale-scrape-end p_1\n")
    files, index = capture.finalize_files(failed, targets)
    assert index["p_1"]["scrapes"] == 3 and index["p_1"]["errors"] == 1 and index["p_1"]["incomplete"] == 0
