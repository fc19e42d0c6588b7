"""Does the harness report what numpy really does?

Side by side, in one run, interleaved over ROUNDS rounds:
  harness - `matmul size=1024 dtype=float32` through the harness (subprocess, contract
            validation), GFLOP/s from its @result.rate;
  bare    - a bare numpy loop in this process: same matrices' shape and dtype, same warm-up
            and repetitions, GFLOP/s = 2 n^3 / median time.
Target: the median harness rate within 5 % of the median bare rate.
"""

import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

import _common
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base, perf_indicator

ROUNDS = int(os.environ.get("ROUNDS", "7"))
N, REPS, WARMUP = 1024, 20, 3


def bare_rate():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N)).astype(np.float32)
    b = rng.standard_normal((N, N)).astype(np.float32)
    for _warm in range(WARMUP):
        a @ b
    times = []
    for _rep in range(REPS):
        start = time.perf_counter_ns()
        a @ b
        times.append((time.perf_counter_ns() - start) / 1e9)
    return 2 * N ** 3 / statistics.median(times) / 1e9


def harness_rate(workdir):
    command = perf_indicator.builtin_command("matmul", {"size": N, "dtype": "float32", "reps": REPS, "warmup": WARMUP})
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=300, check=True)
    return base.validate_output(done.stdout)["@result"]["rate"]


def main():
    bare, through_harness = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _round in range(ROUNDS):
            through_harness.append(harness_rate(tmp))
            bare.append(bare_rate())
    hb, bb = _common.median(through_harness), _common.median(bare)
    _common.record("harness_fidelity", {
        "size": N, "dtype": "float32", "reps": REPS, "warmup": WARMUP, "rounds": ROUNDS,
        "harness_gflops": through_harness, "bare_gflops": bare,
        "median_harness_gflops": hb, "median_bare_gflops": bb,
        "harness_over_bare": hb / bb, "difference_percent": (hb / bb - 1) * 100,
        "target_difference_percent": 5,
    })


if __name__ == "__main__":
    main()
