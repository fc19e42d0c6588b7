# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Post-processing of an artifact tree: parse, payloads and KPIs, reports.

``visualize(results_dir, config)`` parses every test root with the configured
workload (cache included), builds each test's long-term payload (metadata,
results, labels once, KPIs), writes KPIs as JSON and OpenMetrics, draws the
configured reports, and puts all of it in a new ``NNN__plots/`` directory
inside the tree. Earlier plots directories are left alone.
"""

from __future__ import annotations

import datetime
import os

from ansible_collections.perfscale.topsail.plugins.module_utils import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils import config as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils import kpi as kpi_lib
from ansible_collections.perfscale.topsail.plugins.module_utils import reports as reports_lib
from ansible_collections.perfscale.topsail.plugins.module_utils import store
from ansible_collections.perfscale.topsail.plugins.module_utils import workload as workload_lib

LTS_SCHEMA_VERSION = "1.0"
PARSE_LOG = "parse.log"
KPIS_JSON = "kpis.json"
KPIS_OPENMETRICS = "kpis.openmetrics"
KPI_RECORDS = "kpi_records.json"
PAYLOAD = "payload.json"
SUMMARY = "summary.json"


class PostProcessError(ValueError):
    """Post-processing cannot go on (bad configuration, strict-mode gaps)."""


def matbench_model():
    from typing import List

    import pydantic

    class Matbench(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        workload: str = "perf_indicators"
        reports: List[str] = ["error_report", "matrix_overview", "indicator_report"]
        strict: bool = False
        title: str = "perfscale.topsail results"

    return Matbench


def read_matbench(config):
    return config_lib.validate_section(config, "matbench", matbench_model()).model_dump()


def _timestamp(workload, entry):
    stamp = None
    function = getattr(workload.module, "timestamp", None)
    if function:
        stamp = function(entry)
    if not stamp:
        try:
            mtime = os.path.getmtime(os.path.join(entry.test_dir, store.EXIT_CODE_FILE))
        except OSError:
            mtime = 0
        stamp = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).isoformat()
    return stamp


def build_payload(entry, workload, labels_model, strict):
    """Long-term payload of one test; raises kpi.MissingData in strict mode.

    Strict mode judges successful tests: a failed test is reported as a
    failure, its missing data is expected.
    """
    strict = strict and not entry.failed
    missing, warnings = [], []
    try:
        labels, label_warnings = kpi_lib.validate_labels(labels_model, workload.kpi_labels(entry), strict)
        warnings.extend(label_warnings)
    except kpi_lib.MissingData as exc:
        missing.extend(exc.missing)
        labels = {}
    payload = {
        "metadata": {
            "lts_schema_version": LTS_SCHEMA_VERSION,
            "test_uuid": entry.uuid,
            "timestamp": _timestamp(workload, entry),
            "workload": workload.name,
            "test_path": entry.relative,
            "exit_code": entry.exit_code,
            "settings": entry.settings,
            "parse_warnings": entry.warnings,
        },
        "results": workload.payload_results(entry),
        "labels": labels,
        "kpis": {},
    }
    if not entry.failed:
        try:
            payload["kpis"], kpi_warnings = kpi_lib.compute_kpis(workload.kpis, payload, strict)
            warnings.extend(kpi_warnings)
        except kpi_lib.MissingData as exc:
            missing.extend(exc.missing)
    if missing:
        raise kpi_lib.MissingData(missing)
    payload["metadata"]["kpi_warnings"] = warnings
    return payload, warnings


def _test_output_dir(plots_dir, entry):
    return os.path.join(plots_dir, "tests", entry.relative)


def visualize(results_dir, config, presets_applied=(), plots_name="plots", environ=None, strict=None):
    """Post-process ``results_dir``; returns a summary dict."""
    results_dir = os.path.abspath(results_dir)
    if not os.path.isdir(results_dir):
        raise PostProcessError("results_dir %s: not a directory" % results_dir)
    matbench = read_matbench(config)
    strict = matbench["strict"] if strict is None else strict
    reports_lib.check_report_names(matbench["reports"])
    try:
        workload = workload_lib.load_workload(matbench["workload"])
    except workload_lib.WorkloadError as exc:
        raise PostProcessError(str(exc)) from None
    labels_model = workload.labels_model()

    entries, tree_warnings = store.parse_results(results_dir, workload, environ)
    plots_dir = artifacts.allocate_artifact_dir(results_dir, plots_name)
    # outputs, not tests: later walks of the tree skip this directory
    artifacts.write_text_atomic(os.path.join(plots_dir, store.SKIP_FILE), "post-processing output, not a test\n")
    artifacts.write_yaml_atomic(os.path.join(plots_dir, "config.yaml"), config)
    artifacts.write_text_atomic(os.path.join(plots_dir, "presets_applied"), "".join(p + "\n" for p in presets_applied))

    payloads, log, all_kpis, records, strict_gaps = {}, [], [], [], []
    for entry in entries:
        try:
            payload, warnings = build_payload(entry, workload, labels_model, strict)
        except kpi_lib.MissingData as exc:
            strict_gaps.append("%s: %s" % (entry.relative, ", ".join(exc.missing)))
            log.append("%s: STRICT MODE: missing %s" % (entry.relative, ", ".join(exc.missing)))
            continue
        payloads[entry.test_dir] = payload
        out = _test_output_dir(plots_dir, entry)
        artifacts.write_json_atomic(os.path.join(out, PAYLOAD), payload)
        artifacts.write_json_atomic(os.path.join(out, KPIS_JSON), {
            "labels": payload["labels"], "kpis": payload["kpis"], "test_uuid": entry.uuid,
            "timestamp": payload["metadata"]["timestamp"]})
        om_labels = dict(payload["labels"], test_uuid=entry.uuid)
        if payload["kpis"]:
            artifacts.write_text_atomic(os.path.join(out, KPIS_OPENMETRICS), kpi_lib.openmetrics([(om_labels, payload["kpis"])]))
            all_kpis.append((om_labels, payload["kpis"]))
            records.extend(kpi_lib.flat_records(payload["labels"], payload["kpis"], {
                "test_uuid": entry.uuid, "@timestamp": payload["metadata"]["timestamp"], "workload": workload.name}))
        status = "FAILED (exit code %s)" % entry.exit_code if entry.failed else "ok"
        source = "cache" if entry.from_cache else "parsed"
        log.append("%s: %s [%s]" % (entry.relative, status, source))
        log.extend("    warning: %s" % w for w in entry.warnings + warnings)

    artifacts.write_text_atomic(os.path.join(plots_dir, PARSE_LOG), "\n".join(
        ["results: %s" % results_dir, "workload: %s" % workload.name, "tests: %d" % len(entries)]
        + ["tree warning: %s" % w for w in tree_warnings] + log) + "\n")
    artifacts.write_json_atomic(os.path.join(plots_dir, KPIS_JSON), [
        {"labels": labels, "kpis": kpis} for labels, kpis in all_kpis])
    artifacts.write_text_atomic(os.path.join(plots_dir, KPIS_OPENMETRICS), kpi_lib.openmetrics(all_kpis))
    artifacts.write_json_atomic(os.path.join(plots_dir, KPI_RECORDS), records)

    context = reports_lib.ReportContext([e for e in entries if e.test_dir in payloads or e.failed],
                                        payloads, workload.kpis, tree_warnings, matbench["title"],
                                        group_by=getattr(workload.module, "REPORT_GROUP_BY", None))
    written = reports_lib.write_reports(plots_dir, context, matbench["reports"],
                                        subtitle="%s · %s" % (results_dir, ", ".join(presets_applied) or "no preset"))
    failed = [e.relative for e in entries if e.failed]
    warnings_count = sum(len(e.warnings) for e in entries) + len(tree_warnings)
    summary = {
        "results_dir": results_dir,
        "plots_dir": plots_dir,
        "index": os.path.join(plots_dir, reports_lib.INDEX),
        "reports": [os.path.join(plots_dir, f) for _n, _t, f, _d in written],
        "tests": len(entries),
        "failed_tests": failed,
        "from_cache": sum(1 for e in entries if e.from_cache),
        "warnings": warnings_count,
        "kpi_records": len(records),
        "kpi_records_file": os.path.join(plots_dir, KPI_RECORDS),
        "label_fields": list(labels_model.model_fields),
        "strict": strict,
        "strict_gaps": strict_gaps,
        "workload": workload.name,
    }
    artifacts.write_json_atomic(os.path.join(plots_dir, SUMMARY), summary)
    return summary
