import datetime
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.run import lock as run_lock


@pytest.fixture(autouse=True)
def keepers_reaped(monkeypatch):
    """Each keeper a test starts is reaped before the next test: it ends within POLL_S of its controller, and a
    child left to end later would be reaped by whoever waits for any child of this process (mutmut's runner)."""
    started = []
    original = run_lock.acquire

    def acquire(*args, **kwargs):
        lock = original(*args, **kwargs)
        if "keeper" in lock.holder:
            started.append(lock.holder["keeper"])
        return lock

    monkeypatch.setattr(run_lock, "acquire", acquire)
    yield
    for pid in started:
        deadline = time.monotonic() + 10 * run_lock.POLL_S
        try:
            while os.waitpid(pid, os.WNOHANG) == (0, 0):
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)    # its controller outlived the test: not the keeper's fault
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.02)
        except ChildProcessError:
            pass    # already reaped (subprocess reaps the children of Popen objects it dropped)


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
    path, fd = open_lock_file(tmp_path)
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


def fake_stat(proc, pid, command, fields):
    os.makedirs(os.path.join(str(proc), str(pid)))
    with open(os.path.join(str(proc), str(pid), "stat"), "wb") as handle:
        handle.write(b"%d (%s) %s\n" % (pid, command, " ".join(str(f) for f in fields).encode()))


def test_the_fields_are_read_after_the_last_parenthesis_of_the_command_name(tmp_path):
    # fields 3.. of /proc/<pid>/stat: state, parent pid (field 4), ..., start time (field 22 = index 19)
    fake_stat(tmp_path, 40, b"a) b (c) d", ["S", 7] + list(range(100, 117)) + [5555, 1])
    assert run_lock.stat_fields(40, str(tmp_path))[:2] == ["S", "7"]
    assert run_lock.parent_pid(40, str(tmp_path)) == 7
    assert run_lock.process_start_time(40, str(tmp_path)) == 5555
    # a command name that is not text does not stop the reading
    fake_stat(tmp_path, 41, b"caf\xc3\xa9 \xff\xfe", ["S", 8] + list(range(100, 117)) + [6666])
    assert run_lock.parent_pid(41, str(tmp_path)) == 8 and run_lock.process_start_time(41, str(tmp_path)) == 6666


def test_a_stat_too_short_to_hold_a_field_gives_none(tmp_path):
    fake_stat(tmp_path, 50, b"x", ["S", 9] + list(range(100, 117)))     # 19 fields: no start time
    fake_stat(tmp_path, 51, b"x", ["S"])                                  # no parent pid
    assert run_lock.process_start_time(50, str(tmp_path)) is None and run_lock.parent_pid(50, str(tmp_path)) == 9
    assert run_lock.parent_pid(51, str(tmp_path)) is None and run_lock.process_start_time(51, str(tmp_path)) is None
    assert run_lock.stat_fields(52, str(tmp_path)) == [] and run_lock.parent_pid(52, str(tmp_path)) is None


def test_the_ancestry_walk_stops_at_init_and_on_a_loop(tmp_path):
    fake_stat(tmp_path, 10, b"p", ["S", 11])
    fake_stat(tmp_path, 11, b"p", ["S", 10])     # a loop (a pid reused by a child of its child)
    fake_stat(tmp_path, 20, b"p", ["S", 1])
    fake_stat(tmp_path, 1, b"init", ["S", 0])
    fake_stat(tmp_path, 30, b"p", ["S", 2])
    fake_stat(tmp_path, 2, b"p", ["S", 77])
    assert run_lock.is_ancestor(77, 30, str(tmp_path))        # through pid 2: only pid 1 ends the walk
    assert not run_lock.is_ancestor(99, 10, str(tmp_path))
    assert run_lock.is_ancestor(11, 10, str(tmp_path)) and run_lock.is_ancestor(1, 20, str(tmp_path))
    assert not run_lock.is_ancestor(0, 20, str(tmp_path))      # the walk ends at init, not at its parent 0


def test_a_process_that_may_not_be_signalled_is_alive(monkeypatch):
    def refuse(pid, signal_number):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(run_lock.os, "kill", refuse)
    assert run_lock.is_alive(4242) and run_lock.is_alive(4242, 1)


def command_line(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as handle:
        return handle.read().decode().split("\0")[:-1]


def open_files(pid):
    """The descriptors of process ``pid`` and what each is open on; one closed while they are read is
    left out (found on a loaded machine: the starting keeper closed a descriptor between the listing
    and its read)."""
    targets = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            targets[fd] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except FileNotFoundError:
            continue
    return targets


def test_the_lock_file_names_the_holder_and_its_keeper_runs_alone(tmp_path):
    mine = controller()
    inherited = os.open(str(tmp_path / "an-open-file"), os.O_WRONLY | os.O_CREAT)
    os.set_inheritable(inherited, True)
    umask = os.umask(0)
    stdin, (pipe_out, pipe_in) = os.dup(0), os.pipe()
    try:
        before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        os.dup2(pipe_out, 0)     # whatever the run's standard input, the keeper reads none of it
        try:
            lock = run_lock.acquire(str(tmp_path), mine.pid)
        finally:
            os.dup2(stdin, 0)
        path = tmp_path / run_lock.LOCK_FILE
        assert os.stat(str(path)).st_mode & 0o777 == 0o644
        written = json.loads(path.read_text(encoding="utf-8"))
        assert sorted(written) == ["host", "pid", "pid_start", "started"]
        assert written["pid"] == mine.pid and written["pid_start"] == run_lock.process_start_time(mine.pid)
        assert written["host"] == socket.gethostname()
        started = datetime.datetime.fromisoformat(written["started"])
        assert started.utcoffset() == datetime.timedelta(0) and before <= started <= before + datetime.timedelta(60)
        assert lock.holder == dict(written, keeper=lock.holder["keeper"]) and lock.path == str(path)
        keeper = lock.holder["keeper"]
        # just after its exec the kernel may show an empty command line for a moment
        assert wait_until(lambda: command_line(keeper), timeout=5)
        argv = command_line(keeper)
        assert argv == [sys.executable, "-P", os.path.abspath(run_lock.__file__), "keep", str(path), str(mine.pid),
                        str(written["pid_start"])]
        assert os.getsid(keeper) == keeper                      # its own session: a Ctrl-C of the run spares it
        # the locked file is open in the keeper once it runs (on a loaded machine its interpreter may still be
        # starting, opening and closing files)
        assert wait_until(lambda: str(path) in open_files(keeper).values(), timeout=10)
        targets = open_files(keeper)
        assert targets["0"] == targets["1"] == targets["2"] == "/dev/null"
        assert str(tmp_path / "an-open-file") not in targets.values()
        assert str(path) in targets.values()                    # the locked file, and only that of ours
    finally:
        os.umask(umask)
        for fd in (inherited, stdin, pipe_out, pipe_in):
            os.close(fd)
        mine.kill()
        mine.wait()


def test_a_lock_held_by_a_live_run_is_refused_in_one_line_without_waiting(tmp_path, monkeypatch):
    first, second = controller(), controller()
    try:
        lock = run_lock.acquire(str(tmp_path), first.pid)
        slept = []
        monkeypatch.setattr(run_lock.time, "sleep", slept.append)
        with pytest.raises(errors.RunLockError) as refused:
            run_lock.acquire(str(tmp_path), second.pid)
        assert str(refused.value) == ("run directory %s is in use by another run (%s); wait for it to end or choose "
                                      "another artifact_dir" % (tmp_path, run_lock.describe_holder(lock.holder)))
        assert slept == []
    finally:
        for process in (first, second):
            process.kill()
            process.wait()


def test_the_same_controller_again_holds_the_lock_already(tmp_path):
    mine = controller()
    try:
        first = run_lock.acquire(str(tmp_path), mine.pid)
        again = run_lock.acquire(str(tmp_path), mine.pid)
        assert again.already_held is True and again.taken_over is None and again.message() is None
        assert again.path == first.path == str(tmp_path / run_lock.LOCK_FILE)
        assert again.holder == {key: value for key, value in first.holder.items() if key != "keeper"}
    finally:
        mine.kill()
        mine.wait()


def test_a_run_started_by_the_holder_works_inside_its_lock(tmp_path):
    """toolbox_parallel: the holder (here this test's process) starts other controllers for the same run."""
    child = controller()
    lock = None
    try:
        lock = run_lock.acquire(str(tmp_path), os.getpid())
        inside = run_lock.acquire(str(tmp_path), child.pid)
        assert inside.already_held is True and inside.path == lock.path
        assert inside.holder["pid"] == os.getpid() and inside.holder["pid_start"] == lock.holder["pid_start"]
    finally:
        child.kill()
        child.wait()
        if lock is not None:
            os.kill(lock.holder["keeper"], signal.SIGKILL)   # it watches this process: end it here


def test_a_lock_file_left_by_the_same_controller_is_not_a_take_over(tmp_path):
    mine = controller()
    try:
        start = run_lock.process_start_time(mine.pid)
        (tmp_path / run_lock.LOCK_FILE).write_text(json.dumps({"pid": mine.pid, "pid_start": start}))
        lock = run_lock.acquire(str(tmp_path), mine.pid)
        assert lock.taken_over is None and lock.message() is None and not lock.already_held
    finally:
        mine.kill()
        mine.wait()


def test_a_lock_file_of_a_reused_pid_is_taken_over(tmp_path):
    mine = controller()
    try:
        left = {"pid": mine.pid, "pid_start": run_lock.process_start_time(mine.pid) - 1, "host": "h", "started": "t"}
        (tmp_path / run_lock.LOCK_FILE).write_text(json.dumps(left))
        assert run_lock.acquire(str(tmp_path), mine.pid).taken_over == left
    finally:
        mine.kill()
        mine.wait()


def held(path):
    """The file locked by another open file description, as a keeper holds it."""
    fd = os.open(str(path), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_lock_whose_holder_has_ended_is_waited_for_until_its_keeper_lets_go(tmp_path, monkeypatch):
    path = tmp_path / "lock"
    keeper_fd = held(path)
    me = os.getpid()
    # the holder's pid is alive but started at another time: it has ended, its keeper is about to let go
    holder = {"pid": me, "pid_start": run_lock.process_start_time(me) + 1}

    def let_go(seconds):
        assert seconds == run_lock.POLL_S / 5
        os.close(keeper_fd)

    monkeypatch.setattr(run_lock.time, "sleep", let_go)
    with open(str(path), "r+", encoding="utf-8") as handle:
        assert run_lock._lock_now_or_after_release(handle, holder) is True


@pytest.mark.parametrize("holder", [None, "live"])
def test_a_lock_held_by_a_live_or_unknown_holder_is_not_waited_for(tmp_path, monkeypatch, holder):
    path = tmp_path / "lock"
    keeper_fd = held(path)
    if holder == "live":
        holder = {"pid": os.getpid(), "pid_start": run_lock.process_start_time(os.getpid())}
    slept = []
    monkeypatch.setattr(run_lock.time, "sleep", slept.append)
    try:
        with open(str(path), "r+", encoding="utf-8") as handle:
            assert run_lock._lock_now_or_after_release(handle, holder) is False
        assert slept == []
    finally:
        os.close(keeper_fd)


def test_a_lock_still_held_after_its_holder_ended_is_given_up_after_the_release_wait(tmp_path, monkeypatch):
    path = tmp_path / "lock"
    keeper_fd = held(path)
    monkeypatch.setattr(run_lock, "RELEASE_WAIT_S", 0.05)
    dead = controller()
    dead.kill()
    dead.wait()
    try:
        with open(str(path), "r+", encoding="utf-8") as handle:
            assert run_lock._lock_now_or_after_release(handle, {"pid": dead.pid, "pid_start": 1}) is False
    finally:
        os.close(keeper_fd)


@pytest.mark.parametrize("argv", [["run_lock.py"], ["run_lock.py", "keep", "p", "1"],
                                  ["run_lock.py", "keep", "p", "1", "2", "3"], ["run_lock.py", "hold", "p", "1", "2"],
                                  ["run_lock.py", "p", "keep", "1", "2"]])
def test_the_keeper_refuses_other_arguments_with_its_usage(argv, capsys):
    assert run_lock.main(argv) == 2
    assert capsys.readouterr().err == "usage: run_lock.py keep LOCK_PATH CONTROLLER_PID CONTROLLER_START\n"


def open_lock_file(tmp_path):
    """A lock file and the descriptor a keeper gets of it."""
    path = tmp_path / run_lock.LOCK_FILE
    path.write_text("{}")
    return path, os.open(str(path), os.O_RDWR)


def keeper_thread(target):
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_a_lock_held_for_a_reused_pid_of_an_ancestor_is_refused(tmp_path, monkeypatch):
    """The holder in the file is this process's pid with another start time: not the run that started the
    controller, whatever the pid says."""
    monkeypatch.setattr(run_lock, "RELEASE_WAIT_S", 0.05)
    path = tmp_path / run_lock.LOCK_FILE
    keeper_fd = held(path)
    path.write_text(json.dumps({"pid": os.getpid(), "pid_start": run_lock.process_start_time(os.getpid()) + 1}))
    child = controller()
    try:
        with pytest.raises(errors.RunLockError, match="is in use by another run"):
            run_lock.acquire(str(tmp_path), child.pid)
    finally:
        os.close(keeper_fd)
        child.kill()
        child.wait()


@pytest.mark.parametrize("start", ["None", "reused"])
def test_the_keeper_command_lets_go_of_a_lock_whose_controller_is_gone(tmp_path, monkeypatch, start):
    path, fd = open_lock_file(tmp_path)
    monkeypatch.setenv("PERFSCALE_LOCK_FD", str(fd))
    if start == "None":      # a lock written without a start time: a controller that is gone
        gone = controller()
        gone.kill()
        gone.wait()
        argv = ["run_lock.py", "keep", str(path), str(gone.pid), "None"]
    else:                    # this process's pid, started at another time: a reused pid
        argv = ["run_lock.py", "keep", str(path), str(os.getpid()), str(run_lock.process_start_time(os.getpid()) + 1)]
    outcome = []
    thread = keeper_thread(lambda: outcome.append(run_lock.main(argv)))
    thread.join(run_lock.POLL_S * 8)
    assert outcome == [0] and not path.exists()
    with pytest.raises(OSError):
        os.fstat(fd)          # the keeper's descriptor of the lock is closed: the lock is let go


@pytest.mark.parametrize("entry", ["function", "command"])
def test_the_keeper_holds_the_lock_while_its_controller_lives(tmp_path, monkeypatch, entry):
    """keep() itself, and the command the lock starts (run_lock.py keep ...), which calls it."""
    path, fd = open_lock_file(tmp_path)
    mine = controller()
    start = run_lock.process_start_time(mine.pid)
    outcome = []
    if entry == "command":
        monkeypatch.setenv("PERFSCALE_LOCK_FD", str(fd))
        argv = ["run_lock.py", "keep", str(path), str(mine.pid), str(start)]
        thread = keeper_thread(lambda: outcome.append(run_lock.main(argv)))
    else:
        thread = keeper_thread(lambda: outcome.append(run_lock.keep(str(path), mine.pid, start, fd)))
    try:
        thread.join(run_lock.POLL_S * 3)
        assert thread.is_alive() and path.exists()
    finally:
        mine.kill()
        mine.wait()
    thread.join(run_lock.POLL_S * 8)
    assert not thread.is_alive() and not path.exists()
    assert outcome == [0 if entry == "command" else None]
    with pytest.raises(OSError):
        os.fstat(fd)


@pytest.mark.parametrize("left", ["", "other pid, same start"])
def test_a_lock_held_by_another_pid_is_refused_whatever_its_start_time(tmp_path, monkeypatch, left):
    """Only the holder's own pid with its own start time is the same run: an unreadable holder, or another pid that
    happens to share the controller's start time (processes started in the same clock tick), is another run."""
    monkeypatch.setattr(run_lock, "RELEASE_WAIT_S", 0.05)
    mine, gone = controller(), controller()
    gone.kill()
    gone.wait()
    path = tmp_path / run_lock.LOCK_FILE
    keeper_fd = held(path)
    holder = {"pid": gone.pid, "pid_start": run_lock.process_start_time(mine.pid), "host": "h", "started": "t"}
    path.write_text(json.dumps(holder) if left else "")
    try:
        with pytest.raises(errors.RunLockError) as refused:
            run_lock.acquire(str(tmp_path), mine.pid)
        assert str(refused.value) == ("run directory %s is in use by another run (%s); wait for it to end or choose "
                                      "another artifact_dir" % (tmp_path, "pid %d on h, started t" % gone.pid if left
                                                                else "an unknown run"))
    finally:
        os.close(keeper_fd)
        mine.kill()
        mine.wait()


def test_the_wait_for_a_release_lasts_until_the_deadline_itself(tmp_path, monkeypatch):
    """An ended holder's keeper gets RELEASE_WAIT_S to let go: the flock is tried again at the deadline, not after."""
    path = tmp_path / "lock"
    keeper_fd = held(path)
    dead = controller()
    dead.kill()
    dead.wait()
    # the clock as the wait reads it: when it starts, then at each look after a refused flock
    readings = iter([0.0, run_lock.RELEASE_WAIT_S / 2, run_lock.RELEASE_WAIT_S, run_lock.RELEASE_WAIT_S + run_lock.POLL_S])
    monkeypatch.setattr(run_lock.time, "monotonic", lambda: next(readings))
    slept = []
    monkeypatch.setattr(run_lock.time, "sleep", slept.append)
    try:
        with open(str(path), "r+", encoding="utf-8") as handle:
            assert run_lock._lock_now_or_after_release(handle, {"pid": dead.pid, "pid_start": 1}) is False
        assert slept == [run_lock.POLL_S / 5] * 2
        assert next(readings, "all read") == "all read"
    finally:
        os.close(keeper_fd)
