# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.warn (documented in plugins/modules)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction

ARGUMENT_SPEC = dict(
    msg=dict(type="str", required=True),
)


class ActionModule(PerfscaleAction):
    NAME = "warn"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    NEEDS_CONFIG = False

    def execute(self, result, args, task_vars, config):
        result.update(changed=False, msg=args["msg"], warnings=[args["msg"]])
        return result
