"""make mutation: mutation testing of the core, with mutmut (pinned in requirements-dev.txt).

The modules where a silent mistake costs users most (MODULES) are mutated and their unit tests
run against each mutant. mutmut needs the module path it mutates to be the path tests import:
the collection is imported as ``ansible_collections.perfscale.topsail``, so each module runs in
its own stage ``.mutation/<label>/``, where ``ansible_collections/perfscale/topsail`` is a link to
this checkout and ``tests`` a link to its tests. mutmut copies both into the stage's ``mutants/``
and runs each test that reaches a mutated function against it, in forked workers.

Stages are kept between runs, one per module, so running one module never discards another's
results. mutmut itself mutates again only the functions that changed and keeps every other
verdict; a test added since cannot turn a verdict it kept, so before each run the survivors and the
mutants no test reached are set back to "not run": a later run re-tests exactly those, and the
functions changed since. Killed mutants of unchanged functions stay killed (tests are only
added to kill mutants; a removed or weakened test needs a run from nothing: ``--fresh``).

After the run: per module, the mutants killed (a test failed, or timed out), survived (every
test passed), with no test reaching them, and those listed as equivalent in
``tests/mutation_equivalents/<label>.yml`` (a mutant no test can kill because it changes nothing a user
can see, with the reason). The score is killed / (mutants - no tests - equivalent); the goal is
90 % per module. The table goes to ``benchmarks/results/mutation.json`` and is printed; the
surviving mutants are listed, with their diffs in ``.mutation/<label>/survivors.diff``.

Usage: python tools/mutation.py [MODULE_LABEL ...] [--jobs N] [--fresh] [--report-only]
"""

import argparse
import collections
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGES = os.path.join(REPO, ".mutation")
PACKAGE = "ansible_collections/perfscale/topsail"
UNIT = "tests/unit/module_utils/"
GOAL = 0.90

# label: (files under plugins/module_utils to mutate, the unit tests that exercise them)
MODULES = {
    "regression maths": (["regression/maths.py", "regression/methods.py"],
                         [UNIT + "test_regression_maths.py"]),
    "regression verdicts": (["regression/verdicts.py", "regression/baselines.py"],
                            [UNIT + "test_regression_maths.py", UNIT + "test_regression_verdicts.py"]),
    "run lock": (["run/lock.py"], [UNIT + "test_run_lock.py"]),
    "path safety": (["safe_paths.py"], [UNIT + "test_safe_paths.py"]),
    "artifact transfer": (["transfer/artifact_transfer.py"], [UNIT + "test_artifact_transfer.py"]),
    "matrix expansion and planning": (["matrix/engine.py", "benchmark/job.py"],
                                      [UNIT + "test_matrix.py", UNIT + "test_harnesses_and_executors.py"]),
    "tekton rendering": (["matrix/tekton_pipeline.py"], [UNIT + "test_tekton.py"]),
    "llm harness metrics and arrivals": (["harnesses/llm_load/metrics.py", "harnesses/llm_load/arrivals.py"],
                                         ["tests/unit/harnesses/llm_load/test_llm_load_metrics.py",
                                          "tests/unit/harnesses/llm_load/test_llm_load_arrivals.py"]),
    "config and presets": (["config/loading.py"], [UNIT + "test_config.py"]),
}
# what the tests read besides the package's code (copied into .mutation/mutants/ by mutmut)
DATA = ["config", "schemas", "meta", "galaxy.yml", "docs", "playbooks", "roles", "kubesim"]
EQUIVALENTS = os.path.join(REPO, "tests", "mutation_equivalents")   # <label>.yml: one file per module
RESULT = os.path.join(REPO, "benchmarks", "results", "mutation.json")
KILLED = {1, 3, 36, -24, 24, 152, 255, 37, -11, -9}   # a failed test, an error, a timeout, a crash
SURVIVED = {0}
NO_TESTS = {5, 33}


def module_path(relative):
    return "%s/plugins/module_utils/%s" % (PACKAGE, relative)


def stage_of(label):
    """The directory one module's mutation run happens in (kept between runs)."""
    return os.path.join(STAGES, "".join(c if c.isalnum() else "-" for c in label))


def write_stage(label, fresh=False):
    stage = stage_of(label)
    os.makedirs(os.path.join(stage, os.path.dirname(PACKAGE)), exist_ok=True)
    links = {os.path.join(stage, PACKAGE): os.path.relpath(REPO, os.path.join(stage, os.path.dirname(PACKAGE)))}
    # the tests find the repository's files next to their own directory (tests/..)
    for name in ["tests"] + DATA:
        links[os.path.join(stage, name)] = os.path.relpath(os.path.join(REPO, name), stage)
    for link, target in links.items():
        if not os.path.islink(link):
            os.symlink(target, link)
    files = [module_path(f) for f in MODULES[label][0]]
    tests = sorted(MODULES[label][1])
    # mutmut keeps what it mutated in mutants/ and does not mutate a file it copied as is before:
    # another choice of files or tests for the module starts afresh
    chosen = os.path.join(stage, "modules.json")
    previous = None
    if os.path.exists(chosen):
        with open(chosen, encoding="utf-8") as handle:
            previous = json.load(handle)
    if fresh or previous != {"files": files, "tests": tests}:
        shutil.rmtree(os.path.join(stage, "mutants"), ignore_errors=True)
        with open(chosen, "w", encoding="utf-8") as handle:
            json.dump({"files": files, "tests": tests}, handle)
    else:
        retest_undecided(label)
        # which tests reach which function is traced again (one run of the module's tests): mutmut's kept
        # trace does not know the functions added since, and would call their mutants reached by no test
        stats = os.path.join(stage, "mutants", "mutmut-stats.json")
        if os.path.exists(stats):
            os.remove(stats)
    lines = ["[mutmut]", "source_paths="] + ["    %s/plugins" % PACKAGE] + \
        ["    %s/%s" % (PACKAGE, data) for data in DATA if os.path.exists(os.path.join(REPO, data))]
    lines += ["only_mutate="] + ["    %s" % f for f in files]
    lines += ["also_copy="] + ["    %s" % data for data in DATA if os.path.exists(os.path.join(REPO, data))]
    lines += ["pytest_add_cli_args_test_selection="] + ["    %s" % t for t in tests]
    lines += ["pytest_add_cli_args=", "    -p", "    no:cacheprovider", "    -q", ""]
    with open(os.path.join(stage, "setup.cfg"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))


def meta_path(label, relative):
    return os.path.join(stage_of(label), "mutants", module_path(relative) + ".meta")


def retest_undecided(label):
    """Set the survivors and the mutants no test reached back to "not run" (mutmut keeps them otherwise)."""
    for relative in MODULES[label][0]:
        path = meta_path(label, relative)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as handle:
            meta = json.load(handle)
        codes = meta["exit_code_by_key"]
        for name, code in codes.items():
            if code in SURVIVED or code in NO_TESTS:
                codes[name] = None
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(meta, handle, indent=4)


def write_survivor_diffs(label, names):
    """Each surviving mutant's diff, in the module's stage (survivors.diff), from mutmut's own index."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant  # only in the dev requirements

    stage = stage_of(label)
    previous = os.getcwd()
    os.chdir(stage)   # mutmut reads its mutants/ relative to the working directory
    try:
        diffs = []
        for name in names:
            relative = next(f for f in MODULES[label][0] if name.startswith(module_path(f)[:-3].replace("/", ".") + "."))
            diffs.append("# %s\n%s\n" % (name, get_diff_for_mutant(name, path=module_path(relative))))
    finally:
        os.chdir(previous)
    with open(os.path.join(stage, "survivors.diff"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(diffs))


def equivalents():
    """{mutant name: reason} of the mutants judged equivalent (tests/mutation_equivalents/*.yml)."""
    import yaml

    known = {}
    for name in sorted(os.listdir(EQUIVALENTS)) if os.path.isdir(EQUIVALENTS) else []:
        if not name.endswith(".yml"):
            continue
        with open(os.path.join(EQUIVALENTS, name), encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
        for mutant, entry in data.items():
            if not isinstance(entry, dict) or not str(entry.get("reason", "")).strip():
                raise SystemExit("%s: %s needs a 'reason' (why no test can tell the mutant apart)" % (name, mutant))
            known[mutant] = entry["reason"]
    return known


def scores(labels):
    known = equivalents()
    table, survivors = {}, {}
    for label in labels:
        counts = collections.Counter()
        for relative in MODULES[label][0]:
            meta = meta_path(label, relative)
            if not os.path.exists(meta):
                counts["not run"] += 1
                continue
            with open(meta, encoding="utf-8") as handle:
                exit_codes = json.load(handle)["exit_code_by_key"]
            for name, code in exit_codes.items():
                if name in known:
                    counts["equivalent"] += 1
                elif code in KILLED:
                    counts["killed"] += 1
                elif code in SURVIVED:
                    counts["survived"] += 1
                    survivors.setdefault(label, []).append(name)
                elif code in NO_TESTS:
                    counts["no tests"] += 1
                else:
                    counts["not checked"] += 1
        judged = counts["killed"] + counts["survived"]
        table[label] = dict(counts, files=MODULES[label][0], score=counts["killed"] / judged if judged else None)
    return table, survivors


def record(table, survivors, labels):
    """Update the recorded table with these modules' rows (runs of other modules may record at the same time)."""
    with open(RESULT + ".lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        recorded = {"modules": {}, "survivors": {}}
        if os.path.exists(RESULT):
            with open(RESULT, encoding="utf-8") as handle:
                recorded = json.load(handle)
        recorded["modules"].update(table)
        recorded["survivors"].update({label: survivors.get(label, []) for label in labels})
        recorded.update(tool="mutmut 3.8.1", goal=GOAL)
        for key in ("seconds", "date", "load_average", "note", "full_run_seconds"):
            recorded.pop(key, None)
        with open(RESULT + ".new", "w", encoding="utf-8") as handle:
            json.dump(recorded, handle, indent=2, sort_keys=True)
            handle.write("\n")
        os.replace(RESULT + ".new", RESULT)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labels", nargs="*", help="modules to mutate (default: all): " + "; ".join(MODULES))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--fresh", action="store_true", help="mutate and test everything again, keeping no verdict")
    parser.add_argument("--report-only", action="store_true", help="the scores of the last run, without running")
    args = parser.parse_args(argv)
    unknown = [label for label in args.labels if label not in MODULES]
    if unknown:
        parser.error("unknown module(s) %s; expected one of: %s" % (", ".join(unknown), "; ".join(MODULES)))
    labels = args.labels or list(MODULES)
    started = time.monotonic()
    seconds_by_label = {}
    if not args.report_only:
        mutmut = os.path.join(os.path.dirname(sys.executable), "mutmut")
        for label in labels:
            began = time.monotonic()
            write_stage(label, fresh=args.fresh)
            log_path = os.path.join(stage_of(label), "mutmut.log")
            with open(log_path, "w", encoding="utf-8") as log:
                done = subprocess.run([mutmut, "run", "--max-children", str(args.jobs)], cwd=stage_of(label),
                                      stdout=log, stderr=subprocess.STDOUT, check=False)
            if done.returncode != 0:
                sys.stderr.write("mutmut run of %r failed (exit %d): see %s\n" % (label, done.returncode, log_path))
                return 1
            seconds_by_label[label] = round(time.monotonic() - began)
            print("%s: %d s" % (label, seconds_by_label[label]), flush=True)
    table, survivors = scores(labels)
    for label in labels:
        if os.path.isdir(os.path.join(stage_of(label), "mutants")):
            write_survivor_diffs(label, survivors.get(label, []))
    seconds = time.monotonic() - started
    if not args.report_only:
        for label in labels:
            table[label].update(seconds=seconds_by_label[label], fresh=args.fresh, date=time.strftime("%Y-%m-%d"),
                                load_average=[round(load, 1) for load in os.getloadavg()])
        record(table, survivors, labels)
    print("%-34s %7s %8s %8s %10s %7s" % ("module", "killed", "survived", "no tests", "equivalent", "score"))
    for label, row in table.items():
        met = row["score"] is not None and row["score"] >= GOAL
        score = "-" if row["score"] is None else "%.1f%%" % (100 * row["score"])
        counts = tuple(row.get(key, 0) for key in ("killed", "survived", "no tests", "equivalent"))
        print("%-34s %7d %8d %8d %10d %7s%s" % ((label,) + counts + (score, "" if met else "  < goal")))
    print("%.0f s; the survivors' diffs: .mutation/<label>/survivors.diff" % seconds)
    return 0 if all(row["score"] is not None and row["score"] >= GOAL for row in table.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
