# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.visualize (documented in plugins/modules)."""

from __future__ import annotations

from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess

ARGUMENT_SPEC = dict(
    results_dir=dict(type="path"),
    strict=dict(type="bool"),
    plots_name=dict(type="str", default="plots"),
    export=dict(type="bool", default=True),
    replot=dict(type="bool", default=True),
)


class ActionModule(PerfscaleAction):
    NAME = "visualize"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    _supports_check_mode = False

    def execute(self, result, args, task_vars, config):
        results_dir = args.get("results_dir") or task_vars.get("perfscale_run_root")
        if not results_dir:
            result.update(failed=True, msg="visualize: results_dir is required (-e results_dir=PATH)")
            return result
        summary = postprocess.visualize(results_dir, config, task_vars.get("perfscale_presets_applied") or [],
                                        plots_name=args["plots_name"], strict=args.get("strict"))
        Display().display("reports: %s" % summary["index"])
        result.update(
            changed=True,
            summary=summary,
            plots_dir=summary["plots_dir"],
            index=summary["index"],
            ansible_facts=dict(perfscale_plots_dir=summary["plots_dir"]),
            msg="%d test(s) (%d failed, %d from cache), %d warning(s); reports: %s" % (
                summary["tests"], len(summary["failed_tests"]), summary["from_cache"], summary["warnings"],
                summary["index"]),
        )
        export = export_lib.read_export(config)
        replot = args["replot"] and summary["replot"]
        if args["export"] and summary["kpi_records"] and replot and not export["enabled_on_replot"]:
            result["msg"] += "; not exported: a replot of a tree post-processed before (export.enabled_on_replot)"
        elif args["export"] and summary["kpi_records"]:
            if export["enabled"]:
                # the Prometheus KPIs travel with the KPIs (their labels are the KPIs' plus query and series)
                parts = [{"kind": "prom", "file": summary["prom_kpi_records_file"]}] if summary["prom_kpi_records"] else []
                label_fields = summary["prom_label_fields"] if parts else summary["label_fields"]
                # each point's wall time travels too: what later rehearsals estimate a matrix's cost from
                if summary.get("point_records"):
                    parts.append({"kind": "point", "file": summary["point_records_file"]})
                result["perfscale_export"] = export_lib.make_bundle(
                    "kpi", summary["kpi_records_file"], config, task_vars.get("perfscale_run_root") or results_dir,
                    label_fields, parts)
        if summary["strict_gaps"]:
            result.update(failed=True, msg="strict mode: %d test(s) lack KPI data: %s" % (
                len(summary["strict_gaps"]), "; ".join(summary["strict_gaps"])))
        return result
