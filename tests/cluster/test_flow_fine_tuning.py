"""The fine_tuning flow end to end on kubesim (OpenShift profile, GPU nodes that NFD and the GPU operator make
ready): the cleanup, the prepare commands side by side (NFD, RHOAI with the training operator, the GPU operator
and its ClusterPolicy, the model and the dataset downloaded to a PVC), a matrix whose points each run a
PyTorchJob in their own directory (one of them failing), the fine_tuning workload's KPIs and report, the
cleanup, and the verdict that names the failed point."""

import glob
import json
import os

from conftest import read

SUMMARY = {"train_runtime": 321.5, "train_samples_per_second": 12.4, "train_steps_per_second": 0.78,
           "train_loss": 1.21, "epoch": 1.0}
BROKEN_IMAGE = "quay.io/modh/fms-hf-tuning:broken"


def test_the_fine_tuning_flow_runs_every_point_post_processes_and_names_the_failed_one(playbook, sim, kube, tmp_path):
    sim.image_behaviours.add("quay.io/modh/fms-hf-tuning:*", **{"trainer-summary": json.dumps(SUMMARY), "duration-s": "3"})
    sim.image_behaviours.add(BROKEN_IMAGE, log="torch.OutOfMemoryError: CUDA out of memory", outcome="Failed",
                             **{"exit-code": "1", "duration-s": "1"})
    # one point of the smoke preset's two (the test's time), and a broken one
    overrides = {"tests.fine_tuning.benchmark.matrix.factors.dataset_replication": [2],
                 "tests.fine_tuning.benchmark.matrix.include": [{"dataset_replication": 3, "container_image": BROKEN_IMAGE}]}
    run = playbook("playbooks/fine_tuning.yml", "-e", "preset=fine_tuning_smoke", "-e", json.dumps({"overrides": overrides}),
                   "-e", "artifact_dir=%s" % tmp_path, timeout=900)
    assert run.returncode != 0
    assert "1 point(s) failed: x3" in run.flat, run.output[-3000:]

    # the flow's steps and the prepare commands, each in its numbered directory
    flow = read(tmp_path, "flow.json")
    assert flow["outcomes"] == {"cleanup_before": "ok", "prepare": "ok", "test": "ok", "cleanup_after": "ok"}, flow
    names = sorted(os.listdir(tmp_path))
    for expected in ("cluster__capture_environment", "nfd_operator__deploy_from_operatorhub_fine_tuning",
                     "rhods__deploy_ods_fine_tuning", "gpu_operator__wait_stack_deployed_fine_tuning",
                     "storage__download_to_pvc_fine_tuning_dataset", "__plots"):
        assert any(name.endswith(expected) for name in names), (expected, names)

    # each point ran its PyTorchJob in its own directory, with its settings in its configuration
    points = sorted(glob.glob(str(tmp_path / "*__fine_tuning" / "*__x*")))
    assert [os.path.basename(p)[-2:] for p in points] == ["x2", "x3"]
    job_dirs = [glob.glob(os.path.join(p, "*__fine_tuning__run_fine_tuning_job_fine_tuning"))[0] for p in points]
    assert read(points[0], "output.json")["@result"]["train_runtime"] == SUMMARY["train_runtime"]
    assert read(points[0], "output.json")["@parameters"]["dataset_replication"] == 2
    assert "dataset_replication: 2" in read(points[0], "config.yaml")
    assert not os.path.exists(os.path.join(points[0], "run.json"))   # the point belongs to the flow's run
    assert read(job_dirs[0], "trainer_summary.json")["summary"] == SUMMARY
    failure = read(points[1], "FAILURE")
    assert "fine_tuning__run_fine_tuning_job_fine_tuning" in failure and "PyTorchJob fine-tuning-testing/fine-tuning: " \
        "Failed=True (PyTorchJobFailed: " in " ".join(failure.split()), failure
    assert "torch.OutOfMemoryError: CUDA out of memory" in failure, failure
    assert not os.path.exists(os.path.join(points[1], "output.json"))

    # the fine_tuning workload: KPIs with the platform's labels, the report, the error report
    plots = sorted(glob.glob(str(tmp_path / "*__plots")))[-1]
    payloads = read(plots, "kpis.json")
    succeeded = [p for p in payloads if p["kpis"]["train_runtime"]["value"] is not None]
    assert len(succeeded) == 1
    labels = succeeded[0]["labels"]
    assert labels["model"] == "granite-3b-code-instruct-2k" and labels["gpus_total"] == 0
    assert labels["rhoai_version"] and labels["openshift_version"] and labels["gpu_product"]
    assert succeeded[0]["kpis"]["train_samples_per_second"]["value"] == SUMMARY["train_samples_per_second"]
    assert os.path.exists(os.path.join(plots, "fine_tuning_throughput.html"))

    # the cleanup removed the flow's namespace
    assert kube.get("Namespace", "fine-tuning-testing") is None or \
        kube.get("Namespace", "fine-tuning-testing")["status"].get("phase") == "Terminating"
