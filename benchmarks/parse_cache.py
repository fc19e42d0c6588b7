"""Parsing an artifact tree: cold (no cache) against warm (parse cache in place).

Side by side, in one run: synthetic trees of 100 and 1,000 test directories shaped like
the benchmark job's (tests/fixtures/trees.py), parsed with two workloads:
  perf_indicators - the built-in workload (small JSON files: a cheap parse_once);
  state_dump      - benchmarks/state_dump_workload.py, shaped like the reference project's
                    parsers (a YAML dump of the test's Kubernetes objects, a log scanned
                    with regular expressions).
Cold = every cache file removed first (parse_once runs and writes its cache); warm = the
caches are fresh (each test: stat the files it read, load the cache, run parse_always).
Rounds are interleaved (cold, warm, cold, warm...); medians are quoted.
Targets: warm at least 10 times faster than cold; cost per directory flat from 100 to 1,000.
"""

import os
import sys
import tempfile
import time

import _common
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree as store
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib

sys.path.insert(0, os.path.join(_common.REPO, "tests", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position

ROUNDS = int(os.environ.get("ROUNDS", "5"))
SIZES = (100, 1000)


def drop_caches(roots):
    for root in roots:
        path = os.path.join(root, store.CACHE_FILE)
        if os.path.exists(path):
            os.remove(path)
    # flush the writeback of what was just created or deleted, so that it does not
    # land inside the next measurement (it did: ~0.5 ms per file on ext4)
    os.sync()


def timed_parse(results_dir, workload):
    started = time.perf_counter()
    entries, _warnings = store.parse_results(results_dir, workload)
    return time.perf_counter() - started, entries


def measure(workload_name, add_artifacts=None):
    workload = workload_lib.load_workload(workload_name)
    measurements = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in SIZES:
            root = os.path.join(tmp, "tree%d" % size)
            directories = trees.make_tree(root, points=size)
            if add_artifacts:
                for directory in directories:
                    add_artifacts(directory, trees.write)
            roots = store.find_test_roots(root)
            assert len(roots) == size
            os.sync()
            cold, warm = [], []
            for _round in range(ROUNDS):
                drop_caches(roots)
                elapsed, entries = timed_parse(root, workload)
                assert not any(e.from_cache for e in entries)
                cold.append(elapsed)
                os.sync()
                elapsed, entries = timed_parse(root, workload)
                assert all(e.from_cache for e in entries)
                warm.append(elapsed)
            measurements[size] = {"cold_s": cold, "warm_s": warm,
                                  "median_cold_s": _common.median(cold), "median_warm_s": _common.median(warm)}
    summary = {}
    for size, data in measurements.items():
        summary[size] = dict(data, cold_ms_per_dir=data["median_cold_s"] / size * 1000,
                             warm_ms_per_dir=data["median_warm_s"] / size * 1000,
                             warm_speedup=data["median_cold_s"] / data["median_warm_s"])
    small, large = summary[SIZES[0]], summary[SIZES[-1]]
    return {
        "sizes": {str(k): v for k, v in summary.items()},
        "cold_per_dir_growth_100_to_1000": large["cold_ms_per_dir"] / small["cold_ms_per_dir"],
        "warm_per_dir_growth_100_to_1000": large["warm_ms_per_dir"] / small["warm_ms_per_dir"],
    }


def main():
    import state_dump_workload

    _common.record("parse_cache", {
        "rounds": ROUNDS,
        "target_warm_speedup": 10,
        "workloads": {
            "perf_indicators": measure("perf_indicators"),
            "state_dump": measure(os.path.join(os.path.dirname(os.path.abspath(__file__)), "state_dump_workload.py"),
                                  state_dump_workload.add_artifacts),
        },
    })


if __name__ == "__main__":
    main()
