"""CPU by kind of process while a test step runs: samples /proc every 0.1 s until interrupted
(SIGINT/SIGTERM) or the process ``watch_pid`` exits, and writes the CPU-seconds and the number of
processes of each kind (ansible-playbook with its forked workers, each module by name, the pytest
workers where kubesim runs, ...) as JSON. A process that lives less than 0.1 s is missed: compare the
total with tests/profiling/cpu.py's.

    .venv/bin/python tests/profiling/cpu_by_process.py /tmp/cpu.json &
    .venv/bin/python tests/profiling/cpu.py -q -p no:cacheprovider -n 3 --dist loadfile tests/cluster/test_kserve.py
    kill -INT %1
"""
import collections
import json
import os
import re
import signal
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def category(pid):
    """The kind of process ``pid`` is, from its command line (None when it has none: exited, or a kernel thread)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            argv = [a.decode(errors="replace") for a in handle.read().split(b"\0") if a]
    except OSError:
        return None
    if not argv:
        return None
    text = " ".join(argv)
    module = re.search(r"AnsiballZ_(\w+)\.py", text)
    if module:
        return "module:" + module.group(1)
    for kind, needles in (("ansible-playbook", ("ansible-playbook", "ansible.cli.playbook")),
                          ("pytest", ("pytest", "execnet")), ("ansible-lint", ("ansible-lint",)),
                          ("ansible-test", ("ansible-test", "/ansible_test/")), ("molecule", ("molecule",)),
                          ("chromium", ("chrom",)), ("kubesim", ("kubesim",))):
        if any(needle in text for needle in needles):
            return kind
    base = os.path.basename(argv[0])
    if base.startswith("python") and len(argv) > 2 and argv[1] in ("-c", "-m"):
        return "python %s %s" % (argv[1], argv[2][:40].replace("\n", " "))
    if base.startswith("python") and len(argv) > 1:
        return "python " + os.path.basename(argv[1])
    return base


def sample(seen, first):
    """One look at every process: its CPU ticks so far (those it had at the first look are not counted)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        ticks = int(fields[11]) + int(fields[12])
        key = (pid, fields[19])   # the pid and its start time
        entry = seen.get(key)
        if entry is None:
            kind = category(pid)
            if kind is None:
                continue
            entry = seen[key] = [kind, 0, ticks if first else 0]
        entry[1] = ticks


def main(out, watch=None):
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopped.append(True))
    seen, first = {}, True
    while not stopped and (watch is None or first or os.path.exists("/proc/%d" % watch)):
        sample(seen, first)
        first = False
        time.sleep(0.1)
    sums, counts = collections.Counter(), collections.Counter()
    for kind, ticks, base in seen.values():
        sums[kind] += (ticks - base) / TICK
        counts[kind] += 1
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"cpu": dict(sums.most_common()), "count": dict(counts)}, handle, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)
