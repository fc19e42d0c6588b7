# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What post-processing says about the plan of a run's matrices: the points skipped before deploy (they
could not fit or be placed: not failures), the estimate beside what the points took, and the point
records (each finished point's wall time) that later estimates rest on.

Everything is read from the tree the matrix runner wrote: ``progress.json`` (``infeasible_points``) and
``cost_estimate.json`` in a matrix directory, ``point.json`` (``duration_s``), ``settings.yaml`` and
``capacity_plan.json`` in a point directory, each by the tree's bounded reader (``bounded_input.read_file``:
inside the results directory, a regular file, bounded, finite numbers). A file that cannot be read is left
out, never an error.
"""

from __future__ import annotations

import glob
import os

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import estimate as estimate_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import requests as capacity_requests

PROGRESS_FILE = "progress.json"
POINT_FILE = "point.json"
MATRIX_FILE = "matrix.yaml"
COMPARISON_FILE = "cost_vs_actual.json"
# matrix directories sit directly in the run directory or one level below (a flow's, a host's)
MATRIX_GLOBS = ("*/%s", "*/*/%s")


def _read_json(path, results_dir):
    """The JSON document of a file of the tree under ``results_dir``, or None when it cannot be read."""
    try:
        return bounded_input.read_json_file(path, results_dir, bounded_input.MAX_TREE_FILE_BYTES)
    except ValueError:   # bounded_input's refusals (missing, a link out, not a regular file, too big, not JSON)
        return None


def matrix_dirs(results_dir, marker):
    found = set()
    for pattern in MATRIX_GLOBS:
        for path in glob.glob(os.path.join(results_dir, pattern % marker)):
            if "_previous" not in path.split(os.sep):
                found.add(os.path.dirname(path))
    return sorted(found)


def matrix_name(matrix_dir):
    """A matrix directory's name without its index (``011__llm_serving`` -> ``llm_serving``)."""
    base = os.path.basename(matrix_dir)
    return base.split("__", 1)[1] if "__" in base else base


def skipped_points(results_dir):
    """``[{"matrix", "name", "reason"}]`` of the points skipped before deploy."""
    skipped = []
    for directory in matrix_dirs(results_dir, PROGRESS_FILE):
        progress = _read_json(os.path.join(directory, PROGRESS_FILE), results_dir)
        progress = progress if isinstance(progress, dict) else {}
        for entry in progress.get("infeasible_points") or ():
            if isinstance(entry, dict):
                skipped.append({"matrix": matrix_name(directory), "name": entry.get("name"), "reason": entry.get("reason")})
    return skipped


def _point_dirs(matrix_dir):
    return [os.path.dirname(p) for p in sorted(glob.glob(os.path.join(matrix_dir, "*", POINT_FILE)))]


def comparisons(results_dir):
    """For each matrix with a ``cost_estimate.json``: the estimate beside what its points took."""
    found = []
    for directory in matrix_dirs(results_dir, estimate_lib.ESTIMATE_FILE):
        estimated = _read_json(os.path.join(directory, estimate_lib.ESTIMATE_FILE), results_dir)
        if not isinstance(estimated, dict):
            continue
        actual = {}
        for point_dir in _point_dirs(directory):
            point = _read_json(os.path.join(point_dir, POINT_FILE), results_dir)
            point = point if isinstance(point, dict) else {}
            if isinstance(point.get("duration_s"), (int, float)) and point.get("name"):
                actual[point["name"]] = (float(point["duration_s"]), None)
        compared = estimate_lib.compare(estimated, actual)
        compared["matrix"] = matrix_name(directory)
        compared["estimated_totals"] = estimated.get("totals")
        found.append(compared)
    return found


def point_records(entries, workload, run_id=None):
    """The point records (``estimate.point_record``) of the finished points among ``entries`` (the parsed
    test roots: ``test_dir``, ``uuid``, ``exit_code``, ``settings``)."""
    records = []
    for entry in entries:
        root = getattr(entry, "results_dir", None) or entry.test_dir
        point = _read_json(os.path.join(entry.test_dir, POINT_FILE), root)
        if not isinstance(point, dict) or not isinstance(point.get("duration_s"), (int, float)) or not entry.uuid:
            continue
        plan = _read_json(os.path.join(entry.test_dir, capacity_requests.PLAN_FILE), root)
        plan = plan if isinstance(plan, dict) else {}
        records.append(estimate_lib.point_record(
            workload, matrix_name(os.path.dirname(entry.test_dir)), point.get("name") or os.path.basename(entry.test_dir),
            entry.settings, point["duration_s"], entry.exit_code if entry.exit_code is not None else -1, entry.uuid,
            point.get("ended") or point.get("started"), model=plan.get("model"), gpus=plan.get("gpus", 0), run_id=run_id))
    return [r for r in records if r["@timestamp"]]


def notes(results_dir):
    """The lines every report of the run says about its plan, and the comparisons to keep."""
    lines = []
    skipped = skipped_points(results_dir)
    if skipped:
        lines.append("%d point(s) skipped before deploy, not failed (they cannot fit or be placed): %s" % (
            len(skipped), "; ".join("%s (%s)" % (s["name"], s["reason"]) for s in skipped[:5])
            + ("; ..." if len(skipped) > 5 else "")))
    compared = comparisons(results_dir)
    for entry in compared:
        lines.append("matrix %s: %s" % (entry["matrix"], entry["line"]))
    return lines, skipped, compared
