import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import jsonpath, manifests, state

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
       "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
       "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"},
                                                     {"type": "Initialized", "status": "False", "reason": "Boom",
                                                      "message": "init failed"}]}}


@pytest.mark.parametrize("expression,expected", [
    ("{.status.phase}", ["Running"]),
    ("status.phase", ["Running"]),
    ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
    (".status.conditions[?(@.type!='Ready')].reason", ["Boom"]),
    (".spec.containers[*].name", ["a", "b"]),
    (".spec.containers[-1].name", ["b"]),
    (".status.missing", []),
    ("$.metadata.name", ["p"]),
])
def test_jsonpath_selects_as_kubectl_does(expression, expected):
    assert jsonpath.evaluate(POD, expression) == expected


def test_jsonpath_matches_as_text_and_refuses_what_it_cannot_read():
    assert jsonpath.matches(POD, ".status.conditions[0].status", "True")
    assert not jsonpath.matches(POD, ".status.phase", "Pending")
    with pytest.raises(errors.PerfscaleError, match=r"jsonpath '.a..b': cannot read it at"):
        jsonpath.evaluate(POD, ".a..b")


def test_a_capture_lays_out_files_masks_secrets_and_lists_conditions():
    secret = {"kind": "Secret", "metadata": {"name": "s", "namespace": "ns", "managedFields": [{"x": 1}],
                                             "annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                                                             '{"data": {"token": "c2VjcmV0"}}'}},
              "data": {"token": "c2VjcmV0"}}
    node = {"kind": "Node", "metadata": {"name": "n1"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    events = [{"metadata": {"namespace": "ns"}, "lastTimestamp": "2026-11-22T10:00:02Z", "reason": "B"},
              {"metadata": {"namespace": "ns"}, "lastTimestamp": "2026-11-22T10:00:01Z", "reason": "A"}]
    logs = [{"namespace": "ns", "pod": "p", "container": "a", "previous": True, "text": "crashed"}]
    files = state.capture_files({"Pod": [POD], "Secret": [secret], "Node": [node]}, events, logs)
    assert files["ns/secret.yaml"][0]["data"] == {"token": "********"}
    assert "c2VjcmV0" not in str(files)
    assert "managedFields" not in files["ns/secret.yaml"][0]["metadata"]
    assert files["cluster-scoped/node.yaml"][0]["metadata"]["name"] == "n1"
    assert [e["reason"] for e in files["ns/events.yaml"]] == ["A", "B"]
    assert files["ns/logs/p__a.previous.log"] == "crashed"
    assert "Pod/p -n ns: phase=Running; Ready=True; Initialized=False (Boom: init failed)" in files["conditions.txt"]


def test_rendered_manifests_are_validated_strictly_and_described():
    good = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}, "data": {"a": "1"}}
    bad = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "i", "imagePullPolcy": "Always"}]}}}}
    assert manifests.check_documents([good]) == [good]
    assert manifests.describe(good) == "ConfigMap/c -n n"
    with pytest.raises(errors.ManifestValidationError) as error:
        manifests.check_documents([good, bad])
    assert "Deployment d: spec.template.spec.containers[0].imagePullPolcy: unknown field" in str(error.value)
    with pytest.raises(errors.ManifestValidationError, match="x.yaml: document 1 is not a mapping"):
        manifests.load_documents("- a\n- b\n", "x.yaml")
