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
