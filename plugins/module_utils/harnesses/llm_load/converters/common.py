# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every converter shares: reading, statistics mapping, the report skeleton."""

from __future__ import annotations

import json
import math
import os
import uuid

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import report as report_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.converters import ConversionError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.metrics import distribution

# percentile names of the tools -> the report's
PERCENTILE_ALIASES = {
    "p0p1": ("p0p1", "p001", "p0.1", "percentile_0.1"),
    "p1": ("p1", "p01", "percentile_1"),
    "p5": ("p5", "p05", "percentile_5"),
    "p10": ("p10", "percentile_10"),
    "p25": ("p25", "percentile_25"),
    "p50": ("p50", "median", "percentile_50"),
    "p75": ("p75", "percentile_75"),
    "p90": ("p90", "percentile_90"),
    "p95": ("p95", "percentile_95"),
    "p99": ("p99", "percentile_99"),
    "p99p9": ("p99p9", "p999", "p99.9", "percentile_99.9"),
}
PLAIN = {"mean": ("mean",), "stddev": ("stddev", "std_dev", "std"), "min": ("min",), "max": ("max",), "mode": ("mode",)}


def read_json(path, what):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise ConversionError("%s: %s" % (path, exc.strerror or exc)) from None
    except ValueError as exc:
        raise ConversionError("%s: not JSON (%s); expected %s" % (path, exc, what)) from None


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def statistics_from(source, units, factor=1.0, percentiles=None):
    """A report ``Statistics`` from a tool's summary mapping (any of the known key spellings);
    ``percentiles`` is where the percentiles are, when not beside the mean."""
    if not isinstance(source, dict):
        return None
    pool = dict(source)
    if isinstance(percentiles, dict):
        pool.update(percentiles)
    document = {"units": units}
    for target, names in list(PLAIN.items()) + list(PERCENTILE_ALIASES.items()):
        for name in names:
            value = _number(pool.get(name))
            if value is not None:
                document[target] = value * factor
                break
    if "mean" not in document:
        return None
    if "stddev" in document and document["stddev"] < 0:
        del document["stddev"]
    return document


def statistics_of_values(values, units, factor=1.0):
    """A report ``Statistics`` computed from raw values."""
    return report_lib.statistics(distribution([v for v in values if _number(v) is not None]), units, factor)


def rate(value, units):
    value = _number(value)
    return None if value is None else {"units": units, "mean": value}


def sequence_length(mean, distribution_name="other", std_dev=None, minimum=None, maximum=None):
    mean = _number(mean)
    if mean is None:
        return {"distribution": "other", "value": 0}
    document = {"distribution": distribution_name, "value": int(round(mean))}
    if std_dev is not None and _number(std_dev) is not None and std_dev >= 0:
        document["std_dev"] = float(std_dev)
    if minimum is not None and _number(minimum) is not None and minimum >= 0:
        document["min"] = int(minimum)
    if maximum is not None and _number(maximum) is not None and maximum >= 1:
        document["max"] = int(maximum)
    return document


def build_report(tool, tool_version, model, stage, source_path, aggregate, load_native, start=None, end=None,
                 rate_qps=None, concurrency=None, data_source="unknown", input_seq_len=None, output_seq_len=None,
                 description=None, notes=None, extra_observability=None, time_series=None):
    """The v0.2.1 report of one converted stage."""
    run_name = os.path.abspath(source_path)
    load_standardized = {
        "tool": tool, "tool_version": str(tool_version or "unknown"), "source": data_source, "stage": int(stage),
        "input_seq_len": input_seq_len or {"distribution": "other", "value": 0},
        "output_seq_len": output_seq_len,
        "rate_qps": rate_qps if _number(rate_qps) and rate_qps > 0 else None,
        "concurrency": concurrency if isinstance(concurrency, (int, float)) and not isinstance(concurrency, bool)
        and math.isfinite(concurrency) and concurrency >= 1 else None,
    }
    observability = {"converted_from": {"tool": tool, "tool_version": str(tool_version or "unknown"),
                                        "file": os.path.basename(source_path), "notes": notes or []}}
    observability["converted_from"].update(extra_observability or {})
    report = {
        "version": report_lib.REPORT_VERSION,
        "run": {
            "uid": uuid.uuid4().hex,
            "eid": report_lib.experiment_id(run_name),
            "time": {"start": report_lib.iso(start), "end": report_lib.iso(end),
                     "duration": report_lib.iso_duration(end - start) if start is not None and end is not None else None},
            "description": description or "%s [%s stage %d]" % (model or "unknown model", os.path.basename(source_path), stage),
        },
        "scenario": {
            "stack": [report_lib.server_component(model or "unknown")],
            "load": {
                "metadata": {"schema_version": "0.0.1", "cfg_id": report_lib.config_id(load_native or {}),
                             "description": "converted from %s output %s" % (tool, os.path.basename(source_path))},
                "standardized": load_standardized,
                "native": {"config": load_native},
            },
        },
        "results": {
            "request_performance": {"aggregate": aggregate, "time_series": time_series},
            "observability": observability,
        },
    }
    return report_lib.prune(report)
