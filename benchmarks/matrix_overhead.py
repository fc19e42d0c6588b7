"""Framework overhead per matrix point, at 50 and at 1,000 points.

Side by side, in one run, interleaved over ROUNDS rounds, for each size:
  direct   - run the trivial indicator N times with subprocess.run (what a shell loop does);
  matrix   - the same N points through the matrix engine with the local executor (planning,
             point directories, settings.yaml, .uuid, the harness's contract check,
             output.json, point.json, exit_code, progress.json);
  playbook - (50 points only) the same points through `ansible-playbook playbooks/benchmark.yml`
             end to end: Ansible's start-up, the configuration resolution, the matrix (one
             matrix_run task) and the post-processing (KPIs, reports), without regression
             analysis and export.
Overhead per point = (median matrix - median direct) / N. Goal: <= 10 ms, flat in N.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import _common
from ansible_collections.perfscale.topsail.plugins.module_utils import executors
from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as mx

SIZES = [int(n) for n in os.environ.get("SIZES", "50,1000").split(",")]
ROUNDS = int(os.environ.get("ROUNDS", "5"))
INDICATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trivial_indicator.py")
COMMAND = [sys.executable, INDICATOR]


def run_direct(points):
    started = time.perf_counter()
    for _point in range(points):
        subprocess.run(COMMAND, capture_output=True, check=True)
    return time.perf_counter() - started


def run_matrix(workdir, points):
    section = {"indicators": {"trivial": {"command": COMMAND, "parameters": ["n"]}}}
    harness = harnesses.get_harness("perf_indicator")
    started = time.perf_counter()
    settings = mx.expand_matrix({"indicator": "trivial", "n": list(range(points))})
    planned = mx.plan_points(settings, harness, section)
    matrix_dir, _resumed = mx.prepare_matrix_dir(workdir, planned)
    executor = executors.create_executor("local")
    summary = mx.MatrixRunner(matrix_dir, planned, 60, harness, executor).run()
    elapsed = time.perf_counter() - started
    assert summary["succeeded"] == points, summary
    return elapsed


def run_playbook(workdir, points):
    overrides = {
        "tests.capture_environment.enabled": False,
        "tests.benchmark.indicators": {"trivial": {"command": COMMAND, "parameters": ["n"]}},
        "tests.benchmark.matrix": {"factors": {"indicator": "trivial", "n": list(range(points))},
                                   "common_settings": {}, "include": [], "exclude": []},
        "regression.enabled": False, "export.enabled": False,
    }
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(_common.REPO, "ansible.cfg"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    started = time.perf_counter()
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                    os.path.join(_common.REPO, "playbooks", "benchmark.yml"),
                    "-e", json.dumps({"overrides": overrides}), "-e", "artifact_dir=%s" % workdir],
                   cwd=_common.REPO, env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def main():
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for points in SIZES:
            direct, matrix, playbook = [], [], []
            for round_index in range(ROUNDS):
                direct.append(run_direct(points))
                matrix.append(run_matrix(os.path.join(tmp, "m%d-%d" % (points, round_index)), points))
                if points <= 50:
                    playbook.append(run_playbook(os.path.join(tmp, "p%d-%d" % (points, round_index)), points))
            d, m = _common.median(direct), _common.median(matrix)
            entry = {"points": points, "direct_s": direct, "matrix_s": matrix, "median_direct_s": d,
                     "median_matrix_s": m, "matrix_over_direct": m / d,
                     "overhead_per_point_ms": (m - d) / points * 1000}
            if playbook:
                p = _common.median(playbook)
                entry.update(playbook_s=playbook, median_playbook_s=p,
                             playbook_overhead_per_point_ms=(p - d) / points * 1000)
            results[str(points)] = entry
            print(points, "points: %.2f ms per point" % entry["overhead_per_point_ms"])
    _common.record("matrix_overhead", {"rounds": ROUNDS, "sizes": results, "target_overhead_per_point_ms": 10})


if __name__ == "__main__":
    main()
