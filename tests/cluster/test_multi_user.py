"""Multi-user scale tests: `server deploy_redis_server`, then `local_ci run_multi` on kubesim, whose Job
pods run `multi_user_pod.py` as local processes; the barrier is a real Redis server (Debian's
redis-server, which `make setup-test` installs) on 127.0.0.1."""

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from conftest import read
from helpers import grep_tree

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import s3_server as s3_server_lib  # noqa: E402  pylint: disable=wrong-import-position

SIM_SETTINGS = dict(profile="vanilla", time_scale=1, pod_start_delay=0, run_local_pods=True, max_local_pods=1100)
REDIS = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(REDIS is None, reason="Debian's redis-server is not installed (make setup-test "
                                                      "installs it as root)")


@pytest.fixture(scope="module")
def redis(tmp_path_factory):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    workdir = tmp_path_factory.mktemp("redis")
    server = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                               "--maxclients", "4000", "--dir", str(workdir)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.05)
    yield "127.0.0.1:%d" % port
    server.terminate()
    server.wait(timeout=10)


def users(command_dir):
    found = sorted(glob.glob(os.path.join(command_dir, "*__user_*")))
    return [read(d, "user.json") for d in found], found


def test_users_wait_for_each_other_then_start_in_batches_and_come_back(toolbox, redis, tmp_path):
    run = toolbox("local_ci run_multi", {
        "ci_command": 'echo "user $USER_INDEX of $USER_COUNT" > "$ARTIFACT_DIR/hello.txt"; '
                      'echo "$PERFSCALE_VARIABLE_OVERRIDES" > "$ARTIFACT_DIR/overrides.txt"',
        "user_count": 4, "namespace": "scale", "job_name": "users", "state_signal_redis_server": redis,
        "sleep_factor": 1.0, "user_batch_size": 2, "retrieve_artifacts": True,
        "variable_overrides": {"tests.benchmark.timeout_s": 30}}, tmp_path)
    assert run.returncode == 0, run.output
    records, directories = users(run.command_dir)
    assert [os.path.basename(d) for d in directories] == ["000__user_0", "001__user_1", "002__user_2", "003__user_3"]
    last_ready = max(r["ready_at"] for r in records)
    for record, directory in zip(records, directories):
        index = record["user_index"]
        assert record["succeeded"] and record["exit_code"] == 0
        # nobody passed the barrier before the last user was ready
        assert record["barrier_passed_at"] >= last_ready
        # users 0-1 start at once, users 2-3 one sleep_factor later
        assert record["started_at"] - record["barrier_passed_at"] >= (index // 2) * 1.0
        assert read(directory, "hello.txt") == "user %d of 4\n" % index
        assert json.loads(read(directory, "overrides.txt")) == {"tests.benchmark.timeout_s": 30}
        assert read(directory, "exit_code") == "0\n"
    summary = read(run.command_dir, "multi_user_summary.json")
    assert (summary["succeeded"], summary["failed"], summary["barrier"], summary["ok"]) == (4, 0, True, True)
    assert summary["barrier_skew_s"] < 1.0
    # the second batch starts one sleep_factor after the barrier (asserted per user above); the spread of the starts
    # is that less what the first batch lagged behind its barrier (0.05 s on a loaded machine: 0.95 s)
    started = [r["started_at"] for r in records]
    assert summary["start_skew_s"] == pytest.approx(max(started) - min(started), abs=0.002)
    first_lag = max(r["started_at"] - r["barrier_passed_at"] for r in records if r["user_index"] < 2)
    assert 1.0 - first_lag - summary["barrier_skew_s"] <= summary["start_skew_s"] < 3.0
    assert "4 user(s): 4 succeeded, 0 failed" in read(run.command_dir, "multi_user_summary.txt")


def test_a_failing_user_does_not_stop_the_others_and_need_all_success_fails_the_command(toolbox, kube, redis, tmp_path):
    run = toolbox("local_ci run_multi", {
        "ci_command": 'echo oops >&2; test "$USER_INDEX" != 1', "user_count": 3, "namespace": "scale",
        "job_name": "flaky", "state_signal_redis_server": redis, "need_all_success": True}, tmp_path)
    assert run.returncode != 0
    failure = read(run.command_dir, "FAILURE")
    assert "3 user(s): 2 succeeded, 1 failed" in failure and "user 1 failed" in failure, failure
    records, directories = users(run.command_dir)
    assert [r["succeeded"] for r in records] == [True, False, True]
    assert "user 1: the command exited with 1" in read(directories[1], "FAILURE")
    # every user came back: the Job goes
    assert kube.get("Job", "flaky", "scale", api_version="batch/v1") is None


def test_a_thousand_users_pass_the_barrier_together(toolbox, sim, kube, redis, tmp_path):
    # 1,000 pods need more than the profile's three workers of 250 pods each: two more nodes
    nodes = kube.get("Node", api_version="v1")
    worker = [n for n in nodes if not (n.get("spec") or {}).get("taints")][0]
    existing = {n["metadata"]["name"] for n in nodes}
    node_api = kube.dynamic.resources.get(api_version="v1", kind="Node")
    for index in range(2):
        name = "scale-%d" % index
        if name in existing:
            continue
        labels = dict(worker["metadata"]["labels"], **{"kubernetes.io/hostname": name})
        node_api.create(body={"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
        node_api.status.patch(name=name, body={"status": worker["status"]}, content_type="application/merge-patch+json")
    started = time.monotonic()
    run = toolbox("local_ci run_multi", {"ci_command": "true", "user_count": 1000, "namespace": "scale",
                                         "job_name": "thousand", "state_signal_redis_server": redis,
                                         "need_all_success": True}, tmp_path, timeout=900)
    elapsed = time.monotonic() - started
    assert run.returncode == 0, run.output[-3000:]
    summary = read(run.command_dir, "multi_user_summary.json")
    assert (summary["user_count"], summary["succeeded"], summary["ok"]) == (1000, 1000, True)
    assert len(glob.glob(os.path.join(run.command_dir, "*__user_*", "user.json"))) == 1000
    records, _directories = users(run.command_dir)
    assert min(r["barrier_passed_at"] for r in records) >= max(r["ready_at"] for r in records)
    print("1,000 users: %.1f s, start skew %.3f s" % (elapsed, summary["start_skew_s"]))


def test_what_is_not_supported_or_incomplete_is_refused_in_one_line(toolbox, tmp_path):
    run = toolbox("local_ci run_multi", {"ci_command": "true", "minio_namespace": "minio", "capture_prom_db": True},
                  tmp_path)
    assert run.returncode != 0
    failure = read(run.command_dir, "FAILURE")
    assert "minio_namespace: expected minio_bucket_name, and secret_name with the key minio_secret_key_key" in failure
    assert "capture_prom_db=true is not supported yet" in failure
    missing = toolbox("local_ci run_multi", {"user_count": 2}, tmp_path / "missing")
    assert missing.returncode != 0
    assert "ci_command" in missing.flat


@pytest.fixture(scope="module")
def s3_server():
    """moto's S3 server on 127.0.0.1 (standing in for MinIO), with the bucket ``results``."""
    if not s3_server_lib.available():
        pytest.skip("moto's S3 server is not installed in .venv/s3-server (make setup-test installs it)")
    with s3_server_lib.running("minio", MINIO_PASSWORD, buckets=["results"]) as (url, client):
        yield url, client


MINIO_PASSWORD = "Us3rs-MinIO-9b2e"


def test_users_artifacts_go_through_minio_and_the_password_stays_secret(toolbox, kube, s3_server, tmp_path):
    url, client = s3_server
    secrets = kube.dynamic.resources.get(api_version="v1", kind="Secret")
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "s3users"}})
    secrets.create(namespace="s3users", body={"metadata": {"name": "users"}, "stringData": {"minio_password": MINIO_PASSWORD}})
    run = toolbox("local_ci run_multi", {
        "ci_command": 'seq 1 2000 > "$ARTIFACT_DIR/numbers.txt"; echo "$USER_INDEX" > "$ARTIFACT_DIR/me.txt"',
        "user_count": 3, "namespace": "s3users", "job_name": "uploaders", "retrieve_artifacts": True,
        "secret_name": "users", "minio_namespace": "minio", "minio_bucket_name": "results",
        "minio_secret_key_key": "minio_password", "minio_endpoint_url": url}, tmp_path)
    assert run.returncode == 0, run.output
    records, directories = users(run.command_dir)
    for record, directory in zip(records, directories):
        assert record["succeeded"], record
        assert record["artifacts_s3_key"].endswith("/user_%d.tar.gz" % record["user_index"])
        assert read(directory, "me.txt") == "%d\n" % record["user_index"]
        assert len(read(directory, "numbers.txt").splitlines()) == 2000
        # it is in the bucket, where the user put it
        assert len(client.get_object("results", record["artifacts_s3_key"])) > 0
    assert MINIO_PASSWORD not in run.output
    assert grep_tree(str(tmp_path), MINIO_PASSWORD) == []
    missing = toolbox("local_ci run_multi", {"ci_command": "true", "namespace": "s3users", "secret_name": "users",
                                             "minio_namespace": "minio", "minio_bucket_name": "results",
                                             "minio_secret_key_key": "nope"}, tmp_path / "missing")
    assert missing.returncode != 0
    assert "Secret s3users/users: expected the key nope" in read(missing.command_dir, "FAILURE")


def test_launch_as_daemon_starts_the_users_and_returns(toolbox, kube, tmp_path):
    run = toolbox("local_ci run_multi", {"ci_command": "sleep 30", "user_count": 2, "namespace": "scale",
                                         "job_name": "daemon", "launch_as_daemon": True}, tmp_path)
    assert run.returncode == 0, run.output
    assert "not waited for (launch_as_daemon)" in read(run.command_dir, "daemon.txt")
    job = kube.get("Job", "daemon", "scale", api_version="batch/v1")
    assert job["spec"]["completions"] == 2 and "Complete" not in str(job.get("status"))
    assert not [d for d in os.listdir(run.command_dir) if "__user_" in d]
    kube.dynamic.resources.get(api_version="batch/v1", kind="Job").delete(
        name="daemon", namespace="scale", body={"propagationPolicy": "Background"})


def test_the_redis_server_is_deployed_and_its_address_written(toolbox, kube, tmp_path):
    run = toolbox("server deploy_redis_server", {"namespace": "barrier"}, tmp_path)
    assert run.returncode == 0, run.output
    assert read(run.command_dir, "redis_server.txt") == "redis.barrier.svc:6379\n"
    deployment = kube.get("Deployment", "redis", "barrier", api_version="apps/v1")
    assert deployment["status"]["availableReplicas"] == 1
    assert kube.get("Service", "redis", "barrier", api_version="v1")["spec"]["ports"][0]["port"] == 6379


def test_local_ci_run_runs_one_command_in_a_pod_and_brings_its_artifacts_back(toolbox, tmp_path):
    run = toolbox("local_ci run", {
        # the test's arguments come after the command, quoted
        "ci_command": 'echo ran > "$ARTIFACT_DIR/result.txt"; printf "%s|" > "$ARTIFACT_DIR/args.txt"',
        "init_command": 'echo init > "$ARTIFACT_DIR/init.txt"', "test_args": ["a b", "c"], "namespace": "ci",
        "pod_name": "one-test", "test_name": "smoke"}, tmp_path)
    assert run.returncode == 0, run.output
    records, directories = users(run.command_dir)
    assert len(directories) == 1 and records[0]["succeeded"]
    assert read(directories[0], "result.txt") == "ran\n" and read(directories[0], "init.txt") == "init\n"
    assert read(directories[0], "args.txt") == "a b|c|"
    assert read(run.command_dir, "test.json")["test_name"] == "smoke"
    failing = toolbox("local_ci run", {"ci_command": "echo broken >&2; exit 3", "namespace": "ci"}, tmp_path / "failed")
    assert failing.returncode != 0
    refused = toolbox("local_ci run", {"ci_command": "true", "pr_number": 42}, tmp_path / "refused")
    assert refused.returncode != 0
    assert "pr_number and pr_config test the code of a pull request" in read(refused.command_dir, "FAILURE")
