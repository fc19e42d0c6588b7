"""make mutation: mutation testing of the core, with mutmut (pinned in requirements-dev.txt).

The modules where a silent mistake costs users most (MODULES) are mutated and their unit tests
run against each mutant. mutmut needs the module path it mutates to be the path tests import:
the collection is imported as ``ansible_collections.perfscale.topsail``, so the run happens in
``.mutation/`` (kept between runs: mutmut re-tests only the functions that changed since), where
``ansible_collections/perfscale/topsail`` is a link to this checkout and ``tests`` a link to its
tests. mutmut copies both into ``.mutation/mutants/`` and runs each test that reaches a mutated
function against it, in forked workers.

After the run: per module, the mutants killed (a test failed, or timed out), survived (every
test passed), with no test reaching them, and those listed as equivalent in
``tests/mutation_equivalents.yml`` (a mutant no test can kill because it changes nothing a user
can see, with the reason). The score is killed / (mutants - no tests - equivalent); the goal is
90 % per module. The table goes to ``benchmarks/results/mutation.json`` and is printed; the
surviving mutants are listed (``.venv/bin/mutmut show NAME`` in ``.mutation/`` shows one).

Usage: python tools/mutation.py [MODULE_LABEL ...] [--jobs N]
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGE = os.path.join(REPO, ".mutation")
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
    "matrix expansion and planning": (["matrix/engine.py", "matrix/benchmark.py"],
                                      [UNIT + "test_matrix.py", UNIT + "test_harnesses_and_executors.py"]),
    "tekton rendering": (["matrix/tekton_pipeline.py"], [UNIT + "test_tekton.py"]),
    "llm harness metrics and arrivals": (["harnesses/llm_load/metrics.py", "harnesses/llm_load/arrivals.py"],
                                         ["tests/unit/harnesses/llm_load/test_llm_load_metrics.py",
                                          "tests/unit/harnesses/llm_load/test_llm_load_arrivals.py"]),
    "config and presets": (["config/loading.py"], [UNIT + "test_config.py"]),
}
# what the tests read besides the package's code (copied into .mutation/mutants/ by mutmut)
DATA = ["config", "schemas", "meta", "galaxy.yml", "docs", "playbooks", "roles", "kubesim"]
EQUIVALENTS = os.path.join(REPO, "tests", "mutation_equivalents.yml")
RESULT = os.path.join(REPO, "benchmarks", "results", "mutation.json")
KILLED = {1, 3, 36, -24, 24, 152, 255, 37, -11, -9}   # a failed test, an error, a timeout, a crash
SURVIVED = {0}
NO_TESTS = {5, 33}


def module_path(relative):
    return "%s/plugins/module_utils/%s" % (PACKAGE, relative)


def write_stage(labels):
    os.makedirs(os.path.join(STAGE, os.path.dirname(PACKAGE)), exist_ok=True)
    links = {os.path.join(STAGE, PACKAGE): os.path.relpath(REPO, os.path.join(STAGE, os.path.dirname(PACKAGE)))}
    # the tests find the repository's files next to their own directory (tests/..)
    for name in ["tests"] + DATA:
        links[os.path.join(STAGE, name)] = os.path.relpath(os.path.join(REPO, name), STAGE)
    for link, target in links.items():
        if not os.path.islink(link):
            os.symlink(target, link)
    files = [module_path(f) for label in labels for f in MODULES[label][0]]
    tests = sorted({t for label in labels for t in MODULES[label][1]})
    # mutmut keeps what it mutated in mutants/ and does not mutate a file it copied as is before:
    # another choice of modules starts afresh (the same choice re-tests only what changed)
    chosen = os.path.join(STAGE, "modules.json")
    previous = None
    if os.path.exists(chosen):
        with open(chosen, encoding="utf-8") as handle:
            previous = json.load(handle)
    if previous != {"files": files, "tests": tests}:
        shutil.rmtree(os.path.join(STAGE, "mutants"), ignore_errors=True)
        with open(chosen, "w", encoding="utf-8") as handle:
            json.dump({"files": files, "tests": tests}, handle)
    lines = ["[mutmut]", "source_paths="] + ["    %s/plugins" % PACKAGE] + \
        ["    %s/%s" % (PACKAGE, data) for data in DATA if os.path.exists(os.path.join(REPO, data))]
    lines += ["only_mutate="] + ["    %s" % f for f in files]
    lines += ["also_copy="] + ["    %s" % data for data in DATA if os.path.exists(os.path.join(REPO, data))]
    lines += ["pytest_add_cli_args_test_selection="] + ["    %s" % t for t in tests]
    lines += ["pytest_add_cli_args=", "    -p", "    no:cacheprovider", "    -q", ""]
    with open(os.path.join(STAGE, "setup.cfg"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))


def equivalents():
    """{mutant name: reason} of the mutants judged equivalent."""
    if not os.path.exists(EQUIVALENTS):
        return {}
    import yaml

    with open(EQUIVALENTS, encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    return {name: entry["reason"] for name, entry in data.items()}


def scores(labels):
    known = equivalents()
    table, survivors = {}, {}
    for label in labels:
        counts = collections.Counter()
        for relative in MODULES[label][0]:
            meta = os.path.join(STAGE, "mutants", module_path(relative) + ".meta")
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


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labels", nargs="*", help="modules to mutate (default: all): " + "; ".join(MODULES))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--report-only", action="store_true", help="the scores of the last run, without running")
    args = parser.parse_args(argv)
    unknown = [label for label in args.labels if label not in MODULES]
    if unknown:
        parser.error("unknown module(s) %s; expected one of: %s" % (", ".join(unknown), "; ".join(MODULES)))
    labels = args.labels or list(MODULES)
    started = time.monotonic()
    if not args.report_only:
        write_stage(labels)
        mutmut = os.path.join(os.path.dirname(sys.executable), "mutmut")
        with open(os.path.join(STAGE, "mutmut.log"), "w", encoding="utf-8") as log:
            done = subprocess.run([mutmut, "run", "--max-children", str(args.jobs)], cwd=STAGE, stdout=log,
                                  stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            log_path = os.path.join(STAGE, "mutmut.log")
            sys.stderr.write("mutmut run failed (exit %d): see %s\n" % (done.returncode, log_path))
            return 1
    table, survivors = scores(labels)
    seconds = time.monotonic() - started
    if not args.report_only:
        recorded = {"modules": {}, "survivors": {}}
        if os.path.exists(RESULT):
            with open(RESULT, encoding="utf-8") as handle:
                recorded = json.load(handle)
        recorded["modules"].update(table)
        recorded["survivors"].update({label: survivors.get(label, []) for label in labels})
        recorded.update(tool="mutmut 3.8.1", goal=GOAL, seconds=round(seconds), date=time.strftime("%Y-%m-%d"),
                        load_average=os.getloadavg())
        with open(RESULT, "w", encoding="utf-8") as handle:
            json.dump(recorded, handle, indent=2, sort_keys=True)
            handle.write("\n")
    print("%-34s %7s %8s %8s %10s %7s" % ("module", "killed", "survived", "no tests", "equivalent", "score"))
    for label, row in table.items():
        met = row["score"] is not None and row["score"] >= GOAL
        score = "-" if row["score"] is None else "%.1f%%" % (100 * row["score"])
        counts = tuple(row.get(key, 0) for key in ("killed", "survived", "no tests", "equivalent"))
        print("%-34s %7d %8d %8d %10d %7s%s" % ((label,) + counts + (score, "" if met else "  < goal")))
    print("%.0f s; survivors: .venv/bin/python tools/mutation.py --report-only, then mutmut show NAME in .mutation/"
          % seconds)
    return 0 if all(row["score"] is not None and row["score"] >= GOAL for row in table.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
