"""Pod behaviours by image: a pod the test did not write gets the steering annotations of its image."""

import time

import pytest

from kube_fixtures import kubesim_cluster


@pytest.fixture(scope="module")
def sim():
    with kubesim_cluster(profile="vanilla", time_scale=20, pod_start_delay=0.1,
                         image_behaviours=[{"image": "quay.io/x/burn:*", "annotations": {"log": "from the file"}}]) as s:
        yield s


def _pod(sim, name, image, annotations=None):
    pods = sim.cluster.resource_for_key(("", "pods"))
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": annotations or {}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": image}]}}
    sim.cluster.create(pods, body, namespace="default")


def _wait_phase(sim, name, phases=("Succeeded", "Failed"), timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pod = sim.cluster.store.get(("", "pods"), "default", name)
        phase = ((pod or {}).get("status") or {}).get("phase")
        if phase in phases:
            return pod
        time.sleep(0.05)
    raise AssertionError("pod %s did not finish" % name)


def test_rules_from_the_settings_annotate_pods_of_their_image(sim):
    _pod(sim, "from-settings", "quay.io/x/burn:0")
    _pod(sim, "not-matched", "quay.io/x/other:0")
    assert _wait_phase(sim, "from-settings")["metadata"]["annotations"]["kubesim.perfscale.io/log"] == "from the file"
    assert "kubesim.perfscale.io/log" not in (_wait_phase(sim, "not-matched")["metadata"].get("annotations") or {})


def test_a_later_rule_comes_first_and_the_pods_own_annotations_win(sim):
    sim.image_behaviours.add("*/burn:*", outcome="Failed", **{"exit-code": "3", "log": "GPU 0: FAULTY"})
    _pod(sim, "matched", "quay.io/x/burn:1")
    _pod(sim, "own-wins", "quay.io/x/burn:1", {"kubesim.perfscale.io/outcome": "Succeeded"})
    matched = _wait_phase(sim, "matched")
    assert matched["status"]["phase"] == "Failed"
    assert matched["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3
    assert matched["metadata"]["annotations"]["kubesim.perfscale.io/log"] == "GPU 0: FAULTY"
    assert _wait_phase(sim, "own-wins")["status"]["phase"] == "Succeeded"
    sim.image_behaviours.clear()
    _pod(sim, "cleared", "quay.io/x/burn:2")
    assert "kubesim.perfscale.io/log" not in (_wait_phase(sim, "cleared")["metadata"].get("annotations") or {})


def test_an_image_that_cannot_be_pulled_backs_off_as_the_kubelet_does(sim):
    """ErrImagePull, then ImagePullBackOff for 10 s, 20 s, ... of simulated time: events on the pod
    during the back-off do not make the kubelet try again (30 simulated seconds: at most three tries)."""
    reasons = []

    def listen(event_type, key, obj, old):
        if key == ("", "pods") and obj["metadata"]["name"] == "unpullable" and event_type == "MODIFIED":
            for status in (obj.get("status") or {}).get("containerStatuses") or ():
                reason = (status.get("state") or {}).get("waiting", {}).get("reason")
                if reason and (not reasons or reasons[-1] != reason):
                    reasons.append(reason)
    sim.cluster.store.add_listener(listen)
    try:
        _pod(sim, "unpullable", "quay.io/x/other:0", {"kubesim.perfscale.io/image-pull": "fail"})
        deadline = time.monotonic() + 30 / 20
        while time.monotonic() < deadline:
            sim.cluster.store.get(("", "pods"), "default", "unpullable")
            time.sleep(0.05)
    finally:
        sim.cluster.store.remove_listener(listen)
    pulls = [reason for reason in reasons if reason != "ContainerCreating"]
    assert pulls[:2] == ["ErrImagePull", "ImagePullBackOff"], reasons
    assert len(pulls) <= 6, reasons


def test_a_named_behaviour_crash_once_restarts_the_container_once_then_runs(sim):
    """crash-once: CrashLoopBackOff with crash-count 1 - one crash, the kubelet's restart after its back-off
    runs and the container becomes ready (the rule's own annotations over the behaviour's)."""
    sim.image_behaviours.add("quay.io/x/flaky:*", behaviour="crash-once", **{"duration-s": "2"})
    try:
        pods = sim.cluster.resource_for_key(("", "pods"))
        sim.cluster.create(pods, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "flaky"},
                                  "spec": {"containers": [{"name": "main", "image": "quay.io/x/flaky:1"}]}},
                           namespace="default")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            status = ((sim.cluster.store.get(("", "pods"), "default", "flaky") or {}).get("status") or {})
            container = (status.get("containerStatuses") or [{}])[0]
            if container.get("ready"):
                break
            time.sleep(0.05)
        assert container.get("ready") and container["restartCount"] == 1, status
        assert container["lastState"]["terminated"]["exitCode"] == 1
        annotations = sim.cluster.store.get(("", "pods"), "default", "flaky")["metadata"]["annotations"]
        assert annotations["kubesim.perfscale.io/crash-count"] == "1"
        assert annotations["kubesim.perfscale.io/duration-s"] == "2"
        # it stays running: no second crash
        time.sleep(40 / 20)
        container = sim.cluster.store.get(("", "pods"), "default", "flaky")["status"]["containerStatuses"][0]
        assert container["restartCount"] == 1 and "running" in container["state"]
    finally:
        sim.image_behaviours.clear()


def test_a_start_that_crashes_is_never_ready_behind_a_readiness_probe_and_ready_until_it_exits_without_one(sim):
    """The kubelet marks a container without a readiness probe Ready as soon as it runs, one with a probe only
    once the probe passes (pkg/kubelet/prober/prober_manager.go): a model server that crashes while it loads
    never passes its probe. crash-once behind a probe: Ready only on the start after the crash."""
    sim.image_behaviours.add("quay.io/x/crashing:*", behaviour="crash-loop", **{"duration-s": "4"})
    sim.image_behaviours.add("quay.io/x/recovering:*", behaviour="crash-once", **{"duration-s": "4"})
    probe = {"httpGet": {"path": "/health", "port": 8080}}
    cases = {"unprobed": ("quay.io/x/crashing:1", None), "probed": ("quay.io/x/crashing:1", probe),
             "probed-once": ("quay.io/x/recovering:1", probe)}
    try:
        pods = sim.cluster.resource_for_key(("", "pods"))
        for name, (image, readiness) in cases.items():
            container = {"name": "main", "image": image}
            if readiness:
                container["readinessProbe"] = readiness
            sim.cluster.create(pods, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                                      "spec": {"containers": [container]}}, namespace="default")
        seen = {name: [] for name in cases}
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and not any(ready for ready, _restarts in seen["probed-once"]):
            for name in cases:
                status = (sim.cluster.store.get(("", "pods"), "default", name) or {}).get("status") or {}
                container = (status.get("containerStatuses") or [{}])[0]
                seen[name].append((bool(container.get("ready")), int(container.get("restartCount") or 0)))
            time.sleep(0.02)
        assert any(ready for ready, _restarts in seen["unprobed"]), seen["unprobed"][-5:]
        assert max(restarts for _ready, restarts in seen["probed"]) >= 1
        assert not any(ready for ready, _restarts in seen["probed"])
        assert [restarts for ready, restarts in seen["probed-once"] if ready][:1] == [1], seen["probed-once"][-5:]
    finally:
        sim.image_behaviours.clear()


def test_a_slow_storage_pod_waits_in_container_creating_then_runs(sim):
    sim.image_behaviours.add("quay.io/x/slow:*", behaviour="slow-storage", **{"start-delay-s": "20"})
    try:
        pods = sim.cluster.resource_for_key(("", "pods"))
        sim.cluster.create(pods, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "slow"},
                                  "spec": {"containers": [{"name": "main", "image": "quay.io/x/slow:1"}]}},
                           namespace="default")
        time.sleep(5 / 20)
        status = sim.cluster.store.get(("", "pods"), "default", "slow")["status"]
        assert status["phase"] == "Pending"
        assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
        assert _wait_phase(sim, "slow", phases=("Running",))["status"]["phase"] == "Running"
    finally:
        sim.image_behaviours.clear()


def test_an_unknown_behaviour_is_one_line_naming_the_known_ones(tmp_path):
    from kubesim import __main__ as main
    from kubesim.behaviours import ImageBehaviours
    with pytest.raises(ValueError) as error:
        ImageBehaviours([{"image": "x:*", "behaviour": "explode"}])
    assert str(error.value) == ("image behaviour 'explode': unknown; expected one of crash-loop, crash-once, "
                                "slow-storage")
    rules = tmp_path / "rules.yaml"
    rules.write_text("- {image: 'quay.io/x:*', behaviour: explode}\n")
    with pytest.raises(SystemExit) as stop:
        main._image_behaviours(str(rules))
    assert str(stop.value) == ("--image-behaviours %s: image behaviour 'explode': unknown; expected one of crash-loop, "
                               "crash-once, slow-storage" % rules)
    rules.write_text("- {image: 'quay.io/x:*', behaviour: crash-loop, annotations: {exit-code: '3'}}\n")
    loaded = ImageBehaviours(main._image_behaviours(str(rules)))
    assert loaded.annotations_for("quay.io/x:1")["kubesim.perfscale.io/exit-code"] == "3"
    assert loaded.annotations_for("quay.io/x:1")["kubesim.perfscale.io/outcome"] == "CrashLoopBackOff"
