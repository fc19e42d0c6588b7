# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.toolbox_parallel (documented in plugins/modules)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import parallel_commands
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CommandArgsError

ARGUMENT_SPEC = dict(
    commands=dict(type="list", elements="raw", required=True),
    max_parallel=dict(type="int", default=0),
    timeout=dict(type="int", default=0),
)
# the running Python's ansible-playbook, whatever started this controller (a venv, ansible-runner)
PLAYBOOK_COMMAND = (sys.executable, "-m", "ansible.cli.playbook")


class ActionModule(PerfscaleAction):
    NAME = "toolbox_parallel"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def execute(self, result, args, task_vars, config):
        commands = [parallel_commands.Command.from_item(item) for item in args["commands"]]
        if not commands:
            raise CommandArgsError("toolbox_parallel: commands is empty (expected at least one 'group command')")
        if args["max_parallel"] < 0 or args["timeout"] < 0:
            raise CommandArgsError("toolbox_parallel: max_parallel and timeout must be 0 (no limit) or more")
        if self._task.check_mode:
            result.update(changed=False, skipped=True, msg="check mode: %d command(s) not started" % len(commands))
            return result
        run_root = task_vars.get("perfscale_run_root")
        parent = task_vars.get("perfscale_artifact_dir") or run_root
        if not run_root:
            raise CommandArgsError("toolbox_parallel: no run directory (run perfscale.topsail.resolve_config first)")
        parallel_commands.reserve_directories(parent, commands)
        private = tempfile.mkdtemp(prefix="perfscale-parallel-")
        try:
            config_file = parallel_commands.write_config(os.path.join(private, "config.yaml"), config)
            inventories = [s for s in task_vars.get("ansible_inventory_sources") or () if isinstance(s, str)
                           and os.path.exists(s)]
            verbosity = task_vars.get("ansible_verbosity") or 0
            cluster = self._templar.template(task_vars.get("perfscale_cluster") or "") or None

            def argv_of(command):
                return parallel_commands.child_argv(PLAYBOOK_COMMAND, command, config_file, parent, inventories,
                                                    cluster, verbosity)

            results = parallel_commands.run_all(commands, argv_of, args["max_parallel"], args["timeout"],
                                                env=dict(os.environ), cwd=os.getcwd())
        finally:
            shutil.rmtree(private, ignore_errors=True)
        lines, failure = parallel_commands.summary(results)
        result.update(changed=True, results=results, lines=lines)
        if failure:
            result.update(failed=True, msg=failure)
        else:
            result["msg"] = "%d command(s) ran side by side: %s" % (len(results), "; ".join(lines))
        return result
