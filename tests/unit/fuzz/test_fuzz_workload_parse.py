"""Fuzz: what the built-in workloads read from a results tree (a tree from a bucket or a colleague's
archive): a point's output.json / result.json and point.json, the host's environment capture, the
run's run.json, as any JSON - shaped like what the workloads expect, with any value in each place.

Whatever the files hold, every test is parsed (its results, with warnings for what was ignored),
never an exception; the parts the workload base reads have the shape it promises."""

import json
import os
import sys
import tempfile

import pytest
from hypothesis import given, settings, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_strategies import JSON  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree  # noqa: E402

# a tree written and parsed per example, for each of the three workloads
PARSE_EXAMPLES = 60


def shaped(keys):
    """Any JSON, or a mapping with some of ``keys`` (their values any JSON)."""
    return JSON | st.fixed_dictionaries({}, optional={key: JSON for key in keys})


RESULT = JSON | st.fixed_dictionaries({}, optional={key: JSON for key in (
    "stages", "warnings", "losses", "request_fields_dropped", "headline_stage", "rate", "time_cv", "run_id")})
DOCUMENT = JSON | st.fixed_dictionaries({}, optional={
    "name": JSON, "framework": JSON, "@parameters": shaped(["model", "hyper_parameters", "device", "size"]),
    "@result": RESULT, "environment": shaped(["cpu_count", "device_name"]), "overall_score": JSON})
ENVIRONMENT = shaped(["cpu", "os", "memory", "python", "gpus", "collection", "load_average"]) | \
    st.fixed_dictionaries({}, optional={"cpu": shaped(["model", "count"]), "os": shaped(["hostname", "pretty_name"]),
                                        "collection": shaped(["version", "git_commit"]),
                                        "gpus": st.lists(shaped(["product_name", "name", "mig", "driver_version"]),
                                                         max_size=3)})
TREE = st.fixed_dictionaries({
    "output.json": DOCUMENT, "result.json": DOCUMENT, "point.json": shaped(["duration_s", "started", "ended"]),
    "environment.json": ENVIRONMENT, "run.json": shaped(["run_id"]),
}, optional={"FAILURE": st.text(max_size=20)})


def write(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(content if isinstance(content, str) else json.dumps(content))


@pytest.mark.parametrize("name", ["perf_indicators", "llm_load", "fine_tuning"])
@settings(max_examples=PARSE_EXAMPLES)
@given(files=TREE, present=st.sets(st.sampled_from(
    ["output.json", "result.json", "point.json", "environment.json", "run.json"])))
def test_a_built_in_workload_parses_any_tree_without_an_exception(name, files, present):
    workload = workload_lib.load_workload(name)
    with tempfile.TemporaryDirectory() as root:
        run = os.path.join(root, "run-1")
        point = os.path.join(run, "002__matbenchmarking", "000__p")
        write(os.path.join(point, "settings.yaml"), "size: 64\n")
        if "environment.json" in present:
            write(os.path.join(run, "001__host__capture_environment", "environment.json"), files["environment.json"])
        if "run.json" in present:
            write(os.path.join(run, "run.json"), files["run.json"])
        for file_name in ("output.json", "result.json", "point.json"):
            if file_name in present:
                write(os.path.join(point, file_name), files[file_name])
        if "FAILURE" in files:
            write(os.path.join(point, "FAILURE"), files["FAILURE"])
        write(os.path.join(point, "exit_code"), "3\n" if "FAILURE" in files else "0\n")
        [entry], _warnings = results_tree.parse_results(root, workload, environ={}, write_cache=False)
    results = entry.results
    assert isinstance(results["parameters"], dict)
    assert all(isinstance(line, str) and "\n" not in line for line in entry.warnings)
    assert isinstance(results.get("host", {}), dict)
    for key in ("stages", "warnings", "request_fields_dropped", "losses"):
        assert isinstance(results.get(key, []), list)
    assert results["test_path"] == entry.relative and isinstance(results["run_id"], (str, type(None)))
