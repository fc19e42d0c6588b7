# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A callback for benchmarks/role_process_counts.py (not part of the collection): one JSON line per task
result, appended to ``$BENCH_MODULE_CALLS``, with the module processes it started - one per loop item
that ran and per ``until`` attempt - and how many of them load the kubernetes client.

A task starts a module process unless its action runs in the controller only: Ansible's own
controller actions (``ACTION_ONLY``) and this collection's action plugins (``plugins/action/``) that
run no module. ``kubernetes.core`` modules and this collection's modules over its client load the
kubernetes client. ``$BENCH_COLLECTION_DIR`` is the checkout whose plugins are classified.
"""

from __future__ import annotations

DOCUMENTATION = """
name: module_calls
type: aggregate
short_description: the module processes of every task, as JSON lines (benchmarks)
description: Appends one JSON line per task result to the file named by BENCH_MODULE_CALLS.
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase

ACTION_ONLY = {"set_fact", "fail", "assert", "debug", "include_role", "include_tasks", "import_role", "import_tasks",
               "meta", "include_vars", "add_host", "group_by", "set_stats", "pause", "validate_argument_spec", "noop"}


def _classify(action, collection_dir):
    """``(module process?, loads the kubernetes client?)`` of an action's fully qualified name."""
    parts = action.split(".")
    short = parts[-1]
    if action.startswith("kubernetes.core."):
        return True, True
    if action.startswith("perfscale.topsail."):
        if os.path.exists(os.path.join(collection_dir, "plugins", "action", short + ".py")):
            return False, False
        try:
            with open(os.path.join(collection_dir, "plugins", "modules", short + ".py"), encoding="utf-8") as handle:
                return True, "kubernetes.core" in handle.read()
        except OSError:
            return True, False
    return short not in ACTION_ONLY, False


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "module_calls"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._path = os.environ.get("BENCH_MODULE_CALLS")
        self._collection = os.environ.get("BENCH_COLLECTION_DIR", "")
        self._started = {}

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._started[task._uuid] = time.monotonic()

    def _write(self, result, status):
        if not self._path:
            return
        task = result._task
        action = getattr(task, "resolved_action", None) or task.action
        process, kube = _classify(action, self._collection)
        answer = result._result if isinstance(result._result, dict) else {}
        if status == "skipped":
            runs = 0
        elif isinstance(answer.get("results"), list):
            runs = sum(item.get("attempts", 1) for item in answer["results"]
                       if isinstance(item, dict) and not item.get("skipped"))
        else:
            runs = answer.get("attempts", 1)
        record = {"role": task._role.get_name() if task._role else None, "task": task.get_name(), "action": action,
                  "status": status, "processes": runs if process else 0, "k8s_processes": runs if kube else 0,
                  "seconds": round(time.monotonic() - self._started.get(task._uuid, time.monotonic()), 3)}
        with open(self._path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def v2_runner_on_ok(self, result):
        self._write(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._write(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._write(result, "skipped")
