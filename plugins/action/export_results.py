# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.export_results (documented in plugins/modules)."""

from __future__ import annotations

import os

from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess

ARGUMENT_SPEC = dict(
    results_dir=dict(type="path"),
    spool_dir=dict(type="path"),
    bundles=dict(type="list", elements="dict"),
    spool_target=dict(type="str", default="spool", choices=["spool", "config"]),
)


class ActionModule(PerfscaleAction):
    NAME = "export_results"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION = dict(mutually_exclusive=[("results_dir", "spool_dir", "bundles")],
                      required_one_of=[("results_dir", "spool_dir", "bundles")])
    _supports_check_mode = False

    def execute(self, result, args, task_vars, config):
        export = export_lib.read_export(config)
        if args.get("bundles") is not None:
            return self._export_bundles(result, args["bundles"], export["fail_test_on_fail"])
        if args.get("spool_dir"):
            outcome = export_lib.replay_spool(args["spool_dir"], export, config, target=args["spool_target"])
            message = "replayed %d spool file(s): %d of %d document(s) delivered to %s" % (
                outcome["files"], outcome["delivered"], outcome["documents"],
                ", ".join(outcome["stores"]) or export["backend"])
        else:
            # export only: parse (fresh caches are used, none is written), no plots directory
            parsed = postprocess.compute_payloads(args["results_dir"], config, write_cache=False)
            prom_records = parsed.prom.records if parsed.prom else []
            outcome = export_lib.export_documents(
                export_lib.kpi_documents(parsed.records) + export_lib.prom_documents(prom_records), export,
                os.path.join(parsed.results_dir, export_lib.SPOOL_DIRNAME), config,
                parsed.label_fields + (list(postprocess.PROM_LABELS) if prom_records else []))
            message = "exported %d of %d KPI document(s) of %d test(s) to %s" % (
                outcome["delivered"], outcome["documents"], len(parsed.entries), outcome["store"] or export["backend"])
            if prom_records:
                message += " (%d of them Prometheus KPIs)" % len(prom_records)
        result.update(changed=outcome["delivered"] > 0, outcome=outcome, msg=message)
        if outcome["undelivered"]:
            reasons = outcome.get("reasons") or [outcome.get("reason")]
            where = outcome.get("spool_file") or ", ".join(outcome.get("remaining_files") or []) or "the spool"
            result.update(failed=True, msg="%s; %d document(s) not delivered (%s), kept in %s" % (
                message, outcome["undelivered"], "; ".join(r for r in reasons if r), where))
        return result

    def _export_bundles(self, result, bundles, fail_test_on_fail=False):
        """The play-end export: what is not delivered stays in the spool; it fails the play only with
        ``export.fail_test_on_fail``."""
        outcome = export_lib.export_bundles(bundles)
        display = Display()
        for warning in outcome["warnings"]:
            display.warning(warning)
        if outcome["delivered"]:
            display.display(outcome["message"])
        result.update(changed=outcome["delivered"] > 0, outcome=outcome, msg=outcome["message"],
                      perfscale_exported=outcome["exported"])
        if fail_test_on_fail and outcome["undelivered"]:
            result.update(failed=True, msg="%s; export.fail_test_on_fail: %s" % (
                outcome["message"], outcome["warnings"][-1] if outcome["warnings"] else "documents not delivered"))
        return result
