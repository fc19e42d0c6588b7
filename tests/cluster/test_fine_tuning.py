"""fine_tuning run_fine_tuning_job end to end on kubesim (vanilla profile with the Kubeflow training CRDs):
the PyTorchJob over two pods, every pod's log kept, the master's Trainer summary parsed; a failed job and a
missing PVC said in one line."""

import json

from conftest import read

SIM_SETTINGS = dict(profile="vanilla", addons=["kubeflow"])
SUMMARY = {"train_runtime": 321.5, "train_samples_per_second": 12.4, "train_steps_per_second": 0.78,
           "train_loss": 1.21, "epoch": 1.0}


def test_a_fine_tuning_job_reports_its_trainer_summary_and_a_failure(toolbox, kube, sim, tmp_path):
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "ft"}})
    args = {"name": "granite-ft", "namespace": "ft", "pvc_name": "storage", "model_name": "granite-3b",
            "dataset_name": "alpaca.jsonl", "pod_count": 2, "gpu": 0, "dataset_replication": 4, "delay": 1, "timeout": 120,
            "hyper_parameters": {"num_train_epochs": 1, "per_device_train_batch_size": 4}, "use_secondary_nic": True}
    no_pvc = toolbox("fine_tuning run_fine_tuning_job", args, tmp_path / "no-pvc")
    assert no_pvc.returncode != 0
    assert "PersistentVolumeClaim storage does not exist" in " ".join(read(no_pvc.command_dir, "FAILURE").split())

    kube.dynamic.resources.get(api_version="v1", kind="PersistentVolumeClaim").create(namespace="ft", body={
        "metadata": {"name": "storage"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}})
    sim.image_behaviours.add("quay.io/modh/fms-hf-tuning:*", **{"trainer-summary": json.dumps(SUMMARY), "duration-s": "5"})
    run = toolbox("fine_tuning run_fine_tuning_job", args, tmp_path / "ok")
    assert run.returncode == 0, run.output
    assert "use_secondary_nic has no effect here and is ignored" in run.output
    summary = read(run.command_dir, "trainer_summary.json")
    assert summary["summary"] == SUMMARY and summary["pods"] == 2 and summary["dataset_replication"] == 4
    assert len(summary["losses"]) == 4 and summary["final_loss"] == summary["losses"][-1]["loss"]
    assert "Running training" in read(run.command_dir, "logs/granite-ft-master-0.log")
    assert read(run.command_dir, "logs/granite-ft-worker-0.log") is not None
    job = kube.get("PyTorchJob", "granite-ft", "ft", "kubeflow.org/v1")
    config = json.loads(kube.get("ConfigMap", "granite-ft-config", "ft")["data"]["config.json"])
    assert config["num_train_epochs"] == 1 and config["model_name_or_path"] == "/mnt/storage/model/granite-3b"
    assert job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 1

    sim.faults.add("controller", controller="pods", match={"namespace": "ft"}, message="CUDA out of memory")
    try:
        failed = toolbox("fine_tuning run_fine_tuning_job", args, tmp_path / "failed")
    finally:
        sim.faults.remove()
    assert failed.returncode != 0
    failure = " ".join(read(failed.command_dir, "FAILURE").split())
    assert "PyTorchJob ft/granite-ft: Failed=True (PyTorchJobFailed: " in failure, failure
    assert "container pytorch InjectedFault (exit code 1: CUDA out of memory)" in failure, failure
