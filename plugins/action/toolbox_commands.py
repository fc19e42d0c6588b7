# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.toolbox_commands (documented in plugins/modules)."""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction, raw_extra_var
from ansible_collections.perfscale.topsail.plugins.module_utils.run import collection_info
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import commands as toolbox

ARGUMENT_SPEC = dict(
    command=dict(type="str", required=True),
    help=dict(type="bool", default=False),
    args=dict(type="raw"),
)

ROLES_DIR = os.path.join(collection_info.collection_root_from(__file__, 3), "roles")


class ActionModule(PerfscaleAction):
    NAME = "toolbox_commands"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    NEEDS_CONFIG = False

    def execute(self, result, args, task_vars, config):
        # -e command='cluster capture_state': Ansible splits key=value extra-vars at whitespace
        raw = raw_extra_var("command")
        if raw and raw.split() and raw.split()[0] == args["command"].strip():
            args["command"] = raw.strip("'\"")
        if args["command"].strip() == "list":
            lines = toolbox.listing(ROLES_DIR)
            result.update(changed=False, action="list", lines=lines, msg="\n".join(lines))
            return result
        known = toolbox.commands(ROLES_DIR, describe=False)
        command = toolbox.resolve(ROLES_DIR, args["command"], known)
        if args["help"]:
            lines = toolbox.help_lines(ROLES_DIR, command)
            result.update(changed=False, action="help", command=command, lines=lines, msg="\n".join(lines))
            return result
        given = args.get("args")
        if isinstance(given, str):
            # -e args='{"a": 1, "b": 2}': Ansible splits key=value extra-vars at whitespace
            given = raw_extra_var("args") or given
        parameters = config_lib.parse_overrides(given, source="args")
        result.update(changed=False, action="run", command=command, role=known[command]["role"],
                      args=parameters, msg="toolbox command %s" % command)
        return result
