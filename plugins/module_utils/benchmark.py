# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``tests.benchmark`` configuration section and the benchmark job.

``plan_benchmark`` validates the section (pydantic: a misspelt key fails with
the section and the key named), expands the matrix and checks every point
before anything runs. ``run_benchmark`` runs it (or only lists it in
rehearsal mode).
"""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.module_utils import config as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils import matrix as matrix_lib

DEFAULT_KEY = "tests.benchmark"


def benchmark_model():
    """The pydantic model of the section (built on demand: pydantic is imported lazily)."""
    from typing import Any, Dict, List, Optional, Union

    import pydantic

    strict = pydantic.ConfigDict(extra="forbid")

    class Matrix(pydantic.BaseModel):
        model_config = strict
        factors: Dict[str, Any] = {}
        common_settings: Dict[str, Any] = {}
        include: List[Dict[str, Any]] = []
        exclude: List[Dict[str, Any]] = []

    class Indicator(pydantic.BaseModel):
        model_config = strict
        command: Union[List[Union[str, int, float]], str]
        parameters: Optional[List[str]] = None
        description: Optional[str] = None

    class Benchmark(pydantic.BaseModel):
        model_config = strict
        enabled: bool = True
        name: str = "matbenchmarking"
        rehearsal: bool = False
        parallelism: Union[str, Dict[str, int]] = "sequential"
        stop_on_error: bool = False
        fail_on_point_failure: bool = True
        timeout_s: float = pydantic.Field(default=600, gt=0)
        name_template: Optional[str] = None
        matrix: Matrix = Matrix()
        indicators: Dict[str, Indicator] = {}

    return Benchmark


class BenchmarkPlan:
    def __init__(self, section, points):
        self.section = section
        self.points = points


def plan_benchmark(config, key=DEFAULT_KEY, python=None):
    """Validate the section and plan every point; raises ConfigError or MatrixError."""
    section = config_lib.validate_section(config, key, benchmark_model()).model_dump()
    matrix_lib.parse_parallelism(section["parallelism"])
    matrix = section["matrix"]
    indicators = dict(section["indicators"])
    settings = matrix_lib.expand_matrix(
        matrix["factors"], matrix["common_settings"], matrix["include"], matrix["exclude"],
        known_settings=matrix_lib.known_setting_names(indicators),
    )
    if not settings:
        raise matrix_lib.MatrixError("%s.matrix expands to no point (no factors, or everything excluded)" % key)
    points = matrix_lib.plan_points(settings, indicators, section["name_template"], python=python)
    return BenchmarkPlan(section, points)


def rehearse(plan):
    """What would run: one line per point with its directory name and settings."""
    digits = artifacts_digits(len(plan.points))
    return [{"directory": "%0*d__%s" % (digits, p.index, p.name), "settings": p.settings,
             "command": p.command} for p in plan.points]


def artifacts_digits(count):
    return max(3, len(str(max(count - 1, 0))))


def run_benchmark(plan, parent_dir, on_progress=None, env=None):
    section = plan.section
    matrix_dir, resumed = matrix_lib.prepare_matrix_dir(parent_dir, plan.points, name=section["name"], spec=section)
    runner = matrix_lib.MatrixRunner(matrix_dir, plan.points, timeout=section["timeout_s"],
                                     parallelism=section["parallelism"], stop_on_error=section["stop_on_error"],
                                     on_progress=on_progress, env=env)
    summary = runner.run()
    summary["resumed"] = resumed
    summary["matrix_dir"] = os.path.abspath(matrix_dir)
    return summary
