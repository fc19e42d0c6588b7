"""Quality and speed of the regression methods, with Apache Otava side by side.

A labelled synthetic corpus (seeded) of series of 100 points:
  flat      noise only (coefficient of variation 0.5 %, 1 %, 2 % or 5 %)        no change
  step      one step of 2-30 % up or down at a random index                     one change
  two_steps two steps (e.g. a regression, then its fix) at least 15 points apart two changes
  spike     one point 20-60 % off (a single spike is not a change)              no change
  outliers  three isolated points 10-40 % off                                   no change
  drift     a slow linear drift of 3-10 % over the series (not a step)          no change
Scoring: a detected index within +/-TOLERANCE of a true change is a true positive (each true
change matched once); precision, recall and F1 over the corpus and per category.
Speed: the time to analyse SPEED_SERIES series of 100 points (the same mix), per method.
Otava (pip install apache-otava) runs in its own virtualenv (benchmarks/.venv-otava, created
on first use: it pins its own numpy/scipy) on the same corpus files.

The gate (a held-out corpus, its own seed): GATE_SERIES series of a stable history of
GATE_HISTORY points (each noise level) then the newest run, stepped down by each step size
(a regression of a higher-is-better KPI) or not stepped at all. Each method at its defaults
judges the newest run as the regression step does (regression.verdicts.judge): the share of
stepped runs flagged `regression` in that run (detection, by step and noise), and the share of
unstepped runs flagged (false alarms).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import _common
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import methods
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import verdicts

HERE = os.path.dirname(os.path.abspath(__file__))
OTAVA_VENV = os.path.join(HERE, ".venv-otava")
OTAVA_VERSION = "0.8.0"
LENGTH = 100
TOLERANCE = 2
QUALITY_SERIES = int(os.environ.get("QUALITY_SERIES", "3000"))
SPEED_SERIES = int(os.environ.get("SPEED_SERIES", "10000"))
SEED = int(os.environ.get("SEED", "20261122"))
CATEGORIES = ("flat", "step", "two_steps", "spike", "outliers", "drift")
GATE_SERIES = int(os.environ.get("GATE_SERIES", "200"))
GATE_HISTORY = 30
GATE_SEED = SEED + 7
GATE_STEPS = (0.05, 0.10, 0.20, 0.30)
NOISE = (0.005, 0.01, 0.02, 0.05)
STEPS = (0.02, 0.05, 0.10, 0.20, 0.30)


def make_series(rng, category):
    level = rng.uniform(10, 1000)
    noise = rng.choice(NOISE)
    values = level * (1 + rng.normal(0, noise, LENGTH))
    changes = []
    if category == "step":
        index = int(rng.integers(15, LENGTH - 10))
        values[index:] *= 1 + rng.choice(STEPS) * rng.choice((-1, 1))
        changes = [index]
    elif category == "two_steps":
        first = int(rng.integers(15, LENGTH - 40))
        second = int(rng.integers(first + 15, LENGTH - 10))
        values[first:] *= 1 + rng.choice(STEPS) * rng.choice((-1, 1))
        values[second:] *= 1 + rng.choice(STEPS) * rng.choice((-1, 1))
        changes = [first, second]
    elif category == "spike":
        values[int(rng.integers(5, LENGTH - 5))] *= 1 + rng.uniform(0.2, 0.6) * rng.choice((-1, 1))
    elif category == "outliers":
        for index in rng.choice(np.arange(5, LENGTH - 5), size=3, replace=False):
            values[index] *= 1 + rng.uniform(0.1, 0.4) * rng.choice((-1, 1))
    elif category == "drift":
        values *= 1 + np.linspace(0, rng.uniform(0.03, 0.10) * rng.choice((-1, 1)), LENGTH)
    return {"category": category, "noise": float(noise), "values": values.tolist(), "changes": changes}


def make_corpus(count, seed):
    rng = np.random.default_rng(seed)
    return [make_series(rng, CATEGORIES[i % len(CATEGORIES)]) for i in range(count)]


def score(corpus, detected):
    totals = {"tp": 0, "fp": 0, "fn": 0}
    per_category = {c: {"tp": 0, "fp": 0, "fn": 0, "series": 0} for c in CATEGORIES}
    for item, found in zip(corpus, detected):
        unmatched = list(item["changes"])
        tp = fp = 0
        for index in found:
            match = next((c for c in unmatched if abs(c - index) <= TOLERANCE), None)
            if match is None:
                fp += 1
            else:
                unmatched.remove(match)
                tp += 1
        for bucket in (totals, per_category[item["category"]]):
            bucket["tp"] += tp
            bucket["fp"] += fp
            bucket["fn"] += len(unmatched)
        per_category[item["category"]]["series"] += 1

    def metrics(bucket):
        precision = bucket["tp"] / (bucket["tp"] + bucket["fp"]) if bucket["tp"] + bucket["fp"] else 1.0
        recall = bucket["tp"] / (bucket["tp"] + bucket["fn"]) if bucket["tp"] + bucket["fn"] else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return dict(bucket, precision=precision, recall=recall, f1=f1)

    return dict(metrics(totals), categories={c: metrics(b) for c, b in per_category.items()})


def run_ours(corpus, method, options):
    started = time.perf_counter()
    detected = [[cp.index for cp in methods.find_change_points(item["values"], method, **options)] for item in corpus]
    return detected, time.perf_counter() - started


def otava_python():
    python = os.path.join(OTAVA_VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run(["python3.11", "-m", "venv", OTAVA_VENV],
                       check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "apache-otava==%s" % OTAVA_VERSION], check=True)
    return python


def run_otava(corpus, window_len, max_pvalue, min_magnitude, tmp):
    corpus_path = os.path.join(tmp, "corpus.json")
    out_path = os.path.join(tmp, "otava.json")
    with open(corpus_path, "w") as handle:
        json.dump({"series": [item["values"] for item in corpus]}, handle)
    subprocess.run([otava_python(), os.path.join(HERE, "otava_runner.py"), corpus_path, out_path, str(window_len),
                    str(max_pvalue), str(min_magnitude)], check=True)
    with open(out_path) as handle:
        result = json.load(handle)
    return result["detected"], result["seconds"], result["version"]


def gate(method):
    """Detection of a step at the newest run, and false alarms, for one method at its defaults."""
    rng = np.random.default_rng(GATE_SEED)
    options = methods.resolve_options(method, {})
    detected = {"%.2f" % step: {"%.3f" % noise: 0 for noise in NOISE} for step in GATE_STEPS}
    alarms, per_cell = 0, GATE_SERIES
    for step in GATE_STEPS + (0.0,):
        for noise in NOISE:
            for _series in range(per_cell):
                level = rng.uniform(10, 1000)
                values = level * (1 + rng.normal(0, noise, GATE_HISTORY + 1))
                current = float(values[-1] * (1 - step))
                history = [{"value": float(v), "@timestamp": i, "run_id": str(i)} for i, v in enumerate(values[:-1])]
                verdict, _evidence = verdicts.judge(history, current, True, method, options, 0.10)
                if step == 0.0:
                    alarms += verdict == "regression"
                elif verdict == "regression":
                    detected["%.2f" % step]["%.3f" % noise] += 1
    rates = {step: {noise: count / per_cell for noise, count in row.items()} for step, row in detected.items()}
    return {"detection_by_step_and_noise": rates,
            "detection_by_step": {step: sum(row.values()) / len(row) for step, row in rates.items()},
            "false_alarm_rate": alarms / (per_cell * len(NOISE))}


def main():
    quality_corpus = make_corpus(QUALITY_SERIES, SEED)
    speed_corpus = make_corpus(SPEED_SERIES, SEED + 1)
    # every registered method at its defaults
    configurations = {name: (name, {}) for name in methods.method_names()}
    results = {}
    for name, (method, options) in configurations.items():
        detected, _seconds = run_ours(quality_corpus, method, options)
        _detected, seconds = run_ours(speed_corpus, method, options)
        results[name] = {"options": methods.resolve_options(method, options), "quality": score(quality_corpus, detected),
                         "speed_seconds": seconds, "gate": gate(method)}
    defaults = methods.get_method("edivisive").defaults()
    with tempfile.TemporaryDirectory() as tmp:
        for name, (window_len, max_pvalue, min_magnitude) in {
                "otava_defaults": (50, 0.001, 0.0),
                "otava_same_thresholds": (50, defaults["max_pvalue"], defaults["min_magnitude"]),
                # best of tune_regression.py's sweep for Otava, on the tuning corpus
                "otava_tuned": (50, 0.0001, 0.03)}.items():
            detected, _seconds, version = run_otava(quality_corpus, window_len, max_pvalue, min_magnitude, tmp)
            _detected, seconds, version = run_otava(speed_corpus, window_len, max_pvalue, min_magnitude, tmp)
            results[name] = {"options": {"window_len": window_len, "max_pvalue": max_pvalue,
                                         "min_magnitude": min_magnitude, "version": version},
                             "quality": score(quality_corpus, detected), "speed_seconds": seconds}
    best_otava = max(("otava_defaults", "otava_same_thresholds", "otava_tuned"), key=lambda n: results[n]["quality"]["f1"])
    _common.record("regression_quality", {
        "seed": SEED, "quality_series": QUALITY_SERIES, "speed_series": SPEED_SERIES, "length": LENGTH,
        "gate": {"seed": GATE_SEED, "series_per_cell": GATE_SERIES, "history": GATE_HISTORY, "steps": GATE_STEPS,
                 "noise": NOISE},
        "tolerance": TOLERANCE, "results": results,
        "best_otava": best_otava,
        "edivisive_f1_minus_best_otava_f1": results["edivisive"]["quality"]["f1"] - results[best_otava]["quality"]["f1"],
        "otava_seconds_over_edivisive_seconds": results[best_otava]["speed_seconds"] / results["edivisive"]["speed_seconds"],
        "targets": {"f1": "at least Otava's", "speed": "at least 5x faster than Otava"},
    })


if __name__ == "__main__":
    main()
