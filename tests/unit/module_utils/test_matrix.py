import datetime
import json
import os
import shutil
import sys
import threading
import time

import pytest
import yaml

from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg
from ansible_collections.perfscale.topsail.plugins.module_utils import executors
from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as mx
from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError, HarnessOutputError, MatrixError, RunLockError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import base as executor_base
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base as harness_base

HARNESS = harnesses.get_harness("perf_indicator")


def plan_points(points, indicators=None, name_template=None):
    return mx.plan_points(points, HARNESS, {"indicators": indicators or {}}, name_template)


SCRIPTED = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "indicators", "scripted.py"))
CUSTOM = {"scripted": {"command": [sys.executable, SCRIPTED], "parameters": None}}


# -- expansion ---------------------------------------------------------------

def test_cartesian_product_in_document_order_with_common_settings():
    points = mx.expand_matrix({"a": [1, 2], "b": ["x", "y"], "c": 7}, {"reps": 3, "a": 99})
    assert points == [
        {"a": 1, "b": "x", "c": 7, "reps": 3}, {"a": 1, "b": "y", "c": 7, "reps": 3},
        {"a": 2, "b": "x", "c": 7, "reps": 3}, {"a": 2, "b": "y", "c": 7, "reps": 3},
    ]


def test_empty_factor_list_is_an_error():
    with pytest.raises(MatrixError, match="matrix factor 'size' has an empty list of values"):
        mx.expand_matrix({"size": []})


def test_exclude_drops_matching_combinations_partially_matched():
    points = mx.expand_matrix({"a": [1, 2], "b": ["x", "y"]}, exclude=[{"a": 2, "b": "y"}, {"b": "z"}])
    assert points == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}]
    assert mx.expand_matrix({"a": [1, 2], "b": ["x", "y"]}, exclude=[{"a": 1}]) == [{"a": 2, "b": "x"}, {"a": 2, "b": "y"}]


def test_exclude_naming_an_unknown_factor_is_an_error():
    with pytest.raises(MatrixError, match=r"matrix exclude #1 names unknown factor 'bb' \(did you mean 'b'\?\); known: a, b"):
        mx.expand_matrix({"a": [1], "b": [2]}, exclude=[{"bb": 2}])


def test_include_adds_keys_to_matching_combinations_without_overwriting_factors():
    points = mx.expand_matrix({"a": [1, 2], "b": ["x", "y"]}, include=[{"a": 1, "extra": "e"}, {"b": "y", "a": 2, "more": 1}])
    assert points == [{"a": 1, "b": "x", "extra": "e"}, {"a": 1, "b": "y", "extra": "e"},
                      {"a": 2, "b": "x"}, {"a": 2, "b": "y", "more": 1}]


def test_include_without_match_is_a_new_combination_and_later_includes_do_not_match_it():
    points = mx.expand_matrix({"a": [1]}, {"common": 0},
                              include=[{"a": 5, "z": 1}, {"a": 5, "z": 2}, {"note": "all"}])
    assert points == [{"a": 1, "note": "all", "common": 0}, {"a": 5, "z": 1, "common": 0}, {"a": 5, "z": 2, "common": 0}]


def test_include_only_matrix_is_its_include_list():
    assert mx.expand_matrix({}, include=[{"x": 1}, {"x": 2}]) == [{"x": 1}, {"x": 2}]


def test_include_naming_an_unknown_setting_is_an_error():
    with pytest.raises(MatrixError, match=r"matrix include #2 names unknown setting 'indicater' \(did you mean 'indicator'\?\)"):
        mx.expand_matrix({"indicator": ["matmul"]}, include=[{"size": 3}, {"indicater": "conv2d"}],
                         known_settings={"indicator", "size"})


def test_point_names_from_varying_settings_and_from_templates():
    points = mx.expand_matrix({"indicator": "matmul", "size": [8, 16], "dtype": ["float32"]},
                              include=[{"indicator": "conv2d", "height": 4}])
    keys = mx.varying_keys(points)
    # dtype varies too: the conv2d point does not set it
    assert keys == ["indicator", "size", "dtype", "height"]
    assert [mx.point_name(p, keys) for p in points] == [
        "indicator=matmul_size=8_dtype=float32", "indicator=matmul_size=16_dtype=float32", "indicator=conv2d_height=4"]
    template = "{indicator}_{dtype}_n{size:05d}_h{height}"
    assert [mx.point_name(p, keys, template) for p in points] == [
        "matmul_float32_n00008", "matmul_float32_n00016", "conv2d_h4"]
    assert mx.point_name({"path": "a/b c"}, [], "{path}") == "a_b_c"


def test_plan_refuses_duplicate_names_and_unused_template_fields():
    points = mx.expand_matrix({"indicator": "matmul", "size": [8, 16]})
    with pytest.raises(MatrixError, match=r"points #1 and #2 are both named 'matmul'"):
        plan_points(points, name_template="{indicator}")
    with pytest.raises(MatrixError, match=r"name_template '\{indicator\}_\{szie\}' uses szie, which no point sets"):
        plan_points(points, name_template="{indicator}_{szie}")


@pytest.mark.parametrize("settings,message", [
    ({"size": 8}, "has no 'indicator' setting"),
    ({"indicator": "matmull"}, "unknown indicator 'matmull' (did you mean 'matmul'?); known indicators: conv1d, conv2d, matmul"),
    ({"indicator": "matmul", "size": -4}, "point 'point': size must be a positive integer, got -4"),
    ({"indicator": "conv2d", "size": 4}, "indicator conv2d has no parameter 'size'"),
])
def test_bad_points_are_refused_before_anything_runs(settings, message):
    with pytest.raises(MatrixError) as error:
        plan_points([settings])
    assert message in str(error.value)


def test_custom_indicator_command_and_parameters():
    indicators = {"mine": {"command": ["python3", "my.py", "--size={size}"], "parameters": ["size"]}}
    planned = plan_points([{"indicator": "mine", "size": 4}], indicators)
    assert planned[0].command.argv == ["python3", "my.py", "--size=4"]
    assert json.loads(planned[0].command.env["PERFSCALE_SETTINGS"]) == {"indicator": "mine", "size": 4}
    with pytest.raises(MatrixError, match=r"indicator mine has no parameter other; its parameters: size"):
        plan_points([{"indicator": "mine", "size": 4, "other": 1}], indicators)
    with pytest.raises(MatrixError, match=r"command uses \{missing\}"):
        plan_points([{"indicator": "mine2"}], {"mine2": {"command": ["x", "{missing}"]}})
    with pytest.raises(MatrixError, match="shadows a built-in indicator"):
        plan_points([{"indicator": "matmul"}], {"matmul": {"command": ["x"]}})


@pytest.mark.parametrize("value,expected", [
    (None, ("sequential", 1)), ("sequential", ("sequential", 1)), ("barrier:3", ("barrier", 3)),
    ("sliding: 2", ("sliding", 2)), ({"sliding": 4}, ("sliding", 4)),
])
def test_parallelism_policies(value, expected):
    assert mx.parse_parallelism(value) == expected


@pytest.mark.parametrize("value", ["parallel", "barrier:0", "sliding:x", {"window": 2}, 3])
def test_bad_parallelism_is_refused(value):
    with pytest.raises(MatrixError, match="parallelism"):
        mx.parse_parallelism(value)


# -- running -------------------------------------------------------------------

def plan(points_settings, template="{name}"):
    return plan_points([dict(s, indicator="scripted") for s in points_settings], CUSTOM, template)


def run(tmp_path, points, parallelism="sequential", stop_on_error=False, timeout=30, progress=None):
    matrix_dir, resumed = mx.prepare_matrix_dir(str(tmp_path), points)
    runner = mx.MatrixRunner(matrix_dir, points, timeout, HARNESS, executors.create_executor("local"), parallelism,
                             stop_on_error, on_progress=progress)
    return runner.run(), matrix_dir, resumed


def intervals(points):
    spans = []
    for point in points:
        with open(os.path.join(point.directory, mx.POINT_FILE)) as handle:
            data = json.load(handle)
        spans.append((data["start_monotonic"], data["end_monotonic"]))
    return spans


def max_overlap(spans):
    events = sorted([(s, 1) for s, _e in spans] + [(e, -1) for _s, e in spans])
    current = best = 0
    for _time, delta in events:
        current += delta
        best = max(best, current)
    return best


def test_point_directory_contents(tmp_path):
    points = plan([{"name": "first", "value": 3}])
    summary, matrix_dir, resumed = run(tmp_path, points)
    assert not resumed and summary["succeeded"] == 1
    directory = points[0].directory
    assert os.path.basename(matrix_dir) == "000__matbenchmarking"
    assert os.path.basename(directory) == "000__first"
    # what the harness printed became output.json (renamed once valid, not copied)
    assert sorted(os.listdir(directory)) == [".uuid", "exit_code", "output.json", "point.json", "settings.yaml",
                                             "stderr.log"]
    assert open(os.path.join(directory, "exit_code")).read() == "0\n"
    assert yaml.safe_load(open(os.path.join(directory, "settings.yaml"))) == {"name": "first", "value": 3,
                                                                              "indicator": "scripted"}
    assert json.load(open(os.path.join(directory, "output.json")))["@result"]["rate"] == 6.0
    assert len(open(os.path.join(directory, ".uuid")).read().strip()) == 36


def test_sequential_runs_one_at_a_time_in_order(tmp_path):
    points = plan([{"name": "p%d" % i, "sleep": 0.2} for i in range(3)])
    run(tmp_path, points)
    spans = intervals(points)
    assert max_overlap(spans) == 1
    assert [s for s, _e in spans] == sorted(s for s, _e in spans)


def test_barrier_runs_batches_and_waits_for_the_whole_batch(tmp_path):
    sleeps = [0.1, 0.6, 0.1, 0.1, 0.1]
    points = plan([{"name": "p%d" % i, "sleep": s} for i, s in enumerate(sleeps)])
    run(tmp_path, points, "barrier:2")
    spans = intervals(points)
    assert max_overlap(spans) == 2
    # the second batch (p2, p3) starts only after the slow p1 of the first batch ended
    assert min(spans[2][0], spans[3][0]) >= max(spans[0][1], spans[1][1])
    assert spans[4][0] >= max(spans[2][1], spans[3][1])


def test_sliding_window_keeps_n_running_without_waiting_for_a_batch(tmp_path):
    sleeps = [1.0, 0.1, 0.1, 0.1, 0.1]
    points = plan([{"name": "p%d" % i, "sleep": s} for i, s in enumerate(sleeps)])
    run(tmp_path, points, "sliding:2")
    spans = intervals(points)
    assert max_overlap(spans) == 2
    # while the slow p0 runs, p2..p4 start one after another: none waits for p0
    assert all(spans[i][0] < spans[0][1] for i in (2, 3, 4))


def test_failed_point_does_not_block_the_next_ones(tmp_path):
    points = plan([{"name": "a"}, {"name": "b", "mode": "fail"}, {"name": "c"}])
    summary, _matrix_dir, _resumed = run(tmp_path, points, "barrier:1")
    assert (summary["succeeded"], summary["failed"], summary["not_run"]) == (2, 1, 0)
    failed = summary["failed_points"][0]
    assert failed["name"] == "b" and failed["exit_code"] == 3
    failure = open(os.path.join(points[1].directory, "FAILURE")).read()
    assert failure.startswith("harness exited with 3: something went wrong")
    assert "--- stderr (tail) ---" in failure
    assert open(os.path.join(points[1].directory, "exit_code")).read() == "3\n"


def test_stop_on_error_starts_nothing_after_a_failure(tmp_path):
    points = plan([{"name": "a", "mode": "fail"}, {"name": "b"}, {"name": "c"}])
    summary, _matrix_dir, _resumed = run(tmp_path, points, stop_on_error=True)
    assert (summary["failed"], summary["not_run"], summary["not_run_points"]) == (1, 2, ["b", "c"])
    assert not os.path.exists(os.path.join(points[1].directory, "exit_code"))


def test_timeout_and_crash_are_failed_points_with_stderr(tmp_path):
    points = plan([{"name": "slow", "mode": "hang"}, {"name": "crash", "mode": "crash"}, {"name": "fine"}])
    summary, _matrix_dir, _resumed = run(tmp_path, points, timeout=1)
    assert (summary["failed"], summary["succeeded"]) == (2, 1)
    assert open(os.path.join(points[0].directory, "exit_code")).read() == "124\n"
    assert "timed out after 1 s" in open(os.path.join(points[0].directory, "FAILURE")).read()
    assert "signal SIGSEGV" in open(os.path.join(points[1].directory, "FAILURE")).read()
    assert "mode=crash" in open(os.path.join(points[1].directory, "stderr.log")).read()


def test_resume_skips_succeeded_points_and_reruns_failed_ones(tmp_path):
    flag = tmp_path / "fail-once.flag"
    flag.write_text("x")
    settings = [{"name": "a"}, {"name": "b", "mode": "fail_once", "flag": str(flag)}, {"name": "c"}]
    summary, matrix_dir, resumed = run(tmp_path, plan(settings))
    assert (summary["succeeded"], summary["failed"], resumed) == (2, 1, False)
    first_uuid = open(os.path.join(matrix_dir, "000__a", ".uuid")).read()

    points = plan(settings)
    summary, matrix_dir_again, resumed = run(tmp_path, points)
    assert resumed and matrix_dir_again == matrix_dir
    assert (summary["skipped"], summary["succeeded"], summary["failed"]) == (2, 1, 0)
    assert open(os.path.join(matrix_dir, "000__a", ".uuid")).read() == first_uuid
    previous = os.path.join(points[1].directory, "_previous", "attempt_1")
    assert open(os.path.join(previous, "exit_code")).read() == "1\n"
    assert os.path.exists(os.path.join(previous, "FAILURE"))
    assert not os.path.exists(os.path.join(points[1].directory, "FAILURE"))
    assert sorted(os.listdir(tmp_path)) == ["000__matbenchmarking"]

    summary, _dir, _resumed = run(tmp_path, plan(settings))
    assert summary["skipped"] == 3


def test_a_different_matrix_gets_a_new_directory(tmp_path):
    run(tmp_path, plan([{"name": "a"}]))
    _summary, matrix_dir, resumed = run(tmp_path, plan([{"name": "a", "value": 2}]))
    assert not resumed and os.path.basename(matrix_dir) == "001__matbenchmarking"


def test_progress_is_reported_and_written(tmp_path):
    seen = []
    points = plan([{"name": "p%d" % i, "sleep": 0.05} for i in range(3)])
    summary, matrix_dir, _resumed = run(tmp_path, points, progress=seen.append)
    assert [p["done"] for p in seen] == [0, 1, 2, 3]
    assert seen[1]["eta_s"] is not None and seen[1]["eta_s"] > 0
    assert seen[-1]["remaining"] == 0
    written = json.load(open(os.path.join(matrix_dir, "progress.json")))
    assert written["done"] == 3 and written["total"] == 3 and written["failed_points"] == []
    assert mx.format_progress(seen[1]).startswith("matrix: 1/3 done (0 failed, 0 skipped)")


# -- the configuration section ---------------------------------------------------

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml")


def test_shipped_presets_plan_without_errors():
    sizes = {}
    for preset in ("cpu_smoke", "cpu_full", "gpu_matmul"):
        config = cfg.resolve_config(SHIPPED, presets=preset).config
        sizes[preset] = len(benchmark.plan_benchmark(config).points)
    assert sizes["cpu_smoke"] >= 4 and sizes["cpu_full"] > sizes["cpu_smoke"]
    smoke = cfg.resolve_config(SHIPPED, presets="cpu_smoke").config
    indicators = {p.settings["indicator"] for p in benchmark.plan_benchmark(smoke).points}
    assert indicators == {"matmul", "conv1d", "conv2d"}


def test_misspelt_section_key_is_named():
    config = cfg.resolve_config(SHIPPED, presets="cpu_smoke").config
    config["tests"]["benchmark"]["matrix"]["factorz"] = {}
    with pytest.raises(ConfigError, match=r"unknown key 'tests.benchmark.matrix.factorz' \(did you mean 'factors'\?\)"):
        benchmark.plan_benchmark(config)


def test_everything_excluded_is_an_error():
    config = cfg.resolve_config(SHIPPED, overrides={"tests.benchmark.matrix.exclude": [{"indicator": "matmul"}]}).config
    with pytest.raises(MatrixError, match="expands to no point"):
        benchmark.plan_benchmark(config)


def test_rehearsal_lists_directories_and_creates_nothing(tmp_path):
    config = cfg.resolve_config(SHIPPED, presets="cpu_smoke").config
    listing = benchmark.rehearse(benchmark.plan_benchmark(config))
    assert listing[0]["directory"] == "000__matmul_float32_256"
    assert listing[-1]["directory"] == "007__conv2d_float32"
    assert os.listdir(tmp_path) == []


def test_controller_death_cancels_the_running_point_and_leaves_it_unfinished(tmp_path):
    points = plan([{"name": "first", "sleep": 0}, {"name": "hanging", "sleep": 30}, {"name": "never", "sleep": 0}])
    matrix_dir, _resumed = mx.prepare_matrix_dir(str(tmp_path), points)
    alive = {"value": True}

    def controller_alive():
        # the controller "dies" once the hanging point has started
        if os.path.exists(os.path.join(points[1].directory, ".uuid")):
            alive["value"] = False
        return alive["value"]

    runner = mx.MatrixRunner(matrix_dir, points, 60, HARNESS, executors.create_executor("local"),
                             controller_alive=controller_alive)
    started = time.monotonic()
    summary = runner.run()
    assert time.monotonic() - started < 10
    assert summary["abandoned"] is True
    assert mx.read_exit_code(points[0].directory) == 0
    # killed, unfinished (no exit_code, no FAILURE): a resume runs it again
    assert not os.path.exists(os.path.join(points[1].directory, "exit_code"))
    assert not os.path.exists(os.path.join(points[1].directory, "FAILURE"))
    assert not os.path.exists(os.path.join(points[2].directory, ".uuid"))
    # what a resume runs again
    assert [p.name for p in points if mx.read_exit_code(p.directory) != 0] == ["hanging", "never"]


def test_nan_from_a_harness_is_a_failed_point_never_non_standard_json(tmp_path):
    points = plan([{"name": "nan", "mode": "nan"}])
    summary, _matrix_dir, _resumed = run(tmp_path, points)
    assert summary["failed"] == 1
    directory = points[0].directory
    assert "harness output contains NaN, which is not a number in JSON" in open(os.path.join(directory, "FAILURE")).read()
    assert not os.path.exists(os.path.join(directory, "output.json"))
    assert mx.read_exit_code(directory) == 65


def test_a_large_valid_document_is_stored_once(tmp_path):
    points = plan([{"name": "big", "mode": "big", "megabytes": 10}])
    summary, _matrix_dir, _resumed = run(tmp_path, points)
    assert summary["succeeded"] == 1
    directory = points[0].directory
    sizes = {name: os.path.getsize(os.path.join(directory, name)) for name in os.listdir(directory)}
    assert sizes["output.json"] > 10_000_000
    assert sum(sizes.values()) < 1.01 * sizes["output.json"]


@pytest.mark.parametrize("directory", ["../../outside", "/tmp/absolute", "000__first/../../x", ".."])
def test_an_edited_matrix_plan_cannot_send_a_resume_out_of_the_matrix(tmp_path, directory):
    points = plan([{"name": "first"}, {"name": "second", "mode": "fail"}])
    _summary, matrix_dir, _resumed = run(tmp_path, points)
    plan_file = os.path.join(matrix_dir, mx.MATRIX_FILE)
    recorded = yaml.safe_load(open(plan_file))
    recorded["points"][1]["directory"] = directory
    with open(plan_file, "w") as handle:
        yaml.safe_dump(recorded, handle)
    before = sorted(os.listdir(tmp_path))
    again = plan([{"name": "first"}, {"name": "second", "mode": "fail"}])
    with pytest.raises(MatrixError) as error:
        mx.prepare_matrix_dir(str(tmp_path), again)
    assert "point 'second' has directory %r, which is not a directory of the matrix" % directory in str(error.value)
    assert sorted(os.listdir(tmp_path)) == before
    assert not os.path.exists(os.path.join(matrix_dir, "001__second", "_previous"))


@pytest.mark.parametrize("text", ["points: " + "[" * 5000 + "]" * 5000 + "\n", "fingerprint: " + "[" * 100 + "]" * 100])
def test_a_matrix_plan_too_deep_to_read_is_not_resumed_and_not_a_traceback(tmp_path, text):
    points = plan([{"name": "first"}])
    _summary, matrix_dir, _resumed = run(tmp_path, points)
    with open(os.path.join(matrix_dir, mx.MATRIX_FILE), "w") as handle:
        handle.write(text)
    new_dir, resumed = mx.prepare_matrix_dir(str(tmp_path), plan([{"name": "first"}]))
    assert not resumed and new_dir != matrix_dir


@pytest.mark.parametrize("value", ["sliding:1e400", {"barrier": float("inf")}, "barrier:0", "sliding:1025"])
def test_parallelism_counts_are_bounded(value):
    with pytest.raises(MatrixError, match="must be a whole number from 1 to 1024"):
        mx.parse_parallelism(value)


# -- expansion: details callers rely on ----------------------------------------

def test_tuple_factor_values_expand_like_lists_and_scalars_are_one_value():
    assert mx.expand_matrix({"a": (1, 2), "b": "x"}) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    assert mx.expand_matrix({"a": [[1, 2]]}) == [{"a": [1, 2]}]


@pytest.mark.parametrize("factors", [None, {}])
def test_no_factors_and_no_include_is_no_point(factors):
    assert mx.expand_matrix(factors, {"reps": 3}) == []


@pytest.mark.parametrize("name,shown", [(3, "3"), ("", "''"), (None, "None")])
def test_factor_names_must_be_non_empty_strings(name, shown):
    with pytest.raises(MatrixError) as error:
        mx.expand_matrix({"a": [1], name: [2]})
    assert str(error.value) == "matrix factor names must be non-empty strings, got %s" % shown


@pytest.mark.parametrize("kind,entry,shown", [
    ("exclude", {}, "{}"), ("exclude", ["a"], "['a']"), ("include", {}, "{}"), ("include", "a=1", "'a=1'"),
])
def test_include_and_exclude_entries_must_be_non_empty_mappings(kind, entry, shown):
    with pytest.raises(MatrixError) as error:
        mx.expand_matrix({"a": [1, 2]}, **{kind: [{"a": 1}, entry]})
    assert str(error.value) == "matrix %s #2: expected a non-empty mapping of settings, got %s" % (kind, shown)


def test_unknown_exclude_key_without_a_close_match_lists_the_factors_or_none():
    with pytest.raises(MatrixError) as error:
        mx.expand_matrix({"size": [1], "dtype": ["f"]}, exclude=[{"zzz": 1}])
    assert str(error.value) == "matrix exclude #1 names unknown factor 'zzz'; known: dtype, size"
    with pytest.raises(MatrixError) as error:
        mx.expand_matrix({}, include=[{"x": 1}], exclude=[{"x": 1}])
    assert str(error.value) == "matrix exclude #1 names unknown factor 'x'; known: (none)"


def test_exclude_needs_every_key_it_names_to_match():
    factors = {"a": [1, 2], "b": ["x", "y"]}
    assert mx.expand_matrix(factors, exclude=[{"a": 1, "b": "y"}]) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}]
    assert mx.expand_matrix(factors, exclude=[{"a": 1}, {"b": "x"}]) == [{"a": 2, "b": "y"}]


def test_include_may_name_factors_common_settings_and_known_settings_only():
    points = mx.expand_matrix({"a": [1, 2]}, {"reps": 3}, include=[{"a": 2, "reps": 5, "size": 8}], known_settings={"size"})
    # an include value beats the common setting; common settings fill what the point lacks
    assert points == [{"a": 1, "reps": 3}, {"a": 2, "reps": 5, "size": 8}]
    with pytest.raises(MatrixError) as error:
        mx.expand_matrix({"a": [1]}, {"reps": 3}, include=[{"a": 1, "zzz": 1}], known_settings=set())
    assert str(error.value) == "matrix include #1 names unknown setting 'zzz'; known: a, reps"


def test_include_without_factor_keys_extends_every_combination():
    points = mx.expand_matrix({"a": [1, 2]}, include=[{"note": "n"}])
    assert points == [{"a": 1, "note": "n"}, {"a": 2, "note": "n"}]


def test_include_never_overwrites_a_factor_value_of_a_matched_combination():
    points = mx.expand_matrix({"a": [1, 2], "b": ["x"]}, include=[{"a": 1, "b": "x", "c": 0}, {"a": 2, "b": "z"}])
    assert points == [{"a": 1, "b": "x", "c": 0}, {"a": 2, "b": "x"}, {"a": 2, "b": "z"}]


def test_an_include_matches_combinations_as_they_were_before_any_include():
    # the first include adds c=1 to a=1; the second matches on the factor a only, not on c
    points = mx.expand_matrix({"a": [1, 2]}, include=[{"a": 1, "c": 1}, {"a": 1, "d": 2}])
    assert points == [{"a": 1, "c": 1, "d": 2}, {"a": 2}]


def test_expansion_does_not_modify_the_caller_s_mappings():
    factors, common, include = {"a": [1, 2]}, {"r": 1}, [{"a": 9, "x": 1}]
    points = mx.expand_matrix(factors, common, include)
    points[-1]["x"] = 2
    assert factors == {"a": [1, 2]} and common == {"r": 1} and include == [{"a": 9, "x": 1}]


# -- naming ----------------------------------------------------------------------

def test_varying_keys_one_distinct_value_is_not_varying():
    assert mx.varying_keys([{"a": 1, "b": 2}, {"a": 1, "b": 3}]) == ["b"]
    assert mx.varying_keys([{"a": 1}]) == []
    assert mx.varying_keys([]) == []


def test_varying_keys_a_setting_missing_from_a_point_varies():
    assert mx.varying_keys([{"a": 1}, {"a": 1, "b": None}]) == ["b"]
    assert mx.varying_keys([{"b": 1}, {"a": 2}]) == ["b", "a"]


def test_varying_keys_compare_values_not_key_order_and_accept_any_value():
    assert mx.varying_keys([{"m": {"x": 1, "y": 2}}, {"m": {"y": 2, "x": 1}}]) == []
    day = datetime.date(2024, 1, 2)
    assert mx.varying_keys([{"d": day, "e": day}, {"d": datetime.date(2024, 1, 3), "e": day}]) == ["d"]


def test_template_fields_name_the_settings_a_template_uses():
    assert mx.template_fields("{a}_{b:03d}_{c!r}-x{d!s:>4}") == ["a", "b", "c", "d"]
    assert mx.template_fields(None) == [] and mx.template_fields("plain") == []


@pytest.mark.parametrize("template,settings,expected", [
    ("{a}-{b}.{c}", {"a": 1, "b": 2, "c": 3}, "1-2.3"),
    ("{a}-{b}.{c}", {"a": 1, "c": 3}, "1.3"),
    ("{a}-{b}.{c}", {"b": 2, "c": 3}, "2.3"),
    ("{a}-{b}.{c}", {"a": 1, "b": 2}, "1-2"),
    ("{a}_n{size}", {"a": "conv"}, "conv"),
    ("x{a}y_z", {"a": 5}, "x5y_z"),
    ("_{a}__{b}_", {"a": 1, "b": 2}, "1_2"),
    ("{a:03d}_{b!r}", {"a": 7, "b": "s"}, "007_'s'"),
    ("{a}", {}, ""),
])
def test_render_template_leaves_out_the_segments_of_unset_fields(template, settings, expected):
    assert mx.render_template(template, settings) == expected


@pytest.mark.parametrize("template", ["{}", "{a}_{:03d}", "{!r}"])
def test_render_template_refuses_positional_fields(template):
    with pytest.raises(MatrixError) as error:
        mx.render_template(template, {"a": 1})
    assert str(error.value) == "name_template %r: positional fields {} are not allowed, name a setting" % template


def test_render_template_bad_format_spec_names_the_field():
    with pytest.raises(MatrixError) as error:
        mx.render_template("{size:d}", {"size": "big"})
    assert str(error.value) == "name_template '{size:d}': field size: Unknown format code 'd' for object of type 'str'"
    with pytest.raises(MatrixError) as error:
        mx.render_template("{size:5d}", {"size": None})
    assert str(error.value).startswith("name_template '{size:5d}': field size: unsupported format string passed to NoneType")


def test_point_name_without_template_joins_the_varying_settings_it_has():
    assert mx.point_name({"a": 1, "b": "x y", "c": 3}, ["b", "a", "z"]) == "b=x_y_a=1"
    assert mx.point_name({"a": 1}, []) == "point"
    assert mx.point_name({"a": 1}, ["z"]) == "point"
    assert mx.point_name({"a": 1}, ["a"], template="") == "a=1"


@pytest.mark.parametrize("template,settings,reason", [
    ("{a}", {"a": "///"}, "artifact directory name '///': nothing usable remains after sanitizing"),
    ("{a}", {}, "artifact directory name '': expected a non-empty string"),
])
def test_a_template_that_names_nothing_usable_is_a_matrix_error(template, settings, reason):
    with pytest.raises(MatrixError) as error:
        mx.point_name(settings, [], template)
    assert str(error.value) == "point name from %r: %s" % (template, reason)


def test_point_as_dict():
    point = mx.Point(4, "p", {"a": 1}, None)
    assert point.as_dict() == {"index": 4, "name": "p", "settings": {"a": 1}, "directory": None}
    point.directory = "/d"
    assert point.as_dict()["directory"] == "/d"


# -- parallelism ------------------------------------------------------------------

@pytest.mark.parametrize("value,expected", [
    (" barrier :2", ("barrier", 2)), ("sliding:1", ("sliding", 1)), ("barrier:1024", ("barrier", 1024)),
    ({"barrier": "3"}, ("barrier", 3)), ("sliding: 7 ", ("sliding", 7)),
])
def test_parallelism_forms_and_bounds(value, expected):
    assert mx.parse_parallelism(value) == expected


@pytest.mark.parametrize("value", ["barrier:-1", "sliding:0", "barrier:1025", {"sliding": None}, {"sliding": [2]}, "barrier:"])
def test_parallelism_count_message(value):
    with pytest.raises(MatrixError) as error:
        mx.parse_parallelism(value)
    assert str(error.value) == "parallelism %r: the number of points at once must be a whole number from 1 to 1024" % (value,)


@pytest.mark.parametrize("value", ["parallel", "sequential:1", "window:2", {"barrier": 2, "sliding": 2}, {}, 3, ["barrier", 2]])
def test_parallelism_policy_message(value):
    with pytest.raises(MatrixError) as error:
        mx.parse_parallelism(value)
    assert str(error.value) == "parallelism %r: expected sequential, barrier:N or sliding:N" % (value,)


# -- planning with a recording harness -------------------------------------------

DOCUMENT = {"name": "x", "framework": "f", "@parameters": {}, "@result": {"rate": 1.0}}


class RecordingHarness(harness_base.Harness):
    """Plans ``python <name>``, reads the document the fake executor wrote."""

    name = "recording"

    def __init__(self, detail="", read_error=None):
        self.checked, self.planned, self.kept = [], [], []
        self.detail, self.read_error = detail, read_error

    def known_settings(self, section):
        return None

    def check_section(self, section):
        self.checked.append(section)

    def plan_point(self, name, settings, section, python=None, config=None):
        self.planned.append((name, settings, section, python, config))
        return harness_base.PointCommand([python or "python", name], {"FROM_HARNESS": "1"})

    def read_output(self, directory, section=None):
        if self.read_error is not None:
            raise self.read_error
        return super().read_output(directory, section)

    def keep_output(self, directory, document):
        self.kept.append((directory, document))
        super().keep_output(directory, document)

    def failure_detail(self, directory):
        return self.detail


def test_plan_points_checks_the_section_and_passes_python_and_config():
    harness = RecordingHarness()
    section = {"deployment_factors": ["replicas"]}
    planned = mx.plan_points([{"a": 1, "replicas": 2}, {"a": 2, "replicas": 2}], harness, section, python="py3",
                             config={"c": 1})
    assert harness.checked == [section]
    assert harness.planned == [("a=1", {"a": 1}, section, "py3", {"c": 1}), ("a=2", {"a": 2}, section, "py3", {"c": 1})]
    assert [(p.index, p.name, p.settings, p.command.argv, p.directory) for p in planned] == [
        (0, "a=1", {"a": 1, "replicas": 2}, ["py3", "a=1"], None), (1, "a=2", {"a": 2, "replicas": 2}, ["py3", "a=2"], None)]


def test_plan_points_gives_every_command_the_point_s_settings_as_sorted_json():
    planned = mx.plan_points([{"b": 1, "a": datetime.date(2024, 5, 6)}], RecordingHarness(), None)
    assert planned[0].command.env == {"FROM_HARNESS": "1", "PERFSCALE_SETTINGS": '{"a": "2024-05-06", "b": 1}'}
    assert mx.SETTINGS_ENV == "PERFSCALE_SETTINGS"


def test_plan_points_without_section_has_no_deployment_factors():
    harness = RecordingHarness()
    mx.plan_points([{"replicas": 1}], harness)
    assert harness.checked == [None] and harness.planned[0][1] == {"replicas": 1}


def test_duplicate_point_names_name_both_points():
    with pytest.raises(MatrixError) as error:
        mx.plan_points([{"a": 1, "b": 1}, {"a": 2, "b": 1}, {"a": 1, "b": 2}], RecordingHarness(), None, "{a}")
    assert str(error.value) == "points #1 and #3 are both named '1'; make name_template distinguish them"


def test_unused_template_fields_are_listed_and_positional_fields_refused():
    with pytest.raises(MatrixError) as error:
        mx.plan_points([{"a": 1}], RecordingHarness(), None, "{a}_{x}_{y}")
    assert str(error.value) == "name_template '{a}_{x}_{y}' uses x, y, which no point sets"
    with pytest.raises(MatrixError) as error:
        mx.plan_points([{"a": 1}], RecordingHarness(), None, "{}_{a}")
    assert "positional fields {} are not allowed" in str(error.value)
    # a field that only some points set is used
    planned = mx.plan_points([{"a": 1}, {"a": 2, "b": 3}], RecordingHarness(), None, "{a}_{b}")
    assert [p.name for p in planned] == ["1", "2_3"]


def fake_point(name, settings=None, argv=("python", "run")):
    return mx.Point(0, name, settings or {}, harness_base.PointCommand(list(argv)) if argv is not None else None)


def test_fingerprint_depends_on_names_settings_and_arguments_but_not_the_interpreter():
    base = mx.fingerprint([fake_point("p", {"a": 1, "b": 2})])
    assert len(base) == 64 and int(base, 16) >= 0
    assert mx.fingerprint([fake_point("p", {"b": 2, "a": 1})]) == base
    assert mx.fingerprint([fake_point("p", {"a": 1, "b": 2}, ("/other/python", "run"))]) == base
    assert mx.fingerprint([fake_point("q", {"a": 1, "b": 2})]) != base
    assert mx.fingerprint([fake_point("p", {"a": 1, "b": 3})]) != base
    assert mx.fingerprint([fake_point("p", {"a": 1, "b": 2}, ("python", "other"))]) != base
    assert mx.fingerprint([fake_point("p", {"a": 1, "b": 2}, None)]) != base
    assert mx.fingerprint([]) != mx.fingerprint([fake_point("p")])


def test_fingerprint_accepts_any_setting_value():
    assert mx.fingerprint([fake_point("p", {"d": datetime.date(2024, 1, 1)})]) != \
        mx.fingerprint([fake_point("p", {"d": datetime.date(2024, 1, 2)})])


# -- directories and resume ----------------------------------------------------------

def planned_points(*names):
    return mx.plan_points([{"name": n} for n in names], RecordingHarness(), None, "{name}")


def test_a_new_matrix_directory_records_its_plan(tmp_path):
    points = planned_points("a", "b")
    matrix_dir, resumed = mx.prepare_matrix_dir(str(tmp_path), points, name="my bench", spec={"k": "v"})
    assert not resumed and matrix_dir == str(tmp_path / "000__my_bench")
    assert [p.directory for p in points] == [os.path.join(matrix_dir, "000__a"), os.path.join(matrix_dir, "001__b")]
    assert sorted(os.listdir(matrix_dir)) == ["000__a", "001__b", "matrix.yaml"]
    assert yaml.safe_load(open(os.path.join(points[1].directory, "settings.yaml"))) == {"name": "b"}
    recorded = yaml.safe_load(open(os.path.join(matrix_dir, mx.MATRIX_FILE)))
    assert recorded == {"fingerprint": mx.fingerprint(points), "spec": {"k": "v"},
                        "points": [{"name": "a", "directory": "000__a", "settings": {"name": "a"}},
                                   {"name": "b", "directory": "001__b", "settings": {"name": "b"}}]}
    # the default name; indexes are shared by every directory of the parent
    assert mx.prepare_matrix_dir(str(tmp_path), planned_points("c"))[0] == str(tmp_path / "001__matbenchmarking")
    assert yaml.safe_load(open(str(tmp_path / "001__matbenchmarking" / "matrix.yaml")))["spec"] == {}


def test_resuming_recreates_a_missing_point_directory(tmp_path):
    matrix_dir, _resumed = mx.prepare_matrix_dir(str(tmp_path), planned_points("a", "b"))
    shutil.rmtree(os.path.join(matrix_dir, "001__b"))
    points = planned_points("a", "b")
    assert mx.prepare_matrix_dir(str(tmp_path), points) == (matrix_dir, True)
    assert points[1].directory == os.path.realpath(os.path.join(matrix_dir, "001__b"))
    assert yaml.safe_load(open(os.path.join(points[1].directory, "settings.yaml"))) == {"name": "b"}


def test_find_matrix_dir_takes_the_newest_matching_plan_and_creates_nothing(tmp_path):
    assert mx.find_matrix_dir(str(tmp_path / "missing"), planned_points("a")) is None
    first = mx.prepare_matrix_dir(str(tmp_path), planned_points("a"))[0]
    mx.prepare_matrix_dir(str(tmp_path), planned_points("b"))
    newest = str(tmp_path / "002__matbenchmarking")
    os.mkdir(newest)
    with open(os.path.join(first, mx.MATRIX_FILE)) as handle:
        text = handle.read()
    with open(os.path.join(newest, mx.MATRIX_FILE), "w") as handle:
        handle.write(text.replace("000__a", "001__a"))
    os.mkdir(os.path.join(newest, "001__a"))
    found = mx.find_matrix_dir(str(tmp_path), planned_points("a"))
    assert found == (newest, {"a": os.path.join(os.path.realpath(newest), "001__a")})
    assert mx.find_matrix_dir(str(tmp_path), planned_points("a"), name="other") is None
    assert mx.find_matrix_dir(str(tmp_path), planned_points("z")) is None
    assert sorted(os.listdir(tmp_path)) == ["000__matbenchmarking", "001__matbenchmarking", "002__matbenchmarking"]


@pytest.mark.parametrize("text", ["", "- a list\n", "fingerprint: [unclosed\n", "just text\n"])
def test_an_empty_or_unreadable_matrix_plan_is_not_resumed(tmp_path, text):
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), planned_points("a"))[0]
    with open(os.path.join(matrix_dir, mx.MATRIX_FILE), "w") as handle:
        handle.write(text)
    assert mx.find_matrix_dir(str(tmp_path), planned_points("a")) is None
    os.unlink(os.path.join(matrix_dir, mx.MATRIX_FILE))
    assert mx.find_matrix_dir(str(tmp_path), planned_points("a")) is None


@pytest.mark.parametrize("points_entry", [
    "not a list", [{"name": "b", "directory": "000__a"}], ["000__a"], [{"name": 1, "directory": "000__a"}],
    [{"name": "a"}], [{"name": "a", "directory": ""}], [{"name": "a", "directory": 5}],
])
def test_a_plan_without_a_usable_directory_for_a_point_is_refused(tmp_path, points_entry):
    points = planned_points("a")
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), points)[0]
    plan_file = os.path.join(matrix_dir, mx.MATRIX_FILE)
    recorded = yaml.safe_load(open(plan_file))
    recorded["points"] = points_entry
    with open(plan_file, "w") as handle:
        yaml.safe_dump(recorded, handle)
    with pytest.raises(MatrixError) as error:
        mx.find_matrix_dir(str(tmp_path), planned_points("a"))
    directory = points_entry[0].get("directory") if isinstance(points_entry, list) and isinstance(points_entry[0], dict) \
        and points_entry[0].get("name") == "a" else None
    assert str(error.value) == ("%s: point 'a' has directory %r, which is not a directory of the matrix (the plan was "
                                "edited?); nothing was touched" % (plan_file, directory))


def test_an_absolute_directory_is_refused_even_inside_the_matrix(tmp_path):
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), planned_points("a"))[0]
    plan_file = os.path.join(matrix_dir, mx.MATRIX_FILE)
    recorded = yaml.safe_load(open(plan_file))
    recorded["points"][0]["directory"] = os.path.join(os.path.realpath(matrix_dir), "000__a")
    with open(plan_file, "w") as handle:
        yaml.safe_dump(recorded, handle)
    with pytest.raises(MatrixError, match="which is not a directory of the matrix"):
        mx.find_matrix_dir(str(tmp_path), planned_points("a"))


@pytest.mark.parametrize("text,expected", [("0\n", 0), (" 3 \n", 3), ("124", 124), ("", None), ("x\n", None)])
def test_read_exit_code(tmp_path, text, expected):
    (tmp_path / "exit_code").write_text(text)
    assert mx.read_exit_code(str(tmp_path)) == expected


def test_read_exit_code_of_an_unfinished_point_is_none(tmp_path):
    assert mx.read_exit_code(str(tmp_path)) is None


def test_archive_previous_attempt_moves_everything_but_settings_and_plan(tmp_path):
    for name in ("settings.yaml", "capacity_plan.json", "exit_code", "FAILURE"):
        (tmp_path / name).write_text(name)
    first = mx.archive_previous_attempt(str(tmp_path))
    assert first == str(tmp_path / "_previous" / "attempt_1")
    assert sorted(os.listdir(first)) == ["FAILURE", "exit_code"]
    assert sorted(os.listdir(tmp_path)) == ["_previous", "capacity_plan.json", "settings.yaml"]
    assert mx.archive_previous_attempt(str(tmp_path)) is None
    (tmp_path / "exit_code").write_text("again")
    second = mx.archive_previous_attempt(str(tmp_path))
    assert second == str(tmp_path / "_previous" / "attempt_2")
    assert (tmp_path / "_previous" / "attempt_2" / "exit_code").read_text() == "again"
    assert (tmp_path / "_previous" / "attempt_1" / "exit_code").read_text() == "exit_code"


# -- running with a fake executor ----------------------------------------------------

class FakeExecutor(executor_base.Executor):
    """Runs nothing: ``outcomes`` {point name: (exit code, duration, error)}, default a success of 2 s."""

    def __init__(self, outcomes=None, collected=None, wait_error=None):
        self.outcomes, self.collected, self.wait_error = outcomes or {}, collected or {}, wait_error
        self.events = []

    def start(self, point, command, directory):
        self.events.append(("start", point.name, os.listdir(directory)))
        code = self.outcomes.get(point.name, (0, 2.0, None))[0]
        with open(os.path.join(directory, "stdout.log"), "w") as handle:
            handle.write(json.dumps(DOCUMENT) if code == 0 else "")
        return point

    def wait(self, handle, timeout):
        self.events.append(("wait", handle.name, timeout))
        if self.wait_error is not None:
            raise self.wait_error
        return executor_base.Execution(*self.outcomes.get(handle.name, (0, 2.0, None)))

    def collect(self, handle, directory):
        self.events.append(("collect", handle.name, directory))
        return self.collected.get(handle.name)

    def cancel(self, handle):
        self.events.append(("cancel", handle.name))


def runner_for(tmp_path, names, harness=None, executor=None, **options):
    points = planned_points(*names)
    matrix_dir, _resumed = mx.prepare_matrix_dir(str(tmp_path), points)
    return mx.MatrixRunner(matrix_dir, points, 7, harness or RecordingHarness(), executor or FakeExecutor(), **options), points


def test_runner_defaults():
    runner = mx.MatrixRunner("/m", [], 5, None, None)
    assert (runner.policy, runner.width, runner.stop_on_error, runner.skip, runner.section) == ("sequential", 1, False, {}, None)
    assert (runner.on_progress, runner.controller_alive, runner.timeout) == (None, None, 5)
    assert mx.MatrixRunner.WATCH_INTERVAL_S == 0.25


def test_a_succeeded_point_keeps_its_document_and_records_how_it_ran(tmp_path):
    harness = RecordingHarness()
    executor = FakeExecutor()
    runner, points = runner_for(tmp_path, ["a"], harness, executor, section={"s": 1})
    outcome = runner.run_point(points[0])
    directory = points[0].directory
    assert outcome.ok and outcome.exit_code == 0 and outcome.error is None and outcome.duration == 2.0
    assert outcome.document == DOCUMENT and harness.kept == [(directory, DOCUMENT)]
    # the point started in a directory holding only its settings and its .uuid
    assert [e[:2] for e in executor.events] == [("start", "a"), ("wait", "a"), ("collect", "a")]
    assert executor.events[1][2] == 7 and executor.events[2][2] == directory
    assert sorted(executor.events[0][2]) == [".uuid", "settings.yaml"]
    assert sorted(os.listdir(directory)) == [".uuid", "exit_code", "output.json", "point.json", "settings.yaml"]
    assert open(os.path.join(directory, "exit_code")).read() == "0\n"
    recorded = json.load(open(os.path.join(directory, mx.POINT_FILE)))
    assert {k: recorded[k] for k in ("exit_code", "duration_s", "error", "timed_out", "signal", "name", "command")} == {
        "exit_code": 0, "duration_s": 2.0, "error": None, "timed_out": False, "signal": None, "name": "a", "command": ["python", "a"]}
    assert recorded["start_monotonic"] <= recorded["end_monotonic"] and recorded["started"] <= recorded["ended"]
    assert len(recorded["load_average_start"]) == 3 and len(recorded["load_average_end"]) == 3
    assert recorded["cpu_count"] == os.cpu_count()
    assert runner._running == {}


def test_a_point_run_again_archives_its_earlier_attempt(tmp_path):
    runner, points = runner_for(tmp_path, ["a"])
    runner.run_point(points[0])
    runner.run_point(points[0])
    attempt = os.path.join(points[0].directory, "_previous", "attempt_1")
    assert sorted(os.listdir(attempt)) == [".uuid", "exit_code", "output.json", "point.json"]


def test_a_failed_point_writes_failure_with_the_harness_detail(tmp_path):
    harness = RecordingHarness(detail="--- stderr (tail) ---\nboom")
    runner, points = runner_for(tmp_path, ["a"], harness, FakeExecutor({"a": (3, 1.0, "harness exited with 3")}))
    outcome = runner.run_point(points[0])
    assert not outcome.ok and outcome.document is None and harness.kept == []
    directory = points[0].directory
    assert open(os.path.join(directory, "FAILURE")).read() == "harness exited with 3\n--- stderr (tail) ---\nboom\n"
    assert open(os.path.join(directory, "exit_code")).read() == "3\n"
    assert os.path.exists(os.path.join(directory, "stdout.log")) and not os.path.exists(os.path.join(directory, "output.json"))


def test_a_failed_point_without_detail_writes_only_the_error(tmp_path):
    runner, points = runner_for(tmp_path, ["a"], executor=FakeExecutor({"a": (3, 1.0, "harness exited with 3")}))
    runner.run_point(points[0])
    assert open(os.path.join(points[0].directory, "FAILURE")).read() == "harness exited with 3\n"


@pytest.mark.parametrize("error", [HarnessOutputError("harness output is not JSON"), OSError("no stdout.log")])
def test_output_breaking_the_contract_makes_a_succeeded_run_a_failed_point(tmp_path, error):
    harness = RecordingHarness(read_error=error)
    runner, points = runner_for(tmp_path, ["a"], harness)
    outcome = runner.run_point(points[0])
    assert (outcome.ok, outcome.exit_code, outcome.error, outcome.document) == (False, 65, str(error), None)
    assert open(os.path.join(points[0].directory, "exit_code")).read() == "65\n"
    assert open(os.path.join(points[0].directory, "FAILURE")).read() == str(error) + "\n"
    assert json.load(open(os.path.join(points[0].directory, mx.POINT_FILE)))["exit_code"] == 65


def test_what_collect_returns_replaces_the_execution(tmp_path):
    collected = executor_base.Execution(70, 4.0, "files did not come back")
    runner, points = runner_for(tmp_path, ["a", "b"], executor=FakeExecutor(collected={"a": collected}))
    summary = runner.run()
    assert summary["failed_points"] == [{"name": "a", "directory": points[0].directory, "exit_code": 70,
                                         "error": "files did not come back"}]
    assert summary["succeeded"] == 1


def test_an_error_while_waiting_cancels_the_point_and_propagates(tmp_path):
    executor = FakeExecutor(wait_error=KeyboardInterrupt())
    runner, points = runner_for(tmp_path, ["a"], executor=executor)
    with pytest.raises(KeyboardInterrupt):
        runner.run_point(points[0])
    assert executor.events[-1] == ("cancel", "a") and runner._running == {}
    assert mx.read_exit_code(points[0].directory) is None


def test_an_abandoned_run_leaves_the_point_unfinished(tmp_path):
    executor = FakeExecutor()
    runner, points = runner_for(tmp_path, ["a"], executor=executor)
    runner.abandoned.set()
    assert runner.run_point(points[0]) is None
    assert [e[0] for e in executor.events] == ["start", "wait"]
    assert not os.path.exists(os.path.join(points[0].directory, "exit_code"))


def test_progress_before_running(tmp_path):
    runner, _points = runner_for(tmp_path, ["a", "b"], parallelism="barrier:2")
    progress = runner.progress()
    assert {k: v for k, v in progress.items() if k != "updated"} == {
        "total": 2, "done": 0, "succeeded": 0, "failed": 0, "skipped": 0, "infeasible": 0, "remaining": 2,
        "elapsed_s": 0.0, "eta_s": None, "policy": "barrier", "width": 2, "stopped": False}
    assert mx.MatrixRunner("/m", [], 5, None, None).progress()["eta_s"] == 0.0


@pytest.mark.parametrize("parallelism,etas", [
    # remaining points x mean duration / points at once (at most the remaining ones)
    ("sequential", [None, 2 * 3.0 / 1, 1 * 3.0 / 1, 0.0]),
    ("sliding:2", [None, 2 * 3.0 / 2, 1 * 3.0 / 1, 0.0]),
])
def test_progress_reports_each_point_and_estimates_what_is_left(tmp_path, parallelism, etas):
    seen = []
    executor = FakeExecutor({"a": (0, 3.0, None), "b": (0, 3.0, None), "c": (0, 3.0, None)})
    runner, _points = runner_for(tmp_path, ["a", "b", "c"], executor=executor, parallelism=parallelism, on_progress=seen.append)
    runner.run()
    # points running at once may report in either order
    seen.sort(key=lambda p: p["done"])
    assert [p["done"] for p in seen] == [0, 1, 2, 3]
    assert [p["remaining"] for p in seen] == [3, 2, 1, 0]
    assert [p["eta_s"] for p in seen] == etas
    assert all(p["elapsed_s"] >= 0 and p["total"] == 3 for p in seen)


def test_eta_uses_the_mean_duration(tmp_path):
    seen = []
    executor = FakeExecutor({"a": (0, 1.0, None), "b": (0, 2.0, None), "c": (0, 9.0, None)})
    runner, _points = runner_for(tmp_path, ["a", "b", "c"], executor=executor, on_progress=seen.append)
    runner.run()
    assert [p["eta_s"] for p in seen] == [None, 2 * 1.0, 1 * 1.5, 0.0]


def test_summary_of_a_run_with_skipped_infeasible_failed_and_succeeded_points(tmp_path):
    executor = FakeExecutor({"c": (3, 1.0, "harness exited with 3")})
    runner, points = runner_for(tmp_path, ["a", "b", "c", "d"], executor=executor, skip={"b": "needs 8 GPUs"})
    with open(os.path.join(points[0].directory, "exit_code"), "w") as handle:
        handle.write("0\n")
    summary = runner.run()
    assert [e[1] for e in executor.events if e[0] == "start"] == ["c", "d"]
    expected = {"total": 4, "done": 4, "succeeded": 1, "failed": 1, "skipped": 1, "infeasible": 1, "remaining": 0,
                "eta_s": 0.0, "policy": "sequential", "width": 1, "stopped": False, "not_run": 0, "not_run_points": [],
                "failed_points": [{"name": "c", "directory": points[2].directory, "exit_code": 3, "error": "harness exited with 3"}],
                "infeasible_points": [{"name": "b", "directory": points[1].directory, "reason": "needs 8 GPUs"}],
                "matrix_dir": runner.matrix_dir, "abandoned": False}
    assert {k: summary[k] for k in expected} == expected
    written = json.load(open(os.path.join(runner.matrix_dir, mx.PROGRESS_FILE)))
    assert {k: written[k] for k in expected if k != "abandoned"} == {k: v for k, v in expected.items() if k != "abandoned"}
    assert mx.format_progress(summary).startswith("matrix: 4/4 done (1 failed, 1 skipped, 1 cannot fit or be placed), ")


@pytest.mark.parametrize("parallelism", ["sequential", "barrier:2", "sliding:1"])
def test_stop_on_error_starts_no_new_point(tmp_path, parallelism):
    executor = FakeExecutor({"a": (3, 1.0, "failed")})
    runner, _points = runner_for(tmp_path, ["a", "b", "c", "d"], executor=executor, parallelism=parallelism, stop_on_error=True)
    summary = runner.run()
    started = [e[1] for e in executor.events if e[0] == "start"]
    # the point of a's batch (barrier:2) may start before a failed; nothing after it does
    assert "a" in started and set(started) <= {"a", "b"}
    assert summary["stopped"] is True and summary["not_run"] == 4 - len(started)
    assert summary["not_run_points"] == ["a", "b", "c", "d"][len(started):]


@pytest.mark.parametrize("parallelism", ["sequential", "barrier:2", "sliding:3"])
def test_every_policy_runs_every_point_after_a_failure_without_stop_on_error(tmp_path, parallelism):
    executor = FakeExecutor({"a": (3, 1.0, "failed")})
    runner, _points = runner_for(tmp_path, ["a", "b", "c", "d", "e"], executor=executor, parallelism=parallelism)
    summary = runner.run()
    assert sorted(e[1] for e in executor.events if e[0] == "start") == ["a", "b", "c", "d", "e"]
    assert (summary["failed"], summary["succeeded"], summary["stopped"], summary["not_run"]) == (1, 4, False, 0)


def test_a_stopped_runner_runs_nothing(tmp_path):
    executor = FakeExecutor()
    runner, points = runner_for(tmp_path, ["a"], executor=executor)
    runner._stop.set()
    assert runner._execute(points[0]) == (points[0], None)
    assert executor.events == [] and runner.results == {}


def test_progress_is_not_reported_once_abandoned(tmp_path):
    seen = []
    runner, _points = runner_for(tmp_path, ["a"], on_progress=seen.append)
    runner._report()
    runner.abandoned.set()
    runner._report()
    assert len(seen) == 1
    assert json.load(open(os.path.join(runner.matrix_dir, mx.PROGRESS_FILE)))["total"] == 1


@pytest.mark.parametrize("progress,line", [
    ({"done": 1, "total": 3, "failed": 0, "skipped": 0, "elapsed_s": 2.4, "eta_s": None}, "matrix: 1/3 done (0 failed, 0 skipped), 2s elapsed"),
    ({"done": 2, "total": 5, "failed": 1, "skipped": 2, "elapsed_s": 10.6, "eta_s": 30.2},
     "matrix: 2/5 done (1 failed, 2 skipped), 11s elapsed, ~30s left"),
    ({"done": 3, "total": 3, "failed": 0, "skipped": 0, "infeasible": 2, "elapsed_s": 0, "eta_s": 0.0},
     "matrix: 3/3 done (0 failed, 0 skipped, 2 cannot fit or be placed), 0s elapsed"),
    ({"done": 3, "total": 3, "failed": 0, "skipped": 0, "infeasible": 0, "elapsed_s": 1, "eta_s": 0.0},
     "matrix: 3/3 done (0 failed, 0 skipped), 1s elapsed"),
])
def test_format_progress(progress, line):
    assert mx.format_progress(progress) == line


def test_the_controller_watch_cancels_running_points_once_the_controller_is_gone(tmp_path):
    executor = FakeExecutor()
    runner, points = runner_for(tmp_path, ["a"], executor=executor, controller_alive=lambda: False)
    runner.WATCH_INTERVAL_S = 0.001
    runner._running = {"a": points[0]}
    runner._watch_controller(threading.Event())
    assert runner.abandoned.is_set() and runner._stop.is_set()
    assert executor.events == [("cancel", "a")]


def test_the_controller_watch_ends_with_the_run_while_the_controller_lives(tmp_path):
    calls = []
    runner, _points = runner_for(tmp_path, ["a"], controller_alive=lambda: calls.append(1) or True)
    finished = threading.Event()
    finished.set()
    runner._watch_controller(finished)
    assert calls == [] and not runner.abandoned.is_set()
    summary = runner.run()
    assert summary["abandoned"] is False and summary["succeeded"] == 1


# -- the benchmark job ------------------------------------------------------------------

def test_rehearsal_lists_each_point_with_its_capacity_and_estimate():
    points = planned_points(*("p%d" % i for i in range(3)))
    plan = benchmark.BenchmarkPlan({"name": "m"}, RecordingHarness(), points)
    capacity = {"p0": {"feasible": True, "skip": False, "gpus": 2, "reason": "fits"},
                "p1": {"feasible": False, "skip": True, "gpus": 8, "reason": "needs 8 GPUs"}}
    estimate = {"points": [{"name": "p0", "estimate_s": 12.5, "basis": "history"}, {"name": "p2", "basis": "none"}]}
    listing = benchmark.rehearse(plan, capacity, estimate)
    assert listing == [
        {"directory": "000__p0", "settings": {"name": "p0"}, "command": ["python", "p0"], "feasible": True, "skip": False,
         "gpus": 2, "capacity": "fits", "estimate_s": 12.5, "estimate_basis": "history"},
        {"directory": "001__p1", "settings": {"name": "p1"}, "command": ["python", "p1"], "feasible": False, "skip": True,
         "gpus": 8, "capacity": "needs 8 GPUs"},
        {"directory": "002__p2", "settings": {"name": "p2"}, "command": ["python", "p2"], "estimate_s": None,
         "estimate_basis": "none"},
    ]
    assert benchmark.rehearse(plan) == [{"directory": "%03d__p%d" % (i, i), "settings": {"name": "p%d" % i},
                                         "command": ["python", "p%d" % i]} for i in range(3)]
    assert benchmark.rehearse(plan, {}, {"points": None})[0] == {"directory": "000__p0", "settings": {"name": "p0"},
                                                                 "command": ["python", "p0"]}


def test_rehearsal_directories_widen_their_index_past_a_thousand_points():
    points = [mx.Point(i, "p", {}, harness_base.PointCommand(["x"])) for i in (0, 1000)]
    plan = benchmark.BenchmarkPlan({}, None, points + [points[0]] * 999)
    assert [e["directory"] for e in benchmark.rehearse(plan)[:2]] == ["0000__p", "1000__p"]


@pytest.mark.parametrize("entry,line", [
    ({"directory": "000__a", "settings": {"s": 1}}, "rehearsal: 000__a {'s': 1}"),
    ({"directory": "000__a", "settings": {}, "skip": True, "feasible": False, "gpus": 8, "capacity": "too big"},
     "rehearsal: 000__a {} | SKIPPED before deploy, 8 GPU(s): too big"),
    ({"directory": "000__a", "settings": {}, "skip": False, "feasible": True, "gpus": 1, "capacity": "fits"},
     "rehearsal: 000__a {} | feasible, 1 GPU(s): fits"),
    ({"directory": "000__a", "settings": {}, "skip": False, "feasible": False, "gpus": 0, "capacity": "no node"},
     "rehearsal: 000__a {} | infeasible (not skipped), 0 GPU(s): no node"),
    ({"directory": "000__a", "settings": {}, "estimate_s": 12.6, "estimate_basis": "history"},
     "rehearsal: 000__a {} | estimate 13 s (history)"),
    ({"directory": "000__a", "settings": {}, "estimate_s": None, "estimate_basis": "no history"},
     "rehearsal: 000__a {} | estimate - (no history)"),
    ({"directory": "000__a", "settings": {}, "skip": False, "feasible": True, "gpus": 1, "capacity": "fits",
      "estimate_s": 60, "estimate_basis": "history"}, "rehearsal: 000__a {} | feasible, 1 GPU(s): fits | estimate 60 s (history)"),
])
def test_rehearsal_line(entry, line):
    assert benchmark.rehearsal_line(entry) == line


def test_capacity_options_default_to_none():
    assert benchmark.capacity_options(benchmark.BenchmarkPlan({"capacity": {"enabled": True}}, None, [])) == {"enabled": True}
    assert benchmark.capacity_options(benchmark.BenchmarkPlan({"capacity": None}, None, [])) == {}
    assert benchmark.plan_capacity(benchmark.BenchmarkPlan({"capacity": {"enabled": False}}, None, []), {}) is None
    assert benchmark.plan_capacity(benchmark.BenchmarkPlan({}, None, []), {}) is None


def test_plan_benchmark_of_another_section_key():
    config = cfg.resolve_config(SHIPPED).config
    plan = benchmark.plan_benchmark(config, key="tests.fine_tuning.benchmark")
    assert plan.section["name"] == "fine_tuning" and plan.harness.name == "toolbox_flow"
    assert [p.name for p in plan.points][:3] == ["gpu1_x1", "gpu1_x2", "gpu2_x1"] and len(plan.points) == 8
    config["tests"]["fine_tuning"]["benchmark"]["matrix"]["exclude"] = [{"gpu": g} for g in (1, 2, 4, 8)]
    with pytest.raises(MatrixError) as error:
        benchmark.plan_benchmark(config, key="tests.fine_tuning.benchmark")
    assert str(error.value) == "tests.fine_tuning.benchmark.matrix expands to no point (no factors, or everything excluded)"


def test_plan_benchmark_include_entries_may_name_the_harness_settings_and_deployment_factors():
    include = [{"indicator": "matmul", "replicas": 2}]
    config = cfg.resolve_config(SHIPPED, presets="cpu_smoke", overrides={"tests.benchmark.matrix.include": include}).config
    with pytest.raises(MatrixError, match=r"^matrix include #1 names unknown setting 'replicas' \(did you mean 'reps'\?\); known: backend, "):
        benchmark.plan_benchmark(config)
    config["tests"]["benchmark"]["deployment_factors"] = ["replicas"]
    plan = benchmark.plan_benchmark(config, python="/my/python")
    assert all(p.settings["replicas"] == 2 for p in plan.points) and len(plan.points) == 6
    assert all(p.command.argv[0] == "/my/python" and not any("replicas" in a for a in p.command.argv) for p in plan.points)


def bench_plan(*names, section=None):
    return benchmark.BenchmarkPlan(dict({"name": "bench"}, **(section or {})), RecordingHarness(), planned_points(*names))


def test_status_of_a_plan_never_run(tmp_path):
    expected = {"matrix_dir": None, "total": 2, "pending": 2, "postprocessed": False, "plots_dir": None, "index": None}
    assert benchmark.status(bench_plan("a", "b"), str(tmp_path)) == expected
    assert benchmark.status(bench_plan("a", "b"), None) == expected
    assert os.listdir(tmp_path) == []


def test_status_counts_the_points_left_and_finds_the_plots_made_after_the_last_point(tmp_path):
    plan = bench_plan("a", "b")
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), plan.points, name="bench")[0]
    (tmp_path / "000__bench" / "000__a" / "exit_code").write_text("0\n")
    (tmp_path / "000__bench" / "001__b" / "exit_code").write_text("1\n")
    plots = tmp_path / "001__plots"
    plots.mkdir()
    (plots / "summary.json").write_text("{}")
    state = benchmark.status(bench_plan("a", "b"), str(tmp_path))
    assert state == {"matrix_dir": matrix_dir, "total": 2, "pending": 1, "postprocessed": False, "plots_dir": None, "index": None}
    finished = tmp_path / "000__bench" / "001__b" / "exit_code"
    finished.write_text("0\n")
    os.utime(str(tmp_path / "000__bench" / "000__a" / "exit_code"), (1500, 1500))
    os.utime(str(plots / "summary.json"), (1800, 1800))
    os.utime(str(finished), (2000, 2000))
    # plots older than the last finished point (newer than the first): not post-processed
    assert benchmark.status(bench_plan("a", "b"), str(tmp_path))["postprocessed"] is False
    os.utime(str(plots / "summary.json"), (2000, 2000))
    newer = tmp_path / "002__plots"
    newer.mkdir()
    state = benchmark.status(bench_plan("a", "b"), str(tmp_path))
    # the newest plots directory has no summary yet
    assert (state["pending"], state["postprocessed"], state["plots_dir"]) == (0, False, None)
    (newer / "summary.json").write_text("{}")
    os.utime(str(newer / "summary.json"), (2000, 2000))
    state = benchmark.status(bench_plan("a", "b"), str(tmp_path))
    assert state == {"matrix_dir": matrix_dir, "total": 2, "pending": 0, "postprocessed": True, "plots_dir": str(newer),
                     "index": str(newer / "reports_index.html")}
    assert benchmark.status(bench_plan("a", "b"), str(tmp_path), plots_pattern="*__other")["postprocessed"] is False


def test_record_capacity_writes_each_verdict_and_returns_the_points_to_skip(tmp_path):
    plan = bench_plan("a", "b", "c", "d")
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), plan.points)[0]
    a, b, c, d = (p.directory for p in plan.points)
    # c finished in an earlier run: not skipped now; d was skipped before and now fits
    with open(os.path.join(c, "exit_code"), "w") as handle:
        handle.write("0\n")
    with open(os.path.join(d, "SKIPPED"), "w") as handle:
        handle.write("old")
    capacity = {"b": {"skip": True, "reason": "needs 8 GPUs"}, "c": {"skip": True, "reason": "too big"},
                "d": {"skip": False, "reason": "fits"}}
    skip = benchmark.record_capacity(plan, matrix_dir, capacity, estimate={"total_s": 3})
    assert skip == {"b": "needs 8 GPUs"}
    assert sorted(os.listdir(a)) == ["settings.yaml"]
    assert json.load(open(os.path.join(b, "capacity_plan.json"))) == capacity["b"]
    assert open(os.path.join(b, "SKIPPED")).read() == "skipped before deploy: needs 8 GPUs\n"
    assert not os.path.exists(os.path.join(c, "SKIPPED")) and not os.path.exists(os.path.join(d, "SKIPPED"))
    assert json.load(open(os.path.join(d, "capacity_plan.json"))) == capacity["d"]
    assert json.load(open(os.path.join(matrix_dir, "cost_estimate.json"))) == {"total_s": 3}
    assert benchmark.record_capacity(plan, str(tmp_path / "nowhere"), None) == {}


def test_point_config_writes_the_point_s_settings_under_the_settings_key_without_deployment_factors():
    config = {"tests": {"ft": {"settings": {"lr": 1, "keep": True}}}}
    plan = bench_plan("a", section={"toolbox_flow": {"settings_key": "tests.ft.settings"}, "deployment_factors": ["replicas"]})
    point = mx.Point(0, "a", {"lr": 2, "replicas": 3}, None)
    assert benchmark.point_config(config, plan, point) == {"tests": {"ft": {"settings": {"lr": 2, "keep": True}}}}
    assert config == {"tests": {"ft": {"settings": {"lr": 1, "keep": True}}}}
    assert benchmark.point_config(config, bench_plan("a"), point) is config
    assert benchmark.point_config(config, bench_plan("a", section={"toolbox_flow": {"settings_key": ""}}), point) is config


RUN_SECTION = {"name": "bench", "executor": "fake", "timeout_s": 9, "parallelism": "sequential", "stop_on_error": False}


class RenderingExecutor(executor_base.WholeMatrixExecutor):
    """Hands the matrix to another engine: renders the points and runs none of them here."""

    name = "rendering"
    description = "renders the matrix for another engine"

    def __init__(self, summary=None):
        self.events = []
        self.summary = summary

    def render(self, points, matrix_dir):
        self.events.append(("render", [p.name for p in points], matrix_dir))
        return ["pipelinerun.yaml"]

    def run_rendered(self, points, matrix_dir, harness, rendered):
        self.events.append(("run_rendered", [p.name for p in points], rendered))
        return None if self.summary is None else dict(self.summary)

    def close(self):
        self.events.append(("close",))


def use_executor(monkeypatch, executor):
    created = []

    def create(name, section=None, base_env=None, connections=None):
        created.append((name, section, base_env, connections))
        return executor
    monkeypatch.setattr(benchmark.executors, "create_executor", create)
    return created


def test_run_benchmark_runs_the_plan_with_the_section_s_executor_and_settings(tmp_path, monkeypatch):
    executor = FakeExecutor({"b": (3, 1.0, "failed")})
    executor.close = lambda: executor.events.append(("close",))
    created = use_executor(monkeypatch, executor)
    plan = bench_plan("a", "b", "c", section=RUN_SECTION)
    seen = []
    summary = benchmark.run_benchmark(plan, str(tmp_path), on_progress=seen.append, env={"E": "1"}, connections={"x": {}})
    assert created == [("fake", plan.section, {"E": "1"}, {"x": {}})]
    assert [e for e in executor.events if e[0] == "wait"] == [("wait", "a", 9), ("wait", "b", 9), ("wait", "c", 9)]
    assert executor.events[-1] == ("close",)
    assert (summary["succeeded"], summary["failed"], summary["resumed"]) == (2, 1, False)
    assert summary["matrix_dir"] == os.path.abspath(str(tmp_path / "000__bench")) and len(seen) == 4
    again = benchmark.run_benchmark(bench_plan("a", "b", "c", section=RUN_SECTION), str(tmp_path),
                                    capacity={"b": {"skip": True, "reason": "too big"}})
    assert (again["resumed"], again["skipped"], again["infeasible"], again["succeeded"]) == (True, 2, 1, 0)


def test_run_benchmark_stops_on_error_and_closes_the_executor_when_it_fails(tmp_path, monkeypatch):
    executor = FakeExecutor({"a": (3, 1.0, "failed")})
    use_executor(monkeypatch, executor)
    closed = []
    executor.close = lambda: closed.append(True)
    summary = benchmark.run_benchmark(bench_plan("a", "b", section=dict(RUN_SECTION, stop_on_error=True, parallelism="barrier:1")),
                                      str(tmp_path))
    assert (summary["failed"], summary["not_run"], summary["policy"], closed) == (1, 1, "barrier", [True])
    executor.wait_error = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        benchmark.run_benchmark(bench_plan("a", "c", section=RUN_SECTION), str(tmp_path))
    assert closed == [True, True]


def test_an_executor_that_only_renders_gets_the_unfinished_points(tmp_path, monkeypatch):
    executor = RenderingExecutor()
    use_executor(monkeypatch, executor)
    plan = bench_plan("a", "b", "c", section=RUN_SECTION)
    summary = benchmark.run_benchmark(plan, str(tmp_path), capacity={"c": {"skip": True, "reason": "too big"}})
    matrix_dir = str(tmp_path / "000__bench")
    assert executor.events == [("render", ["a", "b"], matrix_dir), ("run_rendered", ["a", "b"], ["pipelinerun.yaml"]),
                               ("close",)]
    assert summary == {"total": 3, "done": 0, "succeeded": 0, "failed": 0, "skipped": 0, "not_run": 2,
                       "not_run_points": ["a", "b"], "failed_points": [], "rendered_only": True, "abandoned": False,
                       "resumed": False, "infeasible": 1,
                       "infeasible_points": [{"name": "c", "directory": plan.points[2].directory, "reason": "too big"}],
                       "matrix_dir": os.path.abspath(matrix_dir), "rendered": ["pipelinerun.yaml"]}
    assert json.load(open(os.path.join(matrix_dir, "progress.json"))) == summary
    # a point finished since is left out (and counted as skipped); what the other engine reports is kept
    with open(os.path.join(plan.points[0].directory, "exit_code"), "w") as handle:
        handle.write("0\n")
    executor.summary = {"done": 1, "succeeded": 1, "failed": 0, "skipped": 0, "not_run": 0}
    executor.events = []
    summary = benchmark.run_benchmark(bench_plan("a", "b", "c", section=RUN_SECTION), str(tmp_path))
    assert executor.events[0] == ("render", ["b", "c"], matrix_dir)
    assert (summary["total"], summary["skipped"], summary["succeeded"], summary["resumed"], summary["infeasible"]) == (3, 1, 1, True, 0)
    assert "rendered_only" not in summary


def test_an_executor_that_only_renders_gets_every_point_to_run_once_all_finished(tmp_path, monkeypatch):
    executor = RenderingExecutor()
    use_executor(monkeypatch, executor)
    plan = bench_plan("a", "b", "c", section=RUN_SECTION)
    mx.prepare_matrix_dir(str(tmp_path), plan.points, name="bench")
    for point in plan.points[:2]:
        with open(os.path.join(point.directory, "exit_code"), "w") as handle:
            handle.write("0\n")
    summary = benchmark.run_benchmark(bench_plan("a", "b", "c", section=RUN_SECTION), str(tmp_path),
                                      capacity={"c": {"skip": True, "reason": "r"}})
    assert executor.events[0][1] == ["a", "b"]
    assert (summary["skipped"], summary["not_run_points"], summary["infeasible"]) == (0, ["a", "b"], 1)


class HistoryStore:
    """Answers each history query from {model: earlier point documents}."""

    def __init__(self, histories):
        self.histories, self.calls = histories, []

    def history_batch(self, queries, ignore_keys=()):
        self.calls.append(([(q.workload, q.labels) for q in queries], ignore_keys))
        return [self.histories.get(q.labels["model"], []) for q in queries]


def test_estimate_cost_looks_history_up_once_per_model_and_estimates_the_points_to_run():
    plan = bench_plan("p0", "p1", "p2", section={"parallelism": "sliding:2"})
    capacity = {"p0": {"model": "m1", "gpus": 2, "skip": False, "reason": "fits"},
                "p1": {"model": "m2", "gpus": 8, "skip": True, "reason": "too big"}}
    store = HistoryStore({"m1": [{"exit_code": 0, "value": 100.0, "settings": json.dumps({"name": "p0"})}]})
    result = benchmark.estimate_cost(plan, capacity, store, "wl")
    # one look-up per model, in name order (the point without a verdict has no model)
    assert store.calls == [([("wl", {"matrix": "bench", "model": None}), ("wl", {"matrix": "bench", "model": "m1"}),
                             ("wl", {"matrix": "bench", "model": "m2"})], ("point", "settings", "gpus", "exit_code", "run_id"))]
    assert (result["workload"], result["matrix"]) == ("wl", "bench")
    by_name = {p["name"]: p for p in result["points"]}
    assert (by_name["p0"]["estimate_s"], by_name["p0"]["gpus"], by_name["p0"]["reason"]) == (100.0, 2, "fits")
    assert (by_name["p1"]["basis"], by_name["p1"]["skip"]) == ("skipped", True)
    assert (by_name["p2"]["model"], by_name["p2"]["gpus"], by_name["p2"]["skip"], by_name["p2"]["reason"]) == (None, 0, False, None)
    # 100 s of work two points at a time; 2 GPUs for 100 s
    assert result["totals"]["estimated_duration_s"] == 50.0 and result["totals"]["estimated_gpu_hours"] == round(200 / 3600, 3)
    assert result["line"] == ("3 point(s), 1 skipped before deploy, 2 to run on 2 GPU(s) in all: estimated 1 min and 0.06 "
                              "GPU-hours; the estimate rests on history for 1 of 2 point(s) to run (1 with the same settings, "
                              "0 from the nearest)")
    sequential = benchmark.estimate_cost(bench_plan("p0", section={}), None, HistoryStore({}), "wl")
    assert sequential["points"][0]["basis"] == "no history" and sequential["totals"]["to_run"] == 1


def test_empty_factor_list_message():
    with pytest.raises(MatrixError) as error:
        mx.expand_matrix({"a": [1], "size": ()})
    assert str(error.value) == "matrix factor 'size' has an empty list of values"


def test_a_matrix_with_non_ascii_settings_resumes_whatever_the_locale(tmp_path, ascii_locale):
    def points():
        return mx.plan_points([{"name": "a", "label": "café"}], RecordingHarness(), None, "{name}")
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), points())[0]
    assert mx.prepare_matrix_dir(str(tmp_path), points()) == (matrix_dir, True)


def test_a_matrix_plan_as_large_as_the_limit_is_read_whole(tmp_path, monkeypatch):
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), planned_points("a"))[0]
    size = os.path.getsize(os.path.join(matrix_dir, mx.MATRIX_FILE))
    monkeypatch.setattr(mx.bounded_input, "MAX_DOCUMENT_BYTES", size)
    assert mx.find_matrix_dir(str(tmp_path), planned_points("a"))[0] == matrix_dir


def test_point_times_are_utc(tmp_path):
    runner, points = runner_for(tmp_path, ["a"])
    runner.run()
    recorded = json.load(open(os.path.join(points[0].directory, mx.POINT_FILE)))
    assert recorded["started"].endswith("+00:00") and recorded["ended"].endswith("+00:00")
    assert json.load(open(os.path.join(runner.matrix_dir, mx.PROGRESS_FILE)))["updated"].endswith("+00:00")


def test_point_outcome_exposes_its_execution():
    execution = executor_base.Execution(3, 1.5, "failed")
    outcome = mx.PointOutcome(execution, {"doc": 1})
    assert (outcome.ok, outcome.exit_code, outcome.error, outcome.duration, outcome.document) == (False, 3, "failed", 1.5, {"doc": 1})
    assert mx.PointOutcome(executor_base.Execution(0, 0.1)).document is None and mx.PointOutcome(executor_base.Execution(0, 0.1)).ok


def test_the_harness_reads_a_point_s_output_with_the_runner_s_section(tmp_path):
    sections = []

    class SectionHarness(RecordingHarness):
        def read_output(self, directory, section=None):
            sections.append(section)
            return super().read_output(directory, section)
    runner, points = runner_for(tmp_path, ["a"], SectionHarness(), section={"name": "s"})
    runner.run()
    assert sections == [{"name": "s"}]


def test_a_parallelism_with_two_counts_is_a_bad_count():
    with pytest.raises(MatrixError) as error:
        mx.parse_parallelism("barrier:2:3")
    assert str(error.value) == "parallelism 'barrier:2:3': the number of points at once must be a whole number from 1 to 1024"


def test_an_unreadable_newer_plan_does_not_hide_an_older_matching_one(tmp_path):
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), planned_points("a"))[0]
    broken = tmp_path / "001__matbenchmarking"
    broken.mkdir()
    (broken / mx.MATRIX_FILE).write_text("fingerprint: [unclosed\n")
    assert mx.find_matrix_dir(str(tmp_path), planned_points("a"))[0] == matrix_dir


@pytest.mark.parametrize("points_entry", [None, {"a": "000__a"}, [{"directory": "000__a"}, {"name": "a", "directory": "000__a"}]])
def test_a_plan_with_malformed_point_entries_uses_the_well_formed_ones(tmp_path, points_entry):
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), planned_points("a"))[0]
    plan_file = os.path.join(matrix_dir, mx.MATRIX_FILE)
    recorded = yaml.safe_load(open(plan_file))
    recorded["points"] = points_entry
    with open(plan_file, "w") as handle:
        yaml.safe_dump(recorded, handle)
    if isinstance(points_entry, list):
        assert mx.find_matrix_dir(str(tmp_path), planned_points("a"))[0] == matrix_dir
    else:
        with pytest.raises(MatrixError, match="point 'a' has directory None, which is not a directory of the matrix"):
            mx.find_matrix_dir(str(tmp_path), planned_points("a"))


def test_elapsed_time_counts_from_the_start_of_the_run_to_the_millisecond(tmp_path):
    runner, _points = runner_for(tmp_path, ["a", "b", "c"])
    summary = runner.run()
    assert summary["elapsed_s"] > 0
    runner._started = time.monotonic() - 10.00006
    elapsed = runner.progress()["elapsed_s"]
    assert 10.0 <= elapsed < 11.0 and elapsed == round(elapsed, 3)
    assert elapsed == 10.0 or elapsed >= 10.001


def test_the_eta_is_rounded_to_the_millisecond(tmp_path):
    seen = []
    executor = FakeExecutor({"a": (0, 1.00011, None), "b": (0, 1.00011, None), "c": (0, 1.0, None)})
    runner, _points = runner_for(tmp_path, ["a", "b", "c"], executor=executor, on_progress=seen.append)
    runner.run()
    assert [p["eta_s"] for p in seen] == [None, 2.0, 1.0, 0.0]


class SectionHarness(RecordingHarness):
    """Records the section each call is given."""

    def __init__(self):
        super().__init__()
        self.sections = []

    def known_settings(self, section):
        self.sections.append(("known_settings", section))
        return None

    def read_output(self, directory, section=None):
        self.sections.append(("read_output", section))
        return super().read_output(directory, section)


def test_plan_benchmark_gives_the_harness_the_section_and_the_configuration(monkeypatch):
    harness = SectionHarness()
    monkeypatch.setattr(benchmark.harnesses, "get_harness", lambda name: harness)
    config = cfg.resolve_config(SHIPPED, presets="cpu_smoke").config
    plan = benchmark.plan_benchmark(config)
    assert plan.harness is harness and harness.sections == [("known_settings", plan.section)]
    assert harness.checked == [plan.section]
    assert all(call[2] is plan.section and call[4] is config for call in harness.planned) and len(harness.planned) == 8


def test_plan_benchmark_knows_the_parameters_of_the_section_s_own_indicators():
    parameters = ["depth", "backend", "reps", "warmup", "threads"]
    overrides = {"tests.benchmark.indicators": {"mine": {"command": ["x", "--depth={depth}"], "parameters": parameters}},
                 "tests.benchmark.matrix.include": [{"indicator": "mine", "depth": 3}]}
    config = cfg.resolve_config(SHIPPED, presets="cpu_smoke", overrides=overrides).config
    plan = benchmark.plan_benchmark(config)
    assert plan.points[-1].settings["depth"] == 3 and plan.points[-1].command.argv[-1] == "--depth=3"


def test_a_point_setting_the_configuration_does_not_have_is_named():
    plan = bench_plan("a", section={"toolbox_flow": {"settings_key": "tests.ft.settings"}})
    with pytest.raises(ConfigError, match=r"^point 'a': key 'tests.ft.settings.lrr' does not exist in the configuration"):
        benchmark.point_config({"tests": {"ft": {"settings": {"lr": 1}}}}, plan, mx.Point(0, "a", {"lrr": 2}, None))


def test_plan_capacity_plans_every_point_with_its_configuration(monkeypatch):
    made = []

    class Planner:
        def __init__(self, options, settings_key, nodes, **extra):
            made.append((options, settings_key, nodes, extra))

        @staticmethod
        def plan_point(config, settings):
            return {"config": config, "settings": settings}
    monkeypatch.setattr(benchmark.capacity_requests, "PointPlanner", Planner)
    options = {"enabled": True, "request": "r"}
    config = {"tests": {"ft": {"settings": {"lr": 1}}}}
    plan = benchmark.BenchmarkPlan({"capacity": options, "toolbox_flow": {"settings_key": "tests.ft.settings"}}, None,
                                   [mx.Point(0, "a", {"lr": 2}, None), mx.Point(1, "b", {"lr": 3}, None)])
    verdicts = benchmark.plan_capacity(plan, config, nodes=["n1"], model_loader=len)
    assert made == [(options, "tests.ft.settings", ["n1"], {"model_loader": len})]
    assert verdicts == {"a": {"config": {"tests": {"ft": {"settings": {"lr": 2}}}}, "settings": {"lr": 2}},
                        "b": {"config": {"tests": {"ft": {"settings": {"lr": 3}}}}, "settings": {"lr": 3}}}
    # without a settings key: the benchmark's settings, and the configuration as it is
    made.clear()
    plan = benchmark.BenchmarkPlan({"capacity": options, "toolbox_flow": None}, None, [mx.Point(0, "a", {"lr": 2}, None)])
    assert benchmark.plan_capacity(plan, config) == {"a": {"config": config, "settings": {"lr": 2}}}
    assert made == [(options, "tests.benchmark.settings", None, {})]


def test_run_benchmark_records_the_section_estimate_and_gives_the_runner_the_section(tmp_path, monkeypatch):
    harness = SectionHarness()
    use_executor(monkeypatch, FakeExecutor())
    monkeypatch.chdir(tmp_path)
    plan = benchmark.BenchmarkPlan(dict(RUN_SECTION), harness, planned_points("a"))
    summary = benchmark.run_benchmark(plan, "runs", estimate={"total_s": 1})
    matrix_dir = str(tmp_path / "runs" / "000__bench")
    assert summary["matrix_dir"] == matrix_dir
    assert yaml.safe_load(open(os.path.join(matrix_dir, "matrix.yaml")))["spec"] == RUN_SECTION
    assert json.load(open(os.path.join(matrix_dir, "cost_estimate.json"))) == {"total_s": 1}
    assert harness.sections == [("read_output", plan.section)]


def test_run_benchmark_refuses_a_matrix_directory_in_use(tmp_path, monkeypatch):
    use_executor(monkeypatch, FakeExecutor())
    monkeypatch.chdir(tmp_path)
    plan = bench_plan("a", section=RUN_SECTION)
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), plan.points, name="bench")[0]
    with mx.artifacts.ExclusiveLock(os.path.join(matrix_dir, benchmark.MATRIX_LOCK_FILE), "test"):
        with pytest.raises(RunLockError) as error:
            benchmark.run_benchmark(bench_plan("a", section=RUN_SECTION), str(tmp_path))
    assert str(error.value) == "matrix directory %s is in use by pid %d" % (matrix_dir, os.getpid())
    assert mx.read_exit_code(plan.points[0].directory) is None


def test_run_benchmark_gives_the_rendering_executor_the_matrix_directory_and_harness(tmp_path, monkeypatch):
    calls = []

    class Recording(RenderingExecutor):
        def run_rendered(self, points, matrix_dir, harness, rendered):
            calls.append((matrix_dir, harness))
            return None
    use_executor(monkeypatch, Recording())
    plan = bench_plan("a", section=RUN_SECTION)
    benchmark.run_benchmark(plan, str(tmp_path))
    assert calls == [(str(tmp_path / "000__bench"), plan.harness)]


def test_the_runner_calls_run_then_close_on_every_executor_and_nothing_else(tmp_path, monkeypatch):
    """One protocol: a fifth executor is one class whose ``run`` gets the matrix run; the runner
    does not look at what kind of executor it is."""
    calls = []

    class Fifth(executor_base.Executor):
        name = "fifth"

        def run(self, matrix):
            calls.append(("run", matrix.matrix_dir, [p.name for p in matrix.points], matrix.harness, matrix.section,
                          matrix.skip, matrix.timeout, matrix.parallelism, matrix.stop_on_error, matrix.resumed))
            return {"total": 2, "done": 0, "succeeded": 0, "failed": 0, "skipped": 0, "not_run": 2}

        def close(self):
            calls.append(("close",))

        def __getattr__(self, name):
            raise AssertionError("the runner asked the executor for %s" % name)

    use_executor(monkeypatch, Fifth())
    plan = bench_plan("a", "b", section=RUN_SECTION)
    summary = benchmark.run_benchmark(plan, str(tmp_path), capacity={"b": {"skip": True, "reason": "too big"}})
    matrix_dir = str(tmp_path / "000__bench")
    assert calls == [("run", matrix_dir, ["a", "b"], plan.harness, RUN_SECTION, {"b": "too big"}, 9, "sequential",
                      False, False), ("close",)]
    assert (summary["resumed"], summary["matrix_dir"]) == (False, os.path.abspath(matrix_dir))


def test_an_executor_that_only_renders_is_closed_even_when_its_engine_fails(tmp_path, monkeypatch):
    class Failing(RenderingExecutor):
        def run_rendered(self, points, matrix_dir, harness, rendered):
            raise MatrixError("tekton: the PipelineRun could not be created in ns: 403 Forbidden")
    executor = Failing()
    use_executor(monkeypatch, executor)
    with pytest.raises(MatrixError, match="^tekton: the PipelineRun could not be created in ns: 403 Forbidden$"):
        benchmark.run_benchmark(bench_plan("a", section=RUN_SECTION), str(tmp_path))
    assert executor.events[-1] == ("close",)


def test_an_executor_that_only_renders_refuses_a_matrix_directory_in_use(tmp_path, monkeypatch):
    executor = RenderingExecutor()
    use_executor(monkeypatch, executor)
    plan = bench_plan("a", section=RUN_SECTION)
    matrix_dir = mx.prepare_matrix_dir(str(tmp_path), plan.points, name="bench")[0]
    with mx.artifacts.ExclusiveLock(os.path.join(matrix_dir, benchmark.MATRIX_LOCK_FILE), "test"):
        with pytest.raises(RunLockError) as error:
            benchmark.run_benchmark(bench_plan("a", section=RUN_SECTION), str(tmp_path))
    assert str(error.value) == "matrix directory %s is in use by pid %d" % (matrix_dir, os.getpid())
    assert executor.events == [("close",)]  # nothing rendered over the other run's files
    assert not os.path.exists(os.path.join(matrix_dir, mx.PROGRESS_FILE))


def test_an_executor_that_only_renders_runs_no_point_itself():
    executor = RenderingExecutor()
    for call in (lambda: executor.start(None, None, "/nowhere"), lambda: executor.wait(None, 5)):
        with pytest.raises(errors.ExecutorError) as error:
            call()
        assert str(error.value) == "the rendering executor runs no point itself: renders the matrix for another engine"
    assert executor.cancel(None) is None


def test_run_benchmark_abandons_the_run_once_the_controller_is_gone(tmp_path, monkeypatch):
    class Blocking(FakeExecutor):
        def __init__(self):
            super().__init__()
            self.cancelled = threading.Event()

        def wait(self, handle, timeout):
            self.cancelled.wait(30)
            return executor_base.Execution(executor_base.EXIT_CANCELLED, 0.1, "cancelled")

        def cancel(self, handle):
            self.cancelled.set()
    executor = Blocking()
    use_executor(monkeypatch, executor)
    summary = benchmark.run_benchmark(bench_plan("a", "b", section=RUN_SECTION), str(tmp_path), controller_alive=lambda: False)
    assert summary["abandoned"] is True and executor.cancelled.is_set()
    assert summary["not_run_points"] == ["a", "b"]
