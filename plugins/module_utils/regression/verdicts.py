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
compared with the mean of the history: a change below ``short_history_threshold``
is no change; a larger one is a regression or an improvement only when the
history's own spread tells it apart (prediction t-test, ``short_history_max_pvalue``),
else ``inconclusive``, with the reason and how many more runs would decide it.
With no history at all the KPI is reported as such, with the reason (none, only
noisy or forgotten runs, only other machines).

Which history runs make a baseline (noisy ones or not) is ``regression.noise.baseline``
(``baselines.py``). A noisy run is compared like any other; its verdicts carry its
uncertainty (repetition spread, host load), and its regressions fail the gate only
when its baseline held noisy runs too (whose spread includes the noise). A change
smaller than the run's own repetition spread is ``inconclusive`` whatever the method
says (``within_run_spread``).
"""

from __future__ import annotations

import datetime
import math
import statistics

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import RegressionError
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import baselines
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import maths
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import methods
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base

VERDICTS = ("regression", "persisting_regression", "improvement", "drift", "inconclusive", "no_change",
            "not_enough_history")

# a short history's change that more runs at the same spread would decide within this many is
# given a number of runs; beyond it, more runs at this spread will not decide it
MAX_RUNS_TO_DECIDE = 100
# why a KPI has no baseline, in the order the summary lists them
NO_HISTORY_REASONS = ("none", "noisy", "forgotten", "other_machine")


def effective_settings(section, workload_regression):
    """The configuration section over the workload's defaults; method options checked."""
    settings = dict(section)
    for key, default in (("comparison_keys", []), ("ignored_keys", []), ("sorting_keys", []), ("ignored_entries", {}),
                         ("machine_keys", [])):
        if settings.get(key) is None:
            settings[key] = workload_regression.get(key, default)
    unknown_methods = sorted(set(settings["options"]) - set(methods.METHODS))
    if unknown_methods:
        raise RegressionError("regression.options: unknown method(s) %s; methods: %s"
                              % (", ".join(unknown_methods), ", ".join(methods.method_names())))
    settings["method_options"] = methods.resolve_options(settings["method"], settings["options"].get(settings["method"], {}))
    return settings


def _with_article(verdict):
    """"a regression", "an improvement": the verdict as the subject of a sentence of evidence."""
    return ("an " if verdict[0] in "aeiou" else "a ") + verdict


def direction_verdict(relative_change, higher_is_better):
    if relative_change == 0:
        return "no_change"
    better = relative_change > 0 if higher_is_better else relative_change < 0
    return "improvement" if better else "regression"


def _point(history, index):
    """What the report says of the run at ``index`` of the history: when, which run, which commit."""
    item = history[index] if 0 <= index < len(history) else {}
    return {"timestamp": item.get("@timestamp"), "run_id": item.get("run_id"), "git_commit": item.get("git_commit"),
            "test_uuid": item.get("test_uuid")}


def _against(baseline, current):
    """The current value against a baseline segment: relative change, a prediction t-test
    (two-sided p-value) and the effect size (distance in standard deviations)."""
    mean = statistics.fmean(baseline)
    evidence = {"baseline_mean": mean, "baseline_points": len(baseline), "absolute_change": current - mean,
                "relative_change": maths.relative_change(mean, current)}
    if len(baseline) >= 2:
        stdev = statistics.stdev(baseline)
        evidence["baseline_stdev"] = stdev
        _t, pvalue = maths.student_t(baseline, [current])
        evidence["pvalue"] = pvalue
        evidence["effect_size"] = (current - mean) / stdev if stdev > 0 else (0.0 if current == mean else None)
    return evidence


def runs_to_decide(values, current, max_pvalue):
    """How many more runs, at the history's mean and spread, make the prediction t-test of
    ``current`` significant at ``max_pvalue``; None when not within ``MAX_RUNS_TO_DECIDE`` (the
    change is too small against the spread for more runs alone to decide it)."""
    from scipy import special

    count, mean, stdev = len(values), statistics.fmean(values), statistics.stdev(values)
    if stdev == 0:
        return 0
    for more in range(1, MAX_RUNS_TO_DECIDE + 1):
        points = count + more
        t = abs(current - mean) / (stdev * math.sqrt(1 + 1.0 / points))
        if 2 * special.stdtr(points - 1, -t) <= max_pvalue:
            return more
    return None


def _short_history(values, current, higher_is_better, threshold, max_pvalue, evidence):
    """A history shorter than the method needs: the magnitude of the change against the history
    mean decides whether it matters (``threshold``), the history's own spread whether it is told
    apart from noise (prediction t-test at ``max_pvalue``); otherwise ``inconclusive``."""
    evidence.update(_against(values, current))
    evidence.update(method="short_history", threshold=threshold, max_pvalue=max_pvalue)
    change = evidence["relative_change"]
    if abs(change) < threshold:
        return "no_change", evidence
    direction = direction_verdict(change, higher_is_better)
    shown = "%+.1f %%" % (100 * change) if math.isfinite(change) else "%+g (from 0)" % evidence["absolute_change"]
    if len(values) < 2:
        evidence.update(inconclusive_reason="short_history", runs_needed=2, leaning=direction,
                        why="%s of %s against 1 history point, whose spread is unknown: at least 2 more runs "
                            "would decide it" % (_with_article(direction), shown))
        return "inconclusive", evidence
    if evidence["pvalue"] <= max_pvalue:
        return direction, evidence
    more = runs_to_decide(values, current, max_pvalue)
    if more is None:
        decide = ("more runs at this spread would not decide it (the change is %.1f standard deviations of the "
                  "history): more repetitions or a quieter machine would" % abs(evidence["effect_size"]))
    else:
        decide = "about %d more run(s) at this spread would decide it" % more
    evidence.update(inconclusive_reason="noise", runs_needed=more, leaning=direction,
                    why="%s of %s is within the spread of %d history points (p = %.3g > %g): %s"
                        % (_with_article(direction), shown, len(values), evidence["pvalue"], max_pvalue, decide))
    return "inconclusive", evidence


# evidence keys that are ratios: undefined (``None`` plus a reason) when their base is 0
RATIO_KEYS = ("relative_change", "relative_change_since", "change_at_since", "effect_size")


def judge(history, current, higher_is_better, method, options, short_history_threshold, short_history_max_pvalue=0.01):
    """``_judge``'s verdict, with evidence that is strict JSON: a ratio with a zero base (a rise from
    an all-zero history: an error count that was always 0) is ``None`` in the evidence, named in
    ``evidence["undefined"]`` with the reason, and the verdict rests on the absolute change
    (``absolute_change``): any change from exactly 0 is as large as a change can be."""
    verdict, evidence = _judge(history, current, higher_is_better, method, options, short_history_threshold,
                               short_history_max_pvalue)
    undefined = {}
    for key in RATIO_KEYS:
        value = evidence.get(key)
        if isinstance(value, float) and not math.isfinite(value):
            evidence[key] = None
            undefined[key] = ("its base is 0 (a %s from 0): judged by the absolute change"
                              % ("rise" if value > 0 else "fall") if key != "effect_size"
                              else "the baseline does not vary: judged by the absolute change")
    for change in evidence.get("change_points") or ():
        if not math.isfinite(change["relative_change"]):
            change["relative_change"] = None
    for key in ("pvalue", "statistic"):
        if isinstance(evidence.get(key), float) and not math.isfinite(evidence[key]):
            evidence[key] = None
    if undefined:
        evidence["undefined"] = undefined
    return verdict, evidence


def _judge(history, current, higher_is_better, method, options, short_history_threshold, short_history_max_pvalue):
    """Verdict and evidence for one KPI value against its history.

    ``history`` is a list of stored documents (``value``, ``@timestamp``, ``run_id``,
    ``git_commit``...), oldest first. Verdicts:

    ``regression`` / ``improvement``  a change at this run (the newest point starts a segment);
    ``persisting_regression``  an earlier run changed the KPI for the worse and the current
        value is still worse than the baseline before that change (by at least half of the
        change): the run that introduced it (``since``) is named;
    ``drift``  no step, but the latest segment slopes (a method with a trend model:
        ``linear_segments``): ``drift`` gives its slope per run, the run it starts at (``since``),
        how far it moved and whether for the worse or the better;
    ``no_change``  with the prediction t-test's p-value and the effect size against the
        current segment;
    ``inconclusive``  a short history's change that its spread cannot tell from noise
        (``inconclusive_reason``, ``why``, ``runs_needed``);
    ``not_enough_history``  no history at all.
    With fewer points than the method needs, method ``short_history`` (``_short_history``).
    A history value that is missing or not a finite number is a gap: it is left out of the maths
    and every index of the evidence (change points, a drift's start) is its position in ``history``.
    """
    # a stored value that is not a finite number (a store answering "NaN", a run without the KPI) is
    # no evidence, but keeps its place: every index of the evidence is a position in ``history``
    given = [float(h["value"]) if _finite_number(h.get("value")) else None for h in history]
    values = [value for value in given if value is not None]
    evidence = {"history_points": len(values), "current": current, "method": method}
    if not values:
        return "not_enough_history", evidence
    evidence["history_mean"] = statistics.fmean(values)
    needed = methods.get_method(method).minimum_history(options)
    if len(values) < needed:
        evidence.update(note="%d history point(s) < %d needed by %s: compared with the history mean"
                             % (len(values), needed, method))
        return _short_history(values, current, higher_is_better, short_history_threshold, short_history_max_pvalue,
                              evidence)
    if len(values) < len(given):
        evidence["gaps"] = len(given) - len(values)
    series = given + [current]
    found = methods.analyse_series(series, method, **options)
    changes = found.changes
    evidence["change_points"] = [c.as_dict() for c in changes]
    latest = changes[-1] if changes else None
    if latest is not None and latest.index == len(series) - 1:
        evidence.update(latest.as_dict(), absolute_change=latest.mean_after - latest.mean_before)
        return direction_verdict(latest.relative_change, higher_is_better), evidence
    segment_start = latest.index if latest is not None else 0
    evidence.update(_against(_present(given[segment_start:]), current))
    if latest is not None and direction_verdict(latest.relative_change, higher_is_better) == "regression":
        previous_start = changes[-2].index if len(changes) > 1 else 0
        before = statistics.fmean(_present(given[previous_start:latest.index]))
        still = maths.relative_change(before, current)
        if direction_verdict(still, higher_is_better) == "regression" and \
                abs(still) >= abs(latest.relative_change) / 2:
            evidence.update(since=_point(history, latest.index), change_at_since=latest.relative_change,
                            pre_change_mean=before, relative_change_since=still, pvalue_at_since=latest.pvalue,
                            absolute_change_since=current - before)
            return "persisting_regression", evidence
    if found.drift is not None:
        drift = found.drift.as_dict()
        drift.update(since=_point(history, found.drift.start) if found.drift.start < len(history) else None,
                     direction="better" if direction_verdict(found.drift.relative_change, higher_is_better)
                     == "improvement" else "worse")
        evidence["drift"] = drift
        return "drift", evidence
    return "no_change", evidence


def _finite_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _present(values):
    """The values of a stretch of history that are there (its gaps left out)."""
    return [value for value in values if value is not None]


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
            "fail_on_persisting": settings["fail_on_persisting"], "fail_on_drift": settings.get("fail_on_drift", False),
            "require_history": settings["require_history"],
            "comparison_keys": settings["comparison_keys"], "ignored_keys": settings["ignored_keys"],
            "machine_keys": settings["machine_keys"], "compare_across_machines": settings["compare_across_machines"],
            "baseline_policy": settings["noise"]["baseline"],
            "store": store_description, "entries_analysed": 0, "kpis_analysed": 0, "kpis_with_history": 0,
            "regressions": [], "persisting_regressions": [], "improvements": [], "drifts": [], "inconclusive": [],
            "no_change": 0, "not_enough_history": [], "without_history": {reason: 0 for reason in NO_HISTORY_REASONS},
            "noisy_entries": [], "baselines_with_noisy_runs": 0, "not_analysed": [],
            "excluded_from_baselines": {"noisy": 0, "forgotten": 0},
            "skipped_documents": {"count": 0, "reasons": {}, "read_as_null": 0, "words": ""}}


def skipped_documents(store):
    """What the store's readers skipped of the history (and read as null), for the summary: a bad
    stored document is no evidence, and the report says how many there were and why."""
    skipped = store.skipped
    return {"count": skipped.count(), "reasons": dict(sorted(skipped.reasons().items())),
            "read_as_null": skipped.nulled(), "words": skipped.words()}


def history_unavailable(payloads, settings, reason):
    """Summary when the store cannot be reached: nothing analysed, and why."""
    summary = _empty_summary(settings, "unavailable")
    summary["not_analysed"] = [{"test": p["metadata"]["test_path"], "reason": "history unavailable: %s" % reason}
                               for p in payloads]
    summary["message"] = "history unavailable (%s): nothing analysed" % reason
    summary["analysed_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
    summary.update(gate_decision(summary))
    return summary


def _line(test_path, name, kpi, verdict, evidence, noisy):
    line = {"test": test_path, "kpi": name, "unit": kpi["unit"], "current": kpi["value"], "verdict": verdict,
            "history_points": evidence["history_points"], "method": evidence["method"], "noisy": bool(noisy)}
    for key in ("history_mean", "mean_before", "baseline_mean", "absolute_change", "relative_change", "pvalue",
                "effect_size", "since", "pre_change_mean", "relative_change_since", "undefined", "baseline_noisy_points",
                "uncertainty", "inconclusive_reason", "runs_needed", "leaning", "why", "no_history_reason", "drift",
                "gaps"):
        if evidence.get(key) is not None:
            line[key] = evidence[key]
    return line


def _no_history_reason(split, elsewhere):
    """Why a KPI has no baseline: only noisy runs left out by the policy, only forgotten runs, history on
    other machines only, or none at all."""
    if split.left_out["noisy"]:
        return "noisy"
    if split.left_out["forgotten"]:
        return "forgotten"
    return "other_machine" if elsewhere else "none"


def _histories(store, settings, workload_name, lookups, ignore):
    """The stored history of each (entry, KPI) look-up, in one batch; and, for the look-ups with
    none, whether other machines have some (one more batch, only when machines are compared)."""
    histories = store.history_batch(
        [stores_base.HistoryQuery(workload_name, name, item["labels"], item["payload"]["metadata"]["test_uuid"])
         for item, name in lookups], ignore_keys=ignore)
    elsewhere = [False] * len(lookups)
    machine_keys = [] if settings["compare_across_machines"] else list(settings["machine_keys"])
    empty = [index for index, history in enumerate(histories) if not history]
    if machine_keys and empty:
        found = store.history_batch(
            [stores_base.HistoryQuery(workload_name, lookups[i][1], lookups[i][0]["labels"],
                                      lookups[i][0]["payload"]["metadata"]["test_uuid"]) for i in empty],
            ignore_keys=ignore + machine_keys)
        for index, history in zip(empty, found):
            elsewhere[index] = bool(history)
    return histories, elsewhere


def within_run_spread(verdict, evidence):
    """The confidence rule of a run's own noise: a regression or an improvement smaller than the run's
    repetition spread (the workload's ``spread``: the CV of the repetition times) is not shown by
    that run, whatever the history says; it becomes ``inconclusive`` (reason ``run_spread``)."""
    spread = (evidence.get("uncertainty") or {}).get("spread")
    change = evidence.get("relative_change")
    if verdict not in ("regression", "improvement") or spread is None or not isinstance(change, float) \
            or not math.isfinite(change) or abs(change) > spread:
        return verdict
    evidence.update(inconclusive_reason="run_spread", runs_needed=None, leaning=verdict,
                    why="%s of %+.1f %% within this run's own repetition spread (%.3f): a quieter run would "
                        "decide it" % (_with_article(verdict), 100 * change, spread))
    return "inconclusive"


def uncertainty(metadata):
    """What makes a run's value less certain, from its payload's metadata: the repetitions' spread and
    the host's load per CPU (the measures, whether or not they passed the noise thresholds)."""
    measures = metadata.get("noise_measures") or {}
    found = {key: measures.get(key) for key in ("spread", "load_per_cpu")
             if isinstance(measures.get(key), (int, float)) and not isinstance(measures.get(key), bool)}
    return found or None


def analyse(payloads, store, settings, workload_name):
    """Analyse the payloads of the current run; returns (summary, records, details).

    Each entry's primary KPIs are judged against their baselines (history without
    forgotten runs; noisy runs as ``noise.baseline`` decides); a KPI
    declared a view of another (``ViewOf``: ``time_median`` of ``rate``) gets that
    KPI's verdict, is shown, and is not counted twice in the totals.
    """
    method, options = settings["method"], settings["method_options"]
    needed = methods.get_method(method).minimum_history(options)
    ignore = list(settings["comparison_keys"]) + list(settings["ignored_keys"])
    if settings["compare_across_machines"]:
        ignore += list(settings["machine_keys"])
    policy = settings["noise"]["baseline"]
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
    lookups = [(item, name) for item in analysed for name, kpi in item["payload"]["kpis"].items()
               if not kpi["ignored_for_regression"] and kpi["value"] is not None and not kpi.get("view_of")]
    histories, elsewhere = _histories(store, settings, workload_name, lookups, ignore)
    forgotten = {run_id for run_id, mark in store.marks().items() if mark.get("forgotten")}
    summary["skipped_documents"] = skipped_documents(store)
    split_of = {}
    for (item, name), history, other_machines in zip(lookups, histories, elsewhere):
        split = baselines.Split(history, forgotten, policy, needed)
        split_of[(id(item), name)] = (split, other_machines)
        for key, count in split.left_out.items():
            summary["excluded_from_baselines"][key] += count
    for item in analysed:
        payload, labels, test_path = item["payload"], item["labels"], item["test_path"]
        noisy = payload["metadata"].get("noise") or []
        run_uncertainty = uncertainty(payload["metadata"])
        summary["entries_analysed"] += 1
        if noisy:
            summary["noisy_entries"].append({"test": test_path, "reasons": noisy})
        entry_detail = {"test": test_path, "labels": labels, "test_uuid": payload["metadata"]["test_uuid"],
                        "timestamp": payload["metadata"]["timestamp"], "noise": noisy, "uncertainty": run_uncertainty,
                        "kpis": []}
        judged = {}
        kpis = payload["kpis"]
        # primary KPIs first, then their views (which take the primary's verdict)
        for name in sorted(kpis, key=lambda n: bool(kpis[n].get("view_of"))):
            kpi = kpis[name]
            if kpi["ignored_for_regression"] or kpi["value"] is None:
                continue
            primary = kpi.get("view_of")
            if primary:
                if primary not in judged:
                    continue
                verdict, primary_evidence = judged[primary]
                evidence = {"view_of": primary, "method": primary_evidence["method"],
                            "history_points": primary_evidence["history_points"], "current": kpi["value"]}
                history = []
            else:
                split, other_machines = split_of[(id(item), name)]
                history = split.baseline
                verdict, evidence = judge(history, kpi["value"], kpi["higher_is_better"], method, options,
                                          settings["short_history_threshold"], settings["short_history_max_pvalue"])
                if split.noisy_points:
                    evidence["baseline_noisy_points"] = split.noisy_points
                    summary["baselines_with_noisy_runs"] += 1
                if run_uncertainty:
                    evidence["uncertainty"] = run_uncertainty
                    verdict = within_run_spread(verdict, evidence)
                if verdict == "not_enough_history":
                    evidence["no_history_reason"] = _no_history_reason(split, other_machines)
                    summary["without_history"][evidence["no_history_reason"]] += 1
                judged[name] = (verdict, evidence)
                summary["kpis_analysed"] += 1
                if evidence["history_points"]:
                    summary["kpis_with_history"] += 1
                line = _line(test_path, name, kpi, verdict, evidence, noisy)
                bucket = {"regression": "regressions", "persisting_regression": "persisting_regressions",
                          "improvement": "improvements", "drift": "drifts", "inconclusive": "inconclusive",
                          "not_enough_history": "not_enough_history"}.get(verdict)
                if bucket:
                    summary[bucket].append(line)
                else:
                    summary["no_change"] += 1
            entry_detail["kpis"].append({"name": name, "unit": kpi["unit"], "help": kpi["help"],
                                         "higher_is_better": kpi["higher_is_better"], "verdict": verdict,
                                         "view_of": primary, "evidence": evidence,
                                         "history": [{"timestamp": h.get("@timestamp"), "value": h.get("value"),
                                                      "test_uuid": h.get("test_uuid"), "run_id": h.get("run_id"),
                                                      "git_commit": h.get("git_commit"), "noisy": bool(h.get("noisy")),
                                                      "artifacts_url": h.get("artifacts_url")} for h in history]})
            record = dict(labels)
            record.update({"kind": "regression", "kpi_name": name, "value": kpi["value"], "unit": kpi["unit"],
                           "verdict": verdict, "method": evidence["method"], "view_of": primary,
                           "relative_change": evidence.get("relative_change"),
                           "absolute_change": evidence.get("absolute_change"), "undefined": evidence.get("undefined"),
                           "pvalue": evidence.get("pvalue"),
                           "effect_size": evidence.get("effect_size"), "history_points": evidence["history_points"],
                           "noisy": bool(noisy), "noise": noisy,
                           "repetition_spread": (evidence.get("uncertainty") or {}).get("spread"),
                           "host_load_per_cpu": (evidence.get("uncertainty") or {}).get("load_per_cpu"),
                           "baseline_policy": policy, "baseline_noisy_points": evidence.get("baseline_noisy_points", 0),
                           "inconclusive_reason": evidence.get("inconclusive_reason"),
                           "runs_needed": evidence.get("runs_needed"), "why": evidence.get("why"),
                           "no_history_reason": evidence.get("no_history_reason"), "drift": evidence.get("drift"),
                           "test_uuid": payload["metadata"]["test_uuid"], "@timestamp": payload["metadata"]["timestamp"],
                           "workload": workload_name,
                           "doc_id": stores_base.doc_id("regression", payload["metadata"]["test_uuid"], name)})
            records.append(record)
        details.append(entry_detail)
    summary.update(gate_decision(summary))
    summary["message"] = summary_message(summary)
    summary["analysed_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
    return summary, records, details


def gate_decision(summary):
    """Whether the test fails, and why: new regressions (a noisy run's only when its baseline held
    noisy runs too: judged against a spread that includes the noise), persisting ones when
    ``fail_on_persisting``, no history at all when ``require_history``. Inconclusive verdicts never fail."""
    reasons = []
    if summary["fail_test_on_regression"]:
        new = [r for r in summary["regressions"] if not r["noisy"] or r.get("baseline_noisy_points")]
        if new:
            reasons.append("%d new regression(s)" % len(new))
        if summary["fail_on_persisting"] and summary["persisting_regressions"]:
            reasons.append("%d persisting regression(s)" % len(summary["persisting_regressions"]))
        worse = [d for d in summary.get("drifts") or () if (d.get("drift") or {}).get("direction") == "worse"]
        if summary.get("fail_on_drift") and worse:
            reasons.append("%d drift(s) for the worse" % len(worse))
    if summary["require_history"] and not summary["kpis_with_history"]:
        reasons.append("no KPI has any history (regression.require_history)")
    return {"fail_test": bool(reasons), "fail_reasons": reasons}


NO_HISTORY_WORDS = {"none": "none stored", "noisy": "only noisy runs, left out", "forgotten": "only forgotten runs",
                    "other_machine": "only on other machines"}


def noise_words(summary):
    """What the noisy runs did to this analysis, in the words the console, the report header and the
    records share; "" when no run was noisy and no baseline met a noisy run."""
    noisy = len(summary.get("noisy_entries") or ())
    with_noisy = summary.get("baselines_with_noisy_runs") or 0
    left_out = (summary.get("excluded_from_baselines") or {}).get("noisy") or 0
    if not (noisy or with_noisy or left_out):
        return ""
    policy = summary.get("baseline_policy") or "prefer_quiet"
    parts = []
    if noisy:
        parts.append("%d noisy entr%s, compared with their uncertainty%s" % (
            noisy, "y" if noisy == 1 else "ies",
            " (a regression fails the test only against a baseline with noisy runs)"
            if summary.get("fail_test_on_regression") else ""))
    parts.append("baselines %s (%s): %d with noisy runs%s" % (
        policy, baselines.DESCRIPTIONS[policy], with_noisy,
        ", %d noisy history point(s) left out" % left_out if left_out else ""))
    return "; ".join(parts)


def summary_message(summary):
    """The one line of the console: KPIs compared and their verdicts, KPIs without history and why,
    noisy runs and what the baseline policy did with them, the gate's decision."""
    compared = summary["kpis_with_history"]
    without = summary["kpis_analysed"] - compared
    why = ", ".join("%d %s" % (count, NO_HISTORY_WORDS[reason])
                    for reason, count in (summary.get("without_history") or {}).items() if count)
    text = ("%d KPI(s) of %d entr%s compared (%s): %d regression(s), %d persisting regression(s), %d improvement(s), "
            "%d drift(s), %d inconclusive, %d no change; %d KPI(s) without history%s") % (
        compared, summary["entries_analysed"], "y" if summary["entries_analysed"] == 1 else "ies", summary["method"],
        len(summary["regressions"]), len(summary["persisting_regressions"]), len(summary["improvements"]),
        len(summary.get("drifts") or ()),
        len(summary.get("inconclusive") or ()), summary.get("no_change") or 0, without, " (%s)" % why if why else "")
    noise = noise_words(summary)
    if noise:
        text += "; " + noise
    skipped = (summary.get("skipped_documents") or {}).get("words")
    if skipped:
        text += "; " + skipped
    if summary.get("fail_reasons"):
        text += "; the test fails: %s" % ", ".join(summary["fail_reasons"])
    return text
