import json

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import OlmError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import environment, olm


def manifest(catalog="redhat-operators", default="stable"):
    desc = {"version": "4.19.0", "annotations": {"alm-examples": json.dumps([{"kind": "NodeFeatureDiscovery"},
                                                                             {"kind": "NodeFeatureRule"}])},
            "installModes": [{"type": "OwnNamespace", "supported": True}, {"type": "AllNamespaces", "supported": False}]}
    return {"metadata": {"name": "nfd"},
            "status": {"packageName": "nfd", "catalogSource": catalog, "catalogSourceNamespace": "openshift-marketplace",
                       "defaultChannel": default,
                       "channels": [{"name": "stable", "currentCSV": "nfd.4.19.0", "currentCSVDesc": desc,
                                     "entries": [{"name": "nfd.4.19.0", "version": "4.19.0"},
                                                 {"name": "nfd.4.18.0", "version": "4.18.0"}]},
                                    {"name": "4.18", "currentCSV": "nfd.4.18.0", "currentCSVDesc": {"version": "4.18.0"},
                                     "entries": [{"name": "nfd.4.18.0", "version": "4.18.0"}]}]}}


def test_the_default_channel_and_its_head():
    bundle = olm.select_bundle([manifest()], "nfd", "redhat-operators")
    assert (bundle["channel"], bundle["csv"], bundle["version"]) == ("stable", "nfd.4.19.0", "4.19.0")
    assert [e["kind"] for e in bundle["alm_examples"]] == ["NodeFeatureDiscovery", "NodeFeatureRule"]
    assert bundle["install_modes"] == {"OwnNamespace": True, "AllNamespaces": False}


def test_a_version_of_a_channel_and_its_examples_only_at_the_head():
    bundle = olm.select_bundle([manifest()], "nfd", "redhat-operators", channel="stable", version="4.18.0")
    assert bundle["csv"] == "nfd.4.18.0" and bundle["alm_examples"] == []


def test_the_catalog_is_chosen_among_several():
    bundle = olm.select_bundle([manifest("community-operators", "4.18"), manifest()], "nfd", "redhat-operators")
    assert bundle["channel"] == "stable"


@pytest.mark.parametrize("kwargs, message", [
    (dict(package="gpu"), "package gpu: no PackageManifest in the cluster (is its catalog source ready?)"),
    (dict(catalog="certified-operators"), "package nfd: not in catalog certified-operators (it is in redhat-operators)"),
    (dict(channel="fast"), "package nfd in redhat-operators: no channel 'fast' (channels: 4.18, stable; default stable)"),
    (dict(version="9.9"), "package nfd channel stable: no version 9.9 (versions: 4.19.0, 4.18.0)"),
])
def test_what_does_not_exist_is_one_line_naming_what_does(kwargs, message):
    args = dict(package="nfd", catalog="redhat-operators")
    args.update(kwargs)
    with pytest.raises(OlmError) as raised:
        olm.select_bundle([manifest()], **args)
    assert str(raised.value) == message


def test_examples_and_subscription_env():
    examples = [{"kind": "A"}, {"kind": "B"}]
    assert olm.pick_example(examples, True) == {"kind": "A"}
    assert olm.pick_example(examples, "B") == {"kind": "B"}
    assert olm.pick_example(examples, False) is None
    with pytest.raises(OlmError, match="no example of kind C in the CSV's alm-examples .kinds: A, B."):
        olm.pick_example(examples, "C")
    assert olm.subscription_env(["DISABLE_DSC_CONFIG", "LEVEL=debug"]) == [
        {"name": "DISABLE_DSC_CONFIG", "value": "true"}, {"name": "LEVEL", "value": "debug"}]
    with pytest.raises(OlmError):
        olm.subscription_env(["=x"])


def node(name, roles=(), instance="m6i.4xlarge", gpus=0, product=None, ready="True"):
    labels = {"node.kubernetes.io/instance-type": instance}
    labels.update({"node-role.kubernetes.io/" + r: "" for r in roles})
    status = {"conditions": [{"type": "Ready", "status": ready}], "capacity": {}, "allocatable": {}}
    if product:
        labels.update({"nvidia.com/gpu.product": product, "nvidia.com/gpu.count": str(gpus),
                       "nvidia.com/gpu.memory": "46068", "feature.node.kubernetes.io/pci-10de.present": "true"})
        status["allocatable"]["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name, "labels": labels}, "spec": {}, "status": status}


def test_labels_of_a_gpu_cluster_and_of_one_without_gpus():
    nodes = [node("cp", roles=["control-plane"], instance="m6i.2xlarge"), node("w0"),
             node("g0", product="NVIDIA-L40S", gpus=4, instance="g6e.12xlarge"),
             node("g1", product="NVIDIA-L40S", gpus=4, instance="g6e.12xlarge")]
    cluster_version = {"spec": {"channel": "stable-4.19"},
                       "status": {"history": [{"state": "Completed", "version": "4.19.9"},
                                              {"state": "Completed", "version": "4.19.1"}]}}
    summary = environment.summarise({"gitVersion": "v1.32.5"}, nodes, [], cluster_version,
                                    {"status": {"platform": "AWS"}})
    labels = summary["labels"]
    assert labels == {"platform": "openshift", "kubernetes_version": "v1.32.5", "openshift_version": "4.19.9",
                      "cloud_platform": "AWS", "node_count": 4, "worker_count": 3,
                      "worker_instance_types": "2x g6e.12xlarge, 1x m6i.4xlarge", "gpu_node_count": 2,
                      "gpu_product": "2x NVIDIA-L40S", "gpu_count": 8, "gpu_memory_mib": 46068}
    assert "clusterversion.json" in summary["files"]
    assert environment.labels_line(labels) == ("openshift, 4.19.9, 4 node(s), workers: 2x g6e.12xlarge, "
                                               "1x m6i.4xlarge, GPUs: 8 (2x NVIDIA-L40S)")
    plain = environment.summarise({"gitVersion": "v1.35.0"}, [node("w0")], [])["labels"]
    assert plain["platform"] == "kubernetes" and plain["gpu_count"] == 0 and plain["gpu_product"] is None
    assert environment.labels_line(plain).endswith("GPUs: none")
