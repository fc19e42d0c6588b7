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

from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import tekton_pipeline as tekton
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError, MatrixError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import kubernetes as k8s
from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import tekton_point
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
    from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import section as benchmark_section
    from ansible_collections.perfscale.topsail.plugins.module_utils.executors import tekton as tekton_executor

    assert benchmark_section.benchmark_model()().model_dump()["tekton"] == tekton_executor.DEFAULTS


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


def _point(index, **settings):
    return matrix_lib.Point(index, "p%d" % index, settings, None)


def test_the_task_is_one_step_that_runs_its_point_with_the_collection_on_the_python_path():
    settings = {"image": "quay.io/x/runner:1", "namespace": "bench", "resources": {"limits": {"cpu": "2"}}}
    task = tekton.render_task(settings, ["size", "backend"], "/usr/bin/python3",
                              "/opt/c/ansible_collections/perfscale/topsail/")
    assert task == {
        "apiVersion": "tekton.dev/v1", "kind": "Task",
        "metadata": {"name": "perfscale-point", "namespace": "bench",
                     "labels": {"app.kubernetes.io/managed-by": "perfscale.topsail"}},
        "spec": {
            "description": "One point of a perfscale.topsail benchmark matrix",
            "params": [{"name": "section", "type": "string"}, {"name": "size", "type": "string", "default": ""},
                       {"name": "backend", "type": "string", "default": ""}],
            "results": [{"name": "exit-code", "type": "string", "description": "the point's exit code"}],
            "steps": [{
                "name": "point", "image": "quay.io/x/runner:1",
                "command": ["/usr/bin/python3", "-P", "/opt/c/ansible_collections/perfscale/topsail/"
                            "plugins/module_utils/benchmark/tekton_point.py"],
                "args": ["--section", "$(params.section)", "--result", "$(results.exit-code.path)",
                         "--set", "size=$(params.size)", "--set", "backend=$(params.backend)"],
                "onError": "continue",
                "env": [{"name": "PYTHONPATH", "value": "/opt/c"}],
                "computeResources": {"limits": {"cpu": "2"}},
            }],
        },
    }
    assert task["metadata"]["labels"] is not tekton.LABELS


@pytest.mark.parametrize("collection, python_path", [
    ("/a/ansible_collections/x/ansible_collections/perfscale/topsail", "/a/ansible_collections/x"),   # the last one
    ("/srv/perfscaleX/", None),                                 # not under ansible_collections: nothing to add
])
def test_the_python_path_is_the_root_above_the_last_ansible_collections(collection, python_path):
    step = tekton.render_task({"image": "i", "namespace": "n"}, [], "python", collection)["spec"]["steps"][0]
    assert step.get("env") == ([{"name": "PYTHONPATH", "value": python_path}] if python_path else None)
    assert step["command"][2] == collection.rstrip("/") + "/plugins/module_utils/benchmark/tekton_point.py"
    assert "computeResources" not in step


def test_the_pipelinerun_embeds_the_pipeline_its_deadline_and_a_gather_task():
    section = {"name": "Matmul Sweep!", "parallelism": "sequential", "timeout_s": 100, "b": 1, "a": 2}
    points = [_point(0, size=1), _point(1, size=2)]
    settings = {"image": "img", "namespace": "bench", "unroll": ["size"], "service_account": "runner"}
    run = tekton.render_pipelinerun(section, points, settings)
    tasks = run["spec"]["pipelineSpec"]["tasks"]
    assert [t["name"] for t in tasks] == ["point-0", "point-1"]
    assert run == {
        "apiVersion": "tekton.dev/v1", "kind": "PipelineRun",
        "metadata": {"generateName": "matmul-sweep-", "namespace": "bench",
                     "labels": {"app.kubernetes.io/managed-by": "perfscale.topsail"}},
        "spec": {
            "params": [{"name": "section",
                        "value": '{"a": 2, "b": 1, "name": "Matmul Sweep!", "parallelism": "sequential", "timeout_s": 100}'}],
            "timeouts": {"pipeline": "4m20s"},        # 2 points x 100 s + 60 s
            "pipelineSpec": {
                "description": "perfscale.topsail matrix Matmul Sweep!: 2 point(s), parallelism sequential, unroll size",
                "params": [{"name": "section", "type": "string"}],
                "tasks": tasks,
                "finally": [{
                    "name": "gather",
                    "params": [{"name": "statuses", "value": '{"point-0": "$(tasks.point-0.status)", '
                                                             '"point-1": "$(tasks.point-1.status)"}'}],
                    "taskSpec": {
                        "params": [{"name": "statuses", "type": "string"}],
                        "steps": [{"name": "gather", "image": "img",
                                   "command": ["python3", "-c", "import sys; print(sys.argv[1])",
                                               "$(params.statuses)"]}],
                    },
                }],
            },
            "taskRunTemplate": {"serviceAccountName": "runner"},
        },
    }
    assert run["metadata"]["labels"] is not tekton.LABELS


def test_without_unroll_or_service_account_the_pipelinerun_says_neither():
    section = {"name": "!!!", "parallelism": "all"}
    settings = {"image": "i", "namespace": "n", "parallelism": "sequential"}
    run = tekton.render_pipelinerun(section, [_point(0, size=1)], settings)
    assert run["metadata"]["generateName"] == "matrix-"      # nothing left of the name: the fallback
    assert run["spec"]["pipelineSpec"]["description"] == "perfscale.topsail matrix !!!: 1 point(s), parallelism sequential"
    assert "taskRunTemplate" not in run["spec"]
    assert run["spec"]["timeouts"] == {"pipeline": "11m0s"}   # the default timeout_s 600 for one point, + 60 s
    long_name = tekton.render_pipelinerun({"name": "x" * 50, "parallelism": "all"}, [_point(0)],
                                          {"image": "i", "namespace": "n"})
    assert long_name["metadata"]["generateName"] == "x" * 40 + "-"


@pytest.mark.parametrize("seconds, count, deadline", [(None, 3, 1860.0), (10, 0, 70.0), (10, 2, 80.0), (2.5, 4, 70.0)])
def test_the_matrix_deadline_is_every_point_in_turn_plus_a_margin(seconds, count, deadline):
    section = {} if seconds is None else {"timeout_s": seconds}
    assert tekton.matrix_deadline_s(section, count) == deadline


SECTION_ARG = {"name": "section", "value": "$(params.section)"}
REF = {"name": "perfscale-point"}


def test_sequential_points_are_one_task_each_after_the_previous_with_their_values_as_json():
    points = [_point(0, size=1, backend="numpy"), _point(1, size=2, backend="numpy")]
    assert tekton.pipeline_tasks(points, "sequential") == [
        {"name": "point-0", "taskRef": REF,
         "params": [SECTION_ARG, {"name": "size", "value": "1"}, {"name": "backend", "value": '"numpy"'}]},
        {"name": "point-1", "taskRef": REF, "runAfter": ["point-0"],
         "params": [SECTION_ARG, {"name": "size", "value": "2"}, {"name": "backend", "value": '"numpy"'}]},
    ]


def test_barrier_batches_are_matrix_tasks_of_their_product_after_the_previous_batch():
    points = [_point(0, size=1, backend="numpy"), _point(1, size=2, backend="numpy"), _point(2, size=3, backend="numpy")]
    assert tekton.pipeline_tasks(points, "barrier:2") == [
        {"name": "group-0-batch-0", "taskRef": REF, "params": [SECTION_ARG, {"name": "backend", "value": '"numpy"'}],
         "matrix": {"params": [{"name": "size", "value": ["1", "2"]}]}},
        {"name": "point-2", "taskRef": REF, "runAfter": ["group-0-batch-0"],
         "params": [SECTION_ARG, {"name": "size", "value": "3"}, {"name": "backend", "value": '"numpy"'}]},
    ]


def test_points_that_are_not_a_product_fan_out_as_named_combinations():
    points = [_point(0, size=1, backend="numpy"), _point(1, size=2, backend="torch")]   # 2 of the 4 combinations
    assert tekton.pipeline_tasks(points, "all") == [
        {"name": "group-0", "taskRef": REF, "params": [SECTION_ARG], "matrix": {"include": [
            {"name": "point-0", "params": [{"name": "size", "value": "1"}, {"name": "backend", "value": '"numpy"'}]},
            {"name": "point-1", "params": [{"name": "size", "value": "2"}, {"name": "backend", "value": '"torch"'}]},
        ]}},
    ]


def test_unrolled_groups_run_in_turn_each_named_by_its_values_and_sliding_lanes_follow_their_own():
    points = [_point(i, size=i, backend=backend) for i, backend in enumerate(["numpy", "numpy", "numpy", "torch"])]
    tasks = tekton.pipeline_tasks(points, "sliding:2", unroll=["backend"])
    assert [(t["name"], t.get("runAfter"), t["displayName"]) for t in tasks] == [
        ("point-0", None, 'backend="numpy"'), ("point-1", None, 'backend="numpy"'),
        ("point-2", ["point-0"], 'backend="numpy"'),
        ("point-3", ["point-1", "point-2"], 'backend="torch"'),     # after the first group's last of each lane
    ]
    two = tekton.pipeline_tasks(points, "all", unroll=["backend", "size"])
    assert two[0]["displayName"] == 'backend="numpy", size=0'
    run = tekton.render_pipelinerun({"name": "m", "parallelism": "all"}, points,
                                    {"image": "i", "namespace": "n", "unroll": ["backend", "size"]})
    assert run["spec"]["pipelineSpec"]["description"].endswith("4 point(s), parallelism all, unroll backend, size")


@pytest.mark.parametrize("name", ["a.b", "1st", "section", "with space"])
def test_a_setting_that_cannot_be_a_parameter_name_is_refused_naming_it(name):
    with pytest.raises(MatrixError) as refused:
        tekton.setting_names([_point(0, ok_name=1), _point(1, **{name: 2})])
    assert str(refused.value) == ("setting %r cannot be a Tekton parameter name (letters, digits, _ and -; not "
                                  "'section')" % name)


def test_unroll_settings_no_point_has_are_named_together():
    with pytest.raises(MatrixError) as refused:
        tekton.pipeline_tasks([_point(0, size=1)], "all", unroll=["size", "x", "y"])
    assert str(refused.value) == "tests.benchmark.tekton.unroll: x, y is not a setting of any point"


def test_one_matrix_task_fans_out_at_most_tektons_256_combinations():
    points = [_point(i, size=i) for i in range(257)]
    assert tekton.pipeline_tasks(points[:256], "all")[0]["matrix"]["params"][0]["value"][-1] == "255"
    with pytest.raises(MatrixError) as refused:
        tekton.pipeline_tasks(points, "all")
    assert str(refused.value) == ("a Tekton matrix task would fan out 257 points (Tekton's limit: 256); use barrier:N, "
                                  "sliding:N or tests.benchmark.tekton.unroll")


def test_values_are_json_with_sorted_keys():
    assert tekton.encode({"b": 1, "a": [True, None]}) == '{"a": [true, null], "b": 1}'
