"""fine_tuning ray_fine_tuning_job end to end on kubesim (vanilla profile with KubeRay's CRDs): the RayJob and
its RayCluster through KubeRay, the submitter's log kept and parsed as the reference's ray_benchmark
post-processing reads it; an unknown workload, a missing namespace and a failed Ray job said in one line."""

import json

from conftest import read

SIM_SETTINGS = dict(profile="vanilla", addons=["kuberay"])
LOG = ('PERFSCALE_RESULT {"time_s": 41.25, "nodes": 2, "tasks_per_s": 48.5, "transfer_gbps": 3.2}\n'
       "--- PASSED: RESULT NETWORK OVERHEAD ::: 41.250\nSCRIPT SUCCEEDED")


def test_a_ray_job_reports_its_result_and_its_failures(toolbox, kube, sim, tmp_path):
    args = {"name": "ray.bench", "namespace": "ray-ft", "pod_count": 2, "delay": 1, "timeout": 120,
            "hyper_parameters": {"flavor": "network_overhead", "num_samples": 5}}
    unknown = toolbox("fine_tuning ray_fine_tuning_job", dict(args, workload="ray-finetune-llm-deepspeed"),
                      tmp_path / "unknown")
    assert unknown.returncode != 0
    assert 'workload "ray-finetune-llm-deepspeed" is not one of ray-benchmark' in " ".join(
        read(unknown.command_dir, "FAILURE").split())
    no_namespace = toolbox("fine_tuning ray_fine_tuning_job", args, tmp_path / "no-namespace")
    assert no_namespace.returncode != 0
    assert "Namespace ray-ft does not exist" in " ".join(read(no_namespace.command_dir, "FAILURE").split())

    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "ray-ft"}})
    # what the entrypoint prints on the Ray image (the submitter's log is the entrypoint's output)
    sim.image_behaviours.add("quay.io/rhoai/ray:*", **{"ray-job-log": LOG, "ray-job-duration-s": "20"})
    run = toolbox("fine_tuning ray_fine_tuning_job", args, tmp_path / "ok")
    assert run.returncode == 0, run.output
    result = read(run.command_dir, "result.json")
    assert result["@result"] == {"time_s": 41.25, "nodes": 2, "tasks_per_s": 48.5, "transfer_gbps": 3.2}
    assert result["@parameters"]["flavor"] == "network_overhead" and result["@parameters"]["pod_count"] == 2
    assert read(run.command_dir, "artifacts/job_pod.log").rstrip().endswith("SCRIPT SUCCEEDED")
    job = kube.get("RayJob", "ray-bench", "ray-ft", "ray.io/v1")
    assert job["status"]["jobDeploymentStatus"] == "Complete" and job["status"]["jobStatus"] == "SUCCEEDED"
    spec = job["spec"]["rayClusterSpec"]
    assert spec["workerGroupSpecs"][0]["replicas"] == 1 and job["spec"]["shutdownAfterJobFinishes"] is True
    config = json.loads(kube.get("ConfigMap", "ray-bench-config", "ray-ft")["data"]["config.json"])
    assert config == {"flavor": "network_overhead", "num_samples": 5}
    assert "entrypoint.py" in kube.get("ConfigMap", "ray-bench-entrypoint", "ray-ft")["data"]
    assert "test_network_overhead.py" in kube.get("ConfigMap", "ray-bench-app", "ray-ft")["data"]

    # the entrypoint fails: KubeRay's Failed/AppFailed with Ray's message, the end of the log, in one line
    failing = {"ray-job-log": "Traceback ...\nValueError: no GPU", "ray-job-fail": "ValueError: no GPU"}
    sim.image_behaviours.add("quay.io/rhoai/ray:*", **failing)
    try:
        failed = toolbox("fine_tuning ray_fine_tuning_job", args, tmp_path / "failed")
    finally:
        sim.image_behaviours.clear()
    assert failed.returncode != 0
    failure = " ".join(read(failed.command_dir, "FAILURE").split())
    assert "RayJob ray-ft/ray-bench: Failed: AppFailed; Job entrypoint command failed with exit code 1" in failure, failure
    assert "(Ray job FAILED)" in failure and "ValueError: no GPU" in failure
