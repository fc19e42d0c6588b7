"""The GPU judges on MIG nodes as the GPU operator's stack publishes them (issue 44): single (slices as
nvidia.com/gpu) and mixed (nvidia.com/mig-<profile>) from the reality corpus, the MIG manager's
states, GFD's MIG-INVALID, and the GatewayClass judge."""

import copy
import os

import yaml

from ansible_collections.perfscale.topsail.plugins.filter.nfd_nodes import nfd_nodes
from ansible_collections.perfscale.topsail.plugins.filter.node_free_resources import node_free_resources
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import waits
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import base, gpu

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "fixtures", "upstream")


def corpus(name):
    with open(os.path.join(CORPUS, name), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["object"]


MIXED = corpus("gpu-operator/node-success-mig-mixed.yaml")
SINGLE = corpus("gpu-operator/node-success-mig-single.yaml")
PLAIN = corpus("gpu-operator/node-success-gpu-labelled-allocatable.yaml")
POLICY = corpus("gpu-operator/clusterpolicy-success-reconciled.yaml")
VALIDATOR = corpus("gpu-operator/daemonset-validator-success-ready.yaml")


def stack(*nodes):
    validator = copy.deepcopy(VALIDATOR)
    validator["status"].update(desiredNumberScheduled=len(nodes), currentNumberScheduled=len(nodes),
                               numberAvailable=len(nodes), numberReady=len(nodes), updatedNumberScheduled=len(nodes))
    return waits.judge("gpu_stack").observe({"subject": [POLICY], "nodes": list(nodes), "validator": [validator]},
                                            base.Target())


def relabel(node, name=None, drop=(), **labels):
    node = copy.deepcopy(node)
    if name:
        node["metadata"]["name"] = name
    for key in drop:
        node["metadata"]["labels"].pop(key, None)
    node["metadata"]["labels"].update({k.replace("__", "/").replace("_", "."): v for k, v in labels.items()})
    return node


def test_a_mig_mixed_node_counts_its_mig_slices_and_the_stack_is_ready():
    # before: only nvidia.com/gpu and nvidia.com/gpu.shared counted, the mixed node had 0 and the wait timed out
    assert gpu.allocatable_gpus(MIXED) == 32
    seen = stack(MIXED)
    assert seen == base.ready("GPU stack ready: 1 GPU node(s), 32 allocatable GPU(s) (MIG strategy mixed), "
                              "nvidia-operator-validator validated on each")


def test_a_mig_single_node_and_a_plain_one_together():
    assert stack(SINGLE, PLAIN) == base.ready(
        "GPU stack ready: 2 GPU node(s), 57 allocatable GPU(s) (MIG strategy single), "
        "nvidia-operator-validator validated on each")


def test_a_mixed_node_still_short_of_one_mig_profile_is_waited_for():
    partial = copy.deepcopy(MIXED)
    del partial["status"]["allocatable"]["nvidia.com/mig-3g.20gb"]
    assert stack(partial) == base.waiting("GPU node(s) without allocatable GPUs or GPU feature discovery labels: "
                                          "gpu-mig-mixed-1 (MIG mixed: nvidia.com/mig-3g.20gb 0 of 8)")


def test_the_mig_manager_at_work_is_waited_through_and_its_failure_ends_the_wait():
    pending = relabel(MIXED, **{"nvidia.com/mig.config.state": "pending"})
    assert stack(pending) == base.waiting("gpu-mig-mixed-1: the MIG manager is applying nvidia.com/mig.config="
                                          "all-balanced (nvidia.com/mig.config.state=pending)")
    broken = relabel(MIXED, **{"nvidia.com/mig.config.state": "failed"})
    assert stack(broken) == base.failed("gpu-mig-mixed-1: the MIG manager could not apply nvidia.com/mig.config="
                                        "all-balanced (nvidia.com/mig.config.state=failed)")


def test_gfd_s_mig_invalid_under_the_single_strategy_ends_the_wait():
    # k8s-device-plugin internal/lm/mig-strategy_test.go "mixed mig config returns MIG invalid label": several MIG
    # profiles under mig.strategy=single - product <GPU>-MIG-INVALID, count 0, and no resource
    invalid = relabel(SINGLE, **{"nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-INVALID", "nvidia.com/gpu.count": "0",
                                 "nvidia.com/gpu.replicas": "0", "nvidia.com/gpu.sharing-strategy": "",
                                 "nvidia.com/gpu.memory": "0", "nvidia.com/mig.config": "all-balanced"})
    invalid["status"] = {"capacity": {}, "allocatable": {}}
    assert stack(invalid) == base.failed(
        "gpu-mig-single-1: nvidia.com/gpu.product A100-SXM4-40GB-MIG-INVALID - MIG strategy single needs every GPU cut "
        "into one MIG profile (nvidia.com/mig.config=all-balanced): choose a single-profile configuration or the "
        "mixed strategy")


def test_the_inventory_names_a_mixed_node_s_mig_resources():
    assert gpu.gpu_inventory([MIXED, SINGLE, PLAIN]) == (
        "gpu-mig-mixed-1 32 A100-SXM4-40GB mig-1g.5gb=16,mig-2g.10gb=8,mig-3g.20gb=8\n"
        "gpu-mig-single-1 56 A100-SXM4-40GB-MIG-1g.5gb\n"
        "gpu-node-1 1 Tesla-T4\n")


def test_time_slicing_of_a_mixed_node_has_nothing_to_share_and_says_so():
    judge = waits.judge("gpu_time_slicing")
    seen = judge.observe({"subject": [MIXED]}, base.Target(options={"replicas": 4}))
    assert seen == base.failed("gpu-mig-mixed-1: MIG strategy mixed, its GPUs are MIG slices (mig-1g.5gb=16,"
                               "mig-2g.10gb=8,mig-3g.20gb=8) that time-slicing of nvidia.com/gpu does not share")
    shared = relabel(SINGLE, **{"nvidia.com/gpu.replicas": "2"})
    shared["status"]["allocatable"]["nvidia.com/gpu"] = "112"
    assert judge.observe({"subject": [shared]}, base.Target(options={"replicas": 2})).state == "ready"


def test_the_nfd_filter_finds_mig_nodes_by_their_pci_label():
    assert nfd_nodes([MIXED, SINGLE, {"metadata": {"name": "cpu", "labels": {}}}], True) == [
        "gpu-mig-mixed-1", "gpu-mig-single-1"]


def test_free_gpus_count_every_gpu_resource_and_the_pods_requests_of_them():
    node = copy.deepcopy(MIXED)
    node["status"]["allocatable"].update(cpu="8", memory="32Gi")
    pod = {"spec": {"nodeName": "gpu-mig-mixed-1", "containers": [{"resources": {
        "requests": {"cpu": "1", "nvidia.com/mig-1g.5gb": "2"}, "limits": {"nvidia.com/mig-3g.20gb": "1"}}}]},
        "status": {"phase": "Running"}}
    free = node_free_resources([node], [pod])
    assert free[0]["gpus"] == {"nvidia.com/mig-1g.5gb": 14, "nvidia.com/mig-2g.10gb": 8, "nvidia.com/mig-3g.20gb": 7}
    assert free[0]["cpu_millicores"] == 7000


def test_a_gateway_class_no_controller_answers_is_named_with_its_controller():
    pending = corpus("gateway/gatewayclass-transient-pending.yaml")
    seen = waits.judge("gatewayclass").observe({"subject": [pending]}, base.Target(None, "data-science-gateway-class"))
    assert seen == base.waiting(
        "GatewayClass data-science-gateway-class (controllerName example.com/no-such-controller): Accepted=Unknown "
        "(Pending: Waiting for controller) - no controller named example.com/no-such-controller has answered")
    refused = corpus("gateway/gatewayclass-failure-invalid-parameters.yaml")
    seen = waits.judge("gatewayclass").observe({"subject": [refused]}, base.Target(None, "data-science-gateway-class"))
    assert seen == base.failed(
        "GatewayClass data-science-gateway-class (controllerName openshift.io/gateway-controller/v1): Accepted=False "
        "(InvalidParameters: ConfigMap openshift-ingress/gateway-parameters not found)")
    stale = copy.deepcopy(corpus("gateway/gatewayclass-success.yaml"))
    stale["metadata"]["generation"] = 2
    seen = waits.judge("gatewayclass").observe({"subject": [stale]}, base.Target(None, "data-science-gateway-class"))
    assert seen.state == "waiting" and "status of an older generation" in seen.summary
