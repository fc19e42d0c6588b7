"""The kubernetes executor on kubesim, whose Jobs' pods run their command as local processes:
the artifact tree is the one of the local executor, failures and timeouts are isolated and
named, at most N Jobs exist at once with sliding:N, Jobs are deleted after collection unless
kept, and the benchmark playbook runs this way with nothing but an override."""

import glob
import json
import os
import sys
import threading
import time

import pytest
import yaml

from conftest import read
from kube_fixtures import kubesim_cluster

from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTED = os.path.join(REPO, "tests", "fixtures", "indicators", "scripted.py")
NAMESPACE = "perfscale-benchmark"
SIM_SETTINGS = dict(profile="vanilla", time_scale=1, pod_start_delay=0, run_local_pods=True)


@pytest.fixture(scope="module")
def sim():
    with kubesim_cluster(**SIM_SETTINGS) as server:
        yield server


def _config(executor, matrix, **benchmark_settings):
    with open(os.path.join(REPO, "config", "config.yaml"), encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    section = config["tests"]["benchmark"]
    section.update(executor=executor, matrix=dict({"common_settings": {}, "include": [], "exclude": []}, **matrix),
                   indicators={"scripted": {"command": [sys.executable, SCRIPTED], "parameters": None}},
                   **benchmark_settings)
    return config


def _run(sim, config, directory, **kubernetes):
    config["tests"]["benchmark"]["kubernetes"].update(kubernetes)
    plan = benchmark.plan_benchmark(config)
    return benchmark.run_benchmark(plan, str(directory), env=dict(os.environ, KUBECONFIG=sim.kubeconfig))


def _jobs(kube):
    return kube.get("Job", namespace=NAMESPACE, api_version="batch/v1") or []


def _tree(root):
    return sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(str(root), "**", "*"), recursive=True)
                  if os.path.isfile(p))


def test_the_tree_and_results_are_those_of_the_local_executor(sim, kube, tmp_path):
    matrix = {"factors": {"indicator": "matmul", "size": [64, 96]},
              "common_settings": {"backend": "numpy", "dtype": "float32", "reps": 3, "warmup": 1}}
    local = _run(sim, _config("local", matrix), tmp_path / "local")
    remote = _run(sim, _config("kubernetes", matrix), tmp_path / "kubernetes")
    assert local["succeeded"] == remote["succeeded"] == 2 and remote["failed"] == 0, remote
    assert _tree(tmp_path / "local") == _tree(tmp_path / "kubernetes")
    for point in glob.glob(str(tmp_path / "kubernetes" / "*" / "0*__*")):
        output = read(point, "output.json")
        twin = read(point.replace(str(tmp_path / "kubernetes"), str(tmp_path / "local")), "output.json")
        assert sorted(output["@result"]) == sorted(twin["@result"]) and output["@parameters"] == twin["@parameters"]
        assert output["@result"]["rate"] > 0
        where = read(point, "point.json")["executor"]
        assert where["name"] == "kubernetes" and where["namespace"] == NAMESPACE and where["pod"].startswith(where["job"])
        assert where["node"]
        assert "GFLOP/s" in read(point, "stderr.log")  # the harness's own stderr came back
    assert _jobs(kube) == []  # collected, then deleted


def test_a_failing_and_a_hanging_point_fail_alone_and_leave_no_job(sim, kube, tmp_path):
    matrix = {"factors": {"indicator": "scripted", "mode": ["ok", "fail", "hang"]}}
    summary = _run(sim, _config("kubernetes", matrix, timeout_s=3), tmp_path)
    assert (summary["succeeded"], summary["failed"]) == (1, 2), summary
    points = {os.path.basename(p).split("__", 1)[1]: p for p in glob.glob(str(tmp_path / "*" / "0*__*"))}
    failure = read(points["mode=fail"], "FAILURE")
    assert "harness exited with 3 (Job %s/matbenchmarking-0001-" % NAMESPACE in failure, failure
    assert "something went wrong" in failure  # the command's stderr came back and is quoted
    hung = read(points["mode=hang"], "point.json")
    assert hung["timed_out"] and hung["exit_code"] == 124, hung
    assert "timed out" in read(points["mode=hang"], "FAILURE")
    assert read(points["mode=ok"], "exit_code").strip() == "0"
    deadline = time.monotonic() + 10
    while _jobs(kube) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _jobs(kube) == []


def test_a_point_that_cannot_be_scheduled_times_out_saying_why(sim, tmp_path):
    config = _config("kubernetes", {"factors": {"indicator": "scripted", "value": [1]}}, timeout_s=2)
    summary = _run(sim, config, tmp_path, node_selector={"nvidia.com/gpu.present": "true"})
    assert summary["failed"] == 1
    error = summary["failed_points"][0]["error"]
    assert "timed out" in error and "Unschedulable" in error, error


def test_sliding_n_keeps_at_most_n_jobs_and_keep_leaves_them(sim, kube, tmp_path):
    seen, stop = [], threading.Event()

    def watch():
        while not stop.is_set():
            seen.append(len(_jobs(kube)))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    matrix = {"factors": {"indicator": "scripted", "value": [1, 2, 3, 4, 5]}, "common_settings": {"sleep": 0.6}}
    try:
        summary = _run(sim, _config("kubernetes", matrix, parallelism="sliding:2"), tmp_path / "sliding")
    finally:
        stop.set()
        watcher.join()
    assert summary["succeeded"] == 5, summary
    assert max(seen) == 2, seen

    matrix = {"factors": {"indicator": "scripted", "value": [1, 2]}}
    summary = _run(sim, _config("kubernetes", matrix, name="kept"), tmp_path / "kept", keep=True)
    assert summary["succeeded"] == 2
    kept = _jobs(kube)
    assert sorted(j["metadata"]["annotations"]["perfscale.io/point"] for j in kept) == ["value=1", "value=2"]
    for job in kept:
        kube.dynamic.resources.get(api_version="batch/v1", kind="Job").delete(
            name=job["metadata"]["name"], namespace=NAMESPACE, body={"propagationPolicy": "Background"})


def test_an_unreachable_cluster_fails_each_point_with_one_line(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "gone",
        "clusters": [{"name": "gone", "cluster": {"server": "https://127.0.0.1:9", "insecure-skip-tls-verify": True}}],
        "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}]}))
    config = _config("kubernetes", {"factors": {"indicator": "scripted", "value": [1]}})
    plan = benchmark.plan_benchmark(config)
    summary = benchmark.run_benchmark(plan, str(tmp_path / "run"), env=dict(os.environ, KUBECONFIG=str(kubeconfig)))
    assert summary["failed"] == 1
    error = summary["failed_points"][0]["error"]
    assert error.startswith("Job %s/matbenchmarking-0000-" % NAMESPACE) and "could not be created" in error, error
    assert summary["failed_points"][0]["exit_code"] == 127


def test_the_benchmark_playbook_runs_on_a_kubesim_started_as_make_kubesim_does(tmp_path):
    from helpers import run_playbook

    overrides = {"tests.benchmark.executor": "kubernetes", "tests.benchmark.matrix.factors.size": [64],
                 "tests.benchmark.matrix.include": [], "tests.benchmark.matrix.common_settings.reps": 3}
    with kubesim_cluster(subprocess=True, profile="vanilla", pod_start_delay=0) as cluster:
        run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", json.dumps({"overrides": overrides}),
                           "-e", "artifact_dir=%s" % tmp_path, env={"KUBECONFIG": cluster.kubeconfig}, timeout=600)
    assert run.returncode == 0, run.output[-3000:]
    points = glob.glob(str(tmp_path / "*__matbenchmarking" / "0*__*"))
    assert len(points) == 2, points
    for point in points:
        assert read(point, "point.json")["executor"]["name"] == "kubernetes"
    plots = sorted(glob.glob(str(tmp_path / "*__plots")))[-1]
    rates = [p["kpis"]["rate"]["value"] for p in read(plots, "kpis.json")]
    assert len(rates) == 2 and all(r > 0 for r in rates), rates


def test_points_run_from_the_collection_as_the_execution_environment_installs_it(sim, kube, tmp_path):
    """collection_path: the pods run pod_point.py and the harness from an installed copy of the
    collection (its tarball, as the execution environment's image holds it), not from this checkout."""
    import subprocess

    bin_dir = os.path.dirname(sys.executable)
    subprocess.run([os.path.join(bin_dir, "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path), REPO],
                   check=True, capture_output=True, cwd=str(tmp_path))
    tarball = glob.glob(str(tmp_path / "perfscale-topsail-*.tar.gz"))[0]
    subprocess.run([os.path.join(bin_dir, "ansible-galaxy"), "collection", "install", "--force", "--no-deps", "-p",
                    str(tmp_path / "image"), tarball], check=True, capture_output=True, cwd=str(tmp_path))
    installed = str(tmp_path / "image" / "ansible_collections" / "perfscale" / "topsail")
    matrix = {"factors": {"indicator": "matmul", "size": [64]},
              "common_settings": {"backend": "numpy", "dtype": "float32", "reps": 3, "warmup": 1}}
    summary = _run(sim, _config("kubernetes", matrix, name="installed"), tmp_path / "run", collection_path=installed,
                   keep=True)
    assert summary["succeeded"] == 1, summary
    (job,) = _jobs(kube)
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][-1] == installed + "/plugins/module_utils/executors/pod_point.py"
    assert container["args"][2] == installed + "/plugins/module_utils/harnesses/indicators.py"
    kube.dynamic.resources.get(api_version="batch/v1", kind="Job").delete(
        name=job["metadata"]["name"], namespace=NAMESPACE, body={"propagationPolicy": "Background"})
