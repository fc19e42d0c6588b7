# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: steps
type: stdout
short_description: One line per step that ran, failures in full, a short recap
version_added: 0.1.0
description:
  - A quiet console for the collection's playbooks. Each task that ran is one line, its status
    (C(ok) or C(changed)) and its name, with its loop's item count, its retries and its time
    (from one second on); the host's name is shown unless it is C(localhost).
  - Not shown - tasks that were skipped, the C(included:) lines of C(include_role) and
    C(include_tasks), the argument checks of roles (C(Validating arguments against arg spec))
    when they pass, the items of a loop one by one, the retries one by one, plays where nothing ran.
  - Shown as the default callback shows them - failures (the task, the error and the whole
    result), unreachable hosts, warnings and errors, diffs (C(--diff)).
  - A debug task's message is printed under its line, one line per item of a list (a nested list
    flattened), without the YAML quoting and wrapping.
  - The recap is one line per host - C(ok), C(changed) and C(failed) always, C(unreachable),
    C(skipped), C(rescued) and C(ignored) when not zero - and the playbook's time.
  - With C(-v) or more, every event is shown as the default callback (M(ansible.builtin.default))
    shows it; the options are the default callback's.
  - The checkout's C(ansible.cfg) makes it the stdout callback. In a project of your own, set
    C(stdout_callback = perfscale.topsail.steps) in the C([defaults]) section of its C(ansible.cfg),
    or C(ANSIBLE_STDOUT_CALLBACK=perfscale.topsail.steps) in the environment. AWX/AAP replace the
    stdout callback with their own; the job output there is theirs.
author:
  - perfscale.topsail developers (@perfscale)
extends_documentation_fragment:
  - ansible.builtin.default_callback
  - ansible.builtin.result_format_callback
requirements:
  - set as stdout callback in configuration
"""

import time

from ansible import constants as C
from ansible import context
from ansible.playbook.task_include import TaskInclude
from ansible.plugins.callback.default import CallbackModule as DefaultCallback

from ansible_collections.perfscale.topsail.plugins.module_utils.run import console

# the task a role's argument specification adds before its tasks (ansible-core's role loader)
VALIDATION_ACTIONS = frozenset(("validate_argument_spec", "ansible.builtin.validate_argument_spec",
                                "ansible.legacy.validate_argument_spec"))
DEBUG_ACTIONS = frozenset(("debug", "ansible.builtin.debug", "ansible.legacy.debug"))


class CallbackModule(DefaultCallback):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "perfscale.topsail.steps"

    def __init__(self, clock=time.monotonic):
        super().__init__()
        self._clock = clock
        self._started_playbook = clock()
        # per task (its uuid): its name and when it started; the play waiting for its first line
        self._names = {}
        self._started = {}
        self._retries = {}
        self._pending_play = None

    # -- the mode -------------------------------------------------------------------------------

    def _verbose(self):
        """With -v or more: the default callback, unchanged."""
        return self._display.verbosity >= 1

    # -- plays and tasks ------------------------------------------------------------------------

    def v2_playbook_on_play_start(self, play):
        if self._verbose():
            return super().v2_playbook_on_play_start(play)
        self._play = play
        # printed with the play's first task line: a play where nothing ran prints nothing
        self._pending_play = console.play_line(play.get_name().strip())
        if play.check_mode and self.get_option("check_mode_markers"):
            self._pending_play += " [CHECK MODE]"
        return None

    def v2_playbook_on_no_hosts_matched(self):
        if self._verbose():
            return super().v2_playbook_on_no_hosts_matched()
        return None

    def v2_playbook_on_task_start(self, task, is_conditional):
        if self._verbose():
            return super().v2_playbook_on_task_start(task, is_conditional)
        return self._remember(task, "TASK")

    def v2_playbook_on_handler_task_start(self, task):
        if self._verbose():
            return super().v2_playbook_on_handler_task_start(task)
        return self._remember(task, "RUNNING HANDLER")

    def _remember(self, task, prefix):
        """What the default callback keeps of a task (for a failure's banner), its name and start."""
        self._task_type_cache[task._uuid] = prefix
        self._last_task_name = task.get_name().strip()
        self._names[task._uuid] = (task.name or "").strip() or task.get_name().strip()
        self._started[task._uuid] = self._clock()

    def v2_playbook_on_include(self, included_file):
        if self._verbose():
            return super().v2_playbook_on_include(included_file)
        return None

    # -- results --------------------------------------------------------------------------------

    def v2_runner_on_ok(self, result):
        if self._verbose():
            return super().v2_runner_on_ok(result)
        task = result.task
        if isinstance(task, TaskInclude):
            return None
        data = result.result
        if task.action in VALIDATION_ACTIONS and not data.get("changed"):
            return None
        if not data.get("changed") and not self.get_option("display_ok_hosts"):
            return None
        items = data.get("results") if task.loop and isinstance(data.get("results"), list) else None
        self._show_play()
        started = self._started.get(task._uuid)
        self._display.display(
            console.task_line("changed" if data.get("changed") else "ok", self._names.get(task._uuid, task.get_name()),
                              host=result.host.get_name(), items=len(items) if items else 0,
                              retries=self._retries.pop((task._uuid, result.host.get_name()), 0),
                              seconds=None if started is None else self._clock() - started),
            color=C.COLOR_CHANGED if data.get("changed") else C.COLOR_OK)
        # the task's warnings under its line
        self._handle_warnings_and_exception(result)
        if task.action in DEBUG_ACTIONS:
            for line in self._debug_lines(data, items):
                self._display.display(line)
        return None

    def _debug_lines(self, data, items):
        """The message lines of a debug task's result (of each of its items for a loop)."""
        if items is not None:
            lines = []
            for item in items:
                if isinstance(item, dict) and not item.get("skipped"):
                    lines.extend(self._debug_lines(item, None))
            return lines
        if data.get("_ansible_no_log"):
            return []
        if "msg" in data:
            return console.message_lines(data["msg"])
        shown = {key: value for key, value in data.items()
                 if not key.startswith("_") and key not in ("changed", "failed", "skipped", "ansible_loop_var",
                                                            "item", "ansible_index_var")}
        return console.message_lines(shown)

    def _show_play(self):
        if self._pending_play is not None:
            self._display.display(self._pending_play)
            self._pending_play = None

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if not self._verbose():
            self._show_play()
        return super().v2_runner_on_failed(result, ignore_errors=ignore_errors)

    def v2_runner_on_unreachable(self, result):
        if not self._verbose():
            self._show_play()
        return super().v2_runner_on_unreachable(result)

    def v2_runner_item_on_failed(self, result):
        if not self._verbose():
            self._show_play()
        return super().v2_runner_item_on_failed(result)

    def v2_runner_on_skipped(self, result):
        if self._verbose():
            return super().v2_runner_on_skipped(result)
        return None

    def v2_runner_item_on_ok(self, result):
        if self._verbose():
            return super().v2_runner_item_on_ok(result)
        return None

    def v2_runner_item_on_skipped(self, result):
        if self._verbose():
            return super().v2_runner_item_on_skipped(result)
        return None

    def v2_runner_retry(self, result):
        if self._verbose():
            return super().v2_runner_retry(result)
        key = (result.task._uuid, result.host.get_name())
        self._retries[key] = self._retries.get(key, 0) + 1
        return None

    def v2_runner_on_async_poll(self, result):
        if self._verbose():
            return super().v2_runner_on_async_poll(result)
        return None

    def v2_runner_on_async_ok(self, result):
        if self._verbose():
            return super().v2_runner_on_async_ok(result)
        return None

    # -- the end --------------------------------------------------------------------------------

    def v2_playbook_on_stats(self, stats):
        if self._verbose():
            return super().v2_playbook_on_stats(stats)
        seconds = self._clock() - self._started_playbook
        for host in sorted(stats.processed.keys()):
            self._display.display(console.recap_line(host, stats.summarize(host), seconds))
        if stats.custom and self.get_option("show_custom_stats"):
            for key in sorted(stats.custom):
                self._display.display("custom stats %s: %s" % (
                    "run" if key == "_run" else key, self._dump_results(stats.custom[key], indent=1).replace("\n", "")))
        if context.CLIARGS.get("check") and self.get_option("check_mode_markers"):
            self._display.display("DRY RUN (check mode): nothing was changed")
        return None
