"""Runs Apache Otava on a corpus (executed by the separate Otava virtualenv's Python).

Usage: python otava_runner.py CORPUS.json OUT.json WINDOW_LEN MAX_PVALUE MIN_MAGNITUDE
Writes the detected change-point indexes per series and the detection time.
"""

import json
import sys
import time

from otava.analysis import compute_change_points


def main():
    corpus_path, out_path = sys.argv[1], sys.argv[2]
    window_len, max_pvalue, min_magnitude = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    with open(corpus_path) as handle:
        corpus = json.load(handle)
    detected = []
    # warm: the first call pays for lazy imports and caches, outside the timing (as for ours)
    compute_change_points(corpus["series"][0], window_len=window_len, max_pvalue=max_pvalue,
                          min_magnitude=min_magnitude)
    started = time.perf_counter()
    for series in corpus["series"]:
        change_points, _weak = compute_change_points(series, window_len=window_len, max_pvalue=max_pvalue,
                                                     min_magnitude=min_magnitude)
        detected.append([int(cp.index) for cp in change_points])
    elapsed = time.perf_counter() - started
    import otava  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    from importlib import metadata  # pylint: disable=import-outside-toplevel
    with open(out_path, "w") as handle:
        json.dump({"detected": detected, "seconds": elapsed, "version": metadata.version("apache-otava")}, handle)


if __name__ == "__main__":
    main()
