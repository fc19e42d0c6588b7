# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.analyze_regressions (documented in plugins/modules)."""

from __future__ import annotations

from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import regression_step as step
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib

ARGUMENT_SPEC = dict(
    plots_dir=dict(type="path"),
    export=dict(type="bool", default=True),
    replot=dict(type="bool", default=True),
)


class ActionModule(PerfscaleAction):
    NAME = "analyze_regressions"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    _supports_check_mode = False

    def execute(self, result, args, task_vars, config):
        plots_dir = args.get("plots_dir") or task_vars.get("perfscale_plots_dir")
        if not plots_dir:
            result.update(failed=True, msg="analyze_regressions: no plots directory (run perfscale.topsail.visualize first)")
            return result
        outcome = step.run_regression_analysis(plots_dir, config, run_root=task_vars.get("perfscale_run_root") or plots_dir)
        summary = outcome["summary"]
        if outcome.get("skipped"):
            result.update(changed=False, skipped=True, msg="regression analysis disabled (regression.enabled)")
            return result
        Display().display("regression: %s" % summary["message"])
        result.update(
            changed=True,
            summary=summary,
            report=outcome["report"],
            regression_found=bool(summary["regressions"] or summary["persisting_regressions"]),
            fail_test=summary["fail_test"],
            fail_reasons=summary["fail_reasons"],
            msg=summary["message"],
        )
        if args["export"] and outcome.get("bundle"):
            if args["replot"] and postprocess.is_replot(plots_dir) and \
                    not export_lib.read_export(config)["enabled_on_replot"]:
                result["msg"] += " (not exported: a replot, export.enabled_on_replot)"
            else:
                result["perfscale_export"] = outcome["bundle"]
        return result
