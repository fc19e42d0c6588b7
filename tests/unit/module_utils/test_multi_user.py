"""Multi-user scale tests: the user pod's barrier, delay and report; the controller's summary."""

import io
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.executors import multi_user
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import multi_user_pod
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import pod_point

POD_SCRIPT = os.path.abspath(multi_user_pod.__file__)


def record(index, ready, passed, started, ended, code=0, **extra):
    return dict({"user_index": index, "ready_at": ready, "barrier_passed_at": passed, "started_at": started,
                 "ended_at": ended, "exit_code": code, "succeeded": code == 0, "error": None if code == 0 else "boom",
                 "barrier": True}, **extra)


def test_the_summary_measures_skew_waits_and_durations_and_counts_missing_users_as_failed():
    records = {0: record(0, 100.0, 110.0, 110.5, 112.5), 1: record(1, 105.0, 110.2, 111.2, 115.2),
               2: record(2, 109.0, 110.1, 110.1, 111.1, code=4)}
    summary = multi_user.summarize(records, 4)
    assert (summary["succeeded"], summary["failed"], summary["ok"]) == (2, 2, True)
    assert summary["success"] == {"0": True, "1": True, "2": False, "3": False}
    assert summary["barrier_skew_s"] == 0.2 and summary["start_skew_s"] == 1.1
    assert summary["barrier_wait_s"] == {"count": 3, "min": 1.1, "median": 5.2, "p90": 10.0, "max": 10.0}
    assert summary["duration_s"]["max"] == 4.0 and summary["duration_s"]["min"] == 1.0
    assert [u["error"] for u in summary["failed_users"]] == ["boom", "no pod ran for this user"]
    assert multi_user.summarize(records, 4, need_all_success=True)["ok"] is False
    assert multi_user.summarize({}, 2)["ok"] is False
    text = multi_user.summary_text(summary)
    assert text.startswith("4 user(s): 2 succeeded, 2 failed (at least one must succeed)\n")
    assert "user 3 failed: no pod ran for this user" in text


def _log(directory, code, files):
    os.makedirs(directory, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(directory, name), "w") as handle:
            handle.write(text)
    stream = io.StringIO()
    stream.write("some output of the pod\n")
    pod_point.write_archive(stream, code, directory, 1 << 20)
    return stream.getvalue()


POD = {"metadata": {"name": "users-1-abc", "annotations": {multi_user.INDEX_ANNOTATION: "1"}},
       "status": {"phase": "Succeeded", "containerStatuses": [{"state": {"terminated": {"exitCode": 0,
                                                                                        "reason": "Completed"}}}]}}


def test_a_users_log_becomes_its_directory(tmp_path):
    log = _log(str(tmp_path / "pod"), 0, {"user.json": json.dumps(record(1, 1.0, 2.0, 2.0, 3.0)), "out.txt": "x"})
    result = multi_user.write_user(str(tmp_path / "001__user_1"), 1, POD, log)
    assert result["succeeded"] and result["pod"] == "users-1-abc"
    assert (tmp_path / "001__user_1" / "out.txt").read_text() == "x"
    assert (tmp_path / "001__user_1" / "exit_code").read_text() == "0\n"
    assert json.loads((tmp_path / "001__user_1" / "user.json").read_text())["started_at"] == 2.0


@pytest.mark.parametrize("log, error", [
    (None, "its log could not be read (Completed (exit code 0))"),
    ("no report here\n", "its log holds no report (Completed (exit code 0))"),
    ("%s 0 1\n%s eA== 5 1\nnot base64!\n%s\n" % (pod_point.BEGIN, pod_point.FILE, pod_point.END), "its report is damaged"),
])
def test_a_user_without_a_usable_report_failed_and_says_why(tmp_path, log, error):
    result = multi_user.write_user(str(tmp_path / "u"), 1, POD, log)
    assert not result["succeeded"] and result["error"].startswith(error), result["error"]
    assert error in (tmp_path / "u" / "FAILURE").read_text()


def test_the_newest_pod_of_each_index_counts():
    old = {"metadata": {"name": "a", "creationTimestamp": "2026-01-01T00:00:00Z",
                        "annotations": {multi_user.INDEX_ANNOTATION: "0"}}}
    new = {"metadata": {"name": "b", "creationTimestamp": "2026-01-01T00:00:05Z",
                        "annotations": {multi_user.INDEX_ANNOTATION: "0"}}}
    stray = {"metadata": {"name": "c"}}
    assert multi_user.latest_pod_per_user([new, old, stray]) == {0: new}


def test_users_start_in_batches_after_their_own_delay():
    settings = {"index": 5, "batch_size": 2, "sleep_factor": 1.5}
    assert multi_user_pod.own_delay(settings) == 3.0
    assert multi_user_pod.own_delay(dict(settings, batch_size=1, sleep_factor=0)) == 0


def _pod_env(index, count, command, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(multi_user_pod.PREFIX)}
    env.update({"JOB_COMPLETION_INDEX": str(index), "PERFSCALE_MULTI_USER_COUNT": str(count),
                "PERFSCALE_MULTI_COMMAND": command})
    env.update({multi_user_pod.PREFIX + k: str(v) for k, v in extra.items()})
    return env


def test_without_redis_a_user_runs_at_once_and_reports_through_its_log(tmp_path):
    done = subprocess.run([sys.executable, "-S", "-P", POD_SCRIPT], capture_output=True, text=True, check=False,
                          env=_pod_env(2, 3, 'echo "$USER_INDEX/$USER_COUNT" > "$ARTIFACT_DIR/who"; exit 5',
                                       RETRIEVE_ARTIFACTS=1, **{"TMPDIR": str(tmp_path)}))
    assert done.returncode == 5
    from ansible_collections.perfscale.topsail.plugins.module_utils.executors import kubernetes

    code, files = kubernetes.parse_archive(done.stdout)
    assert code == 5 and files["who"] == b"2/3\n"
    user = json.loads(files["user.json"])
    assert (user["user_index"], user["barrier"], user["exit_code"]) == (2, False, 5)
    assert user["error"] == "the command exited with 5"
    assert os.listdir(str(tmp_path)) == []   # its working directories are gone


def test_an_empty_command_is_one_line():
    done = subprocess.run([sys.executable, "-S", "-P", POD_SCRIPT], capture_output=True, text=True, check=False,
                          env=_pod_env(0, 1, ""))
    assert done.returncode == 2 and done.stderr == "multi_user_pod: PERFSCALE_MULTI_COMMAND is empty: nothing to run\n"


@pytest.fixture
def redis_server(tmp_path):
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("Debian's redis-server is not installed (make setup-test installs it as root)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _attempt in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.05)
    yield "127.0.0.1:%d" % port
    server.terminate()
    server.wait(timeout=10)


def test_the_barrier_holds_everyone_until_the_last_user_is_ready(redis_server, tmp_path):
    count, outputs = 3, {}

    def user(index):
        time.sleep(0.4 * index)   # users become ready one after the other
        outputs[index] = subprocess.run([sys.executable, "-S", "-P", POD_SCRIPT], capture_output=True, text=True,
                                        check=False, env=_pod_env(index, count, "true", REDIS=redis_server,
                                                                  BARRIER_KEY="t-%s" % tmp_path.name))

    threads = [threading.Thread(target=user, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    from ansible_collections.perfscale.topsail.plugins.module_utils.executors import kubernetes

    users = [json.loads(kubernetes.parse_archive(outputs[i].stdout)[1]["user.json"]) for i in range(count)]
    last_ready = max(u["ready_at"] for u in users)
    assert all(u["barrier_passed_at"] >= last_ready for u in users)
    assert max(u["barrier_passed_at"] for u in users) - min(u["barrier_passed_at"] for u in users) < 0.5
    assert users[0]["barrier_passed_at"] - users[0]["ready_at"] >= 0.7


def test_a_barrier_never_reached_times_out_and_abort_on_failure_stops_later_users(redis_server, tmp_path):
    alone = subprocess.run([sys.executable, "-S", "-P", POD_SCRIPT], capture_output=True, text=True, check=False,
                           env=_pod_env(0, 2, "true", REDIS=redis_server, BARRIER_KEY="lonely", BARRIER_TIMEOUT_S=1))
    assert alone.returncode == multi_user_pod.EXIT_BARRIER_TIMEOUT
    # user 0 fails at once; user 1 starts 1 s later and sees the abort
    key = "abort-%s" % tmp_path.name
    outputs = {}

    def user(index):
        outputs[index] = subprocess.run([sys.executable, "-S", "-P", POD_SCRIPT], capture_output=True, text=True,
                                        check=False, env=_pod_env(index, 2, 'test "$USER_INDEX" != 0', REDIS=redis_server,
                                                                  BARRIER_KEY=key, ABORT_ON_FAILURE=1, SLEEP_FACTOR=1))

    threads = [threading.Thread(target=user, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outputs[0].returncode == 1
    assert outputs[1].returncode == multi_user_pod.EXIT_ABORTED


def test_a_bad_redis_address_is_one_line():
    with pytest.raises(multi_user_pod.RedisError, match="PERFSCALE_MULTI_REDIS='nowhere': expected host:port"):
        multi_user_pod.Redis("nowhere", timeout=1)


def _hostile_log(files):
    stream = io.StringIO()
    stream.write("%s 0 %d\n" % (pod_point.BEGIN, len(files)))
    for name, data in files.items():
        pod_point.write_file_entry(stream, name, data)
    stream.write(pod_point.END + "\n")
    return stream.getvalue()


@pytest.mark.parametrize("files,reason", [
    ({"user.json": b"{}", "../../x": b"escape"}, "'../../x' (has a '..' segment)"),
    ({"user.json": b"{}", "a": b"1", "a/b": b"2"}, "'a/b' (needs 'a' as a directory"),
    ({"user.json": b"[1, 2]"}, "its user.json is unreadable: expected a JSON object"),
])
def test_one_users_bad_report_fails_that_user_only(tmp_path, files, reason):
    good = _log(str(tmp_path / "pod"), 0, {"user.json": json.dumps(record(0, 1.0, 2.0, 2.0, 3.0))})
    records = {0: multi_user.collect_user(str(tmp_path / "dest" / "0__user_0"), 0, POD, good),
               1: multi_user.collect_user(str(tmp_path / "dest" / "1__user_1"), 1, POD, _hostile_log(files))}
    assert records[0]["succeeded"] and not records[1]["succeeded"]
    assert reason in records[1]["error"] and reason in (tmp_path / "dest" / "1__user_1" / "FAILURE").read_text()
    assert not (tmp_path / "x").exists() and not (tmp_path / "dest" / "x").exists()
    summary = multi_user.summarize(records, 2)
    assert (summary["succeeded"], summary["failed"]) == (1, 1)


def test_a_user_whose_directory_cannot_be_written_is_failed_and_the_others_collected(tmp_path):
    (tmp_path / "dest").mkdir()
    (tmp_path / "dest" / "1__user_1").write_text("a file where the user's directory goes")
    log = _log(str(tmp_path / "pod"), 0, {"user.json": json.dumps(record(1, 1.0, 2.0, 2.0, 3.0))})
    result = multi_user.collect_user(str(tmp_path / "dest" / "1__user_1"), 1, POD, log)
    assert not result["succeeded"] and result["error"].startswith("its results could not be collected: ")


def test_a_users_artifacts_archive_with_a_bad_member_fails_that_user(tmp_path):
    import tarfile

    class Store:
        def get_object(self, bucket, key):
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
                for name in ("ok.txt", "ok.txt/inner"):
                    info = tarfile.TarInfo(name)
                    info.size = 1
                    tar.addfile(info, io.BytesIO(b"x"))
            return buffer.getvalue()

    directory = tmp_path / "u"
    directory.mkdir()
    result = multi_user.fetch_s3_artifacts(str(directory), {"user_index": 3, "artifacts_s3_key": "k", "succeeded": True},
                                           Store(), "b")
    assert not result["succeeded"] and "'ok.txt/inner' (needs 'ok.txt' as a directory" in result["error"]
    assert sorted(os.listdir(str(directory))) == ["FAILURE", "user.json"]


def test_the_user_pod_finds_the_modules_it_loads_by_path():
    # the pod runs this file as a script (no package): its siblings are loaded from their paths
    assert multi_user_pod._pod_point().BEGIN == pod_point.BEGIN
    assert hasattr(multi_user_pod._s3_client(), "S3Client")
