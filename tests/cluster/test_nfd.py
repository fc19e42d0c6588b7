"""The reference's nfd_operator and nfd commands end to end on kubesim (OpenShift profile, no GPU labels yet):
the nodes have no NFD label until the operator is deployed through OLM, then they do; undeploy removes it."""

import glob

import yaml
from conftest import read

SIM_SETTINGS = dict(addons=[])


def test_nfd_is_absent_then_deployed_labels_the_gpu_nodes_then_undeployed(toolbox, kube, tmp_path):
    absent = toolbox("nfd has_labels", {}, tmp_path / "absent")
    assert absent.returncode != 0
    assert "nfd has_labels: no node has NFD labels" in " ".join(read(absent.command_dir, "FAILURE").split())
    quick = toolbox("nfd wait_gpu_nodes", {"timeout": 2, "delay": 1}, tmp_path / "quick")
    assert quick.returncode != 0
    assert "no node has an NVIDIA GPU (NFD label pci-10de.present, pci-0302_10de.present or pci-0300_10de.present) after 2 s" in " ".join(
        read(quick.command_dir, "FAILURE").split())

    deployed = toolbox("nfd_operator deploy_from_operatorhub", {"delay": 1, "timeout": 300}, tmp_path / "deploy")
    assert deployed.returncode == 0, deployed.output
    instances = yaml.safe_load(read(deployed.command_dir, "nodefeaturediscovery.yaml"))
    assert [i["metadata"]["name"] for i in instances] == ["nfd-instance"]
    assert glob.glob(deployed.command_dir + "/[0-9][0-9][0-9]__cluster__deploy_operator")   # nested, numbered

    for command in ("nfd has_labels", "nfd wait_labels", "nfd has_gpu_nodes", "nfd wait_gpu_nodes"):
        run = toolbox(command, {"delay": 1, "timeout": 30}, tmp_path / command.replace(" ", "_"))
        assert run.returncode == 0, run.output
    assert read(run.command_dir, "nodes.txt").split() == ["worker-gpu-0", "worker-gpu-1"]

    removed = toolbox("nfd_operator undeploy_from_operatorhub", {}, tmp_path / "undeploy")
    assert removed.returncode == 0, removed.output
    assert kube.get("Subscription", "nfd", "openshift-nfd", "operators.coreos.com/v1alpha1") is None
