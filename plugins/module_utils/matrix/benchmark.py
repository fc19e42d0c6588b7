# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark job: plan the ``tests.benchmark`` matrix, then run it.

``plan_benchmark`` validates the section (``config_schema``), expands the
matrix and has the configured harness check every point before anything runs.
``run_benchmark`` runs the plan with the configured executor (or only lists it
in rehearsal mode).
"""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.config import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils import executors
from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import MatrixError

DEFAULT_KEY = "tests.benchmark"
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
    section = config_schema.read_section(config, key)
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


def rehearse(plan):
    """What would run: one line per point with its directory name and settings."""
    digits = artifacts.index_digits(len(plan.points))
    return [{"directory": "%0*d__%s" % (digits, p.index, p.name), "settings": p.settings,
             "command": p.command.argv} for p in plan.points]


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


def run_benchmark(plan, parent_dir, on_progress=None, env=None, controller_alive=None, connections=None):
    """Run the plan in ``parent_dir``; ``controller_alive`` (a callable) stops it when the
    process that started it is gone (see ``matrix.MatrixRunner``); ``connections``: cluster
    role -> connection options, for an executor that runs points on a cluster."""
    section = plan.section
    matrix_dir, resumed = matrix_lib.prepare_matrix_dir(parent_dir, plan.points, name=section["name"], spec=section)
    executor = executors.create_executor(section["executor"], section=section, base_env=env, connections=connections)
    if not executor.runs_points:
        # another engine runs the matrix: this one writes what it runs (the points not finished
        # yet), and with some executors' settings has it run there and brings the points back
        pending = [p for p in plan.points if matrix_lib.read_exit_code(p.directory) != 0] or plan.points
        rendered = executor.render(pending, matrix_dir)
        summary = executor.run_rendered(pending, matrix_dir, plan.harness, rendered)
        if summary is None:
            summary = {"total": len(pending), "done": 0, "succeeded": 0, "failed": 0, "skipped": 0,
                       "not_run": len(pending), "not_run_points": [p.name for p in pending], "failed_points": [],
                       "rendered_only": True, "abandoned": False}
        skipped = len(plan.points) - len(pending)
        summary.update(total=len(plan.points), skipped=summary["skipped"] + skipped, resumed=resumed,
                       matrix_dir=os.path.abspath(matrix_dir), rendered=rendered)
        artifacts.write_json_atomic(os.path.join(matrix_dir, matrix_lib.PROGRESS_FILE), summary)
        return summary
    try:
        with artifacts.ExclusiveLock(os.path.join(matrix_dir, MATRIX_LOCK_FILE), "matrix directory %s" % matrix_dir):
            runner = matrix_lib.MatrixRunner(matrix_dir, plan.points, timeout=section["timeout_s"],
                                             harness=plan.harness, executor=executor,
                                             parallelism=section["parallelism"],
                                             stop_on_error=section["stop_on_error"], on_progress=on_progress,
                                             controller_alive=controller_alive, section=section)
            summary = runner.run()
    finally:
        executor.close()
    summary["resumed"] = resumed
    summary["matrix_dir"] = os.path.abspath(matrix_dir)
    return summary
