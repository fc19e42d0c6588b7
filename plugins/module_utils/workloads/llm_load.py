# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Workload of the LLM inference load harness (``harnesses/llm_load``).

A test root is a matrix point that ran the harness: its contract document is
``output.json`` (written by the matrix engine from the harness's stdout) or,
when the harness wrote into the point directory itself, ``result.json``. The KPIs
come from the *headline* stage (the last one of the run); every stage's numbers
are kept in the results (``stages``) for the reports of
``workloads/llm_load_reports.py``. Definitions: docs/llm-load.md.

Labels: the model, the server and its version, the load model and its level
(rate or concurrency), the stage, the data shape, and the *deployment factors*:
the settings of the point that are not harness options (replicas, tensor
parallelism, the accelerator, a runtime image...), as one canonical
``key=value,...`` string plus typed labels for the common ones.
"""

from __future__ import annotations

import json
from typing import Optional

from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import base, llm_load_reports

KPI_SETTINGS_VERSION = "1.0"

ARTIFACT_DIRNAMES = {
    "HOST_CAPTURE_ENVIRONMENT": "*__host__capture_environment",
}

IMPORTANT_FILES = base.important_files("result.json", "HOST_CAPTURE_ENVIRONMENT/environment.json")

REGRESSION = {
    "comparison_keys": ["server_version", "collection_version"],
    "ignored_keys": ["test_path", "run_id", "hostname", "git_commit"],
    "sorting_keys": ["model", "load", "rate", "concurrency", "stage"],
    "ignored_entries": {},
}

REPORT_GROUP_BY = "model"


def _latency_throughput_report(ctx):
    return llm_load_reports.latency_throughput(ctx, kpi_labels)


def _errors_report(ctx):
    return llm_load_reports.errors(ctx, kpi_labels)


REPORTS = {
    "llm_load_latency_throughput": (_latency_throughput_report,
                                    "Latency (TTFT, ITL, E2E) against output throughput per configuration; percentiles per stage"),
    "llm_load_errors": (_errors_report, "Errors by class per stage, and the stages whose client could not keep up"),
}

# settings that are harness options (the rest are deployment factors)
HARNESS_SETTINGS = {
    "url", "model", "endpoint", "stream", "load", "rate", "concurrency", "duration", "max_requests", "warmup",
    "warmup_requests", "sweep_steps", "trace", "stages", "workers", "prompt_tokens", "output_tokens", "prefix_tokens",
    "prefix_groups", "prompt_file", "tokenizer", "seed", "ca_file", "insecure", "token", "token_file", "request_timeout",
    "client_bound_p99_ms", "max_in_flight", "ignore_eos", "stop_after_failures", "extra_body", "server_name",
    "server_version", "harness",
    "executor", "name", "description",
}
# typed deployment labels and the settings they are read from (first present wins)
DEPLOYMENT_LABELS = {
    "replicas": ("replicas", "server_replicas"),
    "tensor_parallel": ("tensor_parallel", "tensor_parallel_size", "tp"),
    "accelerator": ("accelerator", "gpu", "gpu_type"),
}

HEADLINE_KEYS = (
    "ttft_p50_ms", "ttft_p90_ms", "ttft_p99_ms", "ttft_mean_ms", "ttft_from_send_p50_ms", "ttft_from_send_p99_ms",
    "tpot_p50_ms", "tpot_p90_ms", "tpot_p99_ms", "itl_p50_ms", "itl_p90_ms", "itl_p99_ms", "itl_mean_ms",
    "itl_per_request_mean_ms", "ntpot_p50_ms", "e2e_p50_ms", "e2e_p90_ms", "e2e_p99_ms", "send_lag_p50_ms",
    "send_lag_p99_ms", "request_throughput", "input_token_throughput", "output_token_throughput",
    "total_token_throughput", "requested_rate", "scheduled_rate", "achieved_rate", "rate_error", "error_rate",
    "total_requests", "completed_requests", "failed_requests", "errors_by_class", "client_bound",
    "client_bound_reasons", "client_cpu_utilization", "measured_duration_s", "short_outputs", "short_output_share",
)


# --------------------------------------------------------------------------
# parsing


def _has_result(document):
    return isinstance(document.get("@result"), dict)


def parse_once(ctx, settings):
    results = base.read_failure(ctx)
    # output.json, or the result.json the harness wrote itself (kept when the point failed too)
    document = base.read_document(ctx, ("output.json", "result.json"), failed_too=True, usable=_has_result)
    result = document.get("@result") or {}
    results.update(
        harness=document.get("name"), framework=document.get("framework"),
        parameters=base.mapping(document.get("@parameters")),
        headline={key: result.get(key) for key in HEADLINE_KEYS},
        headline_stage=result.get("headline_stage"),
        stages=[stage for stage in base.listed(result.get("stages")) if isinstance(stage, dict)],
        server_version=result.get("server_version"), server_header=result.get("server_header"),
        started=result.get("started"), ended=result.get("ended"), run_id_harness=result.get("run_id"),
        warnings=base.listed(result.get("warnings")),
        # what the preflight dropped from the requests, and why the run stopped early (docs/llm-load.md)
        request_fields_dropped=base.listed(result.get("request_fields_dropped")), stopped=result.get("stopped"),
    )
    results["duration_s"] = base.read_point(ctx).get("duration_s")
    environment = base.read_host_environment(ctx)
    results["host"] = base.host_identity(environment) if environment else {}
    return results


# parse_once finds no run id (the harness's is run_id_harness): the run id is made of the test's path
parse_always = base.parse_always
timestamp = base.timestamp


# --------------------------------------------------------------------------
# labels


def labels_model():
    return base.labels_model(
        model=str, server=Optional[str], server_version=Optional[str], endpoint=str, stream=bool, load=str,
        rate=Optional[float], concurrency=Optional[int], stage=Optional[int], stage_name=Optional[str],
        prompt_tokens=str, output_tokens=str, workers=int, deployment=str, replicas=Optional[int],
        tensor_parallel=Optional[int], accelerator=Optional[str], collection_version=Optional[str],
        git_commit=Optional[str], hostname=Optional[str])


def deployment_factors(settings):
    """The settings that are not harness options, as a canonical ``key=value,...`` string."""
    factors = {}
    for key, value in sorted((settings or {}).items()):
        if key in HARNESS_SETTINGS or isinstance(value, (dict, list)):
            continue
        factors[key] = value
    return ",".join("%s=%s" % (key, json.dumps(value) if not isinstance(value, str) else value)
                    for key, value in factors.items())


def _first(settings, names):
    for name in names:
        if settings.get(name) is not None:
            return settings[name]
    return None


def _headline_stage(results):
    stages = results.get("stages") or []
    index = results.get("headline_stage")
    for stage in stages:
        if stage.get("stage") == index:
            return stage
    return stages[-1] if stages else {}


def kpi_labels(entry):
    results, settings = entry.results, entry.settings
    stage = _headline_stage(results)
    host = results.get("host") or {}
    setting = base.settings_reader(entry)
    concurrency = stage.get("concurrency") if stage.get("load") == "concurrency" else None
    return base.kpi_labels(
        KPI_SETTINGS_VERSION, entry,
        model=setting("model"),
        server=setting("server_name") or results.get("server_header"),
        server_version=results.get("server_version") or settings.get("server_version"),
        endpoint=setting("endpoint", "completions"),
        stream=setting("stream", True),
        load=stage.get("load") or setting("load"),
        rate=stage.get("rate") if stage.get("load") != "concurrency" else None,
        concurrency=concurrency,
        stage=stage.get("stage"),
        stage_name=stage.get("name"),
        prompt_tokens=str(setting("prompt_tokens", "")),
        output_tokens=str(setting("output_tokens", "")),
        workers=setting("workers", 1),
        deployment=deployment_factors(settings),
        replicas=_first(settings, DEPLOYMENT_LABELS["replicas"]),
        tensor_parallel=_first(settings, DEPLOYMENT_LABELS["tensor_parallel"]),
        accelerator=_first(settings, DEPLOYMENT_LABELS["accelerator"]),
        collection_version=host.get("collection_version"),
        git_commit=host.get("git_commit"),
        hostname=host.get("hostname"),
    )


def payload_results(entry):
    return base.summary_results(entry, "headline", stages="stages")


# --------------------------------------------------------------------------
# KPIs (the headline stage)


LATENCY_KPIS = [
    base.kpi("%s_%s" % (metric, p), "%s, %s percentile over the measured requests%s" % (text, p, note), "ms", "lower",
             fmt="{:.2f}", key="%s_%s_ms" % (metric, p))
    for metric, text, note in (
        ("ttft", "Time to first token from the scheduled send time", " (free of coordinated omission)"),
        ("tpot", "Time per output token after the first, per request", ""),
        ("itl", "Inter-token latency pooled over every chunk gap", ""),
        ("e2e", "End-to-end request latency from the scheduled send time", ""),
    )
    for p in ("p50", "p90", "p99")
]

THROUGHPUT_KPIS = [
    base.kpi("output_token_throughput", "Output tokens of successful requests per second of the measurement window",
             "tokens/s", "higher", fmt="{:.1f}"),
    base.kpi("input_token_throughput", "Input tokens of successful requests per second of the measurement window",
             "tokens/s", "higher", fmt="{:.1f}"),
    base.kpi("request_throughput", "Successful requests per second of the measurement window", "req/s", "higher",
             fmt="{:.2f}"),
    base.kpi("achieved_rate", "Rate at which the requests were actually sent", "req/s", "higher", fmt="{:.2f}",
             ignored=True),
]


def _flag(payload):
    value = payload["results"]["client_bound"]
    return None if value is None else int(bool(value))


KPIS = LATENCY_KPIS + THROUGHPUT_KPIS + [
    base.kpi("error_rate", "Failed measured requests over all measured requests", "ratio", "lower", fmt="{:.4f}"),
    base.kpi("send_lag_p99", "99th percentile of the client's send lag (actual send - scheduled time)", "ms", "lower",
             fmt="{:.3f}", ignored=True, key="send_lag_p99_ms"),
    base.kpi("client_bound", "1 when the load generator could not keep its schedule (the stage measured the client)",
             "flag", "lower", fmt="{:.0f}", ignored=True, value=_flag),
]
