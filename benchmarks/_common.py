"""Shared helpers of the benchmark scripts (not part of the collection)."""

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
COLLECTIONS = os.path.join(REPO, ".venv", "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
# BENCH_RESULTS: where results are written (make bench-quick keeps its own, not the recorded ones)
RESULTS = os.environ.get("BENCH_RESULTS") or os.path.join(REPO, "benchmarks", "results")


def machine():
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "cpus": os.cpu_count(), "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}


def median(values):
    return statistics.median(values)


def record(name, data):
    os.makedirs(RESULTS, exist_ok=True)
    data = dict(data, benchmark=name, machine=machine())
    path = os.path.join(RESULTS, name + ".json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
    print(json.dumps(data, indent=2))
    return path


BIN = os.path.join(REPO, ".venv", "bin")
INVENTORY = os.path.join(REPO, "inventories", "local", "hosts.yml")
# a play on localhost with the venv's Python; the tasks follow, indented by four spaces
PLAYBOOK_HEADER = ("- hosts: localhost\n  gather_facts: false\n  vars:\n"
                   "    ansible_python_interpreter: \"{{ ansible_playbook_python }}\"\n  tasks:\n")


def write_playbooks(directory, playbooks):
    """``{name: tasks}`` -> ``{name: path}``: each written as ``directory/name.yml`` under PLAYBOOK_HEADER."""
    paths = {}
    for name, tasks in playbooks.items():
        paths[name] = os.path.join(directory, name + ".yml")
        with open(paths[name], "w", encoding="utf-8") as handle:
            handle.write(PLAYBOOK_HEADER + tasks)
    return paths


def run_playbook(path, env=None, extra_args=()):
    """``(wall seconds, CPU seconds of ansible-playbook and its children, stdout)`` of one run with the
    checkout's ansible.cfg and local inventory (``env`` added to the environment, ``extra_args`` to the command
    line); fails on a failed run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    environment = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
                       PATH=BIN + os.pathsep + os.environ["PATH"], **(env or {}))
    command = [os.path.join(BIN, "ansible-playbook"), "-i", INVENTORY, path] + list(extra_args)
    done = subprocess.run(command, check=True, env=environment, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, cwd=REPO)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout
