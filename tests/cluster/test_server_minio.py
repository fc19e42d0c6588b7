"""server deploy_minio_s3_server on kubesim: the Secret from a properties file (its password never in the
task output nor the artifacts), the server, its Service and the bucket Job."""

import base64

from conftest import read
from helpers import grep_tree

SIM_SETTINGS = dict(profile="vanilla", time_scale=20, pod_start_delay=0)
PASSWORD = "Mini0-S3cret-7f3a9c"


def test_minio_is_deployed_with_its_bucket_and_the_password_stays_secret(toolbox, kube, tmp_path):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "minio.properties").write_text("# MinIO\nuser_password = %s\nother=1\n" % PASSWORD)
    args = {"secret_properties_file": "secret:minio.properties", "namespace": "s3", "bucket_name": "results"}
    run = toolbox("server deploy_minio_s3_server", args, tmp_path / "run", env={"PERFSCALE_SECRETS_DIR": str(secrets)})
    assert run.returncode == 0, run.output
    assert read(run.command_dir, "minio_server.txt") == "endpoint: http://minio.s3.svc:9000\nbucket: results\nuser: minio\n"
    secret = kube.get("Secret", "minio-secret", "s3", api_version="v1")
    assert base64.b64decode(secret["data"]["user_password"]).decode() == PASSWORD
    assert kube.get("Deployment", "minio", "s3", api_version="apps/v1")["status"]["availableReplicas"] == 1
    job = kube.get("Job", "minio-make-bucket", "s3", api_version="batch/v1")
    assert job["spec"]["template"]["spec"]["containers"][0]["env"][1] == {"name": "BUCKET", "value": "results"}
    assert PASSWORD not in run.output
    assert grep_tree(str(tmp_path / "run"), PASSWORD) == []


def test_a_properties_file_without_the_password_or_a_bad_bucket_name_is_one_line(toolbox, tmp_path):
    properties = tmp_path / "minio.properties"
    properties.write_text("admin_password=x\n")
    run = toolbox("server deploy_minio_s3_server", {"secret_properties_file": str(properties)}, tmp_path / "a")
    assert run.returncode != 0
    assert "expected a line user_password=..." in read(run.command_dir, "FAILURE")
    missing = toolbox("server deploy_minio_s3_server", {"secret_properties_file": str(tmp_path / "nope")}, tmp_path / "b")
    assert missing.returncode != 0 and "no such file" in read(missing.command_dir, "FAILURE")
    args = {"secret_properties_file": str(properties), "bucket_name": "myBucket"}
    bucket = toolbox("server deploy_minio_s3_server", args, tmp_path / "c")
    assert bucket.returncode != 0
    assert 'bucket_name "myBucket": expected 3 to 63 lowercase letters' in read(bucket.command_dir, "FAILURE")
