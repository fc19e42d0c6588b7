# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.notify_verdict (documented in plugins/modules)."""

from __future__ import annotations

from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils import notify
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.notify import verdict

ARGUMENT_SPEC = dict(
    run_root=dict(type="path"),
    summary=dict(type="dict"),
    failed_points=dict(type="list", elements="str", default=[]),
    points=dict(type="int"),
    reports=dict(type="str"),
    artifacts_url=dict(type="str"),
    spool_dir=dict(type="path"),
)


class ActionModule(PerfscaleAction):
    NAME = "notify_verdict"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    _supports_check_mode = False

    def execute(self, result, args, task_vars, config):
        section = config_schema.read_section(config, "notifications")
        if args.get("spool_dir"):
            outcome = notify.replay(section, config, args["spool_dir"])
        else:
            names = notify.enabled(section)
            if not names:
                result.update(skipped=True, msg="notifications: none enabled (notifications.github / .slack)")
                return result
            run_root = args.get("run_root") or task_vars.get("perfscale_run_root")
            if not run_root:
                result.update(failed=True, msg="notify_verdict: no run root; expected run_root or perfscale_run_root")
                return result
            message = verdict.run_message(section, run_root, args.get("summary"), args.get("failed_points") or (),
                                          args.get("points"), args.get("reports"), args.get("artifacts_url"))
            outcome = notify.notify(section, config, message, run_root)
        for warning in outcome["warnings"]:
            Display().warning(warning)
        delivered = ["%s %s (%s)" % (d["notifier"], d["action"], d.get("url") or d.get("target")) for d in
                     outcome["delivered"]]
        result.update(changed=bool(outcome["delivered"]), delivered=outcome["delivered"], spooled=outcome["spooled"],
                      notify_warnings=outcome["warnings"],
                      msg="; ".join(delivered + outcome["warnings"]) or "nothing to notify")
        return result
