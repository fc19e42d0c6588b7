# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The local executor: each point is a subprocess of this machine.

The command runs in the point directory, in a session (process group) of its
own, so a timeout or a cancel kills the whole tree it started; a crash is
reported with its signal and the last line of stderr. What the point's process tree used (CPU user
and kernel time, context switches, the largest resident set) goes to its ``point.json``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

from ansible_collections.perfscale.topsail.plugins.module_utils.executors import base
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base as harness_base


class LocalHandle:
    __slots__ = ("process", "directory", "started", "error")

    def __init__(self, process, directory, started, error=None):
        self.process = process
        self.directory = directory
        self.started = started
        self.error = error


def kill_group(process):
    """SIGKILL the process group of ``process`` (the process itself when the group is gone)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            process.kill()
        except ProcessLookupError:
            pass


def _last_stderr_line(directory):
    detail = harness_base.tail(os.path.join(directory, harness_base.STDERR_FILE), 3)
    return ": " + detail.splitlines()[-1] if detail else ""


def execution_of(code, duration, directory, resources=None):
    """An ``Execution`` from a return code (negative: killed by that signal)."""
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return base.Execution(128 - code, duration, signal_name=name, resources=resources,
                              error="harness crashed with signal %s%s" % (name, _last_stderr_line(directory)))
    if code != 0:
        return base.Execution(code, duration, resources=resources,
                              error="harness exited with %d%s" % (code, _last_stderr_line(directory)))
    return base.Execution(0, duration, resources=resources)


def wait_with_usage(process):
    """Wait for ``process`` (a ``Popen``) and return ``(return code, resources)``: ``os.wait4`` gives the
    usage of the process and of the descendants it waited for; ``Popen`` is told the code."""
    while True:
        try:
            _pid, status, rusage = os.wait4(process.pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            # reaped elsewhere (a cancel's wait): no usage to report
            return process.wait(), None
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, base.resource_usage(rusage)


class LocalExecutor(base.Executor):
    name = "local"
    description = "Each point is a subprocess on this machine (its own process group)"

    def __init__(self, base_env=None):
        self.base_env = dict(os.environ if base_env is None else base_env)

    def start(self, point, command, directory):
        env = dict(self.base_env)
        env.update(command.env)
        started = time.monotonic()
        with open(os.path.join(directory, harness_base.STDOUT_FILE), "wb") as stdout, \
                open(os.path.join(directory, harness_base.STDERR_FILE), "wb") as stderr:
            try:
                process = subprocess.Popen(command.argv, cwd=directory, env=env, stdout=stdout, stderr=stderr,
                                           stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as exc:
                error = "harness could not be started: %s: %s" % (command.argv[0], exc.strerror or exc)
                return LocalHandle(None, directory, started, error=error)
        return LocalHandle(process, directory, started)

    def wait(self, handle, timeout):
        if handle.process is None:
            return base.Execution(base.EXIT_NOT_STARTED, time.monotonic() - handle.started, error=handle.error)
        # a blocking wait with a timer that kills the group: Popen.wait(timeout) would poll
        # with sleeps of up to 50 ms, which is most of a short point's overhead
        expired = threading.Event()

        def expire():
            expired.set()
            kill_group(handle.process)

        timer = threading.Timer(timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            code, resources = wait_with_usage(handle.process)
        finally:
            timer.cancel()
        duration = time.monotonic() - handle.started
        if expired.is_set():
            return base.Execution(base.EXIT_TIMEOUT, duration, timed_out=True, resources=resources,
                                  error="harness timed out after %s s (killed)" % timeout)
        return execution_of(code, duration, handle.directory, resources)

    def cancel(self, handle):
        if handle.process is not None and handle.process.poll() is None:
            kill_group(handle.process)
            handle.process.wait()
