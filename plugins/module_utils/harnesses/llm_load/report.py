# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""llm-d benchmark report v0.2.1: one document per stage, and helpers the converters share.

Mapping (seconds for latencies, as the schema's examples):

========================================  ==========================================
report field                              harness value
========================================  ==========================================
latency.time_to_first_token               TTFT from the scheduled time
latency.time_per_output_token             TPOT (per request, then distributed)
latency.inter_token_latency               ITL pooled over every chunk gap
latency.normalized_time_per_output_token  E2E from the scheduled time / output tokens
latency.request_latency                   E2E from the scheduled time
requests.total / failures                 measured requests / those with an error
throughput.*_rate                         totals over the measurement window
observability.load_generator              what the schema has no field for: latencies
                                          from the actual send, send lag, ITL per
                                          request, requested/achieved rates, errors by
                                          class, the client-bound verdict, outputs
                                          shorter than max_tokens, an early stop
========================================  ==========================================
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import uuid

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import HARNESS_VERSION
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.metrics import (
    PERCENTILES,
    percentile_key,
)

REPORT_VERSION = "0.2.1"
TOOL_NAME = "perfscale-llm-load"
STATISTIC_KEYS = ("mean", "stddev", "min", "max") + tuple(percentile_key(p) for p in PERCENTILES)


def statistics(stats, units, factor=1.0):
    """A report ``Statistics`` from a distribution (None stays None); ``factor`` converts units."""
    if stats is None or stats.get("mean") is None:
        return None
    document = {"units": units}
    for key in STATISTIC_KEYS:
        value = stats.get(key)
        if value is not None and math.isfinite(value):
            document[key] = value * factor
    if "stddev" in document and document["stddev"] < 0:
        del document["stddev"]
    return document


def mean_only(value, units):
    if value is None or not math.isfinite(value):
        return None
    return {"units": units, "mean": value}


def iso(timestamp):
    if timestamp is None:
        return None
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def iso_duration(seconds):
    return None if seconds is None else "PT%.6fS" % seconds


def config_id(document):
    return hashlib.sha256(json.dumps(document, sort_keys=True, default=str).encode()).hexdigest()[:32]


def experiment_id(name):
    return uuid.uuid5(uuid.NAMESPACE_URL, "perfscale-llm-load:%s" % name).hex


def prune(document):
    """Drop None values (the schema's optional fields) recursively."""
    if isinstance(document, dict):
        return {k: prune(v) for k, v in document.items() if v is not None}
    if isinstance(document, list):
        return [prune(v) for v in document]
    return document


def server_component(model, server_name=None, server_version=None, url=None, server_header=None, label="inference-server"):
    """The served model as a generic stack component (the harness cannot see the accelerators
    an ``inference_engine`` component requires)."""
    standardized = {"kind": "generic", "tool": server_name or server_header or "unknown",
                    "tool_version": server_version or "unknown", "model": {"name": model}}
    native = {"config": {"url": url, "server_header": server_header}} if url or server_header else {}
    return {"metadata": {"schema_version": "0.0.1", "label": label,
                         "cfg_id": config_id({"model": model, "url": url, "tool": standardized["tool"]})},
            "standardized": standardized, "native": prune(native)}


def build_stage_report(summary, run, data, native_args):
    """The v0.2.1 report of one stage.

    ``run``: run_id, model, url, server_name, server_version, server_header, workers,
    description, keywords. ``data``: the prompts' source (``random``/``sampled``),
    input and output length distributions and shared-prefix settings.
    """
    stage = summary.stage
    latency = summary.latency
    load_standardized = {
        "tool": TOOL_NAME, "tool_version": HARNESS_VERSION, "parallelism": max(1, int(run.get("workers") or 1)),
        "source": data["source"], "stage": stage.index,
        "input_seq_len": data["input_seq_len"], "output_seq_len": data.get("output_seq_len"),
        "rate_qps": stage.rate if stage.rate and stage.rate > 0 else None,
        "concurrency": stage.concurrency if stage.load == "concurrency" else None,
    }
    if data.get("prefix"):
        load_standardized["prefix"] = data["prefix"]
    load_config = {"stage": stage.as_dict(), "data": data.get("native"), "endpoint": run.get("endpoint"),
                   "stream": run.get("stream")}
    series = _time_series(summary)
    report = {
        "version": REPORT_VERSION,
        "run": {
            "uid": uuid.uuid4().hex,
            "eid": experiment_id(run["run_id"]),
            "pid": run.get("hostname"),
            "time": {"start": iso(summary.started_wall), "end": iso(summary.ended_wall),
                     "duration": iso_duration(summary.ended_wall - summary.started_wall)
                     if summary.started_wall is not None and summary.ended_wall is not None else None},
            "description": run.get("description") or "%s [%s %s]" % (run["model"], run["run_id"], stage.label),
            "keywords": run.get("keywords") or None,
        },
        "scenario": {
            "stack": [server_component(run["model"], run.get("server_name"), run.get("server_version"),
                                       run.get("url"), run.get("server_header"))],
            "load": {
                "metadata": {"schema_version": "0.0.1", "cfg_id": config_id(load_config), "description": stage.describe()},
                "standardized": load_standardized,
                "native": {"args": native_args, "config": load_config},
            },
        },
        "results": {
            "request_performance": {
                "aggregate": {
                    "requests": {
                        "total": summary.total, "failures": summary.failed,
                        "input_length": statistics(summary.input_length, "count"),
                        "output_length": statistics(summary.output_length, "count"),
                    },
                    "latency": {
                        "time_to_first_token": statistics(latency["ttft"], "s"),
                        "normalized_time_per_output_token": statistics(latency["ntpot"], "s/token"),
                        "time_per_output_token": statistics(latency["tpot"], "s/token"),
                        "inter_token_latency": statistics(latency["itl"], "s/token"),
                        "request_latency": statistics(latency["e2e"], "s"),
                    },
                    "throughput": {
                        "input_token_rate": mean_only(summary.input_token_throughput, "tokens/s"),
                        "output_token_rate": mean_only(summary.output_token_throughput, "tokens/s"),
                        "total_token_rate": mean_only(summary.total_token_throughput, "tokens/s"),
                        "request_rate": mean_only(summary.request_throughput, "queries/s"),
                    },
                },
                "time_series": series,
            },
            "observability": {"load_generator": load_generator_section(summary)},
        },
    }
    return prune(report)


def load_generator_section(summary):
    """What the schema has no field for (``observability`` accepts extra keys)."""
    latency = summary.latency
    section = {
        "tool": TOOL_NAME, "tool_version": HARNESS_VERSION,
        "time_to_first_token_from_send": statistics(latency["ttft_from_send"], "ms", 1e3),
        "request_latency_from_send": statistics(latency["e2e_from_send"], "ms", 1e3),
        "normalized_time_per_output_token_from_send": statistics(latency["ntpot_from_send"], "ms/token", 1e3),
        "inter_token_latency_per_request_mean": statistics(latency["itl_per_request"], "ms/token", 1e3),
        "send_lag": statistics(summary.send_lag, "ms", 1e3),
        "requested_rate_qps": summary.requested_rate, "scheduled_rate_qps": summary.scheduled_rate,
        "achieved_rate_qps": summary.achieved_rate, "rate_error": summary.rate_error,
        "errors_by_class": summary.errors, "warmup_requests_excluded": summary.warmup_count,
        "client_bound": summary.client_bound, "client_bound_reasons": summary.client_bound_reasons,
        "client_bound_threshold_send_lag_p99_ms": summary.client_bound_p99_ms,
        "client_cpu_utilization": summary.cpu_utilization, "workers": summary.workers,
        "output_tokens_from_server_usage": summary.usage_reported,
        "short_outputs": {"count": summary.short_outputs, "of": summary.short_output_known,
                          "share": summary.short_output_share, "basis": summary.short_output_basis or None},
        "stopped_early": summary.stopped,
        "null_reasons": dict(summary.null_reasons) or None,
    }
    return prune(section)


def _time_series(summary):
    series = summary.time_series()
    if not series or series["start_wall"] is None:
        return None
    start = series["start_wall"] + (summary.window_start - summary.origin if summary.origin is not None else 0.0)
    requests, tokens, ttfts = [], [], []
    for second, count in enumerate(series["completions"]):
        stamp = iso(start + second)
        requests.append({"ts": stamp, "value": float(count)})
        tokens.append({"ts": stamp, "value": series["output_tokens"][second]})
        values = sorted(series["ttfts"][second])
        if values:
            point = {"ts": stamp, "mean": math.fsum(values) / len(values), "max": values[-1]}
            for p in (50, 90, 99):
                rank = (len(values) - 1) * p / 100.0
                low = int(rank)
                high = min(low + 1, len(values) - 1)
                point["p%d" % p] = values[low] + (values[high] - values[low]) * (rank - low)
            ttfts.append(point)
    document = {"throughput": {"request_rate": {"units": "queries/s", "series": requests},
                               "output_token_rate": {"units": "tokens/s", "series": tokens}}}
    if ttfts:
        document["latency"] = {"time_to_first_token": {"units": "s", "series": ttfts}}
    return document
