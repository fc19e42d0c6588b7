"""storage deploy_aws_efs end to end: kubesim as the OpenShift cluster (its Machines and MachineSets as the
installer writes them on AWS, the EFS CSI driver operator through OLM) and moto as AWS's EC2 and EFS APIs
with the cluster's network; made once, found again, the credentials never written anywhere, a cluster
without credentials said in one line."""

import json
import os
import sys

import pytest

from conftest import read

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import s3_server  # noqa: E402
from helpers import grep_tree  # noqa: E402

SIM_SETTINGS = dict(addons=[])
INFRA = "kubesim-x7k2p"   # kubesim's OpenShift infrastructure name (kubesim/controllers/openshift.py)
SECRET = "efs-test-secret-key-7731"

pytestmark = pytest.mark.skipif(not s3_server.available(), reason="moto's server is not installed (make setup-test)")


def point_machines_at(sim, instance_id):
    """The cloud's instance of every Machine (as the machine controller reads it from AWS)."""
    resource = sim.cluster.resource_for_key(("machine.openshift.io", "machines"))
    for machine in sim.cluster.store.list(("machine.openshift.io", "machines"), "openshift-machine-api")[0]:
        def change(obj):
            obj.setdefault("status", {}).setdefault("providerStatus", {})["instanceId"] = instance_id
            return True
        sim.cluster.mutate(resource, "openshift-machine-api", machine["metadata"]["name"], change, subresource="status")


def test_an_efs_file_system_its_driver_and_storage_class(toolbox, kube, sim, tmp_path):
    no_credentials = toolbox("storage deploy_aws_efs", {"timeout": 120}, tmp_path / "no-credentials",
                             env={"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""})
    assert no_credentials.returncode != 0
    assert "AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set in the environment" in " ".join(
        read(no_credentials.command_dir, "FAILURE").split())

    with s3_server.aws_cluster_network(INFRA, zones=("us-east-1a",)) as (url, made):
        point_machines_at(sim, made["instance"])
        env = {"AWS_ACCESS_KEY_ID": "AKIDEFSTEST", "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_ENDPOINT_URL": url}
        run = toolbox("storage deploy_aws_efs", {"timeout": 120}, tmp_path / "run", env=env)
        assert run.returncode == 0, run.output[-3000:]
        efs = read(run.command_dir, "aws_efs.json")
        assert efs["infra_id"] == INFRA and efs["instance_id"] == made["instance"] and efs["vpc_id"] == made["vpc"]
        assert efs["subnets"] == [made["subnets"]["us-east-1a"]] and len(efs["mount_targets"]) == 1
        assert efs["actions"][0] == "allowed NFS (tcp 2049) from 10.0.0.0/16 into security group %s" % made["group"]
        storage_class = kube.get("StorageClass", "efs-csi-sc", api_version="storage.k8s.io/v1")
        assert storage_class["provisioner"] == "efs.csi.aws.com"
        assert storage_class["parameters"] == {"provisioningMode": "efs-ap", "fileSystemId": efs["file_system_id"],
                                               "directoryPerms": "700", "gidRangeStart": "1000", "gidRangeEnd": "2000",
                                               "basePath": "/dynamic_provisioning"}
        driver = kube.get("ClusterCSIDriver", "efs.csi.aws.com", api_version="operator.openshift.io/v1")
        conditions = {c["type"]: c["status"] for c in driver["status"]["conditions"]}
        assert conditions["AWSEFSDriverControllerServiceControllerAvailable"] == "True"
        assert conditions["AWSEFSDriverNodeServiceControllerAvailable"] == "True"
        assert kube.get("Deployment", "aws-efs-csi-driver-controller", "openshift-cluster-csi-drivers",
                        api_version="apps/v1") is not None
        assert SECRET not in run.output and grep_tree(str(tmp_path / "run"), SECRET) == []

        again = toolbox("storage deploy_aws_efs", {"timeout": 120}, tmp_path / "again", env=env)
        assert again.returncode == 0, again.output[-3000:]
        second = read(again.command_dir, "aws_efs.json")
        assert second["actions"] == [] and second["file_system_id"] == efs["file_system_id"]
        assert json.dumps(second["mount_targets"]) == json.dumps(efs["mount_targets"])
