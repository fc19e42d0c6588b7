# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""llm-load-test output JSON (openshift-psap/llm-load-test) -> one report.

Its records (``results``) carry per request ``start_time``, ``first_token_time``,
``end_time`` (wall clock), ``output_tokens``, ``input_tokens`` and, in
milliseconds, ``ttft``, ``tpot`` (response time / output tokens: *including* the
first token) and ``itl`` ((end - first token) / (output tokens - 1)), plus
``error_code`` / ``error_text``. The distributions are recomputed from the
records (llm-load-test's summary has no p50/p99 beyond its own quantiles):
its ``tpot`` is the report's normalized TPOT, its ``itl`` the report's TPOT and
(no pooled gaps are kept) ITL. Load: ``concurrency`` users in a closed loop for
``duration`` seconds.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.converters import ConversionError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.converters import common

NAME = "llm-load-test"
DESCRIPTION = "llm-load-test output JSON (results, config, summary)"
INPUT = "the output-<concurrency>.json file of llm-load-test"


def _values(records, key, factor=1.0):
    return [record[key] * factor for record in records if isinstance(record.get(key), (int, float))
            and not isinstance(record.get(key), bool)]


def convert_document(document, path):
    if not isinstance(document, dict) or not isinstance(document.get("results"), list):
        raise ConversionError("%s: expected llm-load-test output (an object with a results list)" % path)
    records = [r for r in document["results"] if isinstance(r, dict)]
    failed = [r for r in records if r.get("error_code") is not None or r.get("error_text") is not None]
    ok = [r for r in records if r not in failed]
    config = document.get("config") or {}
    load = config.get("load_options") or {}
    plugin = config.get("plugin_options") or {}
    summary = document.get("summary") or {}
    starts = _values(records, "start_time")
    ends = _values(records, "end_time")
    start, end = (min(starts), max(ends)) if starts and ends else (None, None)
    duration = (end - start) if start is not None and end is not None and end > start else None
    output_total = sum(_values(ok, "output_tokens"))
    input_total = sum(_values(ok, "input_tokens"))
    tpot = common.statistics_of_values(_values(ok, "itl", 1e-3), "s/token")
    aggregate = {
        "requests": {"total": len(records), "failures": len(failed),
                     "input_length": common.statistics_of_values([float(v) for v in _values(ok, "input_tokens")], "count"),
                     "output_length": common.statistics_of_values([float(v) for v in _values(ok, "output_tokens")], "count")},
        "latency": {
            "time_to_first_token": common.statistics_of_values(_values(ok, "ttft", 1e-3), "s"),
            "normalized_time_per_output_token": common.statistics_of_values(_values(ok, "tpot", 1e-3), "s/token"),
            "time_per_output_token": tpot,
            "inter_token_latency": tpot,
            "request_latency": common.statistics_of_values(_values(ok, "response_time", 1e-3), "s"),
        },
        "throughput": {
            "input_token_rate": common.rate(input_total / duration if duration else None, "tokens/s"),
            "output_token_rate": common.rate(output_total / duration if duration else None, "tokens/s"),
            "total_token_rate": common.rate((input_total + output_total) / duration if duration else None, "tokens/s"),
            "request_rate": common.rate(len(ok) / duration if duration else None, "queries/s"),
        },
    }
    concurrency = load.get("concurrency")
    errors = {}
    for record in failed:
        label = "http_%s" % record["error_code"] if record.get("error_code") is not None else (record.get("error_text") or "error")[:60]
        errors[label] = errors.get(label, 0) + 1
    return [common.build_report(
        "llm-load-test", "unknown", plugin.get("model_name"), 0, path, aggregate,
        {"load_options": load, "plugin_options": {k: plugin.get(k) for k in ("streaming", "endpoint", "model_name")},
         "dataset": config.get("dataset")},
        start=start, end=end, concurrency=concurrency if isinstance(concurrency, int) else None, data_source="sampled",
        input_seq_len=common.sequence_length(input_total / len(ok) if ok else None),
        output_seq_len=common.sequence_length(output_total / len(ok) if ok else None) if ok else None,
        notes=["latencies are measured from the actual send (closed loop: no schedule)",
               "llm-load-test's tpot includes the first token (the report's normalized TPOT); its itl is the "
               "report's TPOT, and ITL (no pooled chunk gaps are kept)"],
        extra_observability={"errors_by_class": errors or None, "summary_throughput_tokens_per_s": summary.get("throughput"),
                             "summary_total_failures": summary.get("total_failures")})]


def convert_path(path):
    return convert_document(common.read_json(path, "llm-load-test output"), path)
