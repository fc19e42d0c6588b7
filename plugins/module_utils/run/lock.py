# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run per run directory: an exclusive lock held for the run's whole life.

A run is one ``ansible-playbook`` process (the *controller*). Its tasks run in
short-lived worker processes, so the lock cannot live in them: the first task
that resolves the run root (``resolve_config``) takes an ``flock`` on
``<run root>/.perfscale-run.lock``, writes the holder there (controller pid,
host, start time) and hands the locked file to a small *keeper* process. The
keeper holds the lock while the controller lives and releases it (removing the
file) as soon as the controller is gone, whether it ended normally or was
killed with ``kill -9``. The same controller taking the lock again (an imported
playbook) is fine, and so is a controller started by the holder for the same run
(a descendant process: the commands ``toolbox_parallel`` runs side by side, each
an ``ansible-playbook`` of its own); another one fails at once with one line naming the
directory and the holder. A lock file whose lock nobody holds any more (the
machine rebooted, the keeper was killed) is stale: it is taken over, and said so.

The keeper is this file run by path (standard library only):
``python -P run_lock.py keep <lock path> <controller pid> <controller start>``.
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
import socket
import subprocess
import sys
import time

LOCK_FILE = ".perfscale-run.lock"
POLL_S = 0.25
# a holder that has just ended is released by its keeper within POLL_S: wait that long
RELEASE_WAIT_S = 4 * POLL_S

try:
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import RunLockError
except ImportError:  # run by path as the keeper (only the standard library is importable then)
    class RunLockError(Exception):
        """The run directory is held by another run."""


def stat_fields(pid, proc):
    """The fields of ``<proc>/<pid>/stat`` after the command name (the state, the parent pid, ...), or
    ``[]`` when the process is gone or its stat cannot be read."""
    try:
        with open("%s/%d/stat" % (proc, pid), encoding="ascii", errors="replace") as handle:
            stat = handle.read()
    except OSError:
        return []
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    return stat[stat.rfind(")") + 2:].split()


def process_start_time(pid, proc="/proc"):
    """The start time of a process (clock ticks since boot, field 22), to tell a pid from a reused one."""
    fields = stat_fields(pid, proc)
    return int(fields[19]) if len(fields) > 19 else None


def parent_pid(pid, proc="/proc"):
    """The parent of a process (field 4), or None when it cannot be read."""
    fields = stat_fields(pid, proc)
    return int(fields[1]) if len(fields) > 1 else None


def is_ancestor(ancestor, pid, proc="/proc"):
    """Whether ``ancestor`` started ``pid`` (directly or through other processes)."""
    seen = set()
    while pid and pid not in seen and pid > 1:
        seen.add(pid)
        pid = parent_pid(pid, proc)
        if pid == ancestor:
            return True
    return False


def is_alive(pid, start_time=None):
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return start_time is None or process_start_time(pid) in (None, start_time)


def _read_holder(handle):
    handle.seek(0)
    try:
        holder = json.loads(handle.read())
    except ValueError:    # empty, or not JSON
        return None
    return holder if isinstance(holder, dict) else None


def describe_holder(holder):
    if not holder:
        return "an unknown run"
    return "pid %s on %s, started %s" % (holder.get("pid"), holder.get("host"), holder.get("started"))


class RunLock:
    """The outcome of ``acquire``: whether this call took the lock, and what it replaced."""

    def __init__(self, path, holder, taken_over=None, already_held=False):
        self.path = path
        self.holder = holder
        self.taken_over = taken_over
        self.already_held = already_held

    def message(self):
        if self.taken_over:
            return ("run directory %s: took over a stale lock (%s, which no longer holds it)"
                    % (os.path.dirname(self.path), describe_holder(self.taken_over)))
        return None


def acquire(run_root, controller_pid, python=None):
    """Lock ``run_root`` for the run of ``controller_pid`` (RunLockError when another run holds it)."""
    path = os.path.join(run_root, LOCK_FILE)
    start_time = process_start_time(controller_pid)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    handle = os.fdopen(fd, "r+", encoding="utf-8")
    try:
        holder = _read_holder(handle)
        if not _lock_now_or_after_release(handle, holder):
            if holder and holder.get("pid") == controller_pid and holder.get("pid_start") == start_time:
                return RunLock(path, holder, already_held=True)
            if holder and is_ancestor(holder.get("pid"), controller_pid) and is_alive(holder.get("pid"),
                                                                                      holder.get("pid_start")):
                # a run started by the holder for the same run (toolbox_parallel): it works inside it
                return RunLock(path, holder, already_held=True)
            raise RunLockError("run directory %s is in use by another run (%s); wait for it to end or choose "
                               "another artifact_dir" % (run_root, describe_holder(holder)))
        stale = holder if holder and not (holder.get("pid") == controller_pid
                                          and holder.get("pid_start") == start_time) else None
        mine = {"pid": controller_pid, "pid_start": start_time, "host": socket.gethostname(),
                "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(mine) + "\n")
        handle.flush()
        keeper = subprocess.Popen(  # pylint: disable=consider-using-with
            [python or sys.executable, "-P", os.path.abspath(__file__), "keep", path, str(controller_pid),
             str(start_time)],
            pass_fds=(handle.fileno(),), env={"PERFSCALE_LOCK_FD": str(handle.fileno())},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)   # and only the locked file's descriptor: pass_fds closes the others
        mine["keeper"] = keeper.pid
        return RunLock(path, mine, taken_over=stale)
    finally:
        # the keeper has its own descriptor of the locked file: the lock stays with it
        handle.close()


def _lock_now_or_after_release(handle, holder):
    """Take the flock; when its holder has just ended, give its keeper the time to release it."""
    deadline = time.monotonic() + RELEASE_WAIT_S
    while True:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if not holder or is_alive(holder.get("pid"), holder.get("pid_start")) or time.monotonic() > deadline:
                return False
            time.sleep(POLL_S / 5)


def keep(path, controller_pid, start_time, fd):
    """Hold the lock (on ``fd``) while the controller lives, then release it."""
    while is_alive(controller_pid, start_time):
        time.sleep(POLL_S)
    try:
        os.unlink(path)
    except OSError:
        pass
    os.close(fd)


def main(argv):
    if len(argv) != 5 or argv[1] != "keep":
        sys.stderr.write("usage: run_lock.py keep LOCK_PATH CONTROLLER_PID CONTROLLER_START\n")
        return 2
    start = None if argv[4] == "None" else int(argv[4])
    keep(argv[2], int(argv[3]), start, int(os.environ["PERFSCALE_LOCK_FD"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
