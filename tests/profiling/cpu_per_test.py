"""A pytest plugin that records each test's CPU time, its own process's and its children's (the
ansible-playbook runs, their workers and modules, the pods kubesim runs as processes), one JSON line per test:

    PYTHONPATH=tests/profiling PERFSCALE_TEST_CPU=/tmp/cpu.jsonl \\
        .venv/bin/python -m pytest -p cpu_per_test tests/cluster -n 3 --dist loadfile
    .venv/bin/python tests/profiling/cpu_per_test.py /tmp/cpu.jsonl

With pytest-xdist each worker runs one test at a time, so a test's figures are its own; a module-scoped
fixture's set-up (a kubesim started for the file) counts in the file's first test. Children count once
they have exited and been waited for (resource.RUSAGE_CHILDREN)."""

import collections
import json
import os
import resource
import sys
import time

import pytest


def _cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get("PERFSCALE_TEST_CPU")
    if not path:
        yield
        return
    own, children = _cpu()
    start = time.monotonic()
    yield
    own_after, children_after = _cpu()
    record = {"test": item.nodeid, "wall": round(time.monotonic() - start, 2), "own": round(own_after - own, 2),
              "children": round(children_after - children, 2)}
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def summarize(path, top=30):
    """The tests and files of a recording, most CPU first."""
    records = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    by_file = collections.Counter()
    for record in records:
        by_file[record["test"].split("::")[0]] += record["own"] + record["children"]
    total = sum(by_file.values())
    print("%d tests, %.0f CPU-s in all" % (len(records), total))
    print("%8s %8s %8s %8s  test" % ("CPU-s", "own", "children", "wall"))
    for record in sorted(records, key=lambda r: -(r["own"] + r["children"]))[:top]:
        cpu = record["own"] + record["children"]
        print("%8.1f %8.1f %8.1f %8.1f  %s" % (cpu, record["own"], record["children"], record["wall"], record["test"]))
    print("\n%8s  file" % "CPU-s")
    for name, cpu in by_file.most_common(top):
        print("%8.1f  %s" % (cpu, name))


if __name__ == "__main__":
    summarize(sys.argv[1])
