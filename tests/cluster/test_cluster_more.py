"""More of the reference's `cluster` commands end to end on kubesim (OpenShift profile): wait_fully_awake
and set_project_annotation, success and failure paths, through `ansible-playbook perfscale.topsail.toolbox`."""

from conftest import read

SIM_SETTINGS = dict(addons=["gpu-ready"])


def test_wait_fully_awake_waits_for_nodes_and_cluster_operators_and_names_a_degraded_one(toolbox, kube, tmp_path):
    run = toolbox("cluster wait_fully_awake", {"timeout": 60, "delay": 1}, tmp_path / "ok")
    assert run.returncode == 0, run.output
    assert "authentication" in read(run.command_dir, "clusteroperators.txt").split()
    assert len(read(run.command_dir, "nodes.txt").split()) >= 4

    operators = kube.dynamic.resources.get(api_version="config.openshift.io/v1", kind="ClusterOperator")
    degraded = operators.get(name="authentication").to_dict()
    for condition in degraded["status"]["conditions"]:
        if condition["type"] == "Degraded":
            condition.update(status="True", reason="OAuthServerDown", message="oauth-openshift is crash-looping")
    operators.status.replace(body=degraded)

    failed = toolbox("cluster wait_fully_awake", {"timeout": 2, "delay": 1}, tmp_path / "degraded")
    assert failed.returncode != 0
    failure = read(failed.command_dir, "FAILURE")
    assert ("not ready after 2 s; last state: 1 of 1 ClusterOperator(s) not settled; ClusterOperator authentication: "
            "Degraded=True (OAuthServerDown: oauth-openshift is crash-looping)") not in failure  # only one operator named
    assert "ClusterOperator(s) not settled; ClusterOperator authentication: Degraded=True (OAuthServerDown: " \
        "oauth-openshift is crash-looping)" in " ".join(failure.split())
    assert "not ready after 2 s; last state: 1 of" in " ".join(failure.split())
    assert "OAuthServerDown" in failure   # the object's conditions, from the capture


def test_set_project_annotation_sets_removes_and_refuses_a_missing_project(toolbox, kube, tmp_path):
    namespaces = kube.dynamic.resources.get(api_version="v1", kind="Namespace")
    namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "annotated"}})
    key = "scheduler.alpha.kubernetes.io/defaultTolerations"
    value = '[{"operator": "Exists", "effect": "NoSchedule", "key": "nvidia.com/gpu"}]'
    run = toolbox("cluster set_project_annotation", {"key": key, "value": value, "project": "annotated"}, tmp_path / "set")
    assert run.returncode == 0, run.output
    assert kube.get("Namespace", "annotated")["metadata"]["annotations"][key] == value
    assert read(run.command_dir, "annotated.txt").startswith("annotated %s=" % key)

    removed = toolbox("cluster set_project_annotation", {"key": key, "value": None, "project": "annotated"}, tmp_path / "rm")
    assert removed.returncode == 0, removed.output
    assert key not in (kube.get("Namespace", "annotated")["metadata"].get("annotations") or {})

    missing = toolbox("cluster set_project_annotation", {"key": key, "value": "x", "project": "nowhere"}, tmp_path / "no")
    assert missing.returncode != 0
    assert "project nowhere does not exist" in read(missing.command_dir, "FAILURE")

    neither = toolbox("cluster set_project_annotation", {"key": key, "value": "x", "project": None}, tmp_path / "neither")
    assert neither.returncode != 0
    assert "expected project: NAME or all: true (one of them)" in read(neither.command_dir, "FAILURE")
