"""pipelines deploy_application, run_kfp_notebook, capture_state and capture_notebooks_state end to end on
kubesim (openshift profile, RHOAI through OLM with the datasciencepipelines component): the DSPA rolled out
as the Data Science Pipelines operator does it and waited for; runs through KFP's API as Argo Workflows,
measured; a failing task; a DSPA that never gets ready, a missing application and
an empty namespace said in one line."""

import json
import os

import pytest
import yaml

from conftest import read

SIM_SETTINGS = dict(addons=[])
NAMESPACE = "dsp-test"


@pytest.fixture
def rhoai(sim, playbook, tmp_path_factory):
    """RHOAI with Data Science Pipelines managed (rhods deploy_ods, then the DataScienceCluster)."""
    root = tmp_path_factory.mktemp("rhoai")
    done = playbook("perfscale.topsail.toolbox", "-e", json.dumps({"command": "rhods deploy_ods", "args": {
        "catalog_image": "quay.io/rhoai/rhoai-fbc-fragment", "tag": "rhoai-2.22", "channel": "stable"}}),
        "-e", "artifact_dir=%s" % root)
    assert done.returncode == 0, done.output[-3000:]
    done = playbook("perfscale.topsail.toolbox", "-e", json.dumps({
        "command": "rhods update_datasciencecluster",
        "args": {"enable": ["datasciencepipelines"], "delay": 1, "timeout": 120}}), "-e", "artifact_dir=%s" % (root / "dsc"))
    assert done.returncode == 0, done.output[-3000:]


def test_deploy_capture_and_failures(rhoai, toolbox, kube, sim, tmp_path):
    del rhoai
    run = toolbox("pipelines deploy_application", {"name": "sample", "namespace": NAMESPACE, "delay": 1},
                  tmp_path / "deploy")
    assert run.returncode == 0, run.output[-3000:]
    dspa = kube.get("DataSciencePipelinesApplication", "sample", NAMESPACE,
                    "datasciencepipelinesapplications.opendatahub.io/v1")
    ready = next(c for c in dspa["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["message"]) == ("True", "All components are ready.")
    assert "ds-pipeline-sample" in read(run.command_dir, "artifacts/dsp_application.yaml")
    # again: the same DSPA, applied in place, Ready at once
    again = toolbox("pipelines deploy_application", {"name": "sample", "namespace": NAMESPACE, "delay": 1},
                    tmp_path / "again")
    assert again.returncode == 0, again.output[-3000:]
    assert kube.get("DataSciencePipelinesApplication", "sample", NAMESPACE,
                    "datasciencepipelinesapplications.opendatahub.io/v1")["metadata"]["uid"] == dspa["metadata"]["uid"]

    capture = toolbox("pipelines capture_state", {"namespace": NAMESPACE, "user_id": "3"}, tmp_path / "capture")
    assert capture.returncode == 0, capture.output[-3000:]
    assert read(capture.command_dir, "applications.json")["items"][0]["metadata"]["name"] == "sample"
    deployments = {d["metadata"]["name"] for d in read(capture.command_dir, "deployments.json")["items"]}
    assert {"mariadb-sample", "ds-pipeline-sample", "ds-pipeline-scheduledworkflow-sample"} <= deployments
    assert read(capture.command_dir, "workflow.json")["items"] == []
    assert "argoproj.io/v1alpha1/Workflow" not in read(capture.command_dir, "missing_kinds.txt")

    # runs: the hello-world pipeline uploaded, three runs submitted through KFP's API, their Argo Workflows
    # waited for, the KPIs from the runs' creation and the workflows' root start and end
    runs = toolbox("pipelines run_kfp_notebook", {"namespace": NAMESPACE, "notebook_name": "user3-pl0", "run_count": 3,
                                                  "run_delay": 0.2, "delay": 1}, tmp_path / "runs")
    assert runs.returncode == 0, runs.output[-3000:]
    submitted = read(runs.command_dir, "notebook-artifacts/user3-pl0_runs_submit.json")
    assert sorted(submitted) == ["user3-pl0-run0", "user3-pl0-run1", "user3-pl0-run2"]
    assert read(runs.command_dir, "notebook-artifacts/user3-pl0_runs_complete.json") == {}
    result = read(runs.command_dir, "result.json")
    assert result["name"] == "dsp_runs" and result["@parameters"]["dsp_application"] == "sample"
    kpis = result["@result"]
    assert (kpis["run_count"], kpis["succeeded_runs"], kpis["failed_runs"]) == (3, 3, 0)
    assert 0 <= kpis["dsp_run_latency_s_min"] <= kpis["dsp_run_latency_s_median"] <= kpis["dsp_run_latency_s_max"]
    # three layers of tasks, one after the other: the workflow lasts at least three pods' time
    assert kpis["dsp_run_duration_s_min"] >= 3, kpis
    assert "dsp_run_latency_s_degrade_speed_s_per_run" in kpis
    records = read(runs.command_dir, "dsp_runs.json")
    workflows = {w["metadata"]["name"]: w for w in yaml.safe_load(read(runs.command_dir, "artifacts/workflow.yaml"))}
    assert [r["name"] for r in records] == ["user3-pl0-run0", "user3-pl0-run1", "user3-pl0-run2"]
    assert all(r["phase"] == "Succeeded" and r["workflow"] in workflows for r in records)
    assert len(yaml.safe_load(read(runs.command_dir, "artifacts/pods.yaml"))) == 15
    assert read(runs.command_dir, "settings").strip() == "notebook_file_name=pipeline.yaml"
    assert read(runs.command_dir, "src/notebook-files/pipeline.py")
    # again under the same name: a new version of the pipeline, the run waited for before the next one
    waited = toolbox("pipelines run_kfp_notebook", {"namespace": NAMESPACE, "notebook_name": "user3-pl0", "run_count": 1,
                                                    "wait_for_run_completion": True, "delay": 1}, tmp_path / "waited")
    assert waited.returncode == 0, waited.output[-3000:]
    assert list(read(waited.command_dir, "notebook-artifacts/user3-pl0_runs_complete.json")) == ["user3-pl0-run0"]
    versions = read(waited.command_dir, "notebook-artifacts/runs.json")
    assert versions["runs"][0]["state"] == "SUCCEEDED"
    assert versions["version"]["name"].startswith("user3-pl0-")
    # capture_state finds this user's workflows
    captured = toolbox("pipelines capture_state", {"namespace": NAMESPACE, "user_id": "3"}, tmp_path / "captured")
    assert captured.returncode == 0, captured.output[-3000:]
    assert len(read(captured.command_dir, "workflow.json")["items"]) == 4

    # a task that fails: the workflow Failed, the command fails naming the task, the KPIs still recorded
    sim.image_behaviours.add("*/ubi9/python-311:*", outcome="Failed", **{"exit-code": "3"})
    try:
        failing = toolbox("pipelines run_kfp_notebook", {"namespace": NAMESPACE, "notebook_name": "user4-pl0",
                                                         "run_count": 1, "delay": 1}, tmp_path / "failing")
    finally:
        sim.image_behaviours.clear()
    assert failing.returncode != 0
    failure = " ".join(read(failing.command_dir, "FAILURE").split())
    assert "Failed (run user4-pl0-run0): task stage1: Error (exit code 3)" in failure, failure
    assert read(failing.command_dir, "result.json")["@result"]["failed_runs"] == 1
    failed_pod = yaml.safe_load(read(failing.command_dir, "artifacts/pods.yaml"))[0]["metadata"]["name"]
    assert os.path.exists(os.path.join(failing.command_dir, "artifacts/pods/%s.log" % failed_pod))
    # a directory without the compiled pipeline: one line, before anything is submitted
    (tmp_path / "no-pipeline").mkdir()
    nothing = toolbox("pipelines run_kfp_notebook", {"namespace": NAMESPACE, "notebook_directory": str(tmp_path / "no-pipeline"),
                                                     "notebook_filename": "kfp_hello_world.ipynb", "run_count": 1},
                      tmp_path / "nothing")
    assert nothing.returncode != 0
    assert "no-pipeline/pipeline.yaml: no such file; expected the compiled KFP pipeline" in " ".join(
        read(nothing.command_dir, "FAILURE").split())

    notebooks = toolbox("pipelines capture_notebooks_state", {}, tmp_path / "notebooks")
    assert notebooks.returncode == 0, notebooks.output[-3000:]
    assert read(notebooks.command_dir, "rhods.version").strip()
    assert read(notebooks.command_dir, "nodes.json")["items"]
    assert json.dumps(read(notebooks.command_dir, "ocp_version.yml")).count("4.") >= 1

    missing = toolbox("pipelines capture_state", {"namespace": NAMESPACE, "dsp_application_name": "nope"},
                      tmp_path / "missing")
    assert missing.returncode != 0
    assert "no DataSciencePipelinesApplication nope in namespace %s (found: sample)" % NAMESPACE in " ".join(
        read(missing.command_dir, "FAILURE").split())
    empty = toolbox("pipelines capture_state", {}, tmp_path / "empty")
    assert empty.returncode != 0 and "namespace is empty" in read(empty.command_dir, "FAILURE")

    # pods that never start: the DSPA stays not Ready, the wait says which conditions are still False
    sim.faults.add("controller", controller="pods", match={"namespace": "dsp-broken"}, message="ImagePullBackOff")
    try:
        broken = toolbox("pipelines deploy_application", {"name": "sample", "namespace": "dsp-broken", "delay": 1,
                                                          "timeout": 15}, tmp_path / "broken")
    finally:
        sim.faults.remove()
    assert broken.returncode != 0
    failure = " ".join(read(broken.command_dir, "FAILURE").split())
    assert "DataSciencePipelinesApplication dsp-broken/sample: not Ready (DatabaseAvailable=False (FailingToDeploy:" \
        in failure, failure
    assert read(broken.command_dir, "artifacts/dsp_application.yaml")
