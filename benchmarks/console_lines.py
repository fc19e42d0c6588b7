"""How many lines a newcomer reads: the console of ``make demo``, ``make demo-k8s`` and ``make demo-flows``.

Runs each demo's command as its make target does (not through make: make would first check the
virtualenv's set-up), with the checkout's ansible.cfg, its output (stdout and stderr together) counted
line by line, its wall time measured, its artifacts in a temporary directory. The results store is the
user's, as for a newcomer (the demo's regression step reads the runs before it).

    python benchmarks/console_lines.py --label after                 # every demo
    python benchmarks/console_lines.py --label before --demos demo   # one of them

The record (benchmarks/results/console_lines.json) keeps one entry per label and demo: a run
under a label replaces that label's demos only, so ``before`` (measured on the code before the quiet
console) and ``after`` stand side by side. ``--keep DIR`` keeps each demo's console as DIR/<demo>.log.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import _common

PYTHON = os.path.join(_common.BIN, "python")
PLAYBOOK = os.path.join(_common.BIN, "ansible-playbook")
# the commands of the Makefile's targets, without their `setup` prerequisite
DEMOS = {
    "demo": [PLAYBOOK, "playbooks/benchmark.yml", "-e", "preset=cpu_smoke"],
    "demo-k8s": [PYTHON, "-m", "kubesim.run", "--profile", "openshift", "--time-scale", "20", "--",
                 PLAYBOOK, "playbooks/cluster_demo.yml"],
    "demo-flows": [PYTHON, "tools/demo_flows.py"],
}
NAME = "console_lines"


def count(demo, artifacts, keep=None):
    """One demo run: ``{"lines", "seconds", "exit_status", "skipped_task_lines", "empty_label_lines",
    "load_average"}`` (skipped tasks and empty labels as the default callback prints them)."""
    environment = dict(os.environ, ANSIBLE_CONFIG=os.path.join(_common.REPO, "ansible.cfg"),
                       PATH=_common.BIN + os.pathsep + os.environ["PATH"], ARTIFACT_DIR=artifacts,
                       ARTIFACTS=artifacts, ANSIBLE_NOCOLOR="1")
    environment.pop("ANSIBLE_STDOUT_CALLBACK", None)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(DEMOS[demo], cwd=_common.REPO, env=environment, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, check=False)
    seconds = time.perf_counter() - start
    if keep:
        os.makedirs(keep, exist_ok=True)
        with open(os.path.join(keep, demo + ".log"), "w", encoding="utf-8") as handle:
            handle.write(done.stdout)
    lines = done.stdout.splitlines()
    return {"lines": len(lines), "seconds": round(seconds, 1), "exit_status": done.returncode,
            "skipped_task_lines": sum(1 for line in lines if line.startswith("skipping:")),
            "empty_label_lines": sum(1 for line in lines if "|]" in line),
            # the machine's 1-minute load average when the demo started and ended: the seconds of a
            # loaded machine (other work on its cores) are not the demo's own
            "load_average": [round(load, 1), round(os.getloadavg()[0], 1)]}


def merge(path, label, measured):
    """The record at ``path`` with ``measured`` (``{demo: numbers}``) under ``label``."""
    record = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
    runs = record.get("runs", {})
    runs.setdefault(label, {}).update(measured)
    merged = {"description": "lines printed on the console (stdout and stderr) and wall seconds of each demo, as "
                             "a newcomer runs it; 'before' is the code before the quiet console (the default "
                             "stdout callback), 'after' the steps callback", "runs": runs}
    if record.get("notes"):  # what was said of the runs by hand (how they were run), kept
        merged["notes"] = record["notes"]
    return merged


def main(argv=None):
    parser = argparse.ArgumentParser(prog="console_lines.py", description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="what the run measures, e.g. before or after")
    parser.add_argument("--demos", default=",".join(DEMOS), help="comma-separated, of %s" % ", ".join(DEMOS))
    parser.add_argument("--keep", help="a directory to keep each demo's console in")
    args = parser.parse_args(argv)
    demos = [demo for demo in args.demos.split(",") if demo]
    unknown = [demo for demo in demos if demo not in DEMOS]
    if unknown:
        parser.error("--demos: %s: expected some of %s" % (", ".join(unknown), ", ".join(DEMOS)))
    measured = {}
    for demo in demos:
        with tempfile.TemporaryDirectory(prefix="console-lines-") as artifacts:
            measured[demo] = count(demo, os.path.join(artifacts, "run"), args.keep)
        print("%s: %d lines, %.0f s, exit status %d" % (demo, measured[demo]["lines"], measured[demo]["seconds"],
                                                       measured[demo]["exit_status"]), file=sys.stderr, flush=True)
    path = os.path.join(_common.RESULTS, NAME + ".json")
    record = merge(path, args.label, measured)
    _common.record(NAME, record)
    failed = [demo for demo in demos if measured[demo]["exit_status"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
