"""The CPU burners of the loaded-runner test (helpers.CpuBurner) take idle CPU only: each is a session of
its own (an Ansible task worker is one too, so a burner never shares its scheduling group with the tests'
session), whose autogroup runs at nice 19 where the kernel has autogroups, and SCHED_IDLE inside it.
benchmarks/cpu_burner_share.py measures what this is worth."""

import os
import sys
import time

import pytest

from helpers import CpuBurner


def settled(pid, timeout_s=10.0):
    """The burner's scheduling policy once its program has set it (or the last one seen)."""
    deadline = time.monotonic() + timeout_s
    policy = os.sched_getscheduler(pid)
    while policy != os.SCHED_IDLE and time.monotonic() < deadline:
        time.sleep(0.05)
        policy = os.sched_getscheduler(pid)
    return policy


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SCHED_IDLE and autogroups are Linux's")
def test_each_burner_is_a_session_of_its_own_at_the_lowest_priority():
    with CpuBurner(per_cpu=1, limit_s=20, settle_s=0) as burner:
        assert len(burner.processes) == (os.cpu_count() or 1)
        for process in burner.processes:
            assert settled(process.pid) == os.SCHED_IDLE
            assert os.getsid(process.pid) == process.pid != os.getsid(0)
            assert os.getpriority(os.PRIO_PROCESS, process.pid) == 19
            try:
                with open("/proc/%d/autogroup" % process.pid, encoding="ascii") as handle:
                    group = handle.read()
            except OSError:
                continue  # a kernel without autogroup scheduling
            assert group.rstrip().endswith("nice 19"), group
    assert all(process.poll() is not None for process in burner.processes)
