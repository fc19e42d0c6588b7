# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Post-processing of an artifact tree: parse, payloads and KPIs, reports.

``compute_payloads(results_dir, config)`` parses every test root with the
configured workload and builds each test's long-term payload (metadata,
results, labels once, KPIs): no file is written (``write_cache=False`` leaves
the parse caches alone too), which is what an export of an old tree needs.
``visualize(results_dir, config)`` does the same, then writes KPIs as JSON and
OpenMetrics, draws the configured reports, and puts all of it in a new
``NNN__plots/`` directory inside the tree. Earlier plots directories are left
alone.
"""

from __future__ import annotations

import datetime
import os

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import section as postprocess_section
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import section as regression_section
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import kpi as kpi_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports as reports_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree
from ansible_collections.perfscale.topsail.plugins.module_utils.run import context as run_context
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import point_resources
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import MissingData, PostProcessError
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import baselines
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import matrix_outcome

LTS_SCHEMA_VERSION = "1.0"
PARSE_LOG = "parse.log"
KPIS_JSON = "kpis.json"
KPIS_OPENMETRICS = "kpis.openmetrics"
KPI_RECORDS = "kpi_records.json"
PROM_KPIS_JSON = "prom_kpis.json"
PROM_KPIS_OPENMETRICS = "prom_kpis.openmetrics"
PROM_KPI_RECORDS = "prom_kpi_records.json"
# labels a prom record adds to the test's labels (which query, which series)
PROM_LABELS = ("prom_query", "prom_series")
# each finished point's wall time (capacity/estimate.py: what later rehearsals estimate from)
POINT_RECORDS = "point_records.json"
PAYLOAD = "payload.json"
SUMMARY = "summary.json"


def _timestamp(workload, entry):
    stamp = workload.timestamp(entry)
    if not stamp:
        try:
            mtime = os.path.getmtime(os.path.join(entry.test_dir, artifacts.EXIT_CODE_FILE))
        except OSError:
            mtime = 0
        stamp = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).isoformat()
    return stamp


def build_payload(entry, workload, labels_model, strict, noise_thresholds=None):
    """Long-term payload of one test; raises MissingData in strict mode.

    Strict mode judges successful tests: a failed test is reported as a
    failure, its missing data is expected.
    """
    strict = strict and not entry.failed
    missing, warnings = [], []
    try:
        labels, label_warnings = kpi_lib.validate_labels(labels_model, workload.kpi_labels(entry), strict)
        warnings.extend(label_warnings)
    except MissingData as exc:
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
            "noise": [],
            "noise_measures": {},
        },
        "results": workload.payload_results(entry),
        "labels": labels,
        "kpis": {},
    }
    if not entry.failed:
        measures = workload.noise_measures(entry)
        payload["metadata"].update(noise=workload.noise(entry, noise_thresholds, measures), noise_measures=measures)
        try:
            payload["kpis"], kpi_warnings = kpi_lib.compute_kpis(workload.kpis, payload, strict)
            warnings.extend(kpi_warnings)
        except MissingData as exc:
            missing.extend(exc.missing)
        point_resources.add(payload, point_resources.read(entry))
    if missing:
        raise MissingData(missing)
    payload["metadata"]["kpi_warnings"] = warnings
    return payload, warnings


class Payloads:
    """What a parse of a tree gives: entries, their payloads, KPI records, gaps."""

    def __init__(self, results_dir, workload, labels_model, entries, tree_warnings):
        self.results_dir = results_dir
        self.workload = workload
        self.labels_model = labels_model
        self.entries = entries
        self.tree_warnings = tree_warnings
        self.payloads = {}          # test_dir -> payload
        self.warnings = {}          # test_dir -> KPI/label warnings
        self.gaps = {}              # relative test path -> what strict mode found missing
        self.records = []
        self.prom = None            # PromResults when postprocess.prom_workload is set
        self.baseline_policy = None  # regression.noise.baseline (what later baselines do with noisy runs)

    @property
    def strict_gaps(self):
        return ["%s: %s" % (relative, ", ".join(missing)) for relative, missing in self.gaps.items()]

    @property
    def label_fields(self):
        return list(self.labels_model.model_fields)


def compute_payloads(results_dir, config, strict=None, environ=None, write_cache=True):
    """Parse ``results_dir`` and build every payload and KPI record; writes nothing
    when ``write_cache`` is false."""
    results_dir = os.path.abspath(results_dir)
    if not os.path.isdir(results_dir):
        raise PostProcessError("results_dir %s: not a directory" % results_dir)
    section = postprocess_section.read(config)
    strict = section["strict"] if strict is None else strict
    workload = workload_lib.load_workload(section["workload"])
    labels_model = workload.labels_model()
    entries, tree_warnings = results_tree.parse_results(results_dir, workload, environ, write_cache=write_cache)
    if section["filters"] and entries:
        kept = [entry for entry in entries if matches_filters(entry.settings, section["filters"])]
        if not kept:
            raise PostProcessError("postprocess.filters %s: no test of %s matches (%d test(s) there)"
                                   % (format_filters(section["filters"]), results_dir, len(entries)))
        tree_warnings = list(tree_warnings) + ["postprocess.filters %s: %d of %d test(s) kept"
                                               % (format_filters(section["filters"]), len(kept), len(entries))]
        entries = kept
    if not entries:
        raise PostProcessError("results_dir %s: no test in it (a test is a directory holding %s and %s); "
                               "nothing to post-process" % (results_dir, artifacts.SETTINGS_FILE,
                                                            artifacts.EXIT_CODE_FILE))
    result = Payloads(results_dir, workload, labels_model, entries, tree_warnings)
    noise = regression_section.read(config)["noise"] if "regression" in config else None
    result.baseline_policy = noise["baseline"] if noise else None
    run_urls = RunArtifactsUrls(results_dir)
    for entry in entries:
        try:
            payload, warnings = build_payload(entry, workload, labels_model, strict, noise)
        except MissingData as exc:
            result.gaps[entry.relative] = exc.missing
            continue
        result.payloads[entry.test_dir] = payload
        result.warnings[entry.test_dir] = warnings
        if payload["kpis"]:
            result.records.extend(kpi_lib.flat_records(payload["labels"], payload["kpis"], record_fields(
                entry, payload, workload, run_urls)))
    prom_workload = workload_lib.load_prom_workload(section["prom_workload"])
    if prom_workload is not None:
        result.prom = prom_results(result, prom_workload, run_urls)
    return result


def matches_filters(settings, filters):
    """Whether a test's settings match every filter (a value matches as text: ``size=256`` matches 256)."""
    return all(key in settings and str(settings[key]) in {str(value) for value in wanted}
               for key, wanted in filters.items())


def format_filters(filters):
    return ",".join("%s=%s" % (key, "|".join(str(v) for v in wanted)) for key, wanted in sorted(filters.items()))


def record_fields(entry, payload, workload, run_urls):
    """What every exported record of a test carries besides its labels and KPI."""
    return {"test_uuid": entry.uuid, "@timestamp": payload["metadata"]["timestamp"], "workload": workload.name,
            "noisy": bool(payload["metadata"]["noise"]), "noise": payload["metadata"]["noise"],
            "repetition_spread": (payload["metadata"].get("noise_measures") or {}).get("spread"),
            "host_load_per_cpu": (payload["metadata"].get("noise_measures") or {}).get("load_per_cpu"),
            "artifacts_url": run_urls.of(entry.test_dir)}


class PromResults:
    """The Prometheus captures of the tests (``postprocess.prom_workload``): per test, what was
    captured and its KPIs; the records of the successful tests (what is exported, kind ``prom``)."""

    def __init__(self, module):
        self.module = module
        self.tests = []             # [(entry, captured, kpis)] of the tests with captures
        self.records = []

    def __bool__(self):
        return bool(self.tests)


def prom_results(parsed, module, run_urls):
    result = PromResults(module)
    for entry in parsed.entries:
        payload = parsed.payloads.get(entry.test_dir)
        if payload is None:
            continue
        captured = module.read_captures(entry.test_dir)
        if not captured.captures and not captured.warnings:
            continue
        kpis = module.kpis_of(captured)
        result.tests.append((entry, captured, kpis))
        if entry.failed:
            continue  # shown in the report, kept out of the history
        fields = record_fields(entry, payload, parsed.workload, run_urls)
        for kpi in kpis:
            # the test's labels plus which query and which series
            labels = dict(payload["labels"], prom_query=kpi["query"], prom_series=kpi["series"])
            result.records.extend(kpi_lib.flat_records(labels, {kpi["kpi_name"]: kpi}, fields))
    return result


def prom_openmetrics_samples(labels, kpis, test_uuid):
    """(labels, {kpi: ...}) per series for the OpenMetrics writer: the test's labels, its uuid, and
    the series' own labels (``series_<name>`` when the test already has a label of that name)."""
    samples = []
    for kpi in kpis:
        sample_labels = dict(labels, test_uuid=test_uuid)
        for key, value in kpi["series_labels"].items():
            sample_labels["series_" + key if key in sample_labels else key] = value
        samples.append((sample_labels, {kpi["kpi_name"]: kpi}))
    return samples


def write_prom_outputs(plots_dir, parsed, subtitle, notes):
    """The prom workload's files and report in the plots directory; the summary's part of them."""
    prom = parsed.prom
    per_test, openmetrics_samples = [], []
    for entry, captured, kpis in prom.tests:
        labels = (parsed.payloads.get(entry.test_dir) or {}).get("labels") or {}
        item = {"test_path": entry.relative, "test_uuid": entry.uuid, "failed": entry.failed, "labels": labels,
                "captures": captured.captures, "warnings": captured.warnings,
                "kpis": [{k: v for k, v in kpi.items() if k != "series_labels"} for kpi in kpis]}
        per_test.append(item)
        artifacts.write_json_atomic(os.path.join(_test_output_dir(plots_dir, entry), PROM_KPIS_JSON), item)
        if not entry.failed:
            openmetrics_samples.extend(prom_openmetrics_samples(labels, kpis, entry.uuid))
    artifacts.write_json_atomic(os.path.join(plots_dir, PROM_KPIS_JSON), per_test)
    artifacts.write_text_atomic(os.path.join(plots_dir, PROM_KPIS_OPENMETRICS), kpi_lib.openmetrics(openmetrics_samples))
    artifacts.write_json_atomic(os.path.join(plots_dir, PROM_KPI_RECORDS), prom.records)
    reports = []
    for name, (builder, description) in getattr(prom.module, "REPORTS", {}).items():
        title, body = builder(prom.module.report_context(prom.tests))
        filename = "%s.html" % name
        artifacts.write_text_atomic(os.path.join(plots_dir, filename), reports_lib.page(title, body, subtitle, notes))
        reports_lib.add_to_index(plots_dir, filename, title, description)
        reports.append(os.path.join(plots_dir, filename))
    return {"prom_reports": reports, "prom_tests": len(prom.tests), "prom_kpi_records": len(prom.records),
            "prom_kpi_records_file": os.path.join(plots_dir, PROM_KPI_RECORDS),
            "prom_warnings": sum(len(captured.warnings) for _e, captured, _k in prom.tests)}


class RunArtifactsUrls:
    """Where each test's run was uploaded (``artifacts_url`` of the nearest ``run.json``), so that
    a KPI document links to its artifacts; None for a run that was not exported."""

    def __init__(self, results_dir):
        self.results_dir = results_dir
        self._globs = {}
        self._urls = {}

    def of(self, test_dir):
        path = results_tree.resolve_artifact_paths(test_dir, self.results_dir, {"run": run_context.RUN_INFO_FILE},
                                                   self._globs)["run"]
        if path not in self._urls:
            self._urls[path] = (run_context.read_run_info(path) or {}).get("artifacts_url") if path else None
        return self._urls[path]


def header_notes(parsed):
    """What every report of the run says first: how loaded the host was, which tests are noisy."""
    notes = []
    loads = [load for load in (parsed.workload.host_load(entry) for entry in parsed.entries if not entry.failed)
             if isinstance(load, (int, float))]
    if loads:
        notes.append("host load while the tests ran: up to %.2f per CPU (1-minute load average)" % max(loads))
    noisy = [(entry.relative, parsed.payloads[entry.test_dir]["metadata"]["noise"]) for entry in parsed.entries
             if entry.test_dir in parsed.payloads and parsed.payloads[entry.test_dir]["metadata"].get("noise")]
    if noisy:
        policy = parsed.baseline_policy or "prefer_quiet"
        notes.append("%d noisy test(s), flagged in the verdicts (baselines %s: %s): %s" % (
            len(noisy), policy, baselines.DESCRIPTIONS[policy], "; ".join("%s (%s)" % (test, ", ".join(reasons)) for test, reasons in noisy[:5])
            + ("; ..." if len(noisy) > 5 else "")))
    return notes


def _test_output_dir(plots_dir, entry):
    return os.path.join(plots_dir, "tests", entry.relative)


def is_replot(plots_dir):
    """Is ``plots_dir`` a replot: its tree holds an earlier plots directory of the same name whose
    post-processing finished (its ``summary.json`` written)?"""
    parent, name = os.path.split(os.path.normpath(plots_dir))
    suffix = name.split("__", 1)[1] if "__" in name else name
    return any(os.path.exists(os.path.join(other, SUMMARY))
               for other in artifacts.find_artifact_dirs(parent, "*__" + suffix)
               if os.path.normpath(other) != os.path.normpath(plots_dir) and os.path.basename(other) < name)


def visualize(results_dir, config, presets_applied=(), plots_name="plots", environ=None, strict=None):
    """Post-process ``results_dir``; returns a summary dict."""
    section = postprocess_section.read(config)
    strict = section["strict"] if strict is None else strict
    parsed = compute_payloads(results_dir, config, strict, environ)
    results_dir, workload = parsed.results_dir, parsed.workload
    report_names = reports_lib.report_names(section["reports"], workload, section["report_sets"], section["report_set"])

    plots_dir = artifacts.allocate_artifact_dir(results_dir, plots_name)
    # outputs, not tests: later walks of the tree skip this directory
    artifacts.write_text_atomic(os.path.join(plots_dir, results_tree.SKIP_FILE), "post-processing output, not a test\n")
    artifacts.write_yaml_atomic(os.path.join(plots_dir, run_context.CONFIG_FILE), run_context.masked_config(config))
    artifacts.write_text_atomic(os.path.join(plots_dir, run_context.PRESETS_FILE),
                                "".join(p + "\n" for p in presets_applied))

    log, all_kpis = [], []
    prom_warnings = {entry.test_dir: captured.warnings for entry, captured, _k in (parsed.prom.tests if parsed.prom else ())}
    for entry in parsed.entries:
        if entry.test_dir not in parsed.payloads:
            log.append("%s: STRICT MODE: missing %s" % (entry.relative, ", ".join(parsed.gaps[entry.relative])))
            continue
        payload = parsed.payloads[entry.test_dir]
        out = _test_output_dir(plots_dir, entry)
        artifacts.write_json_atomic(os.path.join(out, PAYLOAD), payload)
        artifacts.write_json_atomic(os.path.join(out, KPIS_JSON), {
            "labels": payload["labels"], "kpis": payload["kpis"], "test_uuid": entry.uuid,
            "timestamp": payload["metadata"]["timestamp"]})
        om_labels = dict(payload["labels"], test_uuid=entry.uuid)
        if payload["kpis"]:
            artifacts.write_text_atomic(os.path.join(out, KPIS_OPENMETRICS), kpi_lib.openmetrics([(om_labels, payload["kpis"])]))
            all_kpis.append((om_labels, payload["kpis"]))
        status = "FAILED (exit code %s)" % entry.exit_code if entry.failed else "ok"
        source = "cache" if entry.from_cache else "parsed"
        log.append("%s: %s [%s]" % (entry.relative, status, source))
        log.extend("    warning: %s" % w for w in entry.warnings + parsed.warnings[entry.test_dir])
        log.extend("    prometheus warning: %s" % w for w in prom_warnings.get(entry.test_dir, ()))

    artifacts.write_text_atomic(os.path.join(plots_dir, PARSE_LOG), "\n".join(
        ["results: %s" % results_dir, "workload: %s" % workload.name, "tests: %d" % len(parsed.entries)]
        + ["tree warning: %s" % w for w in parsed.tree_warnings] + log) + "\n")
    artifacts.write_json_atomic(os.path.join(plots_dir, KPIS_JSON), [
        {"labels": labels, "kpis": kpis} for labels, kpis in all_kpis])
    artifacts.write_text_atomic(os.path.join(plots_dir, KPIS_OPENMETRICS), kpi_lib.openmetrics(all_kpis))
    artifacts.write_json_atomic(os.path.join(plots_dir, KPI_RECORDS), parsed.records)

    context = reports_lib.ReportContext([e for e in parsed.entries if e.test_dir in parsed.payloads or e.failed],
                                        parsed.payloads, workload.kpis, parsed.tree_warnings, section["title"],
                                        group_by=workload.report_group_by, setting_units=workload.setting_units)
    # the plan of the run's matrices: points skipped before deploy, the estimate beside what it took
    capacity_lines, skipped_before_deploy, cost_vs_actual = matrix_outcome.notes(results_dir)
    notes = header_notes(parsed) + capacity_lines
    if cost_vs_actual:
        artifacts.write_json_atomic(os.path.join(plots_dir, matrix_outcome.COMPARISON_FILE), cost_vs_actual)
    point_records = matrix_outcome.point_records(parsed.entries, section["workload"])
    artifacts.write_json_atomic(os.path.join(plots_dir, POINT_RECORDS), point_records)
    subtitle = "%s · %s" % (results_dir, ", ".join(presets_applied) or "no preset")
    written = reports_lib.write_reports(plots_dir, context, report_names, workload, subtitle=subtitle, notes=notes)
    prom_summary = write_prom_outputs(plots_dir, parsed, subtitle, notes) if parsed.prom else {
        "prom_reports": [], "prom_tests": 0, "prom_kpi_records": 0, "prom_kpi_records_file": None, "prom_warnings": 0}
    failed = [e.relative for e in parsed.entries if e.failed]
    warnings_count = sum(len(e.warnings) for e in parsed.entries) + len(parsed.tree_warnings)
    summary = {
        "results_dir": results_dir,
        "plots_dir": plots_dir,
        "index": os.path.join(plots_dir, reports_lib.INDEX),
        "reports": [os.path.join(plots_dir, f) for _n, _t, f, _d in written],
        "tests": len(parsed.entries),
        "failed_tests": failed,
        "from_cache": sum(1 for e in parsed.entries if e.from_cache),
        "warnings": warnings_count,
        "kpi_records": len(parsed.records),
        "kpi_records_file": os.path.join(plots_dir, KPI_RECORDS),
        "label_fields": parsed.label_fields,
        "strict": strict,
        "strict_gaps": parsed.strict_gaps,
        "workload": workload.name,
        "notes": notes,
        "noisy_tests": [entry.relative for entry in parsed.entries
                        if (parsed.payloads.get(entry.test_dir) or {}).get("metadata", {}).get("noise")],
        "prom_label_fields": parsed.label_fields + list(PROM_LABELS),
        "point_records": len(point_records),
        "point_records_file": os.path.join(plots_dir, POINT_RECORDS),
        "skipped_before_deploy": skipped_before_deploy,
        "cost_vs_actual": [entry["line"] for entry in cost_vs_actual],
        "replot": is_replot(plots_dir),
    }
    summary["reports"].extend(prom_summary.pop("prom_reports"))
    summary.update(prom_summary)
    artifacts.write_json_atomic(os.path.join(plots_dir, SUMMARY), summary)
    return summary
