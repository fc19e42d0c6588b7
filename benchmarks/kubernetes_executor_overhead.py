"""Framework overhead per point of the kubernetes executor, on kubesim with zero-delay controllers.

Side by side, in one run, interleaved over ROUNDS rounds, N points (sequential) of the trivial
indicator (`trivial_indicator.py`):
  direct     - subprocess.run per point (what a shell loop does);
  local      - the matrix engine with the local executor;
  kubernetes - the matrix engine with the kubernetes executor against a `python -m kubesim`
               child (`--pod-start-delay 0`, time scale 1; its Jobs' pods run the command as
               local processes): create the Job, wait for it, find its pod, read its log,
               unpack the point archive, delete the Job and wait until it is gone.
Overhead per point = (median kubernetes - median direct) / N. Goal: <= 100 ms.
(The pod's own process - `pod_point.py`, which then starts the harness - is part of it: on a
real cluster the image's start-up replaces it.)

    .venv/bin/python benchmarks/kubernetes_executor_overhead.py   (ROUNDS=5 POINTS=20)
"""

import os
import subprocess
import sys
import tempfile
import time

import _common

sys.path.insert(0, os.path.join(_common.REPO, "tests"))
sys.path.insert(0, _common.REPO)

from kube_fixtures import kubesim_cluster  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils import executors  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as mx  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "5"))
POINTS = int(os.environ.get("POINTS", "20"))
INDICATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trivial_indicator.py")
COMMAND = [sys.executable, INDICATOR]
SECTION = {"name": "matbenchmarking", "timeout_s": 60,
           "indicators": {"trivial": {"command": COMMAND, "parameters": ["n"]}}}


def run_direct(points):
    started = time.perf_counter()
    for _point in range(points):
        subprocess.run(COMMAND, capture_output=True, check=True)
    return time.perf_counter() - started


def run_matrix(workdir, points, executor_name, env):
    harness = harnesses.get_harness("perf_indicator")
    started = time.perf_counter()
    planned = mx.plan_points(mx.expand_matrix({"indicator": "trivial", "n": list(range(points))}), harness, SECTION)
    matrix_dir, _resumed = mx.prepare_matrix_dir(workdir, planned)
    executor = executors.create_executor(executor_name, section=SECTION, base_env=env)
    try:
        summary = mx.MatrixRunner(matrix_dir, planned, 60, harness, executor).run()
    finally:
        executor.close()
    elapsed = time.perf_counter() - started
    assert summary["succeeded"] == points, summary
    return elapsed


def main():
    arms = {"direct": [], "local": [], "kubernetes": []}
    with tempfile.TemporaryDirectory() as tmp, \
            kubesim_cluster(subprocess=True, profile="vanilla", pod_start_delay=0, time_scale=1) as sim:
        env = dict(os.environ, KUBECONFIG=sim.kubeconfig)
        run_matrix(os.path.join(tmp, "warm-up"), 2, "kubernetes", env)  # the client's import, the namespace
        for round_index in range(ROUNDS):
            arms["direct"].append(run_direct(POINTS))
            arms["local"].append(run_matrix(os.path.join(tmp, "l%d" % round_index), POINTS, "local", env))
            arms["kubernetes"].append(run_matrix(os.path.join(tmp, "k%d" % round_index), POINTS, "kubernetes", env))
    medians = {arm: _common.median(values) for arm, values in arms.items()}
    result = {
        "rounds": ROUNDS, "points": POINTS, "seconds": arms, "median_s": medians,
        "kubernetes_over_direct": medians["kubernetes"] / medians["direct"],
        "kubernetes_over_local": medians["kubernetes"] / medians["local"],
        "overhead_per_point_ms": {
            "local": (medians["local"] - medians["direct"]) / POINTS * 1000,
            "kubernetes": (medians["kubernetes"] - medians["direct"]) / POINTS * 1000},
        "target_overhead_per_point_ms": 100,
    }
    _common.record("kubernetes_executor_overhead", result)
    print("per point beyond the harness: local %.1f ms, kubernetes %.1f ms (goal <= 100 ms)"
          % (result["overhead_per_point_ms"]["local"], result["overhead_per_point_ms"]["kubernetes"]))


if __name__ == "__main__":
    main()
