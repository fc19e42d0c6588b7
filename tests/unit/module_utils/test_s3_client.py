"""The standard-library S3 client: its SigV4 signature is botocore's, its errors are one line."""

import datetime
import json
import os
import subprocess

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import s3_client


S3_SERVER_PYTHON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".venv", "s3-server",
                                "bin", "python")
BOTOCORE_SIGNS = """
import hashlib, json, sys
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
method, url, payload = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
request = AWSRequest(method=method, url=url, data=payload,
                     headers={"x-amz-content-sha256": hashlib.sha256(payload).hexdigest()})
S3SigV4Auth(Credentials("minio", "s3cr3t"), "s3", "us-east-1").add_auth(request)
print(json.dumps({"date": request.headers["X-Amz-Date"], "authorization": request.headers["Authorization"]}))
"""


@pytest.mark.parametrize("method, path, payload", [
    ("PUT", "/results/perfscale/run 1/user_0.tar.gz", b"\x1f\x8b some bytes"),
    ("GET", "/results/a/b.txt", b""),
    ("PUT", "/results", b""),
])
def test_the_signature_is_the_one_botocore_computes(method, path, payload):
    """botocore lives in .venv/s3-server (its python-dateutil<3 clashes with the kubernetes client's)."""
    if not os.path.exists(S3_SERVER_PYTHON):
        pytest.skip("botocore is not installed in .venv/s3-server (make setup-test installs it)")
    done = subprocess.run([S3_SERVER_PYTHON, "-c", BOTOCORE_SIGNS, method,
                           "http://127.0.0.1:9000" + s3_client._quote(path), payload.hex()],
                          capture_output=True, text=True, check=True)
    theirs = json.loads(done.stdout)
    # ours, at the moment botocore signed
    when = datetime.datetime.strptime(theirs["date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    client = s3_client.S3Client("http://127.0.0.1:9000", "minio", "s3cr3t", region="us-east-1")
    assert client._headers(method, path, payload, now=when)["authorization"] == theirs["authorization"]


@pytest.mark.parametrize("endpoint", ["", "minio:9000", "ftp://minio:9000"])
def test_an_endpoint_that_is_not_http_is_one_line(endpoint):
    with pytest.raises(s3_client.S3Error, match="expected http\\(s\\)://host\\[:port\\]"):
        s3_client.S3Client(endpoint, "a", "b")


def test_an_unreachable_store_is_one_line():
    client = s3_client.S3Client("http://127.0.0.1:9", "a", "b", timeout=2)
    with pytest.raises(s3_client.S3Error, match=r"^GET http://127.0.0.1:9/bucket/key: "):
        client.get_object("bucket", "key")
