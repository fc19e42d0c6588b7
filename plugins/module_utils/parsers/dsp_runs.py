# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The KPIs of Data Science Pipelines runs, as the reference's rhods-pipelines post-processing derives them.

Each KFP run is matched to its Argo Workflow (label ``pipeline/runid``); the workflow's start is its
``root`` DAG node's ``startedAt`` (``status.nodes[*]`` with ``templateName: root``), as the
reference reads it:

- ``latency_s`` = root start - the run's ``created_at`` (when the API server took it);
- ``duration_s`` = the workflow's ``finishedAt`` - root start.

Both sides are the cluster's clocks (the API server's and the workflow controller's), so a
controller whose clock is off does not skew them; the reference took the notebook's clock for the
submission. Their resolution is the second of those timestamps (RFC 3339 seconds).

Summary (the reference's ``dsp_run_latency`` / ``dsp_run_duration`` and their ``_min``, ``_max``,
``_median``, ``_p99``), plus ``*_degrade_speed_s_per_run``: the least-squares slope of the value
against the run's index (seconds per run: how much slower each further run is).
"""

from __future__ import annotations

import math

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.metrics import percentile
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.base import parse_timestamp

RUN_LABEL = "pipeline/runid"
SUCCEEDED = "Succeeded"


def _time(value, what):
    if not value or str(value).startswith("1970-01-01"):
        return None
    try:
        return parse_timestamp(value)
    except ValueError:
        raise HarnessOutputError("%s: %r is not an RFC 3339 time" % (what, value)) from None


def root_started_at(workflow):
    for node in ((workflow.get("status") or {}).get("nodes") or {}).values():
        if isinstance(node, dict) and node.get("templateName") == "root":
            return node.get("startedAt")
    return None


def slope(values):
    """Least-squares slope of ``values`` against their index (None with fewer than two)."""
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    if len(points) < 2:
        return None
    mean_x = math.fsum(x for x, _v in points) / len(points)
    mean_y = math.fsum(v for _x, v in points) / len(points)
    spread = math.fsum((x - mean_x) ** 2 for x, _v in points)
    return math.fsum((x - mean_x) * (v - mean_y) for x, v in points) / spread if spread else None


def _summary(prefix, values):
    present = sorted(v for v in values if v is not None)
    if not present:
        return {}
    result = {prefix + "_min": present[0], prefix + "_max": present[-1],
              prefix + "_median": percentile(present, 50), prefix + "_p99": percentile(present, 99)}
    speed = slope(values)
    if speed is not None:
        result[prefix + "_degrade_speed_s_per_run"] = speed
    return result


def run_records(runs, workflows):
    """One record per run (in submission order): name, ids, state, workflow, phase, times and the two values."""
    by_run = {}
    for workflow in workflows:
        run_id = ((workflow.get("metadata") or {}).get("labels") or {}).get(RUN_LABEL)
        if run_id:
            by_run[run_id] = workflow
    records = []
    for run in runs:
        name = run.get("display_name") or run.get("run_id")
        workflow = by_run.get(run.get("run_id"))
        created = _time(run.get("created_at"), "run %s created_at" % name)
        started = finished = None
        phase = None
        if workflow is not None:
            phase = (workflow.get("status") or {}).get("phase")
            started = _time(root_started_at(workflow), "workflow %s root startedAt" % workflow["metadata"]["name"])
            finished = _time((workflow.get("status") or {}).get("finishedAt"),
                             "workflow %s finishedAt" % workflow["metadata"]["name"])
        records.append({
            "name": name, "run_id": run.get("run_id"), "state": run.get("state"),
            "workflow": (workflow or {}).get("metadata", {}).get("name"), "phase": phase,
            "created_at": run.get("created_at"), "root_started_at": root_started_at(workflow or {}),
            "finished_at": ((workflow or {}).get("status") or {}).get("finishedAt"),
            "latency_s": started - created if started is not None and created is not None else None,
            "duration_s": finished - started if finished is not None and started is not None else None})
    return records


def dsp_run_result(runs, workflows):
    """``{"runs": [records], "result": {KPIs}}``; HarnessOutputError when no run was submitted."""
    if not runs:
        raise HarnessOutputError("pipelines run_kfp_notebook: no run was submitted (run_count 0?)")
    records = run_records(runs, workflows)
    result = {"run_count": len(records),
              "succeeded_runs": sum(1 for r in records if r["phase"] == SUCCEEDED),
              "failed_runs": sum(1 for r in records if r["phase"] in ("Failed", "Error"))}
    result.update(_summary("dsp_run_latency_s", [r["latency_s"] for r in records]))
    result.update(_summary("dsp_run_duration_s", [r["duration_s"] for r in records]))
    return {"runs": records, "result": result}
