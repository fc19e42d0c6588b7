"""The matrix as a Tekton PipelineRun: every layout validates strictly (the CRDs, and the embedded
Pipeline against Tekton's v1 OpenAPI definitions), and executing it by Tekton's rules (matrix
fan-out, runAfter, onError: continue) runs every point exactly once, with the concurrency and the
batch boundaries its parallelism promises. The Task's step finds and runs its point."""

import json
import os
import subprocess
import sys

import pytest
import yaml

from kube_fixtures import REPO_ROOT as REPO  # also puts kubesim on the path
from kubesim.controllers.tekton import fan_out

from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import benchmark
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import tekton_pipeline as tekton
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError, MatrixError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import kubernetes as k8s
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import tekton_point
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.tekton import TektonExecutor
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import validation

VALIDATOR = validation.OpenAPIDefinitionsValidator()


def _config(factors, parallelism="sequential", include=(), exclude=(), tekton_settings=None):
    with open(os.path.join(REPO, "config", "config.yaml"), encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    section = config["tests"]["benchmark"]
    section.update(executor="tekton", parallelism=parallelism, tekton=tekton_settings or {},
                   matrix={"factors": factors, "common_settings": {"backend": "numpy", "reps": 2},
                           "include": list(include), "exclude": list(exclude)})
    return config


def _render(config, tmp_path):
    plan = benchmark.plan_benchmark(config)
    executor = TektonExecutor.from_section(plan.section)
    rendered = executor.render(plan.points, str(tmp_path))
    with open(rendered["pipelinerun"], encoding="utf-8") as handle:
        run = yaml.safe_load(handle)
    with open(rendered["task"], encoding="utf-8") as handle:
        task = yaml.safe_load(handle)
    return plan, run, task


def execute(run):
    """Run a PipelineRun by Tekton's rules with every TaskRun taking one time unit: a pipeline
    task starts when all its runAfter tasks ended (failures included: the step's onError is
    continue), and fans out into one TaskRun per matrix combination, all at once.
    Returns [(start time, parameters of the TaskRun)]."""
    tasks = {t["name"]: t for t in run["spec"]["pipelineSpec"]["tasks"]}
    ended, started, time = {}, [], 0
    while len(ended) < len(tasks):
        ready = [name for name, t in tasks.items() if name not in ended
                 and all(ended.get(dep, time + 1) <= time for dep in t.get("runAfter", ()))]
        assert ready, "a cycle or a dangling runAfter"
        for name in ready:
            for combination in fan_out(tasks[name]):
                started.append((time, combination))
            ended[name] = time + 1
        time += 1
    return started


def _settings_of(combination):
    return {k: json.loads(v) for k, v in combination.items() if k != tekton.SECTION_PARAM and v != ""}


def _check_every_point_once(plan, started):
    ran = sorted(json.dumps(_settings_of(c), sort_keys=True) for _t, c in started)
    assert ran == sorted(json.dumps(p.settings, sort_keys=True) for p in plan.points)


def _concurrency(started):
    times = [t for t, _c in started]
    return max(times.count(t) for t in set(times)), max(times) + 1


FACTORS = {"indicator": "matmul", "size": [64, 128, 256], "dtype": ["float32", "float64"]}


@pytest.mark.parametrize("parallelism, unroll, width, steps", [
    ("all", [], 6, 1),
    ("sequential", [], 1, 6),
    ("barrier:4", [], 4, 2),
    ("sliding:4", [], 4, 2),
    ("all", ["dtype"], 3, 2),
    ("barrier:2", ["dtype"], 2, 4),
    ("sliding:2", ["dtype"], 2, 4),
    ("sequential", ["dtype", "size"], 1, 6),
])
def test_each_layout_validates_and_runs_every_point_once_at_its_concurrency(tmp_path, parallelism, unroll, width, steps):
    plan, run, task = _render(_config(FACTORS, tekton_settings={"parallelism": parallelism, "unroll": unroll}), tmp_path)
    assert validation.validate_pipelinerun(run, validator=VALIDATOR) == []
    assert VALIDATOR.validate(task) == [] and VALIDATOR.validate_definition(task["spec"], "v1.TaskSpec") == []
    started = execute(run)
    _check_every_point_once(plan, started)
    assert _concurrency(started) == (width, steps)
    assert run["spec"]["pipelineSpec"]["finally"][0]["name"] == "gather"
    assert task["spec"]["steps"][0]["onError"] == "continue"


def test_all_at_once_is_a_matrix_of_the_factors_or_an_explicit_include(tmp_path):
    _plan, run, _task = _render(_config(FACTORS, tekton_settings={"parallelism": "all"}), tmp_path / "product")
    (task,) = run["spec"]["pipelineSpec"]["tasks"]
    assert [p["name"] for p in task["matrix"]["params"]] == ["size", "dtype"]
    assert task["matrix"]["params"][1]["value"] == ['"float32"', '"float64"']
    assert {p["name"]: p["value"] for p in task["params"]}["indicator"] == '"matmul"'
    # an excluded combination and an extra point: no longer a product, one named combination per point
    plan, run, _task = _render(_config(FACTORS, exclude=[{"size": 64, "dtype": "float64"}],
                                       include=[{"indicator": "conv1d", "dtype": "float32", "length": 64}],
                                       tekton_settings={"parallelism": "all"}),
                               tmp_path / "subset")
    (task,) = run["spec"]["pipelineSpec"]["tasks"]
    assert "params" not in task["matrix"] and len(task["matrix"]["include"]) == len(plan.points) == 6
    _check_every_point_once(plan, execute(run))
    assert validation.validate_pipelinerun(run, validator=VALIDATOR) == []


def test_a_wrong_key_in_the_embedded_pipeline_is_named_with_its_schema():
    run = {"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "metadata": {"generateName": "m-"},
           "spec": {"pipelineSpec": {"tasks": [{"name": "t", "taskRef": {"name": "x"}, "matrixx": {}}]}}}
    problems = validation.validate_pipelinerun(run, validator=VALIDATOR)
    assert [str(p) for p in problems] == [
        "PipelineRun m-: spec.pipelineSpec.tasks[0].matrixx: unknown field (schema v1.PipelineTask)"]
    run["spec"]["pipelineSpec"]["tasks"][0] = {"name": "t", "taskRef": {"name": "x"}, "params": [{"name": "p", "value": 3}]}
    problems = validation.validate_pipelinerun(run, validator=VALIDATOR)
    assert len(problems) == 1 and "spec.pipelineSpec.tasks[0].params[0].value" in str(problems[0])


def test_too_many_points_for_one_matrix_and_bad_settings_are_one_line(tmp_path):
    with pytest.raises(MatrixError, match=r"would fan out 300 points \(Tekton's limit: 256\); use barrier:N"):
        _render(_config({"indicator": "matmul", "size": list(range(1, 301))}, tekton_settings={"parallelism": "all"}),
                tmp_path)
    with pytest.raises(MatrixError, match="tests.benchmark.tekton.unroll: nope is not a setting of any point"):
        _render(_config(FACTORS, tekton_settings={"unroll": ["nope"]}), tmp_path)
    with pytest.raises(ConfigError, match=r"tests\.benchmark\.tekton\.parallelism"):
        benchmark.plan_benchmark(_config(FACTORS, tekton_settings={"parallelism": "lots"}))


def test_the_task_step_finds_its_point_and_runs_it(tmp_path):
    plan = benchmark.plan_benchmark(_config(FACTORS))
    point = plan.points[3]
    section = json.dumps(plan.section)
    result = tmp_path / "exit-code"
    argv = [sys.executable, "-P", tekton_point.__file__.replace(".pyc", ".py"), "--section", section,
            "--result", str(result)]
    sets = []
    for name in tekton.setting_names(plan.points):
        sets += ["--set", "%s=%s" % (name, tekton.encode(point.settings[name]) if name in point.settings else "")]
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.dirname(k8s.CONTROLLER_COLLECTION))),
               TMPDIR=str(tmp_path))
    done = subprocess.run(argv + sets, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "PERFSCALE-POINT 3 003__%s" % point.name
    code, files = k8s.parse_archive(done.stdout)
    assert code == 0 and json.loads(files["stdout.log"])["@result"]["rate"] > 0
    assert result.read_text() == "0"
    wrong = subprocess.run(argv + ["--set", 'size=9999', "--set", 'indicator="matmul"'], capture_output=True, text=True,
                           env=env, timeout=120, check=False)
    assert wrong.returncode == 2 and "are no point of the matrix" in wrong.stderr and result.read_text() == "2"


def test_the_defaults_are_those_of_the_configuration_schema():
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import schema as config_schema
    from ansible_collections.perfscale.topsail.plugins.module_utils.executors import tekton as tekton_executor

    assert config_schema.benchmark_model()().model_dump()["tekton"] == tekton_executor.DEFAULTS


@pytest.mark.parametrize("seconds, duration", [(45, "45s"), (660, "11m0s"), (6060, "1h41m0s"), (3600, "1h0m0s"),
                                               (90.2, "1m31s")])
def test_durations_are_written_as_go_writes_them(seconds, duration):
    assert tekton.go_duration(seconds) == duration


def test_the_pipelinerun_carries_the_matrix_own_deadline_not_tektons_hour(tmp_path):
    """Tekton cancels a PipelineRun after 60 minutes unless spec.timeouts.pipeline says otherwise: a matrix
    of 6 points of 15 minutes each would be cut in the middle. The deadline is every point's timeout one
    after the other plus a margin, the same the executor follows the run for."""
    config = _config({"indicator": "matmul", "size": [64, 96, 128], "dtype": ["float32", "float64"]})
    config["tests"]["benchmark"]["timeout_s"] = 900
    plan, run, _task = _render(config, tmp_path)
    assert tekton.matrix_deadline_s(plan.section, len(plan.points)) == 6 * 900 + 60
    assert run["spec"]["timeouts"] == {"pipeline": "1h31m0s"}
    assert validation.validate_pipelinerun(run, validator=VALIDATOR) == []
