import json
import os
import sys

import pytest
import yaml

from helpers import REPO, run_playbook

SCRIPTED = os.path.join(REPO, "tests", "fixtures", "indicators", "scripted.py")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("smoke")
    first = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root)
    return root, first


def test_cpu_smoke_leaves_a_complete_tree(smoke_run):
    root, run = smoke_run
    assert run.returncode == 0, run.output
    assert "matrix: 8/8 done (0 failed, 0 skipped)" in run.flat
    matrix_dir = root / "001__matbenchmarking"
    points = sorted(p for p in os.listdir(matrix_dir) if os.path.isdir(matrix_dir / p))
    assert points == ["000__matmul_float32_256", "001__matmul_float64_256", "002__matmul_float32_512",
                      "003__matmul_float64_512", "004__matmul_float32_1024", "005__matmul_float64_1024",
                      "006__conv1d_float32", "007__conv2d_float32"]
    for point in points:
        directory = matrix_dir / point
        assert (directory / "exit_code").read_text() == "0\n"
        assert (directory / ".uuid").exists()
        settings = yaml.safe_load((directory / "settings.yaml").read_text())
        output = json.loads((directory / "output.json").read_text())
        assert output["name"] == settings["indicator"]
        assert output["@result"]["rate"] > 0
    progress = json.loads((matrix_dir / "progress.json").read_text())
    assert (progress["done"], progress["failed"]) == (8, 0)


def test_second_run_into_the_same_directory_has_nothing_left_to_do_and_changes_nothing(smoke_run):
    root, _first = smoke_run
    before = sorted(os.listdir(root))
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root)
    assert run.returncode == 0, run.output
    assert "nothing left to do: every point finished and was post-processed" in run.flat
    assert "changed=0" in run.flat
    assert sorted(n for n in os.listdir(root) if n != ".perfscale-run.lock") == \
        sorted(n for n in before if n != ".perfscale-run.lock")
    assert "run id %s" % json.loads((root / "run.json").read_text())["run_id"] in run.flat


def test_a_run_whose_points_finished_but_were_not_post_processed_is_only_post_processed(tmp_path):
    root = tmp_path / "run"
    first = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root,
                         "-e", '{"overrides": {"tests.capture_environment.enabled": false}}')
    assert first.returncode == 0, first.output
    for plots in [d for d in os.listdir(root) if d.endswith("__plots")]:
        os.remove(root / plots / "summary.json")  # as if post-processing had been interrupted
    again = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root,
                         "-e", '{"overrides": {"tests.capture_environment.enabled": false}}')
    assert again.returncode == 0, again.output
    assert "0 succeeded, 0 failed, 8 skipped" in again.flat
    assert len([d for d in os.listdir(root) if d.endswith("__plots")]) == 2


def test_rehearsal_lists_points_and_runs_nothing(tmp_path):
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_full,rehearsal", "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode == 0, run.output
    assert "rehearsal: 000__matmul_float32_256_t1" in run.flat
    assert "rehearsal: 022__conv2d_float32_112_t2" in run.flat
    assert not [d for d in os.listdir(tmp_path) if "__" in d]


@pytest.mark.parametrize("overrides,message", [
    ({"tests.benchmark.matrix.factors": {"indicator": "matmul", "size": []}},
     "matrix factor 'size' has an empty list of values"),
    ({"tests.benchmark.matrix.include": [{"indicater": "conv2d"}]},
     "matrix include #1 names unknown setting 'indicater' (did you mean 'indicator'?)"),
    ({"tests.benchmark.matrix.factors": {"indicator": ["matmul", "fft"]}},
     "unknown indicator 'fft'; known indicators: conv1d, conv2d, matmul"),
    ({"tests.benchmark.matrix.factors": {"indicator": "matmul", "size": [64, -1]}},
     "size must be a positive integer, got -1"),
    ({"tests.benchmark.parallelism": "sliding:zero"}, "parallelism 'sliding:zero'"),
])
def test_bad_matrix_input_fails_before_anything_runs(tmp_path, overrides, message):
    run = run_playbook("playbooks/benchmark.yml", "-e", json.dumps({"overrides": overrides}),
                       "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode != 0
    lines = [line for line in run.output.splitlines() if message in line]
    assert lines, run.output
    assert not [d for d in os.listdir(tmp_path) if d.endswith("__matbenchmarking")]


def failing_overrides(fail_on_point_failure):
    return {
        "tests.capture_environment.enabled": False,
        "tests.benchmark.fail_on_point_failure": fail_on_point_failure,
        "tests.benchmark.parallelism": "sliding:2",
        "tests.benchmark.indicators": {"scripted": {"command": [sys.executable, SCRIPTED]}},
        "tests.benchmark.matrix": {"factors": {"indicator": "scripted", "mode": ["ok", "fail", "not_json"]},
                                   "common_settings": {}, "include": [], "exclude": []},
    }


def test_failed_points_are_reported_after_the_matrix_completes(tmp_path):
    run = run_playbook("playbooks/benchmark.yml", "-e", json.dumps({"overrides": failing_overrides(True)}),
                       "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode != 0
    assert "1 succeeded, 2 failed" in run.flat
    assert "2 benchmark point(s) failed: mode=fail, mode=not_json" in run.flat
    matrix_dir = tmp_path / "000__matbenchmarking"
    assert (matrix_dir / "001__mode=fail" / "FAILURE").exists()
    assert "harness output is not JSON" in (matrix_dir / "002__mode=not_json" / "FAILURE").read_text()


def test_failed_points_can_be_tolerated_by_configuration(tmp_path):
    run = run_playbook("playbooks/benchmark.yml", "-e", json.dumps({"overrides": failing_overrides(False)}),
                       "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode == 0, run.output
    assert "1 succeeded, 2 failed" in run.flat
