# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a harness is, and the output contract every harness honours.

A *harness* turns the settings of a matrix point into a command (what the
executor runs) and, once it ran, reads its output from the point directory.
The matrix engine knows only this interface (``Harness``); harnesses register
in ``harnesses/__init__.py``.

The output contract (performance-indicator format): one JSON document on
stdout with ``name`` (str), ``framework`` (str), ``@parameters`` (object),
``@result`` (object) and optionally ``overall_score`` (number in [0, 1]); the
keys of ``@parameters`` and ``@result`` are disjoint; free text goes to stderr.
Any violation is a ``HarnessOutputError`` with a one-line message.
"""

from __future__ import annotations

import json
import math
import os

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError

REQUIRED_KEYS = (("name", str), ("framework", str), ("@parameters", dict), ("@result", dict))

STDOUT_FILE = "stdout.log"
STDERR_FILE = "stderr.log"
OUTPUT_FILE = "output.json"


def _reject_constant(name):
    raise HarnessOutputError("harness output contains %s, which is not a number in JSON "
                             "(report a missing value as null)" % name)


def validate_output(text):
    """Parse and check a harness's stdout; returns the document."""
    text = (text or "").strip()
    if not text:
        raise HarnessOutputError("harness printed nothing on stdout (expected one JSON document)")
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        first = text.splitlines()[0][:80]
        raise HarnessOutputError("harness output is not JSON (%s); it starts with %r"
                                 % (getattr(exc, "msg", exc), first)) from None
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
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) \
                or not 0 <= score <= 1:
            raise HarnessOutputError("harness overall_score must be a number in [0, 1], got %r" % (score,))
    return document


def tail(path, lines=20, limit=4000):
    """The last lines of a text file ('' when it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])[-limit:]


class PointCommand:
    """What an executor runs for one point: argv, environment additions, and the
    number of threads the point asked for (None: the machine's default)."""

    __slots__ = ("argv", "env", "threads")

    def __init__(self, argv, env=None, threads=None):
        self.argv = list(argv)
        self.env = dict(env or {})
        self.threads = threads


class Harness:
    """Interface of a harness (one instance per registry entry)."""

    name = None
    description = ""
    # whether the points' commands can run on an inventory host (the benchmark_hosts group) with
    # only what host_files() ships there: nothing of the controller, its configuration or clusters
    runs_on_hosts = False

    def host_files(self):
        """{file name: local path} of the files a host needs to run this harness's points; a point's
        argv naming one of those paths gets the file's place on the host instead."""
        return {}

    def known_settings(self, section):
        """Setting names a point may have (a set), or None when anything goes."""
        raise NotImplementedError

    def check_section(self, section):
        """Reject harness settings of the ``tests.benchmark`` section that cannot work (MatrixError)."""

    def plan_point(self, name, settings, section, python=None, config=None):
        """Validate one point's settings and return its ``PointCommand`` (MatrixError naming the point).
        ``settings`` are the point's settings minus the section's ``deployment_factors``; ``config`` is the
        whole configuration (for secret references), when the caller has it."""
        raise NotImplementedError

    def read_output(self, directory, section=None):
        """The point's validated document, from what the command wrote (HarnessOutputError); ``section`` is
        the benchmark section the point belongs to."""
        with open(os.path.join(directory, STDOUT_FILE), encoding="utf-8", errors="replace") as handle:
            return validate_output(handle.read())

    def failure_detail(self, directory):
        """What the ``FAILURE`` file of a failed point says after the error line: the tail of its stderr."""
        stderr_tail = tail(os.path.join(directory, STDERR_FILE))
        return "--- stderr (tail) ---\n" + stderr_tail if stderr_tail else ""

    def keep_output(self, directory, document):
        """Keep the validated document as ``output.json``. What the command printed is that
        document: the file is renamed, not written again (a large document is stored once)."""
        os.replace(os.path.join(directory, STDOUT_FILE), os.path.join(directory, OUTPUT_FILE))
