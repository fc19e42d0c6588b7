# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""inference-perf lifecycle metrics -> one report per stage.

Input: the report directory (``stage_<N>_lifecycle_metrics.json`` files, and
``config.yaml`` when PyYAML is importable, for the model and the load), or one
stage file. inference-perf's latencies are in seconds with the same meanings
as the report's (the llm-d schema took its names from inference-perf):
``successes.latency.{time_to_first_token, time_per_output_token,
normalized_time_per_output_token, inter_token_latency, request_latency}``;
``load_summary.schedule_delay`` (its send lag) and the requested and achieved
rates go under ``observability.converted_from``.
"""

from __future__ import annotations

import os
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.converters import ConversionError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.converters import common

NAME = "inference-perf"
DESCRIPTION = "inference-perf request lifecycle metrics (per-stage JSON files)"
INPUT = "the report directory, or one stage_<N>_lifecycle_metrics.json"
STAGE_FILE = re.compile(r"^stage_(\d+)_lifecycle_metrics\.json$")


def _config(directory):
    path = os.path.join(directory, "config.yaml")
    if not os.path.isfile(path):
        return None
    try:
        import yaml  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError):
        return None
    return document if isinstance(document, dict) else None


def stage_files(path):
    if os.path.isdir(path):
        found = []
        for name in os.listdir(path):
            match = STAGE_FILE.match(name)
            if match:
                found.append((int(match.group(1)), os.path.join(path, name)))
        if not found:
            raise ConversionError("%s: no stage_<N>_lifecycle_metrics.json in this directory" % path)
        return sorted(found), path
    match = STAGE_FILE.match(os.path.basename(path))
    if not match:
        raise ConversionError("%s: expected an inference-perf stage_<N>_lifecycle_metrics.json or its directory" % path)
    return [(int(match.group(1)), path)], os.path.dirname(path)


def _distribution(config, key):
    spec = ((config or {}).get("data") or {}).get(key)
    if not isinstance(spec, dict) or "mean" not in spec:
        return None
    kind = "fixed" if not spec.get("std_dev") else ("gaussian" if spec.get("type") in (None, "normal") else "other")
    return common.sequence_length(spec.get("mean"), kind, spec.get("std_dev"), spec.get("min"), spec.get("max"))


def convert_stage(document, path, stage, config):
    if not isinstance(document, dict) or not isinstance(document.get("successes"), dict):
        raise ConversionError("%s: expected inference-perf lifecycle metrics (an object with successes)" % path)
    successes = document["successes"]
    failures = document.get("failures") or {}
    load = document.get("load_summary") or {}
    latency = successes.get("latency") or {}
    throughput = successes.get("throughput") or {}
    succeeded = int(successes.get("count") or 0)
    failed = int(failures.get("count") or 0)
    aggregate = {
        "requests": {"total": succeeded + failed, "failures": failed,
                     "input_length": common.statistics_from(successes.get("prompt_tokens"), "count"),
                     "output_length": common.statistics_from(successes.get("output_tokens") or successes.get("output_len"), "count")},
        "latency": {name: common.statistics_from(latency.get(name), units) for name, units in (
            ("time_to_first_token", "s"), ("normalized_time_per_output_token", "s/token"),
            ("time_per_output_token", "s/token"), ("inter_token_latency", "s/token"), ("request_latency", "s"))},
        "throughput": {
            "input_token_rate": common.rate(throughput.get("input_tokens_per_sec"), "tokens/s"),
            "output_token_rate": common.rate(throughput.get("output_tokens_per_sec"), "tokens/s"),
            "total_token_rate": common.rate(throughput.get("total_tokens_per_sec"), "tokens/s"),
            "request_rate": common.rate(throughput.get("requests_per_sec"), "queries/s"),
        },
    }
    stages = ((config or {}).get("load") or {}).get("stages") or []
    stage_config = stages[stage] if stage < len(stages) and isinstance(stages[stage], dict) else {}
    server = (config or {}).get("server") or {}
    data_type = ((config or {}).get("data") or {}).get("type")
    errors = {label: (entry or {}).get("count") for label, entry in (failures.get("by_label") or {}).items()}
    input_len = _distribution(config, "input_distribution") or common.sequence_length(
        (successes.get("prompt_tokens") or {}).get("mean"))
    return common.build_report(
        "inference-perf", (config or {}).get("version") or "unknown", server.get("model_name"), stage, path, aggregate,
        {"stage": stage_config, "load_type": ((config or {}).get("load") or {}).get("type"), "data_type": data_type,
         "api": (config or {}).get("api")},
        rate_qps=load.get("requested_rate") or stage_config.get("rate"),
        concurrency=stage_config.get("concurrency_level"),
        data_source="random" if data_type in ("random", "synthetic", "shared_prefix", "mock") else ("sampled" if data_type else "unknown"),
        input_seq_len=input_len, output_seq_len=_distribution(config, "output_distribution"),
        notes=["latencies are measured from the actual send; load_summary.schedule_delay is the send lag"],
        extra_observability={"send_lag": common.statistics_from(load.get("schedule_delay"), "ms", 1e3),
                             "requested_rate_qps": load.get("requested_rate"), "achieved_rate_qps": load.get("achieved_rate"),
                             "errors_by_label": errors or None,
                             "benchmark_time_seconds": document.get("benchmark_time_seconds")})


def convert_path(path):
    files, directory = stage_files(path)
    config = _config(directory)
    return [convert_stage(common.read_json(file_path, "inference-perf lifecycle metrics"), file_path, stage, config)
            for stage, file_path in files]
