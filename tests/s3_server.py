"""moto's S3 server on 127.0.0.1 for the tests (standing in for MinIO or any S3-compatible store).

moto lives in a virtualenv of its own (.venv/s3-server, made by ``make setup-test``: botocore needs
python-dateutil<3, the kubernetes client >=3); without it the tests that need a store are skipped.
"""

import contextlib
import json
import os
import socket
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
S3_SERVER_BIN = os.path.join(REPO, ".venv", "s3-server", "bin")
MOTO_SERVER = os.path.join(S3_SERVER_BIN, "moto_server")

# with authentication on, moto answers this many requests unauthenticated: the IAM calls that make
# the test's user, its policy and its access key
_MAKE_USER = """
import json, sys
import boto3
iam = boto3.client("iam", endpoint_url=sys.argv[1], region_name="us-east-1",
                   aws_access_key_id="setup", aws_secret_access_key="setup")
iam.create_user(UserName="perfscale")
iam.put_user_policy(UserName="perfscale", PolicyName="s3", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
key = iam.create_access_key(UserName="perfscale")["AccessKey"]
print(json.dumps([key["AccessKeyId"], key["SecretAccessKey"]]))
"""
_UNAUTHENTICATED_SETUP_CALLS = 3


def available():
    return os.path.exists(MOTO_SERVER)


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def _server(env=None):
    port = _free_port()
    server = subprocess.Popen([MOTO_SERVER, "-H", "127.0.0.1", "-p", str(port)], env=dict(os.environ, **(env or {})),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = "http://127.0.0.1:%d" % port
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("moto_server did not start on port %d" % port) from None
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@contextlib.contextmanager
def running(access_key, secret_key, buckets=()):
    """A server that accepts any credentials, with ``buckets``; yields (endpoint url, a client)."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import s3_client

    with _server() as url:
        client = s3_client.S3Client(url, access_key, secret_key, retries=0)
        for bucket in buckets:
            client.create_bucket(bucket)
        yield url, client


@contextlib.contextmanager
def authenticating(buckets=()):
    """A server that checks credentials as S3 does (InvalidAccessKeyId, SignatureDoesNotMatch);
    yields (endpoint url, a client, access key id, secret access key) of the one user it knows."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import s3_client

    with _server({"INITIAL_NO_AUTH_ACTION_COUNT": str(_UNAUTHENTICATED_SETUP_CALLS)}) as url:
        made = subprocess.run([os.path.join(S3_SERVER_BIN, "python"), "-c", _MAKE_USER, url], capture_output=True,
                              text=True, check=True, timeout=60)
        access_key, secret_key = json.loads(made.stdout)
        client = s3_client.S3Client(url, access_key, secret_key, retries=0)
        for bucket in buckets:
            client.create_bucket(bucket)
        yield url, client, access_key, secret_key


# an OpenShift cluster's network on AWS as the installer leaves it (boto3, in the server's virtualenv)
_MAKE_CLUSTER_NETWORK = """
import json, sys
import boto3
url, infra, zones = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
ec2 = boto3.client("ec2", endpoint_url=url, region_name="us-east-1", aws_access_key_id="seed",
                   aws_secret_access_key="seed")
owned = {"Key": "kubernetes.io/cluster/%s" % infra, "Value": "owned"}
vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
subnets = {}
for index, zone in enumerate(zones):
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.%d.0/24" % (128 + index), AvailabilityZone=zone)["Subnet"]
    ec2.create_tags(Resources=[subnet["SubnetId"]], Tags=[{"Key": "Name", "Value": "%s-subnet-private-%s" % (infra, zone)},
                                                          owned])
    subnets[zone] = subnet["SubnetId"]
group = ec2.create_security_group(GroupName="%s-node" % infra, Description="worker nodes", VpcId=vpc)["GroupId"]
image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
instance = ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1, SubnetId=subnets[zones[0]],
                             SecurityGroupIds=[group], TagSpecifications=[{"ResourceType": "instance", "Tags": [owned]}]
                             )["Instances"][0]["InstanceId"]
print(json.dumps({"vpc": vpc, "subnets": subnets, "group": group, "instance": instance}))
"""


@contextlib.contextmanager
def aws_cluster_network(infra_id, zones=("us-east-1a", "us-east-1b")):
    """moto's EC2 and EFS with a cluster's VPC, private subnets (``<infra>-subnet-private-<zone>``), its
    workers' security group and one worker instance tagged as owned; yields (endpoint url, what was made)."""
    with _server() as url:
        made = subprocess.run([os.path.join(S3_SERVER_BIN, "python"), "-c", _MAKE_CLUSTER_NETWORK, url, infra_id,
                               ",".join(zones)], capture_output=True, text=True, check=True, timeout=120)
        yield url, json.loads(made.stdout)
