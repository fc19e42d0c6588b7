import json
import os
import subprocess
import sys
import threading
import time

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.run import lock as run_lock


def controller():
    """A stand-in for an ansible-playbook process."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def wait_until(condition, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_second_run_fails_at_once_naming_the_directory_and_the_holder(tmp_path):
    first, second = controller(), controller()
    try:
        lock = run_lock.acquire(str(tmp_path), first.pid)
        assert lock.taken_over is None and not lock.already_held
        with pytest.raises(errors.RunLockError) as error:
            run_lock.acquire(str(tmp_path), second.pid)
        message = str(error.value)
        assert "run directory %s is in use by another run (pid %d on " % (tmp_path, first.pid) in message
        assert "started 20" in message and "\n" not in message
        # the same run again (an imported playbook) is fine
        assert run_lock.acquire(str(tmp_path), first.pid).already_held
    finally:
        first.kill()
        second.kill()
        first.wait()
        second.wait()


def test_the_lock_goes_when_the_controller_dies_even_by_kill_9(tmp_path):
    first, second = controller(), controller()
    try:
        run_lock.acquire(str(tmp_path), first.pid)
        first.kill()  # SIGKILL
        first.wait()
        assert wait_until(lambda: not (tmp_path / run_lock.LOCK_FILE).exists())
        lock = run_lock.acquire(str(tmp_path), second.pid)
        assert lock.taken_over is None
    finally:
        second.kill()
        second.wait()


def test_a_stale_lock_is_taken_over_and_said_so(tmp_path):
    (tmp_path / run_lock.LOCK_FILE).write_text(json.dumps({"pid": 999999, "pid_start": 1, "host": "gone",
                                                           "started": "2026-11-01T00:00:00+00:00"}))
    mine = controller()
    try:
        lock = run_lock.acquire(str(tmp_path), mine.pid)
        assert lock.taken_over["pid"] == 999999
        assert lock.message() == ("run directory %s: took over a stale lock (pid 999999 on gone, started "
                                  "2026-11-01T00:00:00+00:00, which no longer holds it)" % tmp_path)
        holder = json.loads((tmp_path / run_lock.LOCK_FILE).read_text())
        assert holder["pid"] == mine.pid and holder["host"]
    finally:
        mine.kill()
        mine.wait()


def test_a_pid_is_the_holder_only_with_its_start_time():
    """A lock records the holder's pid and its process start time: after a reboot or a pid wrap,
    the pid may belong to another process, which is not the holder (its lock is stale)."""
    me = os.getpid()
    started = run_lock.process_start_time(me)
    assert isinstance(started, int)
    assert run_lock.is_alive(me, started)
    assert not run_lock.is_alive(me, started + 1)
    assert run_lock.is_alive(me)          # a lock written without a start time: the pid alone
    assert not run_lock.is_alive(None) and not run_lock.is_alive(0)


def test_the_keeper_lets_the_lock_go_when_its_controller_pid_is_reused(tmp_path):
    path = tmp_path / run_lock.LOCK_FILE
    path.write_text("{}")
    fd = os.open(str(path), os.O_RDWR)
    # the controller's pid alive but started at another time: keep() returns at once
    keeper = threading.Thread(target=run_lock.keep, daemon=True,
                              args=(str(path), os.getpid(), run_lock.process_start_time(os.getpid()) + 1, fd))
    keeper.start()
    keeper.join(run_lock.POLL_S * 5)
    assert not keeper.is_alive(), "the keeper held the lock for a reused pid"
    assert not path.exists()


def test_keeper_refuses_bad_arguments():
    assert run_lock.main(["run_lock.py"]) == 2
    assert os.path.exists(run_lock.__file__)


def test_a_run_right_after_another_waits_for_the_keeper_instead_of_failing(tmp_path):
    first, second = controller(), controller()
    try:
        run_lock.acquire(str(tmp_path), first.pid)
        first.kill()
        first.wait()
        # at once, before the keeper's next look at its controller
        lock = run_lock.acquire(str(tmp_path), second.pid)
        assert lock.holder["pid"] == second.pid
    finally:
        second.kill()
        second.wait()


def test_process_facts_read_from_proc():
    me = os.getpid()
    # a command name with spaces and parentheses does not shift the fields
    assert run_lock.parent_pid(me) == os.getppid()
    assert run_lock.process_start_time(me) == run_lock.process_start_time(me) > 0
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert run_lock.is_ancestor(me, child.pid)
        assert run_lock.is_ancestor(os.getppid(), child.pid)
        assert not run_lock.is_ancestor(child.pid, me)
        assert run_lock.process_start_time(child.pid) >= run_lock.process_start_time(me)
    finally:
        child.kill()
        child.wait()
    # a pid that is gone has no facts
    assert run_lock.parent_pid(child.pid) is None and run_lock.process_start_time(child.pid) is None
    assert not run_lock.is_ancestor(me, 0) and not run_lock.is_ancestor(me, 1)


def test_a_holder_is_described_in_one_line(tmp_path):
    assert run_lock.describe_holder(None) == "an unknown run"
    assert run_lock.describe_holder({"pid": 12, "host": "h", "started": "t"}) == "pid 12 on h, started t"
    for text in ("", "not json", "[1, 2]", "null"):
        path = tmp_path / "holder"
        path.write_text(text)
        with open(path, encoding="utf-8") as handle:
            assert run_lock._read_holder(handle) is None, text
    lock = run_lock.RunLock(str(tmp_path / run_lock.LOCK_FILE), {"pid": 1})
    assert lock.message() is None and not lock.already_held and lock.taken_over is None
