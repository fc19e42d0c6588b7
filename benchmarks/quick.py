"""make bench-quick: every benchmark that has a goal, at a smaller size, one line per goal.

Each entry of QUICK_BENCHMARKS is a script, the environment (or arguments) that make it small, and
the goals read from the result it writes (``results/quick/<name>.json``: the recorded full results
in ``results/`` are left alone). The sizes are chosen so that the whole run takes a few minutes on 2
cores; the ratios are measured side by side in one run, as in the full benchmarks, but on fewer
rounds and points: a goal missed here is a change to look at (run the full benchmark), not a verdict.

Prints ``<goal> <measured> (goal <op> <target>): met|NOT MET`` per goal and the time of each script;
exits 1 when a goal is not met or a script fails.
"""

import json
import os
import subprocess
import sys
import time

import _common

HERE = os.path.dirname(os.path.abspath(__file__))
QUICK_RESULTS = os.path.join(_common.RESULTS, "quick")


class Goal:
    def __init__(self, name, read, target, higher_is_better=False, form="%.2f"):
        self.name, self.read, self.target, self.higher_is_better, self.form = name, read, target, higher_is_better, form

    def check(self, result):
        value = self.read(result)
        met = value is not None and (value >= self.target if self.higher_is_better else value <= self.target)
        shown = "n/a" if value is None else self.form % value
        direction = ">=" if self.higher_is_better else "<="
        return met, "%-66s %12s (goal %s %s): %s" % (self.name, shown, direction, self.form % self.target,
                                                     "met" if met else "NOT MET")


class QuickBenchmark:
    def __init__(self, script, goals, env=None, args=(), result=None):
        self.script, self.goals, self.env, self.args = script, goals, dict(env or {}), list(args)
        self.result = result or script[:-3]

    def check(self, result):
        """[(met, line)] for each goal of the result (met None: a line that is not a goal)."""
        return [goal.check(result) for goal in self.goals]


class RecordedGoals(QuickBenchmark):
    """A benchmark whose result carries its own goal lines (``goal_results``: compared with other methods
    measured in the same run, not with a fixed target), or says it was not run (its input is absent)."""

    def check(self, result):
        if result.get("status") == "not run":
            return [(None, "%-66s %12s: not run: corpus absent (get it: %s)"
                     % ("real corpus (%s)" % self.script, "", result.get("get_it", "see its docstring")))]
        return [(goal["met"], goal["line"]) for goal in result["goal_results"]]


def _ratio_goal(name, read, target, form="%.1fx"):
    return Goal(name, read, target, higher_is_better=True, form=form)


QUICK_BENCHMARKS = [
    QuickBenchmark("harness_fidelity.py", [
        Goal("harness fidelity: |harness - bare numpy| GFLOP/s, %", lambda r: abs(r["difference_percent"]),
             5.0, form="%.1f")], env={"ROUNDS": "7"}),
    QuickBenchmark("matrix_overhead.py", [
        Goal("matrix engine overhead per point, ms (100 points)",
             lambda r: r["sizes"]["100"]["overhead_per_point_ms"], 10.0, form="%.1f")],
        env={"SIZES": "100", "ROUNDS": "3"}),
    QuickBenchmark("kubernetes_executor_overhead.py", [
        Goal("kubernetes executor overhead per point beyond the harness, ms",
             lambda r: r["overhead_per_point_ms"]["kubernetes"], 100.0, form="%.1f")],
        env={"POINTS": "10", "ROUNDS": "3"}),
    QuickBenchmark("parse_cache.py", [
        _ratio_goal("parse cache: warm speed-up of a parsing workload (state_dump, 1,000 tests)",
                    lambda r: r["workloads"]["state_dump"]["sizes"]["1000"]["warm_speedup"], 10.0),
        # cold: a warm parse is 0.07 ms per test, too small to compare in two rounds
        Goal("parse cache: cost per test growth from 100 to 1,000 tests, cold",
             lambda r: r["workloads"]["perf_indicators"]["cold_per_dir_growth_100_to_1000"], 1.5)],
        env={"ROUNDS": "2"}),
    QuickBenchmark("history_lookup.py", [
        Goal("history look-ups of a 1,000-point run on SQLite (100,000 documents), s",
             lambda r: r["median_s"]["sqlite_batched"], 5.0),
        ],
        env={"ROUNDS": "1", "OPENSEARCH_DOCUMENTS": "2000"}),
    QuickBenchmark("regression_quality.py", [
        Goal("regression F1 on the detectable corpus (the default method)",
             lambda r: r["results"][r["default_method"]]["quality_detectable"]["f1"], 0.98, higher_is_better=True,
             form="%.3f"),
        _ratio_goal("regression speed: Otava's time / the default method's (same corpus, warm)",
                    lambda r: r["otava_seconds_over_default_seconds"], 10.0),
        Goal("regression gate: a 5 % step at the newest run, 1 % noise, detected",
             lambda r: r["results"][r["default_method"]]["gate"]["detection_by_step_and_noise"]["0.05"]["0.010"],
             0.855, higher_is_better=True, form="%.3f")],
        env={"QUICK": "1"}, result="regression_quality_quick"),
    QuickBenchmark("dashboard_scale.py", [
        Goal("dashboard build at 100,000 documents, s", lambda r: r["build_s_median"], 60.0, form="%.1f"),
        Goal("dashboard page at 100,000 documents, MiB", lambda r: r["page_mib"], 20.0, form="%.1f")],
        env={"ROUNDS": "1"}),
    QuickBenchmark("kubesim_scale.py", [
        Goal("kubesim: 1,000 creates, s", lambda r: r["medians"]["create_1000_s"], 5.0),
        Goal("kubesim: list 10,000 paged by 500, s", lambda r: r["medians"]["list_10000_paged_500_s"], 2.0),
        Goal("kubesim: server RSS with 10,000 objects, MB", lambda r: r["medians"]["rss_10000_objects_mb"], 300.0,
             form="%.0f"),
        Goal("kubesim: 1,000 local Jobs, create to Complete, s", lambda r: r["medians"]["jobs_1000_local_s"], 60.0,
             form="%.1f")],
        args=["--rounds", "1", "--output", os.path.join(QUICK_RESULTS, "kubesim_scale.json")]),
    # the whole run (about a minute on 2 cores) is its quick size; without the corpus, one "not run" line
    RecordedGoals("real_corpus.py", []),
]


def main(argv):
    wanted = set(argv)
    os.makedirs(QUICK_RESULTS, exist_ok=True)
    started = time.perf_counter()
    lines, failed, goals = [], False, 0
    for bench in QUICK_BENCHMARKS:
        if wanted and bench.script[:-3] not in wanted:
            continue
        begun = time.perf_counter()
        env = dict(os.environ, BENCH_RESULTS=QUICK_RESULTS, **bench.env)
        path = os.path.join(QUICK_RESULTS, bench.result + ".json")
        if os.path.exists(path):
            os.remove(path)   # a result left by an earlier run is never read as this run's
        done = subprocess.run([sys.executable, os.path.join(HERE, bench.script)] + bench.args, cwd=HERE, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
        seconds = time.perf_counter() - begun
        if done.returncode not in (0, 1) or not os.path.exists(path):
            failed = True
            last = (done.stderr.strip().splitlines() or [""])[-1]
            lines.append("%-66s %12s: FAILED (exit %d): %s" % (bench.script, "", done.returncode, last))
            print(lines[-1], flush=True)
            continue
        with open(path, encoding="utf-8") as handle:
            result = json.load(handle)
        checked = bench.check(result)
        for met, line in checked:
            failed |= met is False
            lines.append(line)
        goals += sum(met is not None for met, _line in checked)
        lines.append("  (%s: %.0f s)" % (bench.script, seconds))
        print("\n".join(lines[-len(checked) - 1:]), flush=True)
    print("bench-quick: %d goal(s), %s, %.0f s, load average %.1f"
          % (goals, "NOT ALL MET" if failed else "all met", time.perf_counter() - started, os.getloadavg()[0]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
