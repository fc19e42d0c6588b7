# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a matrix will cost, from the wall time of earlier points kept in the results store.

Every finished point of a run becomes a *point document* (``point_record``: the matrix, the model,
the point's settings, its GPUs and its wall time, ``kind: point``), exported with the run's KPIs. A
rehearsal (or the start of a run) estimates each point it plans from them (``estimate_matrix``):

- the median wall time of earlier successful points of the same matrix, model and settings
  (``basis: same settings``);
- else of the nearest earlier point: the settings differing in the fewest keys, the same model first
  (``basis: nearest``, naming the keys that differ);
- else none (``basis: no history``): that point's time is not in the estimate, and the totals say how
  many points the estimate rests on.

The totals: points, skipped, the estimated wall time (point times over the matrix's parallelism), the
GPU-hours (each point's GPUs times its time). After the run, ``compare`` sets the estimate beside what
each point took.
"""

from __future__ import annotations

import json
import statistics

from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base

ESTIMATE_FILE = "cost_estimate.json"
POINT_KIND = "point"
POINT_KPI = "point_duration"
# the point document's labels that tell points of a matrix apart (history is looked up without them)
POINT_DETAIL_LABELS = ("point", "settings", "gpus", "exit_code", "run_id")


def canonical_settings(settings):
    return json.dumps(settings or {}, sort_keys=True, default=str)


def point_record(workload, matrix, name, settings, duration_s, exit_code, test_uuid, timestamp, model=None, gpus=0,
                 run_id=None):
    """The record of one finished point (a flat record, as KPI records are)."""
    return {"kpi_name": POINT_KPI, "value": float(duration_s), "unit": "s", "workload": workload,
            "test_uuid": test_uuid, "@timestamp": timestamp, "matrix": matrix, "model": model, "point": name,
            "settings": canonical_settings(settings), "gpus": int(gpus or 0), "exit_code": int(exit_code),
            "run_id": run_id}


# the record as a store document (the stores own their documents' kinds)
point_document = stores_base.point_document


def history_query(workload, matrix, model):
    """The history look-up of a matrix's earlier points (with ``POINT_DETAIL_LABELS`` ignored)."""
    return stores_base.HistoryQuery(workload, POINT_KPI, {"matrix": matrix, "model": model}, kind=POINT_KIND)


def _differences(settings, other):
    keys = sorted(set(settings) | set(other))
    return [k for k in keys if json.dumps(settings.get(k), sort_keys=True, default=str)
            != json.dumps(other.get(k), sort_keys=True, default=str)]


def estimate_point(settings, history):
    """``{"estimate_s", "basis", "runs", "differs"}`` of one point from the successful earlier points."""
    done = []
    for document in history:
        if document.get("exit_code") not in (0, None) or not isinstance(document.get("value"), (int, float)):
            continue
        try:
            earlier = json.loads(document.get("settings") or "{}")
        except ValueError:
            continue
        done.append((earlier, float(document["value"])))
    if not done:
        return {"estimate_s": None, "basis": "no history", "runs": 0, "differs": []}
    ranked = sorted(((len(_differences(settings, earlier)), canonical_settings(earlier)) for earlier, _v in done))
    distance, closest = ranked[0]
    values = [v for earlier, v in done if canonical_settings(earlier) == closest]
    earlier = json.loads(closest)
    differs = _differences(settings, earlier)
    basis = "same settings" if distance == 0 else "nearest (differs in %s)" % ", ".join(
        "%s: %s here, %s before" % (k, json.dumps(settings.get(k), default=str), json.dumps(earlier.get(k), default=str))
        for k in differs)
    return {"estimate_s": round(statistics.median(values), 3), "basis": basis, "runs": len(values), "differs": differs}


def estimate_matrix(points, histories, width=1):
    """Estimates of planned points (``[{"name", "settings", "model", "gpus", "skip", "reason"}]``) from
    ``histories`` ({model: point documents of the same matrix and model}); ``width``: points at once (the
    parallelism)."""
    listed, estimated_s, gpu_s = [], 0.0, 0.0
    counts = {"same": 0, "nearest": 0, "none": 0}
    for point in points:
        entry = dict(point)
        if point.get("skip"):
            entry.update(estimate_s=None, basis="skipped")
        else:
            entry.update(estimate_point(point.get("settings") or {}, histories.get(point.get("model")) or ()))
            if entry["estimate_s"] is None:
                counts["none"] += 1
            else:
                counts["same" if entry["basis"] == "same settings" else "nearest"] += 1
                estimated_s += entry["estimate_s"]
                gpu_s += entry["estimate_s"] * (point.get("gpus") or 0)
        listed.append(entry)
    run = [p for p in listed if not p.get("skip")]
    totals = {
        "points": len(listed),
        "skipped": len(listed) - len(run),
        "to_run": len(run),
        "estimated_duration_s": round(estimated_s / max(1, min(width, len(run) or 1)), 1),
        "estimated_gpu_hours": round(gpu_s / 3600.0, 3),
        "gpus": sum(p.get("gpus") or 0 for p in run),
        "from_same_settings": counts["same"],
        "from_nearest": counts["nearest"],
        "without_history": counts["none"],
    }
    totals["rests_on_history"] = "%d of %d point(s) to run (%d with the same settings, %d from the nearest)" % (
        counts["same"] + counts["nearest"], len(run), counts["same"], counts["nearest"])
    return {"points": listed, "totals": totals}


def summary_line(estimate):
    totals = estimate["totals"]
    hours = totals["estimated_duration_s"] / 3600.0
    return ("%d point(s), %d skipped before deploy, %d to run on %d GPU(s) in all: estimated %s and %.2f GPU-hours; "
            "the estimate rests on history for %s" % (
                totals["points"], totals["skipped"], totals["to_run"], totals["gpus"],
                "%.1f h" % hours if hours >= 1 else "%.0f min" % (totals["estimated_duration_s"] / 60.0),
                totals["estimated_gpu_hours"], totals["rests_on_history"]))


def compare(estimate, actual):
    """The estimate beside what each point took (``actual``: {point name: (duration_s, gpus)})."""
    rows, estimated_total, actual_total, both = [], 0.0, 0.0, 0
    for point in estimate.get("points") or ():
        took = actual.get(point.get("name"))
        row = {"name": point.get("name"), "estimate_s": point.get("estimate_s"), "basis": point.get("basis"),
               "actual_s": round(took[0], 3) if took else None}
        if took and point.get("estimate_s") is not None:
            both += 1
            estimated_total += point["estimate_s"]
            actual_total += took[0]
            row["error_percent"] = round(100.0 * (point["estimate_s"] - took[0]) / took[0], 1) if took[0] else None
        rows.append(row)
    line = ("estimate vs actual: %d point(s) with both, estimated %.0f s, took %.0f s (%+.0f %%)" % (
        both, estimated_total, actual_total, 100.0 * (estimated_total - actual_total) / actual_total)
        if both and actual_total else "estimate vs actual: no point had both an estimate and a measured time")
    return {"rows": rows, "estimated_s": round(estimated_total, 1), "actual_s": round(actual_total, 1),
            "points_compared": both, "line": line}
