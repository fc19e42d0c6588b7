"""What running the matrix on an inventory host costs, against running it on the controller.

Side by side, in one run, interleaved over ROUNDS rounds, a play of two tasks (resolve_config, then
the matrix of N points of the trivial indicator, `trivial_indicator.py`, sequential):
  controller - `matrix_run` (the engine in the action plugin's process: no group `benchmark_hosts`);
  host       - `matrix_host_run` on one inventory host over the local connection, whose Python is a
               virtualenv without pip holding nothing: the payload is planned and sent, the module
               shipped and run under that Python, the points archived, fetched and unpacked
               (the environment capture off, to time the matrix path only).
Cost of the host path = median host - median controller, per run and per point. SSH adds its
connection set-up on top (the test `tests/integration/test_benchmark_hosts.py` runs it over SSH).

    .venv/bin/python benchmarks/benchmark_hosts_overhead.py   (ROUNDS=5 POINTS=20)
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import _common

ROUNDS = int(os.environ.get("ROUNDS", "5"))
POINTS = int(os.environ.get("POINTS", "20"))
INDICATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trivial_indicator.py")
BIN = os.path.join(_common.REPO, ".venv", "bin")

PLAY = """
- name: Matrix on the controller
  hosts: localhost
  gather_facts: false
  tasks:
    - perfscale.topsail.resolve_config:
    - perfscale.topsail.matrix_run:
      when: groups['benchmark_hosts'] | default([]) | length == 0

- name: Matrix on the host
  hosts: benchmark_hosts
  gather_facts: false
  tasks:
    - ansible.builtin.set_fact:
        perfscale_config: "{{ hostvars['localhost'].perfscale_config }}"
        perfscale_artifact_dir: "{{ hostvars['localhost'].perfscale_artifact_dir }}"
    - perfscale.topsail.matrix_host_run:
        capture_environment: false
"""


def overrides(python):
    return {"overrides": {
        "tests.benchmark.indicators": {"trivial": {"command": [python, INDICATOR], "parameters": ["n"]}},
        "tests.benchmark.matrix": {"factors": {"indicator": "trivial", "n": list(range(POINTS))},
                                   "common_settings": {}, "include": [], "exclude": []},
        "tests.capture_environment.enabled": False,
    }}


def run(play, inventory, artifact_dir, python):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(_common.REPO, "ansible.cfg"),
               XDG_DATA_HOME=os.path.join(os.path.dirname(artifact_dir), "data"))
    command = [os.path.join(BIN, "ansible-playbook"), "-i", os.path.join(_common.REPO, "inventories", "local", "hosts.yml"),
               "-i", inventory, play, "-e", "artifact_dir=%s" % artifact_dir, "-e", json.dumps(overrides(python))]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=_common.REPO)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit("benchmark run failed:\n" + (done.stdout + done.stderr)[-3000:])
    return elapsed


def main():
    arms = {"controller": [], "host": []}
    with tempfile.TemporaryDirectory() as tmp:
        venv = os.path.join(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        play = os.path.join(tmp, "play.yml")
        with open(play, "w", encoding="utf-8") as handle:
            handle.write(PLAY)
        none, one = os.path.join(tmp, "none.yml"), os.path.join(tmp, "one.yml")
        with open(none, "w", encoding="utf-8") as handle:
            handle.write("all: {}\n")
        with open(one, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"all": {"children": {"benchmark_hosts": {"hosts": {"bench1": {
                "ansible_connection": "local", "ansible_python_interpreter": python}}}}}}))
        run(play, one, os.path.join(tmp, "warm-up", "run"), python)
        for index in range(ROUNDS):
            arms["controller"].append(run(play, none, os.path.join(tmp, "c%d" % index, "run"), python))
            arms["host"].append(run(play, one, os.path.join(tmp, "h%d" % index, "run"), python))
    medians = {arm: _common.median(values) for arm, values in arms.items()}
    result = {
        "rounds": ROUNDS, "points": POINTS, "seconds": arms, "median_s": medians,
        "host_over_controller": medians["host"] / medians["controller"],
        "host_cost_per_run_s": medians["host"] - medians["controller"],
        "host_cost_per_point_ms": (medians["host"] - medians["controller"]) / POINTS * 1000,
    }
    _common.record("benchmark_hosts_overhead", result)
    print("matrix of %d points: controller %.2f s, host %.2f s (median of %d): the host path costs %.2f s per run"
          % (POINTS, medians["controller"], medians["host"], ROUNDS, result["host_cost_per_run_s"]))


if __name__ == "__main__":
    main()
