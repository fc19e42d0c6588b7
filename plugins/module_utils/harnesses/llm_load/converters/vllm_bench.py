# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``vllm bench serve --save-result`` JSON -> one report.

vLLM's definitions (vllm/benchmarks/serve.py): TTFT and E2EL from the actual
send; TPOT per request = (latency - ttft) / (output tokens - 1); ITL = every gap
between streamed chunks, pooled over the requests. Its summary keys are
``mean_<m>_ms``, ``median_<m>_ms``, ``std_<m>_ms`` and ``p<P>_<m>_ms`` for the
percentiles of ``--metric-percentiles`` (default 99) with m in ttft, tpot, itl,
e2el. With ``--save-detailed`` the per-request lists (``ttfts``, ``itls``,
``output_lens``, ``input_lens``, ``errors``...) are there too, and every
distribution (and the normalized TPOT) is computed from them instead.
"""

from __future__ import annotations

import re

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.converters import ConversionError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.converters import common

NAME = "vllm-bench"
DESCRIPTION = "vllm bench serve result JSON (--save-result, optionally --save-detailed)"
INPUT = "the JSON file written by vllm bench serve --save-result"
PERCENTILE_KEY = re.compile(r"^p(\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)_ms$")
REPORT_PERCENTILES = {0.1: "p0p1", 1.0: "p1", 5.0: "p5", 10.0: "p10", 25.0: "p25", 50.0: "p50", 75.0: "p75",
                      90.0: "p90", 95.0: "p95", 99.0: "p99", 99.9: "p99p9"}


def _summary_statistics(document, metric, units):
    """From the summary keys (milliseconds) to seconds."""
    mean = document.get("mean_%s_ms" % metric)
    if not isinstance(mean, (int, float)) or isinstance(mean, bool):
        return None
    values = {"mean": mean, "std": document.get("std_%s_ms" % metric), "median": document.get("median_%s_ms" % metric)}
    for key, value in document.items():
        match = PERCENTILE_KEY.match(key)
        if match and match.group(2) == metric:
            name = REPORT_PERCENTILES.get(float(match.group(1)))
            if name:
                values[name] = value
    return common.statistics_from(values, units, 1e-3)


def _detailed(document):
    """Per-request lists of a --save-detailed result, or None."""
    ttfts, itls, outputs = document.get("ttfts"), document.get("itls"), document.get("output_lens")
    if not all(isinstance(v, list) for v in (ttfts, itls, outputs)) or not (len(ttfts) == len(itls) == len(outputs)):
        return None
    return ttfts, itls, outputs


def convert_document(document, path):
    if not isinstance(document, dict) or "completed" not in document or "duration" not in document:
        raise ConversionError("%s: expected a vllm bench serve result (an object with completed and duration)" % path)
    completed = int(document.get("completed") or 0)
    failed = int(document.get("failed") or 0)
    latency = {
        "time_to_first_token": _summary_statistics(document, "ttft", "s"),
        "time_per_output_token": _summary_statistics(document, "tpot", "s/token"),
        "inter_token_latency": _summary_statistics(document, "itl", "s/token"),
        "request_latency": _summary_statistics(document, "e2el", "s"),
    }
    requests = {"total": completed + failed, "failures": failed}
    detailed = _detailed(document)
    notes = ["latencies are measured from the actual send (vLLM's client)"]
    if detailed:
        ttfts, itls, outputs = detailed
        errors = document.get("errors") or [""] * len(ttfts)
        latencies = document.get("latencies")
        ok = [i for i in range(len(ttfts)) if not errors[i] and outputs[i]]
        latency["time_to_first_token"] = common.statistics_of_values([ttfts[i] for i in ok], "s")
        latency["inter_token_latency"] = common.statistics_of_values([g for i in ok for g in itls[i]], "s/token")
        latency["time_per_output_token"] = common.statistics_of_values(
            [sum(itls[i]) / (outputs[i] - 1) for i in ok if outputs[i] > 1], "s/token")
        if isinstance(latencies, list) and len(latencies) == len(ttfts):
            latency["request_latency"] = common.statistics_of_values([latencies[i] for i in ok], "s")
            latency["normalized_time_per_output_token"] = common.statistics_of_values(
                [latencies[i] / outputs[i] for i in ok], "s/token")
        inputs = document.get("input_lens")
        if isinstance(inputs, list) and len(inputs) == len(ttfts):
            requests["input_length"] = common.statistics_of_values([float(inputs[i]) for i in ok], "count")
        requests["output_length"] = common.statistics_of_values([float(outputs[i]) for i in ok], "count")
        notes.append("distributions computed from the per-request lists (--save-detailed)")
    else:
        for key, total in (("input_length", "total_input_tokens"), ("output_length", "total_output_tokens")):
            if completed and isinstance(document.get(total), (int, float)):
                requests[key] = {"units": "count", "mean": document[total] / float(completed)}
        notes.append("summary only: percentiles are those of --metric-percentiles")
    throughput = {
        "output_token_rate": common.rate(document.get("output_throughput"), "tokens/s"),
        "total_token_rate": common.rate(document.get("total_token_throughput"), "tokens/s"),
        "request_rate": common.rate(document.get("request_throughput"), "queries/s"),
    }
    duration = document.get("duration")
    if isinstance(document.get("total_input_tokens"), (int, float)) and isinstance(duration, (int, float)) and duration > 0:
        throughput["input_token_rate"] = common.rate(document["total_input_tokens"] / duration, "tokens/s")
    rate_qps = document.get("request_rate")
    rate_qps = rate_qps if isinstance(rate_qps, (int, float)) and not isinstance(rate_qps, bool) else None
    concurrency = document.get("max_concurrency")
    input_mean = document["total_input_tokens"] / float(completed) if completed and document.get("total_input_tokens") else None
    output_mean = document["total_output_tokens"] / float(completed) if completed and document.get("total_output_tokens") else None
    native_keys = ("date", "backend", "endpoint_type", "label", "model_id", "tokenizer_id", "num_prompts", "request_rate",
                   "burstiness", "max_concurrency")
    native = {key: document.get(key) for key in native_keys}
    report = common.build_report(
        "vllm-bench-serve", document.get("vllm_version") or "unknown", document.get("model_id"), 0, path,
        {"requests": requests, "latency": latency, "throughput": throughput}, native,
        rate_qps=rate_qps, concurrency=concurrency if isinstance(concurrency, int) else None,
        data_source="random" if str(document.get("dataset_name") or "random").startswith("random") else "sampled",
        input_seq_len=common.sequence_length(input_mean), output_seq_len=common.sequence_length(output_mean) if output_mean else None,
        notes=notes, extra_observability={"duration_s": duration, "max_concurrent_requests": document.get("max_concurrent_requests"),
                                          "fixture_provenance": document.get("fixture_provenance")})
    return [report]


def convert_path(path):
    return convert_document(common.read_json(path, "a vllm bench serve result"), path)
