# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.flow_plan (documented in plugins/modules)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import flows
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError

ARGUMENT_SPEC = dict(
    flow=dict(type="str", required=True),
    steps=dict(type="raw"),
    skip=dict(type="raw"),
    keep=dict(type="bool"),
    outcomes=dict(type="dict"),
)


class ActionModule(PerfscaleAction):
    NAME = "flow_plan"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def execute(self, result, args, task_vars, config):
        where = "tests.%s.steps" % args["flow"]
        definition = config_lib.get_dotted(config, where, None)
        if definition is None:
            raise ConfigError("flow %s: the configuration has no %s (the flow's cleanup_before, prepare, test, "
                              "cleanup_after commands)" % (args["flow"], where))
        keep = args["keep"] if args["keep"] is not None else bool(config_lib.get_dotted(config, "clusters.keep", False))
        planned = flows.plan(definition, where, only=args.get("steps"), skip=args.get("skip"), keep=keep)
        result.update(changed=False, steps=planned, keep=keep,
                      lines=flows.outcome_lines(planned, args.get("outcomes") or {}))
        result["msg"] = "flow %s: %s" % (args["flow"], ", ".join(
            e["step"] for e in planned if e["run"]) or "no step to run")
        return result
