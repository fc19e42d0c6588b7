# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.export_results (documented in plugins/modules)."""

from __future__ import annotations

import os


from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils import config as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils import export as export_lib
from ansible_collections.perfscale.topsail.plugins.module_utils import postprocess
from ansible_collections.perfscale.topsail.plugins.module_utils import reports as reports_lib

ARGUMENT_SPEC = dict(
    results_dir=dict(type="path"),
    spool_dir=dict(type="path"),
)


class ActionModule(PerfscaleAction):
    NAME = "export_results"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION = dict(mutually_exclusive=[("results_dir", "spool_dir")], required_one_of=[("results_dir", "spool_dir")])
    _supports_check_mode = False

    def execute(self, result, args, task_vars, config):
        try:
            export = export_lib.read_export(config)
            if args.get("spool_dir"):
                outcome = export_lib.replay_spool(args["spool_dir"], export, config)
                message = "replayed %d spool file(s): %d of %d document(s) delivered to %s" % (
                    outcome["files"], outcome["delivered"], outcome["documents"], outcome["store"] or export["backend"])
            else:
                summary = postprocess.visualize(args["results_dir"], config, task_vars.get("perfscale_presets_applied") or [])
                documents = export_lib.load_bundle_documents({"kind": "kpi", "file": summary["kpi_records_file"]})
                outcome = export_lib.export_documents(
                    documents, export, os.path.join(summary["results_dir"], export_lib.SPOOL_DIRNAME), config,
                    summary["label_fields"])
                outcome["plots_dir"] = summary["plots_dir"]
                message = "exported %d of %d KPI document(s) of %d test(s) to %s" % (
                    outcome["delivered"], outcome["documents"], summary["tests"], outcome["store"] or export["backend"])
        except (export_lib.ExportError, config_lib.ConfigError, postprocess.PostProcessError, reports_lib.ReportError,
                artifacts.ArtifactError, OSError, ValueError) as exc:
            result.update(failed=True, msg=str(exc))
            return result
        result.update(changed=outcome["delivered"] > 0, outcome=outcome, msg=message)
        if outcome["undelivered"]:
            reasons = outcome.get("reasons") or [outcome.get("reason")]
            where = outcome.get("spool_file") or ", ".join(outcome.get("remaining_files") or []) or "the spool"
            result.update(failed=True, msg="%s; %d document(s) not delivered (%s), kept in %s" % (
                message, outcome["undelivered"], "; ".join(r for r in reasons if r), where))
        return result
