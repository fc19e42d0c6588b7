# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.toolbox_commands (documented in plugins/modules)."""

from __future__ import annotations

import os

from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction, raw_extra_var
from ansible_collections.perfscale.topsail.plugins.module_utils.run import collection_info
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CommandArgsError
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args as command_args_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import commands as toolbox

ARGUMENT_SPEC = dict(
    command=dict(type="str", required=True),
    help=dict(type="bool", default=False),
    params=dict(type="raw"),
    args=dict(type="raw"),
    from_config=dict(type="bool", default=False),
)

# the toolbox playbook's own extra-vars (and resolve_config's): never a command's parameter; a
# parameter of that name goes in -e params='{...}'
PLAYBOOK_VARIABLES = ("command", "params", "args", "help", "from_config", "prefix", "suffix", "cluster", "artifact_dir",
                      "preset", "overrides", "overrides_file", "config_file", "launch_text", "launch_file",
                      "launch_env", "config_env")

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
        name = " ".join(args["command"].split())
        known = toolbox.commands(ROLES_DIR, describe=False)
        if name == "list" or name in toolbox.groups(known):
            # every command, or a group's (-e command=cluster)
            lines = toolbox.listing(ROLES_DIR, group=None if name == "list" else name)
            return self._show(result, "list", lines)
        command = toolbox.resolve(ROLES_DIR, name, known)
        if args["help"]:
            result["command"] = command
            return self._show(result, "help", toolbox.help_lines(ROLES_DIR, command))
        given = {}
        for option in ("params", "args"):
            value = args.get(option)
            if isinstance(value, str):
                # -e params='{"a": 1, "b": 2}': Ansible splits key=value extra-vars at whitespace
                value = raw_extra_var(option) or value
            if value not in (None, "", {}):
                given[option] = config_lib.parse_overrides(value, source=option)
        if len(given) > 1:
            raise CommandArgsError("toolbox command '%s': give the parameters in -e params='{...}' (or the older "
                                   "-e args='{...}'), not both" % command)
        parameters = next(iter(given.values()), {})
        role = known[command]["role"]
        options = command_args_lib.role_argument_options(ROLES_DIR, role)
        # -e name=value, as the reference's run_toolbox.py takes --name=value
        typed = command_args_lib.parameters_from_extra_vars(command, role, options, self._command_line_vars())
        twice = sorted(set(typed) & set(parameters))
        if twice:
            raise CommandArgsError("toolbox command '%s': parameter(s) %s given twice (-e NAME=... and in params)"
                                   % (command, ", ".join(twice)))
        parameters.update(typed)
        # checked before any work: an unknown name, a wrong type, a required parameter missing
        # (the configuration supplies them with from_config) is one line naming the parameter
        checked = command_args_lib.check_parameters(command, role, parameters, options, defined=task_vars,
                                                    check_required=not args["from_config"])
        result.update(changed=False, action="run", command=command, role=role,
                      args=checked,
                      needs_cluster=toolbox.needs_cluster(command, checked, from_config=args["from_config"]),
                      msg="toolbox command %s" % command)
        return result

    @staticmethod
    def _show(result, action, lines):
        """The lines as they are (one per command: never wrapped by the result format)."""
        Display().display("\n".join(lines))
        result.update(changed=False, action=action, lines=lines, msg="%d line(s) shown" % len(lines))
        return result

    def _command_line_vars(self):
        """The variables typed with -e (not the play's own options), each as typed: Ansible splits
        ``-e name=value`` at whitespace, the command line keeps the whole text."""
        from ansible.utils.vars import load_extra_vars

        found = {}
        for name, value in load_extra_vars(self._loader).items():
            if name in PLAYBOOK_VARIABLES or name.startswith(("ansible_", "perfscale_")):
                continue
            found[name] = raw_extra_var(name) if isinstance(value, str) and raw_extra_var(name) is not None else value
        return found
