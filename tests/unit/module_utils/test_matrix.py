import json
import os
import sys
import time

import pytest
import yaml

from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import benchmark
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg
from ansible_collections.perfscale.topsail.plugins.module_utils import executors
from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as mx
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError, MatrixError

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
