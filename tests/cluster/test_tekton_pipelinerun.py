"""The rendered PipelineRun executed by kubesim's Tekton controller (Tekton's rules: matrix fan-out,
runAfter, finally, onError: continue): every point runs once, at most N at once with barrier:N /
sliding:N, batch after batch, one at a time when sequential, group after group when unrolled; a
failing point does not stop the others; and the Task's step, run as a local process, runs its
point and sends its directory back through the log."""

import json
import os
import sys
import time

import pytest
import yaml

from kube_fixtures import kubesim_cluster
from kubesim.clock import parse_timestamp

from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import tekton_pipeline as tekton
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import kubernetes as k8s
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.tekton import TektonExecutor

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMESPACE = "perfscale-benchmark"
FACTORS = {"indicator": "matmul", "size": [64, 96, 128], "dtype": ["float32", "float64"]}
# each simulated step lasts 20 simulated seconds (1 s at time scale 20)
SIMULATED = {"kubesim.perfscale.io/run-local": "false", "kubesim.perfscale.io/duration-s": "20"}


@pytest.fixture(scope="module")
def sim():
    with kubesim_cluster(profile="vanilla", addons=["tekton"], time_scale=20, pod_start_delay=0) as server:
        yield server


@pytest.fixture(scope="module")
def api(sim):
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=sim.kubeconfig)
    core = client.CoreV1Api(api_client)
    try:
        core.create_namespace({"metadata": {"name": NAMESPACE}})
    except client.exceptions.ApiException as exc:
        if exc.status != 409:
            raise
    return client.CustomObjectsApi(api_client), core


def _plan(tekton_settings, factors=None, indicators=None):
    with open(os.path.join(REPO, "config", "config.yaml"), encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    section = config["tests"]["benchmark"]
    section.update(executor="tekton", tekton=tekton_settings, indicators=indicators or {},
                   matrix={"factors": factors or FACTORS, "common_settings": {"backend": "numpy", "reps": 2, "warmup": 1},
                           "include": [], "exclude": []})
    return benchmark.plan_benchmark(config)


def _run(api, plan, tmp_path, annotations):
    rendered = TektonExecutor.from_section(plan.section).render(plan.points, str(tmp_path))
    return _run_rendered(api, rendered, annotations)


def _run_rendered(api, rendered, annotations):
    custom, _core = api
    with open(rendered["task"], encoding="utf-8") as handle:
        task = yaml.safe_load(handle)
    with open(rendered["pipelinerun"], encoding="utf-8") as handle:
        run = yaml.safe_load(handle)
    try:
        custom.delete_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "tasks", tekton.TASK_NAME)
    except Exception:  # noqa: BLE001 - absent the first time
        pass
    custom.create_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "tasks", task)
    run["metadata"].setdefault("annotations", {}).update(annotations)
    created = custom.create_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "pipelineruns", run)
    name = created["metadata"]["name"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        run = custom.get_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "pipelineruns", name)
        conditions = (run.get("status") or {}).get("conditions") or []
        if conditions and conditions[0]["status"] in ("True", "False"):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("PipelineRun %s did not finish: %s" % (name, run.get("status")))
    taskruns = [t for t in custom.list_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "taskruns")["items"]
                if t["metadata"]["labels"]["tekton.dev/pipelineRun"] == name]
    return run, taskruns


def _points_and_intervals(taskruns):
    points, intervals = [], []
    for taskrun in taskruns:
        if taskrun["metadata"]["labels"]["tekton.dev/memberOf"] != "tasks":
            continue
        params = {p["name"]: p["value"] for p in taskrun["spec"]["params"] if p["name"] != tekton.SECTION_PARAM}
        points.append(json.dumps({k: json.loads(v) for k, v in params.items() if v != ""}, sort_keys=True))
        intervals.append((parse_timestamp(taskrun["status"]["startTime"]), parse_timestamp(taskrun["status"]["completionTime"]),
                          params))
    return points, intervals


def _max_at_once(intervals):
    return max(sum(1 for s, e, _p in intervals if s <= start < e) for start, _e, _p in intervals)


@pytest.mark.parametrize("parallelism, unroll, at_most", [
    ("all", [], 6), ("sequential", [], 1), ("barrier:4", [], 4), ("sliding:4", [], 4), ("barrier:2", ["dtype"], 2)])
def test_each_layout_runs_every_point_once_at_its_concurrency(api, tmp_path, parallelism, unroll, at_most):
    plan = _plan({"parallelism": parallelism, "unroll": unroll})
    run, taskruns = _run(api, plan, tmp_path, SIMULATED)
    assert run["status"]["conditions"][0]["reason"] == "Succeeded", run["status"]
    points, intervals = _points_and_intervals(taskruns)
    assert sorted(points) == sorted(json.dumps(p.settings, sort_keys=True) for p in plan.points)
    assert _max_at_once(intervals) == at_most, sorted(intervals, key=lambda i: i[0])
    if parallelism.startswith("barrier"):
        # a batch starts once the whole previous batch ended
        batches = {}
        for taskrun in taskruns:
            batches.setdefault(taskrun["metadata"]["labels"]["tekton.dev/pipelineTask"], []).append(taskrun)
        order = sorted((min(parse_timestamp(t["status"]["startTime"]) for t in runs),
                        max(parse_timestamp(t["status"]["completionTime"]) for t in runs))
                       for name, runs in batches.items() if name != "gather")
        assert all(later[0] >= earlier[1] for earlier, later in zip(order, order[1:])), order
    if unroll:
        # group after group: every float32 point ended before the first float64 one started
        f32 = [i for i in intervals if json.loads(i[2]["dtype"]) == "float32"]
        f64 = [i for i in intervals if json.loads(i[2]["dtype"]) == "float64"]
        assert max(e for _s, e, _p in f32) <= min(s for s, _e, _p in f64)
    gather = [t for t in taskruns if t["metadata"]["labels"]["tekton.dev/memberOf"] == "finally"]
    assert len(gather) == 1 and "Succeeded" in gather[0]["spec"]["params"][0]["value"]


def test_a_failing_point_does_not_stop_the_others(api, tmp_path):
    scripted = [sys.executable, os.path.join(REPO, "tests", "fixtures", "indicators", "scripted.py")]
    plan = _plan({"parallelism": "sequential"}, factors={"indicator": "scripted", "mode": ["fail", "ok"]},
                 indicators={"scripted": {"command": scripted, "parameters": None}})
    run, taskruns = _run(api, plan, tmp_path, {"kubesim.perfscale.io/run-local": "true"})
    # the first point's step failed with onError: continue: its TaskRun succeeds with the exit
    # code recorded, the second point runs after it, and the run succeeds
    assert run["status"]["conditions"][0]["reason"] == "Succeeded", run["status"]
    codes = {t["metadata"]["labels"]["tekton.dev/pipelineTask"]: t["status"]["steps"][0]["terminated"]["exitCode"]
             for t in taskruns}
    _custom, core = api
    logs = {t["metadata"]["name"]: core.read_namespaced_pod_log(t["status"]["podName"], NAMESPACE) for t in taskruns}
    assert codes == {"point-0": 3, "point-1": 0, "gather": 0}, (codes, logs)


def test_the_task_step_runs_its_point_as_a_local_process(api, tmp_path):
    plan = _plan({"parallelism": "all"}, factors={"indicator": "matmul", "size": [64, 96]})
    run, taskruns = _run(api, plan, tmp_path, {"kubesim.perfscale.io/run-local": "true"})
    assert run["status"]["conditions"][0]["reason"] == "Succeeded", run["status"]
    _custom, core = api
    seen = {}
    for taskrun in taskruns:
        if taskrun["metadata"]["labels"]["tekton.dev/memberOf"] != "tasks":
            continue
        log = core.read_namespaced_pod_log(taskrun["status"]["podName"], NAMESPACE, _preload_content=False).data.decode()
        header = [line for line in log.splitlines() if line.startswith("PERFSCALE-POINT ")]
        code, files = k8s.parse_archive(log)
        assert code == 0 and taskrun["status"]["steps"][0]["terminated"]["exitCode"] == 0
        seen[header[0].split()[2]] = json.loads(files["stdout.log"])["@result"]["rate"]
    assert sorted(seen) == ["000__%s" % plan.points[0].name, "001__%s" % plan.points[1].name]
    assert all(rate > 0 for rate in seen.values())


def _tree(root):
    import glob

    return sorted(os.path.relpath(p, root).split(os.sep, 1)[1] for p in glob.glob(os.path.join(str(root), "*", "*", "*"))
                  if os.path.isfile(p))


def test_apply_runs_the_pipelinerun_and_brings_every_point_back_as_the_local_executor_leaves_it(sim, api, tmp_path):
    scripted = [sys.executable, os.path.join(REPO, "tests", "fixtures", "indicators", "scripted.py")]
    indicators = {"scripted": {"command": scripted, "parameters": None}}
    factors = {"indicator": "scripted", "mode": ["ok", "fail"], "value": [1, 2]}
    tekton_settings = {"apply": True, "parallelism": "sliding:2",
                       "annotations": {"kubesim.perfscale.io/run-local": "true"}}
    plan = _plan(tekton_settings, factors=factors, indicators=indicators)
    summary = benchmark.run_benchmark(plan, str(tmp_path / "tekton"), env=dict(os.environ, KUBECONFIG=sim.kubeconfig))
    assert (summary["succeeded"], summary["failed"], summary["not_run"]) == (2, 2, 0), summary
    assert summary["pipelinerun_reason"] == "Succeeded"
    local = _plan({}, factors=factors, indicators=indicators)
    local.section["executor"] = "local"
    benchmark.run_benchmark(local, str(tmp_path / "local"))
    extra = {"pipelinerun.yaml", "task.yaml", "pipelinerun-status.yaml"}
    assert [p for p in _tree(tmp_path / "tekton") if p not in extra] == _tree(tmp_path / "local")
    (matrix_dir,) = [os.path.join(str(tmp_path / "tekton"), d) for d in os.listdir(str(tmp_path / "tekton"))]
    points = {d.split("__", 1)[1]: os.path.join(matrix_dir, d) for d in os.listdir(matrix_dir) if d[:3].isdigit()}
    with open(os.path.join(points["mode=fail_value=1"], "FAILURE"), encoding="utf-8") as handle:
        failure = handle.read()
    assert "harness exited with 3 (TaskRun %s/" % NAMESPACE in failure and "something went wrong" in failure
    with open(os.path.join(points["mode=ok_value=2"], "output.json"), encoding="utf-8") as handle:
        assert json.load(handle)["@result"]["rate"] == 4.0
    with open(os.path.join(points["mode=ok_value=2"], "point.json"), encoding="utf-8") as handle:
        assert json.load(handle)["executor"]["name"] == "tekton"
    # a second run renders and runs only the points that did not succeed
    again = benchmark.run_benchmark(_plan(tekton_settings, factors=factors, indicators=indicators),
                                    str(tmp_path / "tekton"), env=dict(os.environ, KUBECONFIG=sim.kubeconfig))
    assert (again["skipped"], again["failed"], again["succeeded"]) == (2, 2, 0), again
    with open(again["rendered"]["pipelinerun"], encoding="utf-8") as handle:
        rerun = yaml.safe_load(handle)
    assert len(rerun["spec"]["pipelineSpec"]["tasks"]) == 2


def test_the_benchmark_playbook_runs_its_matrix_on_tekton_and_post_processes_it(sim, api, tmp_path):
    from helpers import run_playbook

    overrides = {"tests.benchmark.executor": "tekton", "tests.capture_environment.enabled": False,
                 "tests.benchmark.matrix.factors.size": [64], "tests.benchmark.matrix.include": [],
                 "tests.benchmark.matrix.common_settings.reps": 3,
                 "tests.benchmark.tekton.apply": True, "tests.benchmark.tekton.parallelism": "all",
                 "tests.benchmark.tekton.annotations": {"kubesim.perfscale.io/run-local": "true"}}
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", json.dumps({"overrides": overrides}),
                       "-e", "artifact_dir=%s" % tmp_path, env={"KUBECONFIG": sim.kubeconfig}, timeout=600)
    assert run.returncode == 0, run.output[-3000:]
    assert "2 succeeded, 0 failed" in run.flat and ": Succeeded)" in run.flat
    import glob

    (plots,) = glob.glob(str(tmp_path / "*__plots"))
    with open(os.path.join(plots, "kpis.json"), encoding="utf-8") as handle:
        rates = [p["kpis"]["rate"]["value"] for p in json.load(handle)]
    assert len(rates) == 2 and all(r > 0 for r in rates)


def test_a_matrix_longer_than_tektons_default_hour_carries_its_own_deadline_and_tekton_enforces_it(api, tmp_path):
    """Tekton cancels a PipelineRun after spec.timeouts.pipeline, 60 minutes unless given (its webhook
    defaults it): the rendered run carries the matrix's own deadline; the webhook refuses timeouts
    that contradict each other; past its timeout a run ends PipelineRunTimeout, its TaskRuns cancelled."""
    custom, _core = api
    plan = _plan({"parallelism": "sequential"})
    plan.section["timeout_s"] = 900    # six points of 15 minutes: more than an hour
    rendered = TektonExecutor.from_section(plan.section).render(plan.points, str(tmp_path))
    with open(rendered["pipelinerun"], encoding="utf-8") as handle:
        run = yaml.safe_load(handle)
    assert run["spec"]["timeouts"] == {"pipeline": "1h31m0s"}
    # the webhook's defaulting and validation
    bare = {"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "metadata": {"name": "bare", "namespace": NAMESPACE},
            "spec": {"pipelineSpec": {"tasks": [{"name": "t", "taskSpec": {"steps": [{"name": "s", "image": "busybox"}]}}]}}}
    created = custom.create_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "pipelineruns", bare)
    assert created["spec"]["timeouts"] == {"pipeline": "1h0m0s"}
    from kubernetes.client.exceptions import ApiException
    contradiction = dict(bare, metadata={"name": "contradiction", "namespace": NAMESPACE})
    contradiction["spec"] = dict(bare["spec"], timeouts={"pipeline": "30m", "tasks": "1h"})
    with pytest.raises(ApiException) as refused:
        custom.create_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "pipelineruns", contradiction)
    assert refused.value.status == 400
    assert "invalid value: 1h0m0s should be <= pipeline duration: spec.timeouts.tasks" in refused.value.body
    # a run past its timeout: three sequential points of 20 simulated seconds within 30
    short = _plan({"parallelism": "sequential"}, factors={"indicator": "matmul", "size": [64, 96, 128]})
    short.section["timeout_s"] = 5     # the deadline: 3 x 5 + 60 margin = 75 s > 60; override it below
    rendered = TektonExecutor.from_section(short.section).render(short.points, str(tmp_path / "short"))
    with open(rendered["pipelinerun"], encoding="utf-8") as handle:
        run = yaml.safe_load(handle)
    run["spec"]["timeouts"] = {"pipeline": "30s"}
    with open(rendered["pipelinerun"], "w", encoding="utf-8") as handle:
        yaml.safe_dump(run, handle)
    ended, taskruns = _run_rendered(api, rendered, SIMULATED)
    condition = ended["status"]["conditions"][0]
    assert (condition["status"], condition["reason"]) == ("False", "PipelineRunTimeout"), ended["status"]
    assert condition["message"] == 'PipelineRun "%s" failed to finish within "30s"' % ended["metadata"]["name"]
    cancelled = [t for t in taskruns if t["status"]["conditions"][0]["reason"] == "TaskRunCancelled"]
    assert cancelled and "has timed out" in cancelled[0]["status"]["conditions"][0]["message"]
