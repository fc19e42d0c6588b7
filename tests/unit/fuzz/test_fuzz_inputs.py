"""Fuzz: what people and CI systems type (a pull request's comment, configuration, presets,
overrides) and what an earlier run left on disk (a matrix plan to resume). A result or one line."""

import os
import sys
import tempfile

import yaml
from hypothesis import given, settings, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_strategies import JSON, SCALARS, files_outside  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import (  # noqa: E402
    checks as config_checks,
)
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.config import launch_args  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as mx  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DEFAULT_CONFIG = cfg.default_config_path(REPO_ROOT)
# resolving and validating a whole configuration costs 0.1-1 s (the matrix is planned): fewer examples
WHOLE_CONFIG_EXAMPLES = 30


def one_line(exc):
    assert "\n" not in str(exc) and str(exc), repr(exc)


DIRECTIVE_LINES = st.lists(st.one_of(
    st.text(max_size=30),
    st.tuples(st.sampled_from(["/test", "/var", "/only", "/skip", "/nope", "/", "/test cpu_smoke", "/var a.b:"]),
              st.text(max_size=25)).map(" ".join),
    st.sampled_from(["/var x: [[[[", "/var x: .inf", "/var x: " + "[" * 3000 + "]" * 3000, "/var x: {a: 1}",
                     "/test j p1 p2", "/only prepare,test", "/var tests.benchmark.timeout_s: 1e400"]),
), max_size=6).map("\n".join)


@settings(max_examples=WHOLE_CONFIG_EXAMPLES)
@given(text=DIRECTIVE_LINES)
def test_ci_comment_arguments(text):
    try:
        parsed = launch_args.parse(text, "comment")
    except PerfscaleError as exc:
        one_line(exc)
        return
    # what a comment sets goes through the configuration as -e overrides do
    try:
        resolved = cfg.resolve_config(DEFAULT_CONFIG, presets=parsed.presets, overrides=parsed.overrides)
        config_checks.validate_config(resolved.config)
    except PerfscaleError as exc:
        one_line(exc)


KEYS = st.sampled_from(["tests.benchmark.timeout_s", "tests.benchmark.parallelism", "tests.benchmark.matrix.factors",
                        "tests.benchmark.enabled", "export.backend", "regression.method", "regression.options",
                        "export_artifacts.parallel", "postprocess.workload", "x.y", "tests", "ci_presets.p",
                        "tests.benchmark.matrix.factors.size"])
OVERRIDES = st.one_of(st.dictionaries(KEYS, JSON, max_size=3), st.text(max_size=60), JSON,
                      st.dictionaries(KEYS, JSON, max_size=3).map(yaml.safe_dump))


PRESETS = st.one_of(st.none(), st.text(max_size=20), st.lists(st.text(max_size=8), max_size=2),
                    st.sampled_from(["cpu_smoke", "cpu_smoke,nope"]))


@settings(max_examples=WHOLE_CONFIG_EXAMPLES)
@given(overrides=OVERRIDES, presets=PRESETS)
def test_configuration_presets_and_overrides(overrides, presets):
    try:
        resolved = cfg.resolve_config(DEFAULT_CONFIG, presets=presets, overrides=overrides)
        config_checks.validate_config(resolved.config)
    except PerfscaleError as exc:
        one_line(exc)


DOCUMENTS = st.one_of(
    st.dictionaries(st.sampled_from(["tests", "ci_presets", "export", "regression", "extra"]), JSON, max_size=3)
    .map(yaml.safe_dump),
    st.text(max_size=80),
    st.sampled_from(["a: " + "[" * 4000 + "]" * 4000, "a: .nan", "ci_presets: {p: {extends: p}}", "a: &x [*x]",
                     "a: 1\na: 2", "- 1\n- 2", "ci_presets: [1]", "!!python/object:os.system {}"]),
)


@settings(max_examples=WHOLE_CONFIG_EXAMPLES)
@given(document=DOCUMENTS, presets=st.one_of(st.none(), st.sampled_from(["p", "p,q"])))
def test_configuration_documents(document, presets):
    with tempfile.TemporaryDirectory() as area:
        path = os.path.join(area, "config.yaml")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(document)
        try:
            resolved = cfg.resolve_config(path, presets=presets)
            config_checks.validate_config(resolved.config)
        except PerfscaleError as exc:
            one_line(exc)


HARNESS = harnesses.get_harness("perf_indicator")
PLANS = st.one_of(
    st.fixed_dictionaries({"fingerprint": st.one_of(st.just("SAME"), st.text(max_size=5)),
                           "points": st.one_of(st.lists(st.fixed_dictionaries({
                               "name": st.one_of(st.just("matmul_16"), st.text(max_size=5)),
                               "directory": st.one_of(st.just("000__matmul_16"), st.text(max_size=12), SCALARS,
                                                      st.sampled_from(["..", "/tmp", "000__matmul_16/../..", ""]))}),
                               max_size=2), JSON)}).map(yaml.safe_dump),
    st.text(max_size=60), st.just("points: " + "[" * 4000 + "]" * 4000),
)


@given(plan_text=PLANS)
def test_matrix_plans_on_resume(plan_text):
    with tempfile.TemporaryDirectory() as area:
        parent = os.path.join(area, "run")
        os.makedirs(parent)
        points = mx.plan_points([{"indicator": "matmul", "size": 16}], HARNESS, {"indicators": {}}, "{indicator}_{size}")
        matrix_dir, _resumed = mx.prepare_matrix_dir(parent, points)
        plan_text = plan_text.replace("SAME", mx.fingerprint(points))
        with open(os.path.join(matrix_dir, mx.MATRIX_FILE), "w", encoding="utf-8") as handle:
            handle.write(plan_text)
        again = mx.plan_points([{"indicator": "matmul", "size": 16}], HARNESS, {"indicators": {}}, "{indicator}_{size}")
        try:
            directory, _resumed = mx.prepare_matrix_dir(parent, again)
        except PerfscaleError as exc:
            one_line(exc)
        else:
            assert os.path.realpath(directory).startswith(os.path.realpath(parent) + os.sep)
            assert all(os.path.realpath(p.directory).startswith(os.path.realpath(directory) + os.sep) for p in again)
        assert files_outside(parent, area) == []
