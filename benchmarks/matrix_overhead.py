"""Framework overhead per matrix point.

Side by side, in one run, interleaved over ROUNDS rounds:
  direct   - run the trivial indicator 50 times with subprocess.run (what a shell loop does);
  matrix   - the same 50 points through MatrixRunner (directories, settings.yaml, .uuid,
             contract validation, output.json, point.json, exit_code, progress.json);
  playbook - the same 50 points through `ansible-playbook` (one matrix_run task; includes
             Ansible's fixed start-up and the config resolution), measured once per round.
Overhead per point = (median matrix - median direct) / 50. Target: <= 50 ms.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import _common
from ansible_collections.perfscale.topsail.plugins.module_utils import matrix as mx

POINTS = 50
ROUNDS = int(os.environ.get("ROUNDS", "5"))
INDICATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trivial_indicator.py")
COMMAND = [sys.executable, INDICATOR]


def run_direct():
    started = time.perf_counter()
    for _point in range(POINTS):
        subprocess.run(COMMAND, capture_output=True, check=True)
    return time.perf_counter() - started


def run_matrix(workdir):
    indicators = {"trivial": {"command": COMMAND, "parameters": ["n"]}}
    settings = mx.expand_matrix({"indicator": "trivial", "n": list(range(POINTS))})
    started = time.perf_counter()
    points = mx.plan_points(settings, indicators)
    matrix_dir, _resumed = mx.prepare_matrix_dir(workdir, points)
    summary = mx.MatrixRunner(matrix_dir, points, timeout=60).run()
    elapsed = time.perf_counter() - started
    assert summary["succeeded"] == POINTS, summary
    return elapsed


def run_playbook(workdir):
    overrides = {
        "tests.capture_environment.enabled": False,
        "tests.benchmark.indicators": {"trivial": {"command": COMMAND, "parameters": ["n"]}},
        "tests.benchmark.matrix": {"factors": {"indicator": "trivial", "n": list(range(POINTS))},
                                   "common_settings": {}, "include": [], "exclude": []},
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
    direct, matrix, playbook = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for round_index in range(ROUNDS):
            direct.append(run_direct())
            matrix.append(run_matrix(os.path.join(tmp, "m%d" % round_index)))
            playbook.append(run_playbook(os.path.join(tmp, "p%d" % round_index)))
    d, m, p = _common.median(direct), _common.median(matrix), _common.median(playbook)
    _common.record("matrix_overhead", {
        "points": POINTS, "rounds": ROUNDS,
        "direct_s": direct, "matrix_s": matrix, "playbook_s": playbook,
        "median_direct_s": d, "median_matrix_s": m, "median_playbook_s": p,
        "matrix_over_direct": m / d,
        "overhead_per_point_ms": (m - d) / POINTS * 1000,
        "playbook_overhead_per_point_ms": (p - d) / POINTS * 1000,
        "target_overhead_per_point_ms": 50,
    })


if __name__ == "__main__":
    main()
