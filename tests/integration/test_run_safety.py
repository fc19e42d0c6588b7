"""Runs that cannot be mixed or outlive their controller: the run lock, kill -9."""

import json
import os
import signal
import subprocess
import sys
import time

from helpers import BIN, REPO, ansible_env, run_playbook

SCRIPTED = os.path.join(REPO, "tests", "fixtures", "indicators", "scripted.py")
LOCK_FILE = ".perfscale-run.lock"


def slow_matrix(points, sleep):
    """Overrides for a matrix of `points` points that each sleep `sleep` seconds."""
    return json.dumps({"overrides": {
        "tests.capture_environment.enabled": False,
        "tests.benchmark.name_template": "{name}",
        "tests.benchmark.indicators": {"scripted": {"command": [sys.executable, SCRIPTED], "parameters": None}},
        "tests.benchmark.matrix": {"factors": {"indicator": "scripted", "name": ["p%d" % i for i in range(points)]},
                                   "common_settings": {"sleep": sleep}, "include": [], "exclude": []},
        "regression.enabled": False, "export.enabled": False}})


def start_benchmark(root, overrides):
    command = [os.path.join(BIN, "ansible-playbook"), "-i", os.path.join(REPO, "inventories", "local", "hosts.yml"),
               os.path.join(REPO, "playbooks", "benchmark.yml"), "-e", "artifact_dir=%s" % root, "-e", overrides]
    return subprocess.Popen(command, cwd=REPO, env=ansible_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def wait_for(condition, timeout=120, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for %s" % what)


def point_dirs(root):
    matrices = [d for d in os.listdir(root) if d.endswith("__matbenchmarking")] if os.path.isdir(root) else []
    if not matrices:
        return []
    matrix = os.path.join(root, matrices[0])
    return sorted(os.path.join(matrix, d) for d in os.listdir(matrix) if os.path.isdir(os.path.join(matrix, d)))


def finished(root):
    return [d for d in point_dirs(root) if os.path.exists(os.path.join(d, "exit_code"))]


def started(root):
    return [d for d in point_dirs(root) if os.path.exists(os.path.join(d, ".uuid"))]


def harness_processes(root):
    """Processes still running a point of this tree (their working directory is inside it)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.readlink("/proc/%s/cwd" % pid).startswith(str(root)):
                    found.append(int(pid))
            except OSError:
                continue
    return found


def test_a_second_run_into_the_same_directory_fails_at_once_and_names_the_holder(tmp_path):
    root = tmp_path / "run"
    first = start_benchmark(root, slow_matrix(3, 1.5))
    try:
        wait_for(lambda: started(root), what="the first run's matrix")
        begun = time.monotonic()
        second = run_playbook("playbooks/benchmark.yml", "-e", "artifact_dir=%s" % root, "-e", slow_matrix(3, 0))
        assert second.returncode != 0
        assert time.monotonic() - begun < 30
        assert "run directory %s is in use by another run (pid %d on " % (root, first.pid) in second.flat
        output, _stderr = first.communicate(timeout=120)
        assert first.returncode == 0, output
    finally:
        if first.poll() is None:
            first.kill()
    # the first run's points ran alone: no failure anywhere
    assert len(finished(root)) == 3
    assert not [d for d in point_dirs(root) if os.path.exists(os.path.join(d, "FAILURE"))]
    wait_for(lambda: not (root / LOCK_FILE).exists(), 10, "the lock's release")
    again = run_playbook("playbooks/benchmark.yml", "-e", "artifact_dir=%s" % root, "-e", slow_matrix(3, 1.5))
    assert again.returncode == 0, again.output
    assert "nothing left to do" in again.flat


def test_kill_9_of_ansible_playbook_stops_its_matrix_and_a_resume_reruns_the_interrupted_point(tmp_path):
    root = tmp_path / "run"
    run = start_benchmark(root, slow_matrix(8, 1.0))
    try:
        wait_for(lambda: len(finished(root)) >= 2, what="two finished points")
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
    finally:
        if run.poll() is None:
            run.kill()
    # the worker noticed: its harness was killed and no new point starts
    wait_for(lambda: not harness_processes(root), 10, "the harness processes to be gone")
    begun = len(started(root))
    time.sleep(2.5)
    assert len(started(root)) == begun
    assert begun < 8
    done = len(finished(root))
    interrupted = [d for d in started(root) if not os.path.exists(os.path.join(d, "exit_code"))]
    wait_for(lambda: not (root / LOCK_FILE).exists(), 10, "the lock's release")

    resume = run_playbook("playbooks/benchmark.yml", "-e", "artifact_dir=%s" % root, "-e", slow_matrix(8, 1.0))
    assert resume.returncode == 0, resume.output
    assert "%d skipped (already done)" % done in resume.flat
    assert len(finished(root)) == 8
    for directory in interrupted:
        assert os.path.isdir(os.path.join(directory, "_previous", "attempt_1"))


def test_a_stale_lock_is_taken_over_and_said_so(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    (root / LOCK_FILE).write_text(json.dumps({"pid": 999999, "pid_start": 1, "host": "old-host",
                                              "started": "2026-11-01T00:00:00+00:00"}))
    run = run_playbook("playbooks/config.yml", "-e", "artifact_dir=%s" % root)
    assert run.returncode == 0, run.output
    assert "took over a stale lock (pid 999999 on old-host, started 2026-11-01T00:00:00+00:00" in run.flat
