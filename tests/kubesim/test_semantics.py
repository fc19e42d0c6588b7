"""API semantics over raw HTTPS: status codes, Status bodies, lifecycle, controllers, faults, persistence."""

import sys
import time

from kube_fixtures import kubesim_cluster


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in %.1f s" % timeout)


def cm(name, **meta):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": dict(name=name, **meta), "data": {"a": "b"}}


def test_auth_401_and_403_status_bodies(http, sim):
    code, _, body = http("GET", "/api/v1/pods", token=None)
    assert code == 401 and body["reason"] == "Unauthorized" and body["kind"] == "Status"
    code, _, body = http("GET", "/api/v1/namespaces/default/pods", token=sim.user_tokens["team-a"])
    assert code == 403 and body["reason"] == "Forbidden" and body["details"]["kind"] == "pods"
    code, _, _ = http("GET", "/api/v1/namespaces/team-a/pods", token=sim.user_tokens["team-a"])
    assert code == 200
    code, _, _ = http("GET", "/version", token=None)
    assert code == 200


def test_discovery_legacy_and_aggregated(http):
    code, headers, body = http("GET", "/apis", headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;"
                                                                  "as=APIGroupDiscoveryList,application/json"})
    assert code == 200 and body["kind"] == "APIGroupDiscoveryList" and "apidiscovery" in headers["Content-Type"]
    apps = next(g for g in body["items"] if g["metadata"]["name"] == "apps")
    deployments = next(r for r in apps["versions"][0]["resources"] if r["resource"] == "deployments")
    assert {s["subresource"] for s in deployments["subresources"]} == {"status", "scale"}
    code, _, body = http("GET", "/api/v1")
    names = {r["name"] for r in body["resources"]}
    assert {"pods/log", "pods/status", "namespaces/finalize"} <= names
    code, _, _ = http("GET", "/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    assert code == 406


def test_field_validation_modes(http):
    body = dict(cm("fv"), extra=1)
    code, _, status = http("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", body)
    assert code == 400 and status["message"] == 'strict decoding error: unknown field "extra"'
    code, headers, obj = http("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Warn", body)
    assert code == 201 and "extra" not in obj and 'unknown field \\"extra\\"' in headers["Warning"]
    dup = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","a":"2"}}'
    code, _, status = http("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", dup)
    assert code == 400 and 'duplicate field "a"' in status["message"]
    code, _, _ = http("DELETE", "/api/v1/namespaces/default/configmaps/fv")
    assert code == 200


def test_secret_string_data_is_merged_into_data_and_not_stored(http):
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sd"},
            "data": {"a": "b2xk", "keep": "eA=="}, "stringData": {"a": "new", "b": "two"}}
    code, _, obj = http("POST", "/api/v1/namespaces/default/secrets", body)
    assert code == 201 and "stringData" not in obj and obj["type"] == "Opaque"
    assert obj["data"] == {"a": "bmV3", "b": "dHdv", "keep": "eA=="}
    assert "stringData" not in http("GET", "/api/v1/namespaces/default/secrets/sd")[2]


def test_finalizers_keep_object_until_removed(http):
    http("POST", "/api/v1/namespaces/default/configmaps", cm("held", finalizers=["example.com/hold"]))
    code, _, obj = http("DELETE", "/api/v1/namespaces/default/configmaps/held")
    assert code == 202 and obj["metadata"]["deletionTimestamp"]
    code, _, obj = http("GET", "/api/v1/namespaces/default/configmaps/held")
    assert code == 200
    http("PATCH", "/api/v1/namespaces/default/configmaps/held", {"metadata": {"finalizers": None}},
         content_type="application/merge-patch+json")
    assert http("GET", "/api/v1/namespaces/default/configmaps/held")[0] == 404


def test_namespace_deletion_removes_content(http):
    http("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}})
    wait_for(lambda: http("GET", "/api/v1/namespaces/doomed/serviceaccounts/default")[0] == 200)
    http("POST", "/api/v1/namespaces/doomed/configmaps", cm("inside"))
    code, _, ns = http("DELETE", "/api/v1/namespaces/doomed")
    assert ns["status"]["phase"] == "Terminating"
    code, _, status = http("POST", "/api/v1/namespaces/doomed/configmaps", cm("late"))
    assert code in (403, 404)
    wait_for(lambda: http("GET", "/api/v1/namespaces/doomed")[0] == 404)
    assert http("GET", "/api/v1/namespaces/doomed/configmaps/inside")[0] == 404


def _owned(http, name, owner):
    meta = {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"],
                                 "uid": owner["metadata"]["uid"]}]}
    return http("POST", "/api/v1/namespaces/default/configmaps", cm(name, **meta))[2]


def test_owner_reference_cascades(http):
    for policy in ("Background", "Foreground", "Orphan"):
        owner = http("POST", "/api/v1/namespaces/default/configmaps", cm("owner-" + policy.lower()))[2]
        _owned(http, "dep-" + policy.lower(), owner)
        http("DELETE", "/api/v1/namespaces/default/configmaps/" + owner["metadata"]["name"],
             {"propagationPolicy": policy})
        wait_for(lambda: http("GET", "/api/v1/namespaces/default/configmaps/" + owner["metadata"]["name"])[0] == 404)
        dependent = http("GET", "/api/v1/namespaces/default/configmaps/dep-" + policy.lower())
        if policy == "Orphan":
            assert dependent[0] == 200 and "ownerReferences" not in dependent[2]["metadata"]
        else:
            wait_for(lambda: http("GET", "/api/v1/namespaces/default/configmaps/dep-" + policy.lower())[0] == 404)


def test_watch_from_old_resource_version_is_gone(sim, http):
    from kubesim import store
    code, _, _ = http("GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1&timeoutSeconds=1")
    assert code == 200  # within the history: replayed
    assert store.HISTORY >= 1000


def test_faults_error_throttle_latency_and_controller(http, sim):
    code, _, fault = http("POST", "/kubesim/faults", {"action": "error", "status": 503, "count": 1,
                                                      "match": {"resource": "secrets"}})
    assert code == 201
    assert http("GET", "/api/v1/namespaces/default/secrets")[0] == 503
    assert http("GET", "/api/v1/namespaces/default/secrets")[0] == 200
    http("POST", "/kubesim/faults", {"action": "throttle", "retry_after": 2, "count": 1, "match": {"verb": "list"}})
    code, headers, body = http("GET", "/api/v1/namespaces/default/services")
    assert code == 429 and headers["Retry-After"] == "2" and body["reason"] == "TooManyRequests"
    sim.faults.add("latency", match={"resource": "endpoints"}, delay_s=0.3, count=1)
    start = time.monotonic()
    http("GET", "/api/v1/namespaces/default/endpoints")
    assert time.monotonic() - start >= 0.3
    sim.faults.add("controller", controller="pods", match={"name": "doomed-pod"}, message="GPU fell off the bus")
    http("POST", "/api/v1/namespaces/default/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "doomed-pod"},
                                                     "spec": {"containers": [{"name": "c", "image": "i"}]}})
    pod = wait_for(lambda: (lambda p: p if p.get("status", {}).get("phase") == "Failed" else None)(
        http("GET", "/api/v1/namespaces/default/pods/doomed-pod")[2]))
    assert pod["status"]["message"] == "GPU fell off the bus"
    assert http("POST", "/kubesim/faults", {"action": "error"}, token=sim.user_tokens["team-a"])[0] == 403
    http("DELETE", "/kubesim/faults")
    assert sim.faults.list() == []


def test_local_process_pod_reports_exit_code_and_output(http):
    script = "import os, sys; print('hello', os.environ['GREETING']); sys.exit(3)"
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "local", "annotations": {"kubesim.perfscale.io/run-local": "true"}},
           "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "python",
                                                              "command": [sys.executable, "-c", script],
                                                              "env": [{"name": "GREETING", "value": "kubesim"}]}]}}
    http("POST", "/api/v1/namespaces/default/pods", pod)
    done = wait_for(lambda: (lambda p: p if p.get("status", {}).get("phase") in ("Failed", "Succeeded") else None)(
        http("GET", "/api/v1/namespaces/default/pods/local")[2]))
    assert done["status"]["phase"] == "Failed"
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3
    code, _, log = http("GET", "/api/v1/namespaces/default/pods/local/log")
    assert code == 200 and log == "hello kubesim\n"


def test_crash_loop_and_previous_logs(http):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "crashy", "annotations": {"kubesim.perfscale.io/outcome": "CrashLoopBackOff",
                                                          "kubesim.perfscale.io/duration-s": "0.3",
                                                          "kubesim.perfscale.io/log": "boom"}},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    http("POST", "/api/v1/namespaces/default/pods", pod)
    wait_for(lambda: http("GET", "/api/v1/namespaces/default/pods/crashy")[2].get("status", {})
             .get("containerStatuses", [{}])[0].get("restartCount", 0) >= 1)
    code, _, log = http("GET", "/api/v1/namespaces/default/pods/crashy/log?previous=true")
    assert code == 200 and log == "boom\n"


def test_restart_keeps_state(tmp_path):
    from kubesim.app import KubeSim
    with kubesim_cluster(state_dir=str(tmp_path)) as first:
        cms = first.cluster.resource("v1", "ConfigMap")
        first.cluster.create(cms, cm("survivor"), "default")
        port, rv = first.port, first.cluster.store.resource_version
    second = KubeSim(state_dir=str(tmp_path)).start()
    try:
        assert second.port == port
        assert second.cluster.get(second.cluster.resource("v1", "ConfigMap"), "default", "survivor")["data"] == {"a": "b"}
        assert second.cluster.store.resource_version >= rv
    finally:
        second.stop()


def test_subprocess_server_prints_kubeconfig_and_stops(tmp_path):
    with kubesim_cluster(subprocess=True, profile="openshift") as child:
        assert child.kubeconfig.endswith("kubeconfig") and child.url.startswith("https://127.0.0.1:")


def test_addons_install_at_run_time_and_survive_a_restart(http, tmp_path):
    code, _, body = http("GET", "/kubesim/addons")
    assert code == 200 and {"olm", "kserve", "kubeflow", "gpu-ready", "openshift"} <= set(body["available"])
    assert http("POST", "/kubesim/addons/no-such-addon")[0] == 400
    with kubesim_cluster(state_dir=str(tmp_path), addons=["kubeflow"]) as first:
        first.install_addon("olm")  # OLM on vanilla, as `operator-sdk olm install` lays it out
        assert first.cluster.store.get(("operators.coreos.com", "catalogsources"), "olm", "operatorhubio-catalog")
        first.restart().stop()
    from kubesim.app import KubeSim
    second = KubeSim(state_dir=str(tmp_path)).start()
    try:
        assert set(second.addons) >= {"kubeflow", "olm"}
        assert second.cluster.registry.for_storage_key("packages.operators.coreos.com", "packagemanifests") is not None
        assert second.cluster.registry.for_storage_key("kubeflow.org", "pytorchjobs") is not None
    finally:
        second.stop()
