# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A callback for profiling the test suite (not part of the collection): every task's wall time,
one JSON line per task result, appended to ``$PERFSCALE_TASK_TIMES``.

    PERFSCALE_TASK_TIMES=/tmp/times.jsonl .venv/bin/python -m pytest tests/cluster ...
    .venv/bin/python tests/profiling/summarize.py /tmp/times.jsonl

tests/integration/helpers.py enables it for every playbook a test runs when the variable is set.
"""

from __future__ import annotations

DOCUMENTATION = """
name: task_times
type: aggregate
short_description: every task's wall time, as JSON lines (test-suite profiling)
description: Appends one JSON line per task result to the file named by PERFSCALE_TASK_TIMES.
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_times"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._path = os.environ.get("PERFSCALE_TASK_TIMES")
        self._started = {}
        self._playbook = None
        self._playbook_start = time.monotonic()

    def v2_playbook_on_start(self, playbook):
        self._playbook = os.path.basename(playbook._file_name)
        self._playbook_start = time.monotonic()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._started[task._uuid] = time.monotonic()

    def v2_playbook_on_handler_task_start(self, task):
        self._started[task._uuid] = time.monotonic()

    def _write(self, result, status):
        if not self._path:
            return
        task = result._task
        start = self._started.get(task._uuid, time.monotonic())
        record = {"playbook": self._playbook, "role": task._role.get_name() if task._role else None,
                  "task": task.get_name(), "action": task.action, "status": status,
                  "seconds": round(time.monotonic() - start, 3), "pid": os.getpid(),
                  "attempts": result._result.get("attempts", 1) if isinstance(result._result, dict) else 1}
        with open(self._path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def v2_runner_on_ok(self, result):
        self._write(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._write(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._write(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._write(result, "unreachable")

    def v2_playbook_on_stats(self, stats):
        if self._path:
            with open(self._path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"playbook": self._playbook, "total": True,
                                         "seconds": round(time.monotonic() - self._playbook_start, 3),
                                         "pid": os.getpid()}) + "\n")
