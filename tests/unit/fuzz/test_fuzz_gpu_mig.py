"""Fuzz: Node objects as an API server (or a broken GPU operator) could return them - MIG labels, GPU resources
and quantities of any shape. The GPU judges answer a state with a one-line summary, the inventory is text, the
free-resources filter a list or one line; never a traceback."""

from ansible.errors import AnsibleFilterError
from hypothesis import given, strategies as st

from ansible_collections.perfscale.topsail.plugins.filter.node_free_resources import node_free_resources
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import waits
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import base, gpu

KEYS = st.sampled_from(["nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-",
                        "nvidia.com/mig-1g.10gb.count", "nvidia.com/mig.strategy", "nvidia.com/mig.config",
                        "nvidia.com/mig.config.state", "nvidia.com/gpu.product", "nvidia.com/gpu.count",
                        "nvidia.com/gpu.replicas", "nvidia.com/gpu.present", "cpu", "memory",
                        "feature.node.kubernetes.io/pci-10de.present"])
VALUES = st.one_of(st.sampled_from(["1", "0", "-3", "inf", "nan", "1e400", "2k", "true", "mixed", "single", "failed",
                                    "pending", "H100-MIG-INVALID", "", "4Gi", "500m"]),
                   st.integers(-10, 10), st.none(), st.booleans(), st.floats(allow_nan=True), st.text(max_size=6))
NODES = st.fixed_dictionaries({
    "metadata": st.fixed_dictionaries({"name": st.text(min_size=1, max_size=5),
                                       "labels": st.dictionaries(KEYS, VALUES)}),
    "status": st.fixed_dictionaries({"allocatable": st.one_of(st.dictionaries(KEYS, VALUES), st.none(),
                                                              st.text(max_size=3))}),
})
POLICY = {"kind": "ClusterPolicy", "metadata": {"name": "p"},
          "status": {"state": "ready", "conditions": [{"type": "Ready", "status": "True", "reason": "Reconciled"}]}}
VALIDATOR = {"kind": "DaemonSet", "metadata": {"name": "nvidia-operator-validator", "generation": 1},
             "status": {"observedGeneration": 1, "desiredNumberScheduled": 9, "numberAvailable": 9,
                        "updatedNumberScheduled": 9, "numberReady": 9, "currentNumberScheduled": 9}}


@given(st.lists(NODES, max_size=4))
def test_the_gpu_judges_and_the_inventory_answer_whatever_the_nodes(nodes):
    seen = waits.judge("gpu_stack").observe({"subject": [POLICY], "nodes": nodes, "validator": [VALIDATOR]},
                                            base.Target())
    assert seen.state in base.STATES and "\n" not in seen.summary
    seen = waits.judge("gpu_time_slicing").observe({"subject": nodes}, base.Target(options={"replicas": 2}))
    assert seen.state in base.STATES and "\n" not in seen.summary
    text = gpu.gpu_inventory(nodes)
    assert isinstance(text, str)
    for node in nodes:
        assert gpu.allocatable_gpus(node) >= 0


@given(st.lists(NODES, max_size=3))
def test_free_resources_are_a_list_or_one_line(nodes):
    try:
        free = node_free_resources(nodes, [])
    except AnsibleFilterError as exc:
        assert "\n" not in str(exc)
        return
    assert [entry["node"] for entry in free] == [node["metadata"]["name"] for node in nodes]
    assert all(isinstance(entry["gpus"], dict) for entry in free)
