# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.analyze_regressions (documented in plugins/modules)."""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.module_utils import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils import config as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils import regression
from ansible_collections.perfscale.topsail.plugins.module_utils import regression_run

ARGUMENT_SPEC = dict(
    plots_dir=dict(type="path"),
    export=dict(type="bool", default=True),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        validation, args = self.validate_argument_spec(ARGUMENT_SPEC)
        del validation
        config = task_vars.get("perfscale_config")
        plots_dir = args.get("plots_dir") or task_vars.get("perfscale_plots_dir")
        if config is None or not plots_dir:
            result.update(failed=True, msg="analyze_regressions: needs the configuration and a plots directory "
                                           "(run perfscale.topsail.resolve_config and perfscale.topsail.visualize first)")
            return result
        try:
            outcome = regression_run.run_regression_analysis(
                plots_dir, config, run_root=task_vars.get("perfscale_run_root") or plots_dir)
        except (config_lib.ConfigError, regression.RegressionError, regression_run.RegressionRunError,
                artifacts.ArtifactError, OSError) as exc:
            result.update(failed=True, msg=str(exc))
            return result
        summary = outcome["summary"]
        if outcome.get("skipped"):
            result.update(changed=False, skipped=True, msg="regression analysis disabled (regression.enabled)")
            return result
        Display().display("regression: %s" % summary["message"])
        result.update(
            changed=True,
            summary=summary,
            report=outcome["report"],
            regression_found=bool(summary["regressions"]),
            fail_test=bool(summary["regressions"]) and summary["fail_test_on_regression"],
            msg=summary["message"],
        )
        if args["export"] and outcome.get("bundle"):
            result["perfscale_export"] = outcome["bundle"]
        return result
