"""pipelines deploy_application, capture_state and capture_notebooks_state end to end on kubesim (openshift
profile, RHOAI through OLM with the datasciencepipelines component): the DSPA rolled out as the Data
Science Pipelines operator does it and waited for; a DSPA that never gets ready, a missing application and
an empty namespace said in one line."""

import json

import pytest

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
    assert "argoproj.io/v1alpha1/Workflow" in read(capture.command_dir, "missing_kinds.txt")

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
