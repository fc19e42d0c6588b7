"""The `cluster` toolbox commands of this project and the reference, end to end on kubesim (OpenShift
profile, GPUs ready), each through `ansible-playbook perfscale.topsail.toolbox` as a user runs it."""

import os

import yaml

from conftest import read
from helpers import grep_tree

SIM_SETTINGS = dict(addons=["gpu-ready"])

WORKLOAD = """\
apiVersion: v1
kind: Namespace
metadata:
  name: {ns}
  labels:
    perfscale.topsail/flow: toolbox-test
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: {ns}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
{annotations}
    spec:
      containers:
        - name: web
          image: quay.io/example/web:1
          {extra}
"""


def workload(tmp_path, ns, replicas=2, extra="", annotations=""):
    path = tmp_path / ("%s.yaml" % ns)
    path.write_text(WORKLOAD.format(ns=ns, replicas=replicas, extra=extra, annotations=annotations))
    return str(path)


def test_capture_environment_writes_the_cluster_and_its_labels(toolbox, tmp_path):
    run = toolbox("cluster capture_environment", {}, tmp_path)
    assert run.returncode == 0, run.output
    labels = read(run.command_dir, "labels.json")
    assert labels["platform"] == "openshift" and labels["openshift_version"]
    assert labels["kubernetes_version"].startswith("v1.35")
    assert labels["gpu_node_count"] == 2 and labels["gpu_count"] == 8
    assert "L40S" in labels["gpu_product"]
    assert labels["worker_instance_types"] == "2x g6e.12xlarge, 1x m6i.4xlarge"
    nodes = read(run.command_dir, "nodes.json")
    control = [n for n in nodes if "control-plane" in n["roles"]][0]
    assert control["taints"][0]["key"] == "node-role.kubernetes.io/control-plane"
    assert {"version.json", "gpus.json", "storage_classes.json", "clusterversion.json",
            "infrastructure.json"} <= set(os.listdir(run.command_dir))
    assert [s["name"] for s in read(run.command_dir, "storage_classes.json") if s["default"]] == ["standard"]


def test_apply_manifests_validates_applies_waits_and_is_idempotent(toolbox, tmp_path, kube):
    manifest = workload(tmp_path, "apply-ok")
    first = toolbox("cluster apply_manifests", {"manifest_file": manifest, "timeout": 60}, tmp_path / "one")
    assert first.returncode == 0, first.output
    assert read(first.command_dir, "resources.txt").splitlines() == ["Namespace/apply-ok", "Deployment/web -n apply-ok"]
    assert os.path.exists(os.path.join(first.command_dir, "src", "apply-ok.yaml"))
    assert kube.get("Deployment", "web", "apply-ok", "apps/v1")["status"]["readyReplicas"] == 2
    again = toolbox("cluster apply_manifests", {"manifest_file": manifest, "timeout": 60}, tmp_path / "two")
    assert again.returncode == 0, again.output
    # the steps callback's line of the task: its status, then its name
    applied = [line.split() for line in again.output.splitlines() if line.startswith("  ") and " Apply them" in line]
    assert [words[:3] for words in applied] == [["ok", "Apply", "them"]], again.output


def test_a_wrong_key_fails_before_anything_reaches_the_cluster(toolbox, tmp_path, kube):
    manifest = workload(tmp_path, "apply-typo", extra="imagePullPolcy: Always")
    run = toolbox("cluster apply_manifests", {"manifest_file": manifest}, tmp_path)
    assert run.returncode != 0
    line = ("Deployment web: spec.template.spec.containers[0].imagePullPolcy: unknown field "
            "(schema io.k8s.api.core.v1.Container)")
    assert line in run.flat
    assert line in read(run.command_dir, "FAILURE")
    assert kube.get("Namespace", "apply-typo") is None  # the namespace before the Deployment was not sent either
    assert not os.path.exists(os.path.join(run.command_dir, "failure_state"))  # nothing to capture


def test_bad_arguments_are_one_line_naming_the_option(toolbox, tmp_path):
    run = toolbox("cluster wait_for", {"kind": "Pod", "timout": 3}, tmp_path)
    assert run.returncode != 0
    assert "timout" in run.flat and "cluster wait_for" in run.flat


def test_wait_for_a_condition_that_never_comes_names_the_objects_and_captures_them(toolbox, tmp_path):
    never = workload(tmp_path, "never-ready", replicas=1,
                     annotations='      annotations: {"kubesim.perfscale.io/ready": "false"}')
    applied = toolbox("cluster apply_manifests", {"manifest_file": never, "wait": False}, tmp_path)
    assert applied.returncode == 0, applied.output
    run = toolbox("cluster wait_for", {"kind": "Deployment", "api_version": "apps/v1", "name": "web",
                                       "namespace": "never-ready", "condition": "Available", "timeout": 3}, tmp_path)
    assert run.returncode != 0
    failure = read(run.command_dir, "FAILURE")
    assert "Deployment/web -n never-ready: ready=0/1; Available=False" in failure
    captured = os.path.join(run.command_dir, "failure_state")
    assert os.path.exists(os.path.join(captured, "conditions.txt"))
    assert os.path.exists(os.path.join(captured, "never-ready", "pod.yaml"))
    assert os.path.exists(os.path.join(captured, "never-ready", "events.yaml"))


def test_wait_for_a_jsonpath_value(toolbox, tmp_path):
    run = toolbox("cluster wait_for", {"kind": "Namespace", "name": "default", "jsonpath": "{.status.phase}",
                                       "value": "Active", "timeout": 10}, tmp_path)
    assert run.returncode == 0, run.output
    objects = yaml.safe_load(read(run.command_dir, "objects.yaml"))
    assert objects[0]["metadata"]["name"] == "default"


def test_capture_state_takes_objects_logs_events_and_masks_secrets(toolbox, tmp_path):
    manifest = tmp_path / "secret.yaml"
    manifest.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: capture-me}\n---\n"
                        "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: capture-me}\n"
                        "stringData: {password: s3cr3t-value-42}\n")
    assert toolbox("cluster apply_manifests", {"manifest_file": str(manifest), "wait": False},
                   tmp_path / "apply").returncode == 0
    run = toolbox("cluster capture_state", {"namespaces": ["capture-me"], "kinds": ["Secret", "Pod"]}, tmp_path / "cap")
    assert run.returncode == 0, run.output
    secrets = yaml.safe_load(read(run.command_dir, os.path.join("capture-me", "secret.yaml")))
    assert secrets[0]["metadata"]["name"] == "creds"
    assert grep_tree(str(tmp_path / "cap"), "s3cr3t-value-42") == []
    assert read(run.command_dir, "counts.json")["Secret"] == 1


def test_deploy_operator_through_olm_with_manual_approval_then_undeploy(toolbox, tmp_path):
    args = {"catalog": "community-operators", "manifest_name": "demo-operator", "namespace": "demo-op",
            "channel": "stable", "version": "1.0.0", "deploy_cr": "DemoApp", "delay": 1, "timeout": 120}
    run = toolbox("cluster deploy_operator", args, tmp_path)
    assert run.returncode == 0, run.output
    assert read(run.command_dir, "csv_version.txt").strip() == "1.0.0"
    csv = yaml.safe_load(read(run.command_dir, "csv.yaml"))
    assert csv["metadata"]["name"] == "demo-operator.v1.0.0" and csv["status"]["phase"] == "Succeeded"
    subscription = yaml.safe_load(read(run.command_dir, "subscription.yaml"))
    assert subscription["spec"]["startingCSV"] == "demo-operator.v1.0.0"
    rendered = list(yaml.safe_load_all(read(run.command_dir, os.path.join("src", "subscription.yaml"))))
    assert [d["kind"] for d in rendered] == ["Namespace", "OperatorGroup", "Subscription"]
    custom = yaml.safe_load(read(run.command_dir, "custom_resource.yaml"))
    assert custom["kind"] == "DemoApp"
    # Manual approval: the upgrade to 1.1.0 that OLM proposes next is not approved
    again = toolbox("cluster deploy_operator", args, tmp_path)
    assert again.returncode == 0, again.output
    csv = yaml.safe_load(read(again.command_dir, "csv.yaml"))
    assert csv["metadata"]["name"] == "demo-operator.v1.0.0"

    gone = toolbox("cluster undeploy_operator", {"manifest_name": "demo-operator", "namespace": "demo-op",
                                                 "delete_namespace": True, "timeout": 60}, tmp_path)
    assert gone.returncode == 0, gone.output
    assert read(gone.command_dir, "removed.txt").splitlines() == [
        "Subscription/demo-operator", "ClusterServiceVersion/demo-operator.v1.0.0", "Namespace/demo-op"]


def test_deploy_operator_failures_name_what_exists_or_what_failed(toolbox, tmp_path):
    no_channel = toolbox("cluster deploy_operator", {"catalog": "community-operators", "manifest_name": "demo-operator",
                                                     "namespace": "demo-bad", "channel": "nightly"}, tmp_path)
    assert no_channel.returncode != 0
    assert "package demo-operator in community-operators: no channel 'nightly' (channels: alpha, candidate, stable" \
        in no_channel.flat

    broken = toolbox("cluster deploy_operator", {"catalog": "community-operators", "manifest_name": "demo-operator",
                                                 "namespace": "demo-broken", "channel": "candidate", "version": "1.2.0",
                                                 "delay": 1, "timeout": 15}, tmp_path)
    assert broken.returncode != 0
    failure = read(broken.command_dir, "FAILURE")
    # OLM retries a Failed install (the CSV's requirements are checked again): the wait takes its
    # timeout and names the last state it saw
    assert "not ready after 15 s; last state: ClusterServiceVersion demo-broken/demo-operator.v1.2.0: phase Failed " \
           "(InstallComponentFailed: install strategy failed: " in " ".join(failure.split()), failure
    assert "ClusterServiceVersion/demo-operator.v1.2.0 -n demo-broken: phase=Failed" in failure
    assert "Subscription/demo-operator -n demo-broken" in failure
    captured = os.path.join(broken.command_dir, "failure_state")
    assert os.path.exists(os.path.join(captured, "demo-broken", "clusterserviceversion.yaml"))


def test_cleanup_namespaces_by_label_waits_until_they_are_gone(toolbox, tmp_path, kube):
    for ns in ("clean-a", "clean-b"):
        assert toolbox("cluster apply_manifests", {"manifest_file": workload(tmp_path, ns, replicas=1), "wait": False},
                       tmp_path / ns).returncode == 0
    run = toolbox("cluster cleanup_namespaces", {"label_selector": "perfscale.topsail/flow=toolbox-test",
                                                 "timeout": 60}, tmp_path / "clean")
    assert run.returncode == 0, run.output
    deleted = read(run.command_dir, "deleted.txt").splitlines()
    assert {"clean-a", "clean-b"} <= set(deleted)
    assert kube.get("Namespace", "clean-a") is None and kube.get("Namespace", "clean-b") is None
    refused = toolbox("cluster cleanup_namespaces", {}, tmp_path / "refused")
    assert refused.returncode != 0
    assert "expected namespaces or label_selector (refusing to select every namespace)" in refused.flat
