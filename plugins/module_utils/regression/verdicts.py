# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verdicts of the current run's KPIs against their history.

History of an entry: the stored records of the same workload and KPI whose
labels equal the entry's, except the ``comparison_keys`` (the labels history
is compared along, e.g. a platform version) and the ``ignored_keys``; ordered by
timestamp. The series is the history plus the current value; the configured
method finds change points in it, and the current value is flagged when it
starts a new segment. Direction decides: a higher-is-better KPI going down is a
regression, going up an improvement (and the other way for lower-is-better).
Improvements are reported apart and never fail a test.

When the history is shorter than the method needs, the current value is
compared with the mean of the history (``short_history_threshold``); with no
history at all the KPI is reported as such.
"""

from __future__ import annotations

import datetime
import statistics

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import RegressionError
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import maths
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import methods
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base

VERDICTS = ("regression", "improvement", "no_change", "no_history")


def effective_settings(section, workload_regression):
    """The configuration section over the workload's defaults; method options checked."""
    settings = dict(section)
    for key, default in (("comparison_keys", []), ("ignored_keys", []), ("sorting_keys", []), ("ignored_entries", {})):
        if settings.get(key) is None:
            settings[key] = workload_regression.get(key, default)
    unknown_methods = sorted(set(settings["options"]) - set(methods.METHODS))
    if unknown_methods:
        raise RegressionError("regression.options: unknown method(s) %s; methods: %s"
                              % (", ".join(unknown_methods), ", ".join(methods.method_names())))
    settings["method_options"] = methods.resolve_options(settings["method"], settings["options"].get(settings["method"], {}))
    return settings


def direction_verdict(relative_change, higher_is_better):
    if relative_change == 0:
        return "no_change"
    better = relative_change > 0 if higher_is_better else relative_change < 0
    return "improvement" if better else "regression"


def judge(history_values, current, higher_is_better, method, options, short_history_threshold):
    """Verdict and evidence for one KPI value against its history."""
    history_values = [v for v in history_values if v is not None]
    evidence = {"history_points": len(history_values), "current": current, "method": method}
    if not history_values:
        return "no_history", evidence
    mean_before = statistics.fmean(history_values)
    evidence["history_mean"] = mean_before
    needed = methods.get_method(method).minimum_history(options)
    if len(history_values) < needed:
        change = maths.relative_change(mean_before, current)
        evidence.update(method="short_history", relative_change=change, threshold=short_history_threshold,
                        note="%d history point(s) < %d needed by %s: compared with the history mean"
                             % (len(history_values), needed, method))
        if abs(change) >= short_history_threshold:
            return direction_verdict(change, higher_is_better), evidence
        return "no_change", evidence
    series = history_values + [current]
    changes = methods.find_change_points(series, method, **options)
    evidence["change_points"] = [c.as_dict() for c in changes]
    latest = changes[-1] if changes else None
    if latest is None or latest.index != len(series) - 1:
        evidence["relative_change"] = maths.relative_change(mean_before, current)
        return "no_change", evidence
    evidence.update(latest.as_dict())
    return direction_verdict(latest.relative_change, higher_is_better), evidence


def _ignored(labels, ignored_entries):
    for key, values in (ignored_entries or {}).items():
        if labels.get(key) in (values or []):
            return "%s=%s is in regression.ignored_entries" % (key, labels.get(key))
    return None


def _sort_key(sorting_keys):
    """Report order: each sorting key (numbers by value, then text, missing last), then the test path."""
    def rank(value):
        if value is None:
            return (2, 0, "")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (0, value, "")
        return (1, 0, str(value))

    def key(item):
        return tuple(rank(item["labels"].get(k)) for k in sorting_keys) + (item["test_path"],)
    return key


def _empty_summary(settings, store_description):
    return {"method": settings["method"], "options": settings["method_options"],
            "fail_test_on_regression": settings["fail_test_on_regression"],
            "comparison_keys": settings["comparison_keys"], "ignored_keys": settings["ignored_keys"],
            "store": store_description, "entries_analysed": 0, "kpis_analysed": 0,
            "regressions": [], "improvements": [], "no_history": [], "not_analysed": []}


def history_unavailable(payloads, settings, reason):
    """Summary when the store cannot be reached: nothing analysed, and why."""
    summary = _empty_summary(settings, "unavailable")
    summary["not_analysed"] = [{"test": p["metadata"]["test_path"], "reason": "history unavailable: %s" % reason}
                               for p in payloads]
    summary["message"] = "history unavailable (%s): nothing analysed" % reason
    summary["analysed_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
    return summary


def analyse(payloads, store, settings, workload_name):
    """Analyse the payloads of the current run; returns (summary, records, details)."""
    method, options = settings["method"], settings["method_options"]
    ignore = list(settings["comparison_keys"]) + list(settings["ignored_keys"])
    summary = _empty_summary(settings, store.describe())
    details, records = [], []
    candidates = [p for p in payloads if p["kpis"]]
    for payload in payloads:
        if not payload["kpis"]:
            summary["not_analysed"].append({"test": payload["metadata"]["test_path"],
                                            "reason": "no KPI values (failed test: exit code %s)"
                                                      % payload["metadata"]["exit_code"]})
    ordered = sorted(({"payload": p, "labels": p["labels"], "test_path": p["metadata"]["test_path"]} for p in candidates),
                     key=_sort_key(settings["sorting_keys"]))
    analysed = []
    for item in ordered:
        reason = _ignored(item["labels"], settings["ignored_entries"])
        if reason:
            summary["not_analysed"].append({"test": item["test_path"], "reason": reason})
            continue
        analysed.append(item)
    # one batch of history look-ups for the whole run (the hot path of the step)
    lookups = [(item, name, kpi) for item in analysed for name, kpi in item["payload"]["kpis"].items()
               if not kpi["ignored_for_regression"] and kpi["value"] is not None]
    histories = store.history_batch(
        [stores_base.HistoryQuery(workload_name, name, item["labels"], item["payload"]["metadata"]["test_uuid"])
         for item, name, _kpi in lookups], ignore_keys=ignore)
    history_of = {(id(item), name): history for (item, name, _kpi), history in zip(lookups, histories)}
    for item in analysed:
        payload, labels, test_path = item["payload"], item["labels"], item["test_path"]
        summary["entries_analysed"] += 1
        entry_detail = {"test": test_path, "labels": labels, "test_uuid": payload["metadata"]["test_uuid"],
                        "timestamp": payload["metadata"]["timestamp"], "kpis": []}
        for name, kpi in payload["kpis"].items():
            if kpi["ignored_for_regression"] or kpi["value"] is None:
                continue
            history = history_of[(id(item), name)]
            verdict, evidence = judge([h.get("value") for h in history], kpi["value"], kpi["higher_is_better"],
                                      method, options, settings["short_history_threshold"])
            summary["kpis_analysed"] += 1
            line = {"test": test_path, "kpi": name, "unit": kpi["unit"], "current": kpi["value"],
                    "history_points": evidence["history_points"], "method": evidence["method"]}
            for key in ("history_mean", "mean_before", "relative_change", "pvalue"):
                if key in evidence:
                    line[key] = evidence[key]
            if verdict == "regression":
                summary["regressions"].append(line)
            elif verdict == "improvement":
                summary["improvements"].append(line)
            elif verdict == "no_history":
                summary["no_history"].append({"test": test_path, "kpi": name})
            entry_detail["kpis"].append({"name": name, "unit": kpi["unit"], "help": kpi["help"],
                                         "higher_is_better": kpi["higher_is_better"], "verdict": verdict,
                                         "evidence": evidence,
                                         "history": [{"timestamp": h.get("@timestamp"), "value": h.get("value"),
                                                      "test_uuid": h.get("test_uuid")} for h in history]})
            record = dict(labels)
            record.update({"kind": "regression", "kpi_name": name, "value": kpi["value"], "unit": kpi["unit"],
                           "verdict": verdict, "method": evidence["method"],
                           "relative_change": evidence.get("relative_change"), "pvalue": evidence.get("pvalue"),
                           "history_points": evidence["history_points"],
                           "test_uuid": payload["metadata"]["test_uuid"], "@timestamp": payload["metadata"]["timestamp"],
                           "workload": workload_name,
                           "doc_id": stores_base.doc_id("regression", payload["metadata"]["test_uuid"], name)})
            records.append(record)
        details.append(entry_detail)
    summary["message"] = summary_message(summary)
    summary["analysed_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
    return summary, records, details


def summary_message(summary):
    return "%d regression(s), %d improvement(s), %d KPI(s) without history, in %d KPI(s) of %d entr%s (%s)" % (
        len(summary["regressions"]), len(summary["improvements"]), len(summary["no_history"]),
        summary["kpis_analysed"], summary["entries_analysed"], "y" if summary["entries_analysed"] == 1 else "ies",
        summary["method"])
