# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: toolbox_log
type: notification
short_description: Write the log of each toolbox command into its artifact directory
version_added: 0.1.0
description:
  - Appends one line per task result to C(_ansible.log) in the artifact directory
    that is current for the host when the task ends (the run root after
    M(perfscale.topsail.resolve_config), the command's own C(NNN__group__command)
    directory between the M(perfscale.topsail.artifact_dir) tasks that open and
    close it). A toolbox directory therefore holds the log of its own tasks.
  - Failed tasks also get their error message; tasks with C(no_log) are logged
    without any output.
  - Enable it with C(callbacks_enabled = perfscale.topsail.toolbox_log) in
    C(ansible.cfg) (or C(ANSIBLE_CALLBACKS_ENABLED)); it does not replace the stdout
    callback, so it works under AWX/AAP too.
author:
  - perfscale.topsail developers (@perfscale)
requirements:
  - enable in configuration
options:
  log_name:
    description: File name of the log inside each artifact directory.
    type: str
    default: _ansible.log
    env:
      - name: PERFSCALE_TOOLBOX_LOG_NAME
    ini:
      - section: callback_perfscale_toolbox_log
        key: log_name
"""

import datetime
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "notification"
    CALLBACK_NAME = "perfscale.topsail.toolbox_log"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None):
        super().__init__(display=display)
        self._current = {}
        self._started = {}

    def set_options(self, task_keys=None, var_options=None, direct=None):
        super().set_options(task_keys=task_keys, var_options=var_options, direct=direct)
        self._log_name = self.get_option("log_name")

    # -- task timing

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._started[task._uuid] = time.monotonic()

    def v2_playbook_on_handler_task_start(self, task):
        self._started[task._uuid] = time.monotonic()

    # -- results

    def v2_runner_on_ok(self, result):
        self._record(result, "changed" if result._result.get("changed") else "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, "failed (ignored)" if ignore_errors else "FAILED")

    def v2_runner_on_skipped(self, result):
        self._record(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._record(result, "UNREACHABLE")

    def _record(self, result, status):
        host = result._host.get_name()
        data = result._result
        facts = data.get("ansible_facts") or {}
        new_dir = facts.get("perfscale_artifact_dir")
        closing = "closed" in data
        if new_dir and not closing:
            self._current[host] = new_dir
        line = self._format(result, status)
        directory = self._current.get(host)
        if directory and os.path.isdir(directory):
            try:
                with open(os.path.join(directory, self._log_name), "a", encoding="utf-8") as handle:
                    handle.write(line)
            except OSError as exc:
                self._display.warning("toolbox_log: cannot write to %s: %s" % (directory, exc))
        if new_dir and closing:
            self._current[host] = new_dir

    def _format(self, result, status):
        task = result._task
        started = self._started.get(task._uuid)
        duration = " (%.2fs)" % (time.monotonic() - started) if started is not None else ""
        stamp = datetime.datetime.now().isoformat(timespec="seconds")
        name = task.get_name().strip()
        line = "%s %s | %s | %s [%s]%s\n" % (stamp, result._host.get_name(), status, name, task.action, duration)
        data = result._result
        if data.get("_ansible_no_log") or task.no_log:
            return line
        if status in ("FAILED", "failed (ignored)", "UNREACHABLE"):
            message = data.get("msg") or data.get("stderr") or data.get("exception") or ""
            for detail in str(message).strip().splitlines()[:20]:
                line += "    %s\n" % detail
        elif data.get("skip_reason") and status == "skipped":
            line += "    %s\n" % data["skip_reason"]
        return line
