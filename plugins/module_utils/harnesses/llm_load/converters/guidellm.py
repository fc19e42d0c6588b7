# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""guidellm benchmark JSON (report ``metadata.version`` 2: guidellm 0.8.x) -> one report per benchmark.

Mapped by meaning, not by name (guidellm's definitions, from its request_stats):

=================================  ===============================================
guidellm (successful requests)     report
=================================  ===============================================
time_to_first_token_ms             time_to_first_token (ms -> s); measured from the
                                   actual send, so a late client is not seen
time_per_output_token_ms           normalized_time_per_output_token: guidellm
                                   divides (last token - send) by *all* output tokens
inter_token_latency_ms             time_per_output_token: (last - first token) /
                                   (output tokens - 1) per request; also given as
                                   inter_token_latency (guidellm keeps no pooled gaps)
request_latency (s)                request_latency
prompt/output_token_count          input_length / output_length
*_per_second                       throughputs (mean)
request_totals                     total, failures (errored), incomplete
=================================  ===============================================

When guidellm saved per-request timings, the send lag of those sampled
requests (``request_start - targeted_start``) and their TTFT from the scheduled
time are added under ``observability.converted_from``.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.converters import ConversionError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.converters import common

NAME = "guidellm"
DESCRIPTION = "guidellm benchmark JSON (guidellm 0.8.x, report version 2)"
INPUT = "the JSON file written by guidellm run --output kind=json,path=FILE"


def _successful(metrics, name):
    entry = (metrics.get(name) or {}).get("successful")
    return entry if isinstance(entry, dict) else None


def _stats(metrics, name, units, factor=1.0):
    entry = _successful(metrics, name)
    if entry is None or not entry.get("count"):
        return None
    return common.statistics_from(entry, units, factor, entry.get("percentiles"))


def _rate(metrics, name, units):
    entry = _successful(metrics, name)
    return common.rate(entry.get("mean") if entry else None, units)


def _sampled_timings(benchmark):
    """Send lag and TTFT from the scheduled time of the per-request records guidellm kept."""
    lags, ttfts = [], []
    for record in (benchmark.get("requests") or {}).get("successful") or []:
        timings = ((record.get("info") or {}).get("timings") or {})
        targeted, started = timings.get("targeted_start"), timings.get("request_start")
        first = timings.get("first_token_iteration")
        if isinstance(targeted, (int, float)) and isinstance(started, (int, float)):
            lags.append(started - targeted)
            if isinstance(first, (int, float)):
                ttfts.append(first - targeted)
    if not lags:
        return {}
    return {"sampled_requests": len(lags),
            "sampled_send_lag": common.statistics_of_values(lags, "ms", 1e3),
            "sampled_time_to_first_token_from_scheduled": common.statistics_of_values(ttfts, "ms", 1e3)}


def _data_spec(document):
    data = ((document.get("config") or {}).get("spec") or {}).get("data") or []
    return data[0] if data and isinstance(data[0], dict) else {}


def convert_document(document, path):
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise ConversionError("%s: expected a guidellm report (an object with a benchmarks list)" % path)
    metadata = document.get("metadata") or {}
    if metadata.get("version") not in (None, 2):
        raise ConversionError("%s: guidellm report version %r; this converter reads version 2" % (path, metadata.get("version")))
    spec = (document.get("config") or {}).get("spec") or {}
    data = _data_spec(document)
    reports = []
    for index, benchmark in enumerate(document["benchmarks"]):
        if not isinstance(benchmark, dict) or not isinstance(benchmark.get("metrics"), dict):
            raise ConversionError("%s: benchmark %d has no metrics" % (path, index))
        metrics = benchmark["metrics"]
        config = benchmark.get("config") or {}
        strategy = config.get("strategy") or {}
        backend = config.get("backend") or spec.get("backend") or {}
        totals = metrics.get("request_totals") or {}
        itl = _stats(metrics, "inter_token_latency_ms", "s/token", 1e-3)
        aggregate = {
            "requests": {"total": int(totals.get("total") or 0), "failures": int(totals.get("errored") or 0),
                         "incomplete": int(totals.get("incomplete") or 0),
                         "input_length": _stats(metrics, "prompt_token_count", "count"),
                         "output_length": _stats(metrics, "output_token_count", "count")},
            "latency": {
                "time_to_first_token": _stats(metrics, "time_to_first_token_ms", "s", 1e-3),
                "normalized_time_per_output_token": _stats(metrics, "time_per_output_token_ms", "s/token", 1e-3),
                "time_per_output_token": itl,
                "inter_token_latency": itl,
                "request_latency": _stats(metrics, "request_latency", "s"),
            },
            "throughput": {
                "input_token_rate": _rate(metrics, "prompt_tokens_per_second", "tokens/s"),
                "output_token_rate": _rate(metrics, "output_tokens_per_second", "tokens/s"),
                "total_token_rate": _rate(metrics, "tokens_per_second", "tokens/s"),
                "request_rate": _rate(metrics, "requests_per_second", "queries/s"),
            },
        }
        kind = strategy.get("type_")
        concurrency = strategy.get("streams") if kind in ("concurrent",) else None
        if kind == "synchronous":
            concurrency = 1
        input_mean = ((_successful(metrics, "prompt_token_count") or {}).get("mean"))
        output_mean = ((_successful(metrics, "output_token_count") or {}).get("mean"))
        if data.get("prompt_tokens"):
            input_len = common.sequence_length(data["prompt_tokens"], "gaussian" if data.get("prompt_tokens_stdev") else "fixed",
                                               data.get("prompt_tokens_stdev"), data.get("prompt_tokens_min"),
                                               data.get("prompt_tokens_max"))
        else:
            input_len = common.sequence_length(input_mean)
        if data.get("output_tokens"):
            output_len = common.sequence_length(data["output_tokens"], "gaussian" if data.get("output_tokens_stdev") else "fixed",
                                                data.get("output_tokens_stdev"), data.get("output_tokens_min"),
                                                data.get("output_tokens_max"))
        else:
            output_len = common.sequence_length(output_mean)
        notes = ["guidellm measures latencies from the actual send (request_start): a client that falls behind "
                 "its schedule is not seen in them (coordinated omission)",
                 "inter_token_latency is guidellm's per-request (last - first token) / (output tokens - 1); "
                 "guidellm keeps no pooled chunk gaps"]
        reports.append(common.build_report(
            "guidellm", metadata.get("guidellm_version"), backend.get("model"), index, path, aggregate,
            {"strategy": strategy, "backend": {k: backend.get(k) for k in ("target", "model", "request_format", "stream")},
             "data": data, "constraints": config.get("constraints")},
            start=benchmark.get("start_time"), end=benchmark.get("end_time"),
            rate_qps=strategy.get("rate") if kind in ("constant", "poisson", "async") else None,
            concurrency=concurrency, data_source="random" if str(data.get("kind", "")).startswith("synthetic") else "sampled",
            input_seq_len=input_len, output_seq_len=output_len, notes=notes,
            extra_observability=dict(_sampled_timings(benchmark), strategy=kind)))
    if not reports:
        raise ConversionError("%s: the guidellm report holds no benchmark" % path)
    return reports


def convert_path(path):
    return convert_document(common.read_json(path, "a guidellm report"), path)
