"""The CPU burners of the loaded-runner test (tests/integration/helpers.py ``CpuBurner``): what they take
from work that runs in sessions of its own, as every Ansible task worker does (ansible-core's
``WorkerProcess._detach`` calls ``os.setsid``). Two burner programs side by side in one run, interleaved
rounds: the one used before (``os.nice(19)`` only) and ``BURNER_PROGRAM`` (a session of its own whose
autogroup is at nice 19, SCHED_IDLE). Each round starts the burners, then runs one fixed CPU-bound
loop per CPU, each under ``setsid``; medians of the loops' wall time and of the CPU the burners took
meanwhile. On a kernel without autogroup scheduling both programs should come out alike.

    .venv/bin/python benchmarks/cpu_burner_share.py        (ROUNDS=5 LOOP=30000000)

Records benchmarks/results/cpu_burner_share.json.
"""

import os
import subprocess
import sys
import time

import _common

sys.path.insert(0, os.path.join(_common.REPO, "tests", "integration"))
import helpers  # noqa: E402  pylint: disable=wrong-import-position

ROUNDS = int(os.environ.get("ROUNDS", "5"))
LOOP = int(os.environ.get("LOOP", "30000000"))
NICE_ONLY = "import os, time\nos.nice(19)\nend = time.time() + %d\nwhile time.time() < end:\n    pass\n"
PROGRAMS = {"nice_19_only": NICE_ONLY, "own_autogroup_sched_idle": helpers.BURNER_PROGRAM}


def burners_cpu_s(burner):
    ticks = 0
    for process in burner.processes:
        with open("/proc/%d/stat" % process.pid, encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def one_round(program):
    with helpers.CpuBurner(settle_s=0, limit_s=120, program=program) as burner:
        time.sleep(0.5)
        before, start = burners_cpu_s(burner), time.monotonic()
        loops = [subprocess.Popen(["setsid", sys.executable, "-c", "total = 0\nfor i in range(%d):\n    total += i\n" % LOOP])
                 for _cpu in range(os.cpu_count() or 1)]
        for loop in loops:
            if loop.wait() != 0:
                raise SystemExit("cpu_burner_share: a CPU loop failed")
        return time.monotonic() - start, burners_cpu_s(burner) - before


def main():
    samples = {name: {"loops_wall_s": [], "burners_cpu_s": []} for name in PROGRAMS}
    for _round in range(ROUNDS):
        for name, program in PROGRAMS.items():
            wall, taken = one_round(program)
            samples[name]["loops_wall_s"].append(round(wall, 2))
            samples[name]["burners_cpu_s"].append(round(taken, 2))
    medians = {name: {key: _common.median(values) for key, values in series.items()} for name, series in samples.items()}
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled", encoding="ascii") as handle:
            autogroup = handle.read().strip() == "1"
    except OSError:
        autogroup = None
    _common.record("cpu_burner_share", {
        "rounds": ROUNDS, "loop": LOOP, "burners": 3 * (os.cpu_count() or 1), "autogroup": autogroup,
        "medians": medians, "samples": samples,
        "loops_slower_with_nice_19_only": round(medians["nice_19_only"]["loops_wall_s"]
                                                / medians["own_autogroup_sched_idle"]["loops_wall_s"], 1)})


if __name__ == "__main__":
    main()
