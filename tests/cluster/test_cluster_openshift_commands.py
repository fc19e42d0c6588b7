"""The reference's OpenShift-side `cluster` commands end to end on kubesim (OpenShift profile): set_scale,
upgrade_to_image, enable_userworkload_monitoring, create_htpasswd_adminuser, preload_image - success and
failure paths, through `ansible-playbook perfscale.topsail.toolbox`, as a user runs them."""

import base64
import os

from conftest import read

SIM_SETTINGS = dict(addons=["gpu-ready"])
MACHINE_API = "machine.openshift.io/v1beta1"


def _machinesets(kube):
    return {ms["metadata"]["name"]: ms for ms in kube.get("MachineSet", namespace="openshift-machine-api",
                                                          api_version=MACHINE_API)}


def test_set_scale_creates_scales_and_refuses(toolbox, kube, tmp_path):
    # no MachineSet of m6i.2xlarge yet: one is created from the first worker MachineSet, tainted, with spot instances
    run = toolbox("cluster set_scale", {"instance_type": "m6i.2xlarge", "scale": 2, "taint": "perf=true:NoSchedule",
                                        "spot": True, "disk_size": 200, "delay": 1, "timeout": 120}, tmp_path / "new")
    assert run.returncode == 0, run.output
    created = _machinesets(kube)["kubesim-x7k2p-m6i-2xlarge-us-east-1a"]
    provider = created["spec"]["template"]["spec"]["providerSpec"]["value"]
    assert (created["spec"]["replicas"], provider["instanceType"], provider["spotMarketOptions"]) == (2, "m6i.2xlarge", {})
    assert provider["blockDevices"][0]["ebs"]["volumeSize"] == 200
    nodes = read(run.command_dir, "nodes.txt").split()
    assert len(nodes) == 2
    for name in nodes:
        node = kube.get("Node", name)
        assert node["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "m6i.2xlarge"
        assert {"key": "perf", "value": "true", "effect": "NoSchedule"} in node["spec"]["taints"]

    # down to 1: the same MachineSet, one node left
    down = toolbox("cluster set_scale", {"instance_type": "m6i.2xlarge", "scale": 1, "delay": 1, "timeout": 120},
                   tmp_path / "down")
    assert down.returncode == 0, down.output
    assert _machinesets(kube)["kubesim-x7k2p-m6i-2xlarge-us-east-1a"]["spec"]["replicas"] == 1
    assert read(down.command_dir, "plan.json")["replicas"] == {"kubesim-x7k2p-m6i-2xlarge-us-east-1a": 1}

    # a second MachineSet of the same type with replicas: refused without force (nothing changed)
    other = toolbox("cluster set_scale", {"instance_type": "m6i.2xlarge", "scale": 1, "name": "kubesim-x7k2p-m6i-extra",
                                          "delay": 1, "timeout": 120}, tmp_path / "extra")
    assert other.returncode == 0, other.output
    refused = toolbox("cluster set_scale", {"instance_type": "m6i.2xlarge", "scale": 3}, tmp_path / "refused")
    assert refused.returncode != 0
    assert ("MachineSet(s) kubesim-x7k2p-m6i-extra of m6i.2xlarge also have replicas: set force: true to set them to 0"
            in read(refused.command_dir, "FAILURE"))

    # an instance type the cloud does not have: the Machine fails and the command says why, without waiting it out
    failed = toolbox("cluster set_scale", {"instance_type": "x9.nonexistent", "scale": 1, "delay": 1, "timeout": 300},
                     tmp_path / "failed")
    assert failed.returncode != 0
    failure = " ".join(read(failed.command_dir, "FAILURE").split())
    assert "cluster set_scale: Machine(s) kubesim-x7k2p-x9-nonexistent-us-east-1a-" in failure
    assert "InvalidConfiguration" in failure and "Failed" in failure


def test_upgrade_to_image_completes_and_reports_a_failing_update(toolbox, kube, sim, tmp_path):
    version = kube.get("ClusterVersion", "version", api_version="config.openshift.io/v1")
    target = version["status"]["availableUpdates"][0]["image"]
    run = toolbox("cluster upgrade_to_image", {"image": target, "delay": 1, "timeout": 120}, tmp_path / "ok")
    assert run.returncode == 0, run.output
    newest = read(run.command_dir, "clusterversion.json")["status"]["history"][0]
    assert (newest["image"], newest["state"]) == (target, "Completed")
    assert read(run.command_dir, "history.txt").startswith("Completed 4.19.10 " + target)

    again = toolbox("cluster upgrade_to_image", {"image": target, "delay": 1, "timeout": 5}, tmp_path / "again")
    assert again.returncode == 0, again.output   # already there: nothing asked

    cluster_versions = kube.dynamic.resources.get(api_version="config.openshift.io/v1", kind="ClusterVersion")
    # a Failing update is not a final state: the CVO keeps trying (and clears Failing when the
    # operators recover), so the role waits its timeout and names what it saw last
    cluster_versions.patch(name="version", body={"metadata": {"annotations": {
        "kubesim.perfscale.io/fail": "Cluster operator etcd is degraded"}}}, content_type="application/merge-patch+json")
    failing = toolbox("cluster upgrade_to_image", {"image": "quay.io/openshift-release-dev/ocp-release:4.19.11-x86_64",
                                                   "delay": 1, "timeout": 8}, tmp_path / "failing")
    assert failing.returncode != 0
    failure = " ".join(read(failing.command_dir, "FAILURE").split())
    assert "not ready after 8 s; last state: ClusterVersion version: newest history 4.19.11 Partial " \
           "(Failing=True (UpdatePayloadFailed: Cluster operator etcd is degraded))" in failure, failure
    cluster_versions.patch(name="version", body={"metadata": {"annotations": {"kubesim.perfscale.io/fail": None}}},
                           content_type="application/merge-patch+json")


def test_enable_userworkload_monitoring_keeps_settings_and_names_a_missing_namespace(toolbox, kube, tmp_path):
    configmaps = kube.dynamic.resources.get(api_version="v1", kind="ConfigMap")
    configmaps.patch(name="cluster-monitoring-config", namespace="openshift-monitoring",
                     body={"data": {"config.yaml": "prometheusK8s:\n  retention: 7d\n"}},
                     content_type="application/merge-patch+json")
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(
        body={"metadata": {"name": "served", "labels": {"openshift.io/user-monitoring": "false"}}})
    run = toolbox("cluster enable_userworkload_monitoring", {"namespaces": ["served"], "delay": 1, "timeout": 120},
                  tmp_path / "ok")
    assert run.returncode == 0, run.output
    import yaml
    config = yaml.safe_load(kube.get("ConfigMap", "cluster-monitoring-config", "openshift-monitoring")["data"]["config.yaml"])
    assert config == {"enableUserWorkload": True, "prometheusK8s": {"retention": "7d"}}
    assert kube.get("Namespace", "served")["metadata"]["labels"]["openshift.io/user-monitoring"] == "true"
    assert kube.get("StatefulSet", "prometheus-user-workload", "openshift-user-workload-monitoring", "apps/v1")

    missing = toolbox("cluster enable_userworkload_monitoring", {"namespaces": ["served", "nowhere"]}, tmp_path / "no")
    assert missing.returncode != 0
    assert "namespace(s) nowhere do not exist" in " ".join(read(missing.command_dir, "FAILURE").split())


def test_create_htpasswd_adminuser_never_shows_the_password(toolbox, kube, tmp_path):
    password = "Pw-%s" % os.urandom(8).hex()
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "admin-password").write_text(password + "\n")
    env = {"PERFSCALE_SECRETS_DIR": str(secrets)}
    args = {"username": "perf-admin", "passwordfile": "secret:admin-password", "wait": True, "delay": 1, "timeout": 120}
    run = toolbox("cluster create_htpasswd_adminuser", args, tmp_path / "ok", env=env)
    assert run.returncode == 0, run.output
    import bcrypt
    htpasswd = base64.b64decode(kube.get("Secret", "htpass-secret", "openshift-config")["data"]["htpasswd"]).decode()
    user, digest = htpasswd.strip().split(":", 1)
    assert user == "perf-admin" and bcrypt.checkpw(password.encode(), digest.replace("$2y$", "$2b$").encode())
    providers = kube.get("OAuth", "cluster", api_version="config.openshift.io/v1")["spec"]["identityProviders"]
    assert [(p["type"], p["htpasswd"]["fileData"]["name"]) for p in providers] == [("HTPasswd", "htpass-secret")]
    binding = kube.get("ClusterRoleBinding", "cluster-admin-perf-admin", api_version="rbac.authorization.k8s.io/v1")
    assert binding["subjects"][0]["name"] == "perf-admin" and binding["roleRef"]["name"] == "cluster-admin"

    # a second run with a password file: the matching entry is kept as it is
    (secrets / "pw.txt").write_text(password)
    again = toolbox("cluster create_htpasswd_adminuser", dict(args, passwordfile=str(secrets / "pw.txt")),
                    tmp_path / "again")
    assert again.returncode == 0, again.output
    assert base64.b64decode(kube.get("Secret", "htpass-secret", "openshift-config")["data"]["htpasswd"]).decode() == htpasswd

    missing = toolbox("cluster create_htpasswd_adminuser", dict(args, passwordfile=str(tmp_path / "none.txt")),
                      tmp_path / "missing")
    assert missing.returncode != 0
    assert "passwordfile %s: no such file" % (tmp_path / "none.txt") in " ".join(read(missing.command_dir, "FAILURE").split())

    for done in (run, again, missing):
        assert password not in done.output and digest not in done.output
    for root, _dirs, files in os.walk(tmp_path):
        if root.startswith(str(secrets)):
            continue
        for name in files:
            with open(os.path.join(root, name), "rb") as handle:
                content = handle.read()
            assert password.encode() not in content and digest.encode() not in content, os.path.join(root, name)


def test_preload_image_pulls_on_the_selected_nodes_then_removes_itself(toolbox, kube, sim, tmp_path):
    args = {"name": "preload-vllm", "image": "quay.io/example/vllm:0.11", "namespace": "default",
            "node_selector_key": "nvidia.com/gpu.present", "node_selector_value": "true", "delay": 1, "timeout": 120}
    run = toolbox("cluster preload_image", args, tmp_path / "ok")
    assert run.returncode == 0, run.output
    assert read(run.command_dir, "nodes.txt").split() == ["worker-gpu-0", "worker-gpu-1"]
    assert kube.get("DaemonSet", "preload-vllm", "default", "apps/v1") is None
    assert "kind: DaemonSet" in read(os.path.join(run.command_dir, "src"), "daemonset.yaml")

    nowhere = toolbox("cluster preload_image", dict(args, node_selector_value="maybe"), tmp_path / "nowhere")
    assert nowhere.returncode != 0
    assert "no node has the label nvidia.com/gpu.present=maybe" in " ".join(read(nowhere.command_dir, "FAILURE").split())

    # the kubelet retries a pull with back-off (a registry may hiccup): waited through, the nodes still
    # pulling named when time runs out
    broken = toolbox("cluster preload_image", dict(args, image="quay.io/example/does-not-exist:1", timeout=8),
                     tmp_path / "broken")
    assert broken.returncode != 0
    failure = " ".join(read(broken.command_dir, "FAILURE").split())
    assert "quay.io/example/does-not-exist:1: not ready after 8 s; last state: image pulled on 0 of 2 node(s); " \
           "not yet on worker-gpu-" in failure, failure
    assert "container preload ErrImagePull (rpc error" in failure or "ImagePullBackOff (Back-off pulling image" in failure
    assert kube.get("DaemonSet", "preload-vllm", "default", "apps/v1") is None   # removed on failure too
