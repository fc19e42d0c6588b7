# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark job: plan the ``tests.benchmark`` matrix, then run it.

``plan_benchmark`` validates the section (``section.py``), expands the
matrix and has the configured harness check every point before anything runs.
``run_benchmark`` runs the plan with the configured executor (or only lists it
in rehearsal mode): whichever it is, the executor gets the matrix (``executor.run``,
``executors/base.py``) under the matrix directory's lock, and is closed after.
"""

from __future__ import annotations

import copy
import os

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import section as postprocess_section
from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import section as benchmark_section
from ansible_collections.perfscale.topsail.plugins.module_utils import executors
from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import MatrixError
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import estimate as estimate_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import requests as capacity_requests
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import toolbox_flow

DEFAULT_KEY = benchmark_section.DEFAULT_KEY
# what post-processing leaves in a plots directory (postprocess.SUMMARY, reports.INDEX)
SUMMARY_FILE = "summary.json"
INDEX_FILE = "reports_index.html"
MATRIX_LOCK_FILE = ".perfscale-matrix.lock"


class BenchmarkPlan:
    def __init__(self, section, harness, points):
        self.section = section
        self.harness = harness
        self.points = points


def plan_benchmark(config, key=DEFAULT_KEY, python=None):
    """Validate the section and plan every point; raises ConfigError or MatrixError."""
    section = benchmark_section.read(config, key)
    harness = harnesses.get_harness(section["harness"])
    matrix = section["matrix"]
    known = harness.known_settings(section)
    settings = matrix_lib.expand_matrix(
        matrix["factors"], matrix["common_settings"], matrix["include"], matrix["exclude"],
        known_settings=None if known is None else set(known) | set(section["deployment_factors"]),
    )
    if not settings:
        raise MatrixError("%s.matrix expands to no point (no factors, or everything excluded)" % key)
    points = matrix_lib.plan_points(settings, harness, section, section["name_template"], python=python, config=config)
    return BenchmarkPlan(section, harness, points)


def rehearse(plan, capacity=None, estimate=None):
    """What would run: one entry per point with its directory name and settings, and with a capacity
    plan (``plan_capacity``) and an ``estimate`` (``estimate_cost``) what each asks and will cost."""
    digits = artifacts.index_digits(len(plan.points))
    estimated = {p["name"]: p for p in (estimate or {}).get("points") or ()}
    listing = []
    for p in plan.points:
        entry = {"directory": "%0*d__%s" % (digits, p.index, p.name), "settings": p.settings, "command": p.command.argv}
        verdict = (capacity or {}).get(p.name)
        if verdict is not None:
            entry.update(feasible=verdict["feasible"], skip=verdict["skip"], gpus=verdict["gpus"],
                         capacity=verdict["reason"])
        if p.name in estimated:
            entry.update(estimate_s=estimated[p.name].get("estimate_s"), estimate_basis=estimated[p.name].get("basis"))
        listing.append(entry)
    return listing


def rehearsal_line(entry):
    """One console line of a rehearsed point."""
    parts = ["rehearsal: %s %s" % (entry["directory"], entry["settings"])]
    if "skip" in entry:
        parts.append("%s, %d GPU(s): %s" % ("SKIPPED before deploy" if entry["skip"] else
                                            ("feasible" if entry["feasible"] else "infeasible (not skipped)"),
                                            entry["gpus"], entry["capacity"]))
    if "estimate_basis" in entry:
        parts.append("estimate %s (%s)" % ("%.0f s" % entry["estimate_s"] if entry["estimate_s"] is not None else "-",
                                           entry["estimate_basis"]))
    return " | ".join(parts)


def capacity_options(plan):
    return plan.section.get("capacity") or {}


def point_config(config, plan, point):
    """The configuration a point's commands see (its settings written under the harness's settings_key)."""
    settings_key = (plan.section.get("toolbox_flow") or {}).get("settings_key")
    if not settings_key:
        return config
    factors = plan.section.get("deployment_factors") or ()
    overrides = toolbox_flow.point_overrides(settings_key, {k: v for k, v in point.settings.items() if k not in factors})
    return config_lib.apply_overrides(copy.deepcopy(config), overrides, source="point '%s'" % point.name)


def plan_capacity(plan, config, nodes=None, model_loader=None):
    """{point name: capacity verdict} of every point when ``<section>.capacity.enabled`` (else None):
    what it asks (GPUs, memory per GPU) and whether it can fit and be placed on ``nodes`` (the
    cluster's nodes as ``kube/environment.node_summary`` gives them; None: not checked)."""
    options = capacity_options(plan)
    if not options.get("enabled"):
        return None
    settings_key = (plan.section.get("toolbox_flow") or {}).get("settings_key") or "tests.benchmark.settings"
    extra = {"model_loader": model_loader} if model_loader else {}
    planner = capacity_requests.PointPlanner(options, settings_key, nodes, **extra)
    return {p.name: planner.plan_point(point_config(config, plan, p), p.settings) for p in plan.points}


def estimate_cost_from_store(plan, capacity, config, environ=None):
    """``estimate_cost`` with the configuration's results store (``export``); a store that cannot be read
    gives an estimate without history, which says why."""
    from ansible_collections.perfscale.topsail.plugins.module_utils import stores
    from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import StoreError

    workload = postprocess_section.read(config)["workload"]
    store = None
    try:
        store = stores.open_store(export_lib.read_export(config, environ), config, environ)
        result = estimate_cost(plan, capacity, store, workload)
    except StoreError as exc:
        result = estimate_cost(plan, capacity, _EmptyHistory(), workload)
        result["history_unavailable"] = str(exc)
        result["line"] += " (the results store could not be read: %s)" % exc
    finally:
        if store is not None:
            store.close()
    return result


class _EmptyHistory:
    @staticmethod
    def history_batch(queries, ignore_keys=()):
        return [[] for _query in queries]


def estimate_cost(plan, capacity, store, workload):
    """What the matrix will cost (``capacity/estimate.py``) from the points of earlier runs in ``store``
    (one batch of history look-ups: one per model the points serve)."""
    capacity = capacity or {}
    points = []
    for p in plan.points:
        verdict = capacity.get(p.name) or {}
        points.append({"name": p.name, "settings": p.settings, "model": verdict.get("model"),
                       "gpus": verdict.get("gpus", 0), "skip": verdict.get("skip", False), "reason": verdict.get("reason")})
    models = sorted({point["model"] for point in points}, key=str)
    answers = store.history_batch([estimate_lib.history_query(workload, plan.section["name"], m) for m in models],
                                  ignore_keys=estimate_lib.POINT_DETAIL_LABELS)
    width = matrix_lib.parse_parallelism(plan.section.get("parallelism"))[1]
    result = estimate_lib.estimate_matrix(points, dict(zip(models, answers)), width)
    result.update(workload=workload, matrix=plan.section["name"])
    result["line"] = estimate_lib.summary_line(result)
    return result


def status(plan, parent_dir, plots_pattern="*__plots"):
    """What is left to do in ``parent_dir`` (read only): the matrix directory of this plan if
    one exists, the points still to run, and the newest plots directory when it post-processed
    every finished point (``postprocessed``)."""
    found = matrix_lib.find_matrix_dir(parent_dir, plan.points, plan.section["name"]) if parent_dir else None
    state = {"matrix_dir": None, "total": len(plan.points), "pending": len(plan.points), "postprocessed": False,
             "plots_dir": None, "index": None}
    if found is None:
        return state
    matrix_dir, directories = found
    finished = [os.path.join(directories[p.name], artifacts.EXIT_CODE_FILE) for p in plan.points
                if matrix_lib.read_exit_code(directories[p.name]) == 0]
    state.update(matrix_dir=matrix_dir, pending=len(plan.points) - len(finished))
    plots = artifacts.find_artifact_dirs(parent_dir, plots_pattern)
    if plots and state["pending"] == 0:
        newest = plots[-1]
        summary = os.path.join(newest, SUMMARY_FILE)
        if os.path.exists(summary) and os.path.getmtime(summary) >= max(os.path.getmtime(f) for f in finished):
            state.update(postprocessed=True, plots_dir=newest, index=os.path.join(newest, INDEX_FILE))
    return state


def record_capacity(plan, matrix_dir, capacity, estimate=None):
    """Each point's capacity verdict in its directory (``capacity_plan.json``; ``SKIPPED`` with the reason
    for a point that will not run), the matrix's cost estimate beside ``matrix.yaml``; returns
    {point name: reason} of the points to skip."""
    skip = {}
    for point in plan.points:
        verdict = (capacity or {}).get(point.name)
        if verdict is None:
            continue
        artifacts.write_json_atomic(os.path.join(point.directory, capacity_requests.PLAN_FILE), verdict)
        skipped = os.path.join(point.directory, capacity_requests.SKIPPED_FILE)
        if verdict["skip"] and matrix_lib.read_exit_code(point.directory) != 0:
            artifacts.write_text_atomic(skipped, "skipped before deploy: %s\n" % verdict["reason"])
            skip[point.name] = verdict["reason"]
        elif os.path.exists(skipped):
            os.unlink(skipped)  # planned to run now (the plan or the cluster changed)
    if estimate is not None:
        artifacts.write_json_atomic(os.path.join(matrix_dir, estimate_lib.ESTIMATE_FILE), estimate)
    return skip


def run_benchmark(plan, parent_dir, on_progress=None, env=None, controller_alive=None, connections=None, capacity=None,
                  estimate=None):
    """Run the plan in ``parent_dir``; ``controller_alive`` (a callable) stops it when the
    process that started it is gone (see ``matrix.MatrixRunner``); ``connections``: cluster
    role -> connection options, for an executor that runs points on a cluster; ``capacity``: the
    points' capacity verdicts (``plan_capacity``: those to skip do not run), ``estimate``: what the
    matrix was estimated to cost (kept for the comparison after the run)."""
    section = plan.section
    matrix_dir, resumed = matrix_lib.prepare_matrix_dir(parent_dir, plan.points, name=section["name"], spec=section)
    skip = record_capacity(plan, matrix_dir, capacity, estimate)
    executor = executors.create_executor(section["executor"], section=section, base_env=env, connections=connections)
    matrix = matrix_lib.MatrixRun.from_section(matrix_dir, plan.points, plan.harness, section, skip=skip,
                                               on_progress=on_progress, controller_alive=controller_alive,
                                               resumed=resumed)
    try:
        with artifacts.ExclusiveLock(os.path.join(matrix_dir, MATRIX_LOCK_FILE), "matrix directory %s" % matrix_dir):
            summary = executor.run(matrix)
    finally:
        executor.close()
    summary["resumed"] = resumed
    summary["matrix_dir"] = os.path.abspath(matrix_dir)
    return summary
