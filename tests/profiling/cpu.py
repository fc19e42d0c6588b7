"""CPU time of a pytest run, split between the pytest processes (kubesim runs in them) and their
children (ansible-playbook, the modules it starts, the pods kubesim runs as processes):

    .venv/bin/python tests/profiling/cpu.py -q -p no:cacheprovider tests/cluster/test_kserve.py

(pytest-xdist workers are children too: run without ``-n`` for the split of one test file.)"""

import resource
import sys
import time

import pytest


def main(argv):
    start = time.monotonic()
    code = pytest.main(argv)
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("wall %.1f s | pytest process %.1f CPU-s (user %.1f, system %.1f) | children %.1f CPU-s (user %.1f, system %.1f)"
          % (time.monotonic() - start, own.ru_utime + own.ru_stime, own.ru_utime, own.ru_stime,
             children.ru_utime + children.ru_stime, children.ru_utime, children.ru_stime))
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
