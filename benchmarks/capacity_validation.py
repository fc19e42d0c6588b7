"""The capacity planner against vLLM's own logged memory figures.

Reads ``results/capacity_vllm_measured.json`` (each case: the model, the GPU's total memory, vLLM's
arguments, what vLLM logged - weights, activation peak, non-torch memory, available KV cache - and
whether it served, with the log's source), plans each case with the collection's planner, and writes
``results/capacity_validation.json`` and ``results/capacity_validation.md``: per case the planned and
logged figures and their errors, per model the largest errors, and the goal (weights within 5 %, the
available KV cache within 15 %, no wrong feasible/infeasible verdict) judged on the vLLM 0.19 cases;
the cases of other vLLM versions are reported beside them.

    .venv/bin/python benchmarks/capacity_validation.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _common  # noqa: E402  (puts the collection on the path)

from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import architectures  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import memory  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import model_table  # noqa: E402

MEASURED = os.path.join(_common.RESULTS, "capacity_vllm_measured.json")
REPORT = os.path.join(_common.RESULTS, "capacity_validation.md")
JUDGED_GROUP = "vllm-0.19"
GOALS = {"weights": 5.0, "kv_cache": 15.0}
DEFAULT_TOTAL_GIB = 79.19


def plan_case(case):
    entry = model_table.lookup(case["model"])
    shape = architectures.shape_of(json.loads(json.dumps(entry["config"])), case["model"])
    request = memory.ServingRequest(
        shape, case.get("total_gpu_memory_gib") or DEFAULT_TOTAL_GIB,
        tensor_parallel_size=case["tensor_parallel_size"], pipeline_parallel_size=case["pipeline_parallel_size"],
        max_model_len=case.get("max_model_len"), max_num_seqs=case.get("max_num_seqs"),
        max_num_batched_tokens=case.get("max_num_batched_tokens"),
        gpu_memory_utilization=case.get("gpu_memory_utilization"), kv_cache_dtype=case.get("kv_cache_dtype"),
        dtype=case.get("dtype"), quantization=case.get("quantization"))
    return memory.plan(request)


def error(planned, measured):
    if measured is None or planned is None or not measured:
        return None
    return round(100.0 * (planned - measured) / abs(measured), 1)


def evaluate(cases):
    rows = []
    for case in cases:
        plan = plan_case(case)
        measured = case["measured"]
        served = case["outcome"] == "served"
        rows.append({
            "model": case["model"], "logged_model": case["logged_model"], "group": case["group"],
            "setup": "tp%d pp%d len %s util %s%s%s%s" % (
                case["tensor_parallel_size"], case["pipeline_parallel_size"], case.get("max_model_len") or "default",
                case.get("gpu_memory_utilization") or 0.9, " q=%s" % case["quantization"] if case.get("quantization") else "",
                " dtype=%s" % case["dtype"] if case.get("dtype") else "",
                " kv=%s" % case["kv_cache_dtype"] if case.get("kv_cache_dtype") else ""),
            "outcome": case["outcome"], "source": case["source_url"],
            "weights": (plan["weights_gib"], measured.get("weights_gib"), error(plan["weights_gib"], measured.get("weights_gib"))),
            "activation": (plan["activation_gib"], measured.get("activation_gib")),
            "non_torch": (plan["non_torch_gib"], measured.get("non_torch_gib")),
            "kv_cache": (plan["kv_cache_gib"], measured.get("kv_cache_gib"),
                         error(plan["kv_cache_gib"], measured.get("kv_cache_gib")) if served else None),
            "planned_feasible": plan["feasible"], "served": served,
            "verdict_right": plan["feasible"] == served, "reason": plan["reason"], "warnings": plan["warnings"],
        })
    return rows


def summary(rows):
    judged = [r for r in rows if r["group"] == JUDGED_GROUP]
    weights = [abs(r["weights"][2]) for r in judged if r["weights"][2] is not None]
    kv = [abs(r["kv_cache"][2]) for r in judged if r["kv_cache"][2] is not None]
    wrong = [r for r in judged if not r["verdict_right"]]
    per_model = {}
    for r in judged:
        entry = per_model.setdefault(r["model"], {"cases": 0, "weights": 0.0, "kv_cache": 0.0})
        entry["cases"] += 1
        if r["weights"][2] is not None:
            entry["weights"] = max(entry["weights"], abs(r["weights"][2]))
        if r["kv_cache"][2] is not None:
            entry["kv_cache"] = max(entry["kv_cache"], abs(r["kv_cache"][2]))
    return {
        "cases": len(judged), "weights_max_error_percent": max(weights), "kv_cache_max_error_percent": max(kv),
        "weights_median_error_percent": sorted(weights)[len(weights) // 2],
        "kv_cache_median_error_percent": sorted(kv)[len(kv) // 2],
        "wrong_verdicts": [{"model": r["model"], "setup": r["setup"], "outcome": r["outcome"]} for r in wrong],
        "weights_goal_met": max(weights) <= GOALS["weights"], "kv_cache_goal_met": max(kv) <= GOALS["kv_cache"],
        "per_model": per_model,
    }


def _cell(pair):
    planned, measured = pair[0], pair[1]
    return "%.2f / %s" % (planned, "%.2f" % measured if isinstance(measured, (int, float)) else "-")


def write_markdown(rows, totals, other):
    lines = ["# The capacity planner against vLLM's logged memory figures", "",
             "Written by `benchmarks/capacity_validation.py` from `capacity_vllm_measured.json` (each case's log is "
             "cited there). Figures in GiB per GPU, planned / logged; errors relative to the logged figure.", "",
             "## vLLM 0.19 on H100 80GB (llm-d-planner's sweep, raw logs): the goal", "",
             "| goal | result |", "|---|---|",
             "| weights within %.0f %% | max %.1f %% (median %.1f %%) over %d cases: **%s** |" % (
                 GOALS["weights"], totals["weights_max_error_percent"], totals["weights_median_error_percent"],
                 totals["cases"], "met" if totals["weights_goal_met"] else "missed"),
             "| available KV cache within %.0f %% | max %.1f %% (median %.1f %%): **%s** |" % (
                 GOALS["kv_cache"], totals["kv_cache_max_error_percent"], totals["kv_cache_median_error_percent"],
                 "met" if totals["kv_cache_goal_met"] else "missed"),
             "| no wrong feasible/infeasible verdict | %d wrong: %s |" % (
                 len(totals["wrong_verdicts"]), "; ".join("%s %s (%s)" % (w["model"], w["setup"], w["outcome"])
                                                          for w in totals["wrong_verdicts"]) or "none"),
             "", "Per model (largest error of its cases):", "", "| model | cases | weights | KV cache |", "|---|---|---|---|"]
    for model, entry in sorted(totals["per_model"].items()):
        lines.append("| %s | %d | %.1f %% | %.1f %% |" % (model, entry["cases"], entry["weights"], entry["kv_cache"]))
    for title, group_rows in (("Every vLLM 0.19 case", [r for r in rows if r["group"] == JUDGED_GROUP]),
                              ("Other vLLM versions (reported, not judged: see below)", other)):
        lines += ["", "## %s" % title, "",
                  "| model (logged checkpoint) | setup | weights | err | activation | non-torch | KV cache | err | "
                  "outcome | planned |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in group_rows:
            lines.append("| %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["model"], "" if r["logged_model"] == r["model"] else " (%s)" % r["logged_model"], r["setup"],
                _cell(r["weights"]), "%+.1f %%" % r["weights"][2] if r["weights"][2] is not None else "-",
                _cell(r["activation"]), _cell(r["non_torch"]), _cell(r["kv_cache"]),
                "%+.1f %%" % r["kv_cache"][2] if r["kv_cache"][2] is not None else "-", r["outcome"],
                ("feasible" if r["planned_feasible"] else "infeasible") + ("" if r["verdict_right"] else " (WRONG)")
                + (" (warned)" if r["warnings"] else "")))
    lines += ["", "## The misses, explained", "",
              "- gpt-oss-20b at `gpu_memory_utilization` 0.95 (TP 1 and 2): vLLM 0.19 allocated its KV cache (the "
              "planner's figures are within a few % of the logged ones) and then ran out of memory warming up its "
              "sampler with 1024 dummy requests, in the 4 GiB the utilization leaves out, after CUDA graphs took "
              "1.6-1.8 GiB there. The plan is feasible and carries a warning for exactly this (little headroom, a "
              "large sampler); the same model at 0.90 served. What happens outside the utilization is not modelled.",
              "- Other versions: vLLM 0.10-0.11 logged 4.8-7.4 GiB of activation where 0.19 logs 1.9-2.9 for the same "
              "models (a different profiler; llm-d-planner's own table), so the planner, calibrated on 0.19, "
              "overestimates their KV cache. One verdict among them is wrong for that reason: gpt-oss-120b at 0.95 and its "
              "default 128k context (vLLM issue 27508) was refused with 1.71 GiB of KV cache where the planner, "
              "with 0.19's activation, leaves 6.2 GiB; its plan carries the headroom warning. The RTX 3090 cases are vLLM V0 "
              "(0.6), which profiled `max_model_len` tokens at once: planned with `max_num_batched_tokens` = "
              "`max_model_len`, as that version ran, their verdicts are right (20k served, 29k refused).", ""]
    with open(REPORT, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))


def main():
    with open(MEASURED, encoding="utf-8") as handle:
        cases = json.load(handle)["cases"]
    rows = evaluate(cases)
    totals = summary(rows)
    other = [r for r in rows if r["group"] != JUDGED_GROUP]
    write_markdown(rows, totals, other)
    _common.record("capacity_validation", {"summary": totals, "rows": rows,
                                           "other_versions_wrong_verdicts": [r["model"] + " " + r["setup"] for r in other
                                                                             if not r["verdict_right"]]})
    print("weights: max %.1f %% (goal %.0f %%), KV cache: max %.1f %% (goal %.0f %%), wrong verdicts: %d -> %s"
          % (totals["weights_max_error_percent"], GOALS["weights"], totals["kv_cache_max_error_percent"],
             GOALS["kv_cache"], len(totals["wrong_verdicts"]), REPORT))


if __name__ == "__main__":
    main()
