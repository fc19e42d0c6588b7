"""The standard-library S3 client: its SigV4 signature is botocore's, its errors are one line."""

import datetime

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import s3_client


@pytest.mark.parametrize("method, path, payload", [
    ("PUT", "/results/perfscale/run 1/user_0.tar.gz", b"\x1f\x8b some bytes"),
    ("GET", "/results/a/b.txt", b""),
    ("PUT", "/results", b""),
])
def test_the_signature_is_the_one_botocore_computes(method, path, payload):
    pytest.importorskip("botocore")
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    import hashlib

    request = AWSRequest(method=method, url="http://127.0.0.1:9000" + s3_client._quote(path), data=payload,
                         headers={"x-amz-content-sha256": hashlib.sha256(payload).hexdigest()})
    S3SigV4Auth(Credentials("minio", "s3cr3t"), "s3", "us-east-1").add_auth(request)
    # ours, at the moment botocore signed
    when = datetime.datetime.strptime(request.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(
        tzinfo=datetime.timezone.utc)
    client = s3_client.S3Client("http://127.0.0.1:9000", "minio", "s3cr3t", region="us-east-1")
    ours = client._headers(method, path, payload, now=when)
    assert ours["authorization"] == request.headers["Authorization"]


@pytest.mark.parametrize("endpoint", ["", "minio:9000", "ftp://minio:9000"])
def test_an_endpoint_that_is_not_http_is_one_line(endpoint):
    with pytest.raises(s3_client.S3Error, match="expected http\\(s\\)://host\\[:port\\]"):
        s3_client.S3Client(endpoint, "a", "b")


def test_an_unreachable_store_is_one_line():
    client = s3_client.S3Client("http://127.0.0.1:9", "a", "b", timeout=2)
    with pytest.raises(s3_client.S3Error, match=r"^GET http://127.0.0.1:9/bucket/key: "):
        client.get_object("bucket", "key")
