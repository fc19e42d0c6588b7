"""False alarms of a `cpt` gate on a loaded machine: identical runs, judged side by side.

A shared CI runner is loaded by other jobs. This runs the `make demo` benchmark (8 points)
ROUNDS times, identically, for each of VARIANTS (the presets measured: `cpu_smoke`, and
`cpu_smoke,shared_runner`, the steadier measurement a shared runner needs), the variants
interleaved, with BURNERS_PER_CPU busy processes per CPU at normal priority beside them
(bounded in time, stopped at the end). Nothing changes between the runs of a variant, so
every failed gate is a false alarm.

Each run from the second on is then judged against the runs of its variant before it (a fresh
SQLite store holding their KPI records, as the export would have written them), with the `cpt`
preset's gate (fail on a new regression, require history) under two settings:
  gate_now     this checkout: regression.noise.baseline prefer_quiet (noisy runs enter a
               baseline where there are too few quiet ones), short histories judged by magnitude
               and the history's spread (short_history_max_pvalue 0.01, else inconclusive), a
               change within the run's own repetition spread inconclusive, a noisy run's
               regression failing only against noisy runs;
  gate_before  as it was: noisy runs never in a baseline (quiet_only), short histories judged
               by magnitude alone (an inconclusive verdict counted as the way it leans), noisy
               runs' regressions never failing (and not counted).
Each run is also judged as if it were SLOWDOWNS (1.5, 2 and 4) times slower, every KPI scaled:
real regressions, which a gate must catch (the detection rates; a gate that never fails has no
false alarms either). Recorded per variant: the median run time, load and repetition spread,
the share of noisy tests; per setting: the runs judged, the gates failed (the false-alarm
rate) and why, the share of slowed runs caught (the detection rates), the verdicts of the KPI
judgements.

    ROUNDS=20 BURNERS_PER_CPU=1 .venv/bin/python benchmarks/cpt_false_alarms.py
    REUSE=/tmp/cpt-false-alarms-XXXX .venv/bin/python benchmarks/cpt_false_alarms.py  # judge again
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import _common
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import regression_step as step
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import verdicts
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.sqlite import SQLiteStore

ROUNDS = int(os.environ.get("ROUNDS", "12"))
BURNERS_PER_CPU = int(os.environ.get("BURNERS_PER_CPU", "1"))
# each run is also judged as if it were this many times slower: real regressions the gate must catch
SLOWDOWNS = [float(v) for v in os.environ.get("SLOWDOWNS", "1.5,2,4").split(",")]
# the presets measured, side by side (each with cpt for the gate): the demo's, and the demo's made
# for a shared runner (one BLAS thread, more repetitions)
VARIANTS = os.environ.get("VARIANTS", "cpu_smoke;cpu_smoke,shared_runner").split(";")
SETTINGS = {
    "gate_now": {},
    "gate_before": {"noise": {"baseline": "quiet_only"}, "short_history_max_pvalue": 1 - 1e-12,
                    "noisy_regressions_fail": False},
}


def burners(count, limit_s):
    program = "import time\nend = time.time() + %d\nwhile time.time() < end:\n    pass\n" % limit_s
    return [subprocess.Popen([sys.executable, "-c", program]) for _index in range(count)]


def run_round(root, presets):
    overrides = json.dumps({"overrides": {"regression.enabled": False, "export.enabled": False}})
    path = os.path.join(_common.REPO, "playbooks", "benchmark.yml")
    start = time.perf_counter()
    subprocess.run([os.path.join(_common.BIN, "ansible-playbook"), "-i", _common.INVENTORY, path, "-e",
                    "preset=%s" % presets, "-e", "artifact_dir=%s" % root, "-e", overrides], check=True,
                   env=dict(os.environ, ANSIBLE_CONFIG=os.path.join(_common.REPO, "ansible.cfg"),
                            XDG_DATA_HOME=os.path.join(root, "xdg")),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=_common.REPO)
    return time.perf_counter() - start


def plots_dir(root):
    return next(os.path.join(root, name) for name in sorted(os.listdir(root)) if name.endswith("__plots"))


def slowed(payloads, factor):
    """The payloads of a run ``factor`` times slower: what a real regression looks like."""
    for payload in payloads:
        for kpi in payload["kpis"].values():
            if isinstance(kpi.get("value"), (int, float)) and not kpi.get("ignored_for_regression"):
                kpi["value"] = kpi["value"] / factor if kpi["higher_is_better"] else kpi["value"] * factor
    return payloads


def judge(config, workload, plots, earlier, directory, name, slowdown=None):
    """The cpt gate of one run (``slowdown`` times slower when given) against the KPI records of the
    runs before it."""
    section = config_schema.read_section(config, "regression")
    for key, value in SETTINGS[name].items():
        if key == "noise":
            section["noise"] = dict(section["noise"], **value)
        elif key != "noisy_regressions_fail":
            section[key] = value
    settings = verdicts.effective_settings(section, workload.regression)
    store = SQLiteStore(os.path.join(directory, "%s%s.sqlite" % (name, "-slowed" if slowdown else "")))
    store.ensure_schema(list(workload.labels_model().model_fields))
    for records in earlier:
        store.write(export_lib.kpi_documents(records))
    payloads = step.load_payloads(plots)
    if slowdown:
        payloads = slowed(payloads, slowdown)
    summary, _records, _details = verdicts.analyse(payloads, store, settings, workload.name)
    store.close()
    if SETTINGS[name].get("noisy_regressions_fail") is False:
        # as it was: the magnitude alone decided a short history (an inconclusive verdict was its
        # leaning), and a noisy run's regression never failed the gate
        for line in summary.pop("inconclusive"):
            summary["regressions" if line["leaning"] == "regression" else "improvements"].append(line)
        summary["inconclusive"] = []
        summary["regressions"] = [r for r in summary["regressions"] if not r["noisy"]]
        summary.update(verdicts.gate_decision(summary))
    return summary


def measure(work):
    """ROUNDS identical runs of each variant, interleaved, beside the burners: {variant: (walls, loads
    per CPU, plots directories)}; also kept in the work directory for a later REUSE."""
    running = burners(BURNERS_PER_CPU * (os.cpu_count() or 1), limit_s=120 * (ROUNDS + 2) * len(VARIANTS))
    rounds = {variant: {"walls": [], "loads": [], "roots": []} for variant in VARIANTS}
    try:
        for index in range(ROUNDS):
            for variant in VARIANTS:
                root = os.path.join(work, variant.replace(",", "+"), "round-%02d" % index)
                kept = rounds[variant]
                kept["walls"].append(run_round(root, variant))
                kept["loads"].append(os.getloadavg()[0] / (os.cpu_count() or 1))
                kept["roots"].append(root)
                print("%s round %d: %.1f s, load %.2f per CPU" % (variant, index, kept["walls"][-1], kept["loads"][-1]),
                      file=sys.stderr)
    finally:
        for process in running:
            process.kill()
            process.wait()
    with open(os.path.join(work, "rounds.json"), "w", encoding="utf-8") as handle:
        json.dump(rounds, handle)
    return rounds


def reuse(work):
    """The rounds of an earlier measurement (REUSE=its work directory), judged again."""
    with open(os.path.join(work, "rounds.json"), encoding="utf-8") as handle:
        return json.load(handle)


def judge_variant(variant, kept):
    """Each run of a variant from the second on, judged against the runs before it, under each setting."""
    config = config_lib.resolve_config(config_lib.default_config_path(_common.REPO),
                                       presets=variant.split(",") + ["cpt"]).config
    workload = workload_lib.load_workload(config_schema.read_section(config, "postprocess")["workload"])
    plots = [plots_dir(root) for root in kept["roots"]]
    records = []
    for plot in plots:
        with open(os.path.join(plot, postprocess.KPI_RECORDS), encoding="utf-8") as handle:
            records.append(json.load(handle))
    rates = [r for run in records for r in run if r["kpi_name"] == "rate"]
    results = {"median_run_s": round(_common.median(kept["walls"]), 1),
               "median_load_per_cpu": round(_common.median(kept["loads"]), 2),
               "noisy_tests": sum(1 for r in rates if r.get("noisy")), "tests": len(rates),
               "median_repetition_spread": round(_common.median([r["repetition_spread"] for r in rates
                                                                 if r.get("repetition_spread") is not None]), 3),
               "settings": {}}
    for name in SETTINGS:
        gates, caught, reasons, verdict_counts = 0, {factor: 0 for factor in SLOWDOWNS}, {}, {}
        for index in range(1, len(plots)):
            directory = os.path.dirname(plots[index])
            summary = judge(config, workload, plots[index], records[:index], directory, name)
            gates += bool(summary["fail_test"])
            for factor in SLOWDOWNS:
                caught[factor] += bool(judge(config, workload, plots[index], records[:index], directory, name,
                                             slowdown=factor)["fail_test"])
            for reason in summary["fail_reasons"]:
                kind = reason.split(" ", 1)[1] if reason[0].isdigit() else reason
                reasons[kind] = reasons.get(kind, 0) + 1
            for verdict, bucket in (("regression", "regressions"), ("improvement", "improvements"),
                                    ("inconclusive", "inconclusive"), ("not_enough_history", "not_enough_history")):
                verdict_counts[verdict] = verdict_counts.get(verdict, 0) + len(summary.get(bucket) or ())
            verdict_counts["no_change"] = verdict_counts.get("no_change", 0) + summary.get("no_change", 0)
        judged = len(plots) - 1
        kpi_judgements = sum(verdict_counts.values())
        results["settings"][name] = {
            "runs_judged": judged, "gates_failed": gates, "false_alarm_rate": round(gates / judged, 3),
            "detection_rate": {"%gx slower" % factor: round(count / judged, 3) for factor, count in caught.items()},
            "fail_reasons": reasons,
            "verdicts": verdict_counts,
            "kpi_false_regression_rate": round(verdict_counts.get("regression", 0) / kpi_judgements, 3)
            if kpi_judgements else None}
    return results


def main():
    work = os.environ.get("REUSE") or tempfile.mkdtemp(prefix="cpt-false-alarms-")
    rounds = reuse(work) if os.environ.get("REUSE") else measure(work)
    print("rounds kept in %s (REUSE=%s judges them again)" % (work, work), file=sys.stderr)
    _common.record("cpt_false_alarms", {
        "rounds": ROUNDS, "burners_per_cpu": BURNERS_PER_CPU, "slowdowns": SLOWDOWNS,
        "variants": {variant: judge_variant(variant, kept) for variant, kept in rounds.items()}})


if __name__ == "__main__":
    main()
