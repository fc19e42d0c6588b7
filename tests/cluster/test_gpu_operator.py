"""The reference's gpu_operator commands end to end on kubesim (OpenShift profile, nothing GPU-related
installed): NFD and the GPU operator through OLM, the ClusterPolicy from the CSV's example (a misspelt
override refused before anything is sent), the stack's GPUs, time-slicing, DCGM metrics, tolerations,
gpu-burn (verdicts and GFLOP/s parsed, a FAULTY GPU named), the state capture and the removal."""

import yaml
from conftest import read

SIM_SETTINGS = dict(addons=[])

BURN_LOG = """GPU 0: NVIDIA L40S (UUID: GPU-0000)
GPU 1: NVIDIA L40S (UUID: GPU-0001)
Initialized device 0 with 45589 MB of memory
50.0%%  proc'd: 1200 (81234 Gflop/s) - 1190 (80950 Gflop/s)   errors: 0 - 0   temps: 61 C - 60 C
100.0%%  proc'd: 2400 (81500 Gflop/s) - 2380 (%s Gflop/s)   errors: 0 - %d   temps: 62 C - 61 C
Killing processes with SIGTERM (soft kill)
done

Tested 2 GPUs:
\tGPU 0: OK
\tGPU 1: %s
"""


def test_the_gpu_operator_stack_from_nothing_to_gpu_burn_and_back(toolbox, kube, sim, tmp_path):
    none = toolbox("gpu_operator run_gpu_burn", {}, tmp_path / "none")
    assert none.returncode != 0
    assert "no node has an allocatable nvidia.com/gpu" in read(none.command_dir, "FAILURE")

    nfd = toolbox("nfd_operator deploy_from_operatorhub", {"delay": 1, "timeout": 300}, tmp_path / "nfd")
    assert nfd.returncode == 0, nfd.output
    # the reference's camelCase parameter name works as it is
    operator = toolbox("gpu_operator deploy_from_operatorhub", {"installPlan": "Automatic", "channel": "v25.3"},
                       tmp_path / "operator")
    assert operator.returncode == 0, operator.output
    version = toolbox("gpu_operator get_csv_version", {}, tmp_path / "version")
    assert version.returncode == 0, version.output
    assert read(version.command_dir, "csv_version.txt").strip() == "25.3.4"

    misspelt = toolbox("gpu_operator deploy_cluster_policy", {"overrides": {"driver": {"enabledd": False}}},
                       tmp_path / "misspelt")
    assert misspelt.returncode != 0
    failure = read(misspelt.command_dir, "FAILURE")
    assert "ClusterPolicy gpu-cluster-policy: spec.driver.enabledd: unknown field" in failure
    assert "clusterpolicies.nvidia.com/v1" in failure
    assert kube.get("ClusterPolicy", api_version="nvidia.com/v1") == []   # nothing was sent

    policy = toolbox("gpu_operator deploy_cluster_policy", {"overrides": {"driver": {"enabled": False}}}, tmp_path / "policy")
    assert policy.returncode == 0, policy.output
    assert kube.get("ClusterPolicy", "gpu-cluster-policy", api_version="nvidia.com/v1")["spec"]["driver"]["enabled"] is False
    for command in ("gpu_operator wait_deployment", "gpu_operator wait_stack_deployed"):
        run = toolbox(command, {"delay": 1, "timeout": 300}, tmp_path / command.split()[1])
        assert run.returncode == 0, run.output
    assert read(run.command_dir, "gpus.txt").splitlines() == ["worker-gpu-0 4 NVIDIA-L40S", "worker-gpu-1 4 NVIDIA-L40S"]

    shared = toolbox("gpu_operator enable_time_sharing", {"replicas": 4, "delay": 1, "timeout": 120}, tmp_path / "shared")
    assert shared.returncode == 0, shared.output
    assert read(shared.command_dir, "gpus.txt").split()[:2] == ["worker-gpu-0", "16"]

    metrics = toolbox("gpu_operator extend_metrics", {"include_well_known": True, "timeout": 60,
                                                      "extra_metrics": ["DCGM_FI_PROF_PIPE_FP16_ACTIVE"]}, tmp_path / "metrics")
    assert metrics.returncode == 0, metrics.output
    csv = read(metrics.command_dir, "dcgm-metrics.csv")
    assert "DCGM_FI_DEV_GPU_UTIL, gauge" in csv and "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge" in csv
    assert csv.strip().endswith("DCGM_FI_PROF_PIPE_FP16_ACTIVE, gauge, DCGM_FI_PROF_PIPE_FP16_ACTIVE")
    spec = kube.get("ClusterPolicy", "gpu-cluster-policy", api_version="nvidia.com/v1")["spec"]
    assert spec["dcgmExporter"]["config"]["name"] == "metrics-config"
    assert spec["devicePlugin"]["config"] == {"name": "time-slicing-config-all", "default": "any"}

    tolerated = toolbox("gpu_operator add_toleration", {"key": "nvidia.com/gpu"}, tmp_path / "toleration")
    assert tolerated.returncode == 0, tolerated.output
    assert yaml.safe_load(read(tolerated.command_dir, "tolerations.yaml")) == [
        {"key": "nvidia.com/gpu", "effect": "NoSchedule", "operator": "Exists"}]

    sim.image_behaviours.add("*/gpu-burn:*", log=BURN_LOG % ("80990", 0, "OK"), **{"duration-s": "5"})
    burn = toolbox("gpu_operator run_gpu_burn", {"runtime": 5}, tmp_path / "burn")
    assert burn.returncode == 0, burn.output
    results = read(burn.command_dir, "gpu_burn.json")
    assert results["ok"] and results["gpus_tested"] == 4 and results["total_gflops"] == 2 * (81500 + 80990)
    assert results["nodes"]["worker-gpu-1"]["gpus"][1] == {"gpu": 1, "status": "OK", "gflops": 80990.0, "errors": 0}
    assert "Tested 2 GPUs" in read(burn.command_dir, "logs/worker-gpu-0.log")
    assert kube.get("Job", namespace="default", api_version="batch/v1") == []   # removed

    sim.image_behaviours.add("*/gpu-burn:*", log=BURN_LOG % ("0", 12, "FAULTY"), **{"duration-s": "5"})
    faulty = toolbox("gpu_operator run_gpu_burn", {"runtime": 5}, tmp_path / "faulty")
    assert faulty.returncode != 0
    assert "FAULTY: worker-gpu-0 GPU 1, worker-gpu-1 GPU 1" in read(faulty.command_dir, "FAILURE")

    state = toolbox("gpu_operator capture_deployment_state", {}, tmp_path / "state")
    assert state.returncode == 0, state.output
    assert read(state.command_dir, "gpu_nodes.json")["worker-gpu-0"]["nvidia.com/gpu.replicas"] == "4"

    removed = toolbox("gpu_operator undeploy_from_operatorhub", {}, tmp_path / "undeploy")
    assert removed.returncode == 0, removed.output
    assert kube.get("Subscription", "gpu-operator-certified", "nvidia-gpu-operator", "operators.coreos.com/v1alpha1") is None
