"""Test flows (cleanup_before -> prepare -> test -> cleanup_after) on kubesim: step selection, keep, the
final cleanup after a failure, parallel commands that all finish before the failure is raised, and
`make demo-k8s` end to end."""

import json
import os
import subprocess

from conftest import read
from helpers import REPO, ansible_env

FAILING_WAIT = {"command": "cluster wait_for", "from_config": False,
                "args": {"kind": "Namespace", "name": "does-not-exist", "jsonpath": "{.status.phase}",
                         "value": "Active", "timeout": 2, "delay": 1}}


def flow(playbook, tmp_path, steps, *extra):
    overrides = {"tests.cluster_demo.steps": steps}
    return playbook("playbooks/cluster_demo.yml", "-e", json.dumps({"overrides": overrides}),
                    "-e", "artifact_dir=%s" % tmp_path, *extra)


def dirs(root):
    return sorted(d for d in os.listdir(root) if d[:3].isdigit())


def test_parallel_commands_all_finish_then_the_failure_stops_the_flow_and_cleanup_still_runs(playbook, tmp_path):
    run = flow(playbook, tmp_path, {
        "cleanup_before": ["cluster cleanup_namespaces/cluster_demo"],
        "prepare": [{"parallel": ["cluster capture_environment", FAILING_WAIT]}],
        "test": ["cluster capture_state/cluster_demo"],
        "cleanup_after": ["cluster cleanup_namespaces/cluster_demo"],
    })
    assert run.returncode != 0
    # each parallel command in its own directory, numbered in the order given, the run lock shared
    assert dirs(tmp_path) == ["000__cluster__cleanup_namespaces_cluster_demo", "001__cluster__capture_environment",
                              "002__cluster__wait_for", "003__cluster__cleanup_namespaces_cluster_demo"]
    assert os.path.exists(tmp_path / "001__cluster__capture_environment" / "labels.json")  # the sibling finished
    assert "does-not-exist" in read(tmp_path / "002__cluster__wait_for", "FAILURE")
    summary = read(tmp_path, "flow.json")
    assert summary["outcomes"]["cleanup_before"] == "ok" and summary["outcomes"]["cleanup_after"] == "ok"
    assert summary["outcomes"]["prepare"].startswith("FAILED: 1 of 2 command(s) failed: cluster wait_for")
    assert "test            not run (an earlier step failed)" in summary["steps"]
    assert "flow cluster_demo: prepare failed" in run.flat


def test_steps_skip_and_keep_select_what_runs(playbook, tmp_path):
    steps = {"cleanup_before": ["cluster cleanup_namespaces/cluster_demo"],
             "prepare": ["cluster capture_environment"],
             "test": ["cluster capture_state/cluster_demo"],
             "cleanup_after": ["cluster cleanup_namespaces/cluster_demo"]}
    only = flow(playbook, tmp_path / "only", steps, "-e", "steps=prepare,test")
    assert only.returncode == 0, only.output
    assert dirs(tmp_path / "only") == ["000__cluster__capture_environment", "001__cluster__capture_state_cluster_demo"]
    assert "cleanup_after   not run (not in -e steps)" in read(tmp_path / "only", "flow.json")["steps"]

    kept = flow(playbook, tmp_path / "kept", steps, "-e", "skip=cleanup_before,prepare", "-e", "keep=true")
    assert kept.returncode == 0, kept.output
    assert dirs(tmp_path / "kept") == ["000__cluster__capture_state_cluster_demo"]
    lines = read(tmp_path / "kept", "flow.json")["steps"]
    assert "prepare         not run (skipped with -e skip)" in lines
    assert "cleanup_after   not run (kept (clusters.keep / -e keep=true))" in lines

    # the same selection from a CI comment's launch arguments
    launched = flow(playbook, tmp_path / "launched", steps, "-e", "launch_text=/test cluster_demo\n/only prepare")
    assert launched.returncode == 0, launched.output
    assert dirs(tmp_path / "launched") == ["000__cluster__capture_environment"]
    assert "/only prepare" in read(tmp_path / "launched", "launch.yaml")


def test_a_wrong_flow_or_step_is_one_line_before_anything_runs(playbook, tmp_path):
    wrong = flow(playbook, tmp_path / "wrong", {"prepare": ["cluster capture_environment"], "tets": []})
    assert wrong.returncode != 0
    assert "tests.cluster_demo.steps: unknown step(s) tets (the steps are cleanup_before, prepare, test, " \
           "cleanup_after)" in wrong.flat
    assert not os.path.isdir(tmp_path / "wrong") or not dirs(tmp_path / "wrong")
    bad_step = flow(playbook, tmp_path / "bad", {"prepare": ["cluster capture_environment"]}, "-e", "steps=prepar")
    assert bad_step.returncode != 0
    assert "-e steps: unknown step(s) prepar (the steps are cleanup_before, prepare, test, cleanup_after)" \
        in bad_step.flat
    assert not dirs(tmp_path / "bad")


def test_make_demo_k8s_runs_the_cluster_flow_end_to_end(tmp_path):
    root = tmp_path / "demo"
    done = subprocess.run(["make", "-s", "demo-k8s", "DEMO_K8S_ARGS=-e artifact_dir=%s" % root], cwd=REPO,
                          env=ansible_env(), capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "artifacts: %s" % root in output
    assert dirs(root) == ["000__cluster__cleanup_namespaces_cluster_demo", "001__cluster__capture_environment",
                          "002__cluster__deploy_operator_cluster_demo", "003__cluster__apply_manifests_cluster_demo",
                          "004__cluster__wait_for_cluster_demo", "005__cluster__capture_state_cluster_demo",
                          "006__cluster__undeploy_operator_cluster_demo",
                          "007__cluster__cleanup_namespaces_cluster_demo"]
    assert read(root / "002__cluster__deploy_operator_cluster_demo", "csv_version.txt").strip() == "1.1.0"
    conditions = read(root / "005__cluster__capture_state_cluster_demo", "conditions.txt")
    assert "Deployment/demo-server -n perfscale-demo: ready=2/2; Available=True" in conditions
    assert "DemoApp/demoapp-sample -n demo-operator: phase=Ready" in conditions
    assert set(read(root, "flow.json")["outcomes"].values()) == {"ok"}
