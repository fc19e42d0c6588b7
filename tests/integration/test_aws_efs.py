"""The EFS file system of storage deploy_aws_efs (module_utils/aws), against moto's EC2 and EFS APIs with the
network an OpenShift installer leaves: made once, found again, its errors in one line."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import s3_server  # noqa: E402

from ansible_collections.perfscale.topsail.plugins.module_utils.aws import api, efs  # noqa: E402

pytestmark = pytest.mark.skipif(not s3_server.available(), reason="moto's server is not installed (make setup-test)")
INFRA = "perf-x7k2p"
SECRET = "aws-secret-never-shown-4821"


def clients(url):
    environ = {"AWS_ENDPOINT_URL": url}
    credentials = api.Credentials("AKIDEXAMPLE", SECRET)
    return api.Ec2("us-east-1", credentials, environ, retries=0), api.Efs("us-east-1", credentials, environ, retries=0)


def test_the_file_system_is_made_once_with_its_network():
    with s3_server.aws_cluster_network(INFRA) as (url, made):
        ec2, fs = clients(url)
        names = ["%s-subnet-private-us-east-1a" % INFRA, "%s-subnet-private-us-east-1b" % INFRA]
        first = efs.ensure_file_system(ec2, fs, made["instance"], INFRA, names, sleep=lambda s: None)
        assert first["changed"] and first["vpc_id"] == made["vpc"] and first["security_group_id"] == made["group"]
        assert first["vpc_cidr"] == "10.0.0.0/16"
        assert first["subnets"] == sorted(made["subnets"].values()) and len(first["mount_targets"]) == 2
        assert first["actions"][0] == "allowed NFS (tcp 2049) from 10.0.0.0/16 into security group %s" % made["group"]
        group = ec2.describe_security_group(made["group"])
        assert any(r["from"] == "2049" and "10.0.0.0/16" in r["cidrs"] for r in group["ingress"])
        system = fs.file_system(first["file_system_id"])
        assert system["CreationToken"] == "EFS %s" % INFRA
        assert {t["Key"]: t["Value"] for t in system["Tags"]} == {"Name": INFRA, "kubernetes.io/cluster/%s" % INFRA: "owned"}
        # again: everything found, nothing made
        second = efs.ensure_file_system(ec2, fs, made["instance"], INFRA, names, sleep=lambda s: None)
        assert second["changed"] is False and second["actions"] == []
        assert second["file_system_id"] == first["file_system_id"] and second["mount_targets"] == first["mount_targets"]
        # MachineSets naming their subnets by id: the workers' own subnets
        other = efs.ensure_file_system(ec2, fs, made["instance"], INFRA, [], sleep=lambda s: None)
        assert other["subnets"] == [made["subnets"]["us-east-1a"]] and other["file_system_id"] == first["file_system_id"]


def test_errors_are_one_line_and_never_show_the_secret():
    with s3_server.aws_cluster_network(INFRA) as (url, made):
        ec2, fs = clients(url)
        with pytest.raises(api.AwsError, match=r"no subnet named 'nope' in VPC vpc-") as error:
            efs.ensure_file_system(ec2, fs, made["instance"], INFRA, ["nope"], sleep=lambda s: None)
        assert SECRET not in str(error.value)
        with pytest.raises(api.AwsError, match=r"EC2 DescribeInstances: 400 InvalidInstanceID.NotFound") as error:
            efs.ensure_file_system(ec2, fs, "i-0123456789abcdef0", INFRA, [], sleep=lambda s: None)
        assert SECRET not in str(error.value)
    with pytest.raises(api.AwsError, match="AWS_SECRET_ACCESS_KEY not set"):
        api.Credentials.from_environ({"AWS_ACCESS_KEY_ID": "x"})
    unreachable = api.Ec2("us-east-1", api.Credentials("a", SECRET), {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"},
                          retries=0)
    with pytest.raises(api.AwsError, match=r"EC2 POST http://127.0.0.1:9/: .*refused"):
        unreachable.describe_vpc_cidr("vpc-1")


def test_an_answer_larger_than_a_document_is_refused(monkeypatch):
    from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input

    with s3_server.aws_cluster_network(INFRA, zones=("us-east-1a",)) as (url, made):
        ec2, _fs = clients(url)
        monkeypatch.setattr(bounded_input, "MAX_DOCUMENT_BYTES", 64)
        with pytest.raises(api.AwsError, match="EC2 POST /: the answer is larger than 64 bytes"):
            ec2.describe_vpc_cidr(made["vpc"])
