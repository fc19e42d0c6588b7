"""The gpu_operator commands on a MIG cluster (kubesim's openshift-mig-mixed profile: two workers with 8 H100
80GB each, labelled nvidia.com/mig.config=all-balanced - 2 x 1g.10gb, 2g.20gb and 3g.40gb per GPU). The CSV's
example ClusterPolicy says mig.strategy single: several MIG profiles per GPU are MIG-INVALID, and
wait_stack_deployed says so at once; with mig.strategy mixed the stack is ready and the MIG slices are the
GPUs (before, gpu_stack counted nvidia.com/gpu only and waited out its timeout)."""

import time

from conftest import read

SIM_SETTINGS = dict(profile="openshift-mig-mixed", addons=[])
MIXED = "NVIDIA-H100-80GB-HBM3 mig-1g.10gb=16,mig-2g.20gb=8,mig-3g.40gb=8"


def test_the_gpu_stack_on_mig_nodes_single_refused_mixed_ready(toolbox, kube, tmp_path):
    assert toolbox("nfd_operator deploy_from_operatorhub", {"delay": 1, "timeout": 300},
                   tmp_path / "nfd").returncode == 0
    operator = toolbox("gpu_operator deploy_from_operatorhub", {"installPlan": "Automatic", "channel": "v25.3"},
                       tmp_path / "operator")
    assert operator.returncode == 0, operator.output

    single = toolbox("gpu_operator deploy_cluster_policy", {}, tmp_path / "single")
    assert single.returncode == 0, single.output
    started = time.monotonic()
    refused = toolbox("gpu_operator wait_stack_deployed", {"delay": 1, "timeout": 600}, tmp_path / "refused")
    assert refused.returncode != 0
    assert time.monotonic() - started < 300          # the failure ends the wait, not its timeout
    failure = " ".join(read(refused.command_dir, "FAILURE").split())
    assert ("worker-gpu-0: nvidia.com/gpu.product NVIDIA-H100-80GB-HBM3-MIG-INVALID - MIG strategy single needs every "
            "GPU cut into one MIG profile (nvidia.com/mig.config=all-balanced): choose a single-profile configuration "
            "or the mixed strategy") in failure, failure

    mixed = toolbox("gpu_operator deploy_cluster_policy", {"overrides": {"mig": {"strategy": "mixed"}}},
                    tmp_path / "mixed")
    assert mixed.returncode == 0, mixed.output
    ready = toolbox("gpu_operator wait_stack_deployed", {"delay": 1, "timeout": 300}, tmp_path / "ready")
    assert ready.returncode == 0, ready.output
    assert read(ready.command_dir, "gpus.txt").splitlines() == ["worker-gpu-0 32 " + MIXED, "worker-gpu-1 32 " + MIXED]
    node = kube.get("Node", "worker-gpu-1")
    assert node["metadata"]["labels"]["nvidia.com/mig.config.state"] == "success"
    assert node["status"]["allocatable"]["nvidia.com/mig-3g.40gb"] == "8"
