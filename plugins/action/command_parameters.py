# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.command_parameters (documented in plugins/modules)."""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.run import collection_info
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args as command_args_lib

ARGUMENT_SPEC = dict(
    command=dict(type="str", required=True),
    prefix=dict(type="str", default=""),
    suffix=dict(type="str", default=""),
    extra=dict(type="dict", default={}),
    args_only=dict(type="bool", default=False),
    template=dict(type="path"),
)

COLLECTION_ROOT = collection_info.collection_root_from(__file__, 3)


class ActionModule(PerfscaleAction):
    NAME = "command_parameters"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def execute(self, result, args, task_vars, config):
        template = (args.get("template") or self._templar.template(task_vars.get("perfscale_command_args_file"))
                    or os.path.join(COLLECTION_ROOT, "config", "command_args.yml.j2"))
        prepared = command_args_lib.prepare_command(
            os.path.join(COLLECTION_ROOT, "roles"), args["command"], config, template=template,
            prefix=args["prefix"] or None, suffix=args["suffix"] or None, extra=args["extra"],
            args_only=args["args_only"], defined=task_vars)
        result.update(changed=False, **prepared)
        return result
