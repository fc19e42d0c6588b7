# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a benchmark harness in a subprocess and check what it prints.

The harness contract (performance-indicator format): one JSON document on
stdout with ``name`` (str), ``framework`` (str), ``@parameters`` (object),
``@result`` (object) and optionally ``overall_score`` (number in [0, 1]);
the keys of ``@parameters`` and ``@result`` are disjoint; free text goes to
stderr. Any violation is a ``HarnessOutputError`` with a one-line message.

A harness runs with a timeout in its own process group: a timeout kills the
whole group, a crash is reported with its signal, stderr is always kept.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from ansible_collections.perfscale.topsail.plugins.module_utils import perf_indicator

REQUIRED_KEYS = (("name", str), ("framework", str), ("@parameters", dict), ("@result", dict))

EXIT_TIMEOUT = 124          # as coreutils timeout
EXIT_BAD_OUTPUT = 65        # EX_DATAERR: ran, but did not honour the contract
EXIT_NOT_STARTED = 127      # the command could not be started

STDOUT_FILE = "stdout.log"
STDERR_FILE = "stderr.log"
OUTPUT_FILE = "output.json"


class HarnessOutputError(ValueError):
    """The harness output does not follow the contract."""


def validate_output(text):
    """Parse and check a harness's stdout; returns the document."""
    text = (text or "").strip()
    if not text:
        raise HarnessOutputError("harness printed nothing on stdout (expected one JSON document)")
    try:
        document = json.loads(text)
    except ValueError as exc:
        first = text.splitlines()[0][:80]
        raise HarnessOutputError("harness output is not JSON (%s); it starts with %r" % (exc.msg, first)) from None
    if not isinstance(document, dict):
        raise HarnessOutputError("harness output must be a JSON object, got %s" % type(document).__name__)
    missing = [key for key, _kind in REQUIRED_KEYS if key not in document]
    if missing:
        raise HarnessOutputError("harness output lacks required key(s): %s" % ", ".join(missing))
    for key, kind in REQUIRED_KEYS:
        if not isinstance(document[key], kind):
            raise HarnessOutputError("harness output key %s must be a %s, got %s"
                                     % (key, "string" if kind is str else "object", type(document[key]).__name__))
    overlap = sorted(set(document["@parameters"]) & set(document["@result"]))
    if overlap:
        raise HarnessOutputError("harness output keys appear in both @parameters and @result: %s" % ", ".join(overlap))
    if "overall_score" in document and document["overall_score"] is not None:
        score = document["overall_score"]
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise HarnessOutputError("harness overall_score must be a number in [0, 1], got %r" % (score,))
    return document


class HarnessRun:
    """Outcome of one harness execution."""

    def __init__(self, exit_code, duration, document=None, error=None, timed_out=False, signal_name=None):
        self.exit_code = exit_code
        self.duration = duration
        self.document = document
        self.error = error
        self.timed_out = timed_out
        self.signal_name = signal_name

    @property
    def ok(self):
        return self.exit_code == 0

    def as_dict(self):
        return {"exit_code": self.exit_code, "duration_s": round(self.duration, 6), "error": self.error,
                "timed_out": self.timed_out, "signal": self.signal_name}


def tail(path, lines=20, limit=4000):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])[-limit:]


def _kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()


def run_harness(command, cwd, timeout, env=None):
    """Run ``command`` (argv list) in ``cwd``; stdout/stderr go to files there.

    Returns a HarnessRun. Never raises for harness failures: a command that
    cannot start, crashes, times out or prints a bad document is a failed run
    with its reason in ``error``.
    """
    stdout_path = os.path.join(cwd, STDOUT_FILE)
    stderr_path = os.path.join(cwd, STDERR_FILE)
    started = time.monotonic()
    with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
        try:
            process = subprocess.Popen(command, cwd=cwd, env=env, stdout=stdout, stderr=stderr,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            return HarnessRun(EXIT_NOT_STARTED, time.monotonic() - started,
                              error="harness could not be started: %s: %s" % (command[0], exc.strerror or exc))
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            process.wait()
            return HarnessRun(EXIT_TIMEOUT, time.monotonic() - started, timed_out=True,
                              error="harness timed out after %s s (killed)" % timeout)
    duration = time.monotonic() - started
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        detail = tail(stderr_path, 3)
        return HarnessRun(128 - code, duration, signal_name=name,
                          error="harness crashed with signal %s%s" % (name, ": " + detail.splitlines()[-1] if detail else ""))
    if code != 0:
        detail = tail(stderr_path, 3)
        return HarnessRun(code, duration, error="harness exited with %d%s" % (code, ": " + detail.splitlines()[-1] if detail else ""))
    with open(stdout_path, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    try:
        document = validate_output(text)
    except HarnessOutputError as exc:
        return HarnessRun(EXIT_BAD_OUTPUT, duration, error=str(exc))
    return HarnessRun(0, duration, document=document)


def builtin_indicator_script():
    """Path of the built-in indicators' script (it imports only the standard library,
    so it runs by path: no dependency on how ``ansible_collections`` is importable)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "perf_indicator.py")


def builtin_command(indicator, settings, python=None):
    """argv running a built-in indicator of this collection."""
    arguments = ["%s=%s" % (key, json.dumps(value)) for key, value in sorted(settings.items())]
    # -P: do not put module_utils/ on sys.path (its modules must not shadow the stdlib)
    return [python or sys.executable, "-P", builtin_indicator_script(), indicator] + arguments


def harness_environment(settings, base=None, threads=None):
    """Environment of a harness: the settings as JSON and the thread limits."""
    env = dict(os.environ if base is None else base)
    env["PERFSCALE_SETTINGS"] = json.dumps(settings, sort_keys=True, default=str)
    perf_indicator.apply_thread_settings(threads, env)
    return env
