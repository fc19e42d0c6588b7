"""Parameter sweep of the regression methods (and Otava's) on a *tuning* corpus.

The corpus is generated with a different seed from the evaluation corpus of
regression_quality.py, so that the defaults are not fitted to the data they are
evaluated on. Prints the best options per method by F1 and records all results.
"""

import itertools
import os
import tempfile

import _common
import regression_quality as rq

TUNING_SEED = int(os.environ.get("TUNING_SEED", "7"))
SERIES = int(os.environ.get("TUNING_SERIES", "1200"))

GRIDS = {
    "edivisive": {"window": [10, 20, 30], "max_pvalue": [0.001, 0.0001], "min_magnitude": [0.02, 0.03],
                  "min_size": [3, 5]},
    "zscore": {"threshold": [3.0, 4.0, 5.0], "min_history": [5, 8, 12], "min_magnitude": [0.02, 0.03],
               "confirm": [1, 2, 3]},
    "relative": {"threshold": [0.05, 0.08, 0.12], "window": [3, 5, 10], "min_previous": [5, 10]},
}
OTAVA_GRID = {"window_len": [30, 50], "max_pvalue": [0.001, 0.0001], "min_magnitude": [0.0, 0.02, 0.03]}


def sweep(grid):
    keys = sorted(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        yield dict(zip(keys, values))


def main():
    corpus = rq.make_corpus(SERIES, TUNING_SEED)
    results = {}
    for method, grid in GRIDS.items():
        scored = []
        for options in sweep(grid):
            detected, _seconds = rq.run_ours(corpus, method, options)
            scored.append({"options": options, "f1": rq.score(corpus, detected)["f1"]})
        scored.sort(key=lambda s: -s["f1"])
        results[method] = scored
        print(method, scored[0])
    scored = []
    with tempfile.TemporaryDirectory() as tmp:
        for options in sweep(OTAVA_GRID):
            detected, _seconds, _version = rq.run_otava(corpus, options["window_len"], options["max_pvalue"],
                                                         options["min_magnitude"], tmp)
            scored.append({"options": options, "f1": rq.score(corpus, detected)["f1"]})
    scored.sort(key=lambda s: -s["f1"])
    results["otava"] = scored
    print("otava", scored[0])
    _common.record("regression_tuning", {"seed": TUNING_SEED, "series": SERIES, "results": results})


if __name__ == "__main__":
    main()
