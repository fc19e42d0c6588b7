# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Workload of this collection's own benchmark job (performance indicators).

Test roots are the matrix points (``NNN__matbenchmarking/NNN__<name>/``); the
environment comes from the closest ``*__host__capture_environment`` directory
and the presets from the run's ``presets_applied``. A project with its own
harness writes a module like this one (see docs/post-processing.md).
"""

from __future__ import annotations

from typing import Optional

from ansible_collections.perfscale.topsail.plugins.module_utils import gpu_peaks
from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import base
from ansible_collections.perfscale.topsail.plugins.module_utils.workloads.perf_indicators_report import indicator_report

KPI_SETTINGS_VERSION = "1.1"

ARTIFACT_DIRNAMES = {
    "HOST_CAPTURE_ENVIRONMENT": "*__host__capture_environment",
    "RUN_PRESETS": "presets_applied",
    "RUN_INFO": "run.json",
}

IMPORTANT_FILES = base.important_files("HOST_CAPTURE_ENVIRONMENT/environment.json", "RUN_PRESETS", "RUN_INFO")

# regression analysis (issue: history is compared along these labels)
REGRESSION = {
    "comparison_keys": ["collection_version", "library_version"],
    "ignored_keys": ["test_path", "run_id", "git_commit", "hostname", "presets"],
    "sorting_keys": ["indicator", "backend", "dtype", "size", "threads"],
    "ignored_entries": {},
    # the machine fingerprint: compared by default (history from comparable machines only)
    "machine_keys": ["cpu_model", "cpu_count", "memory_gib", "gpu_model", "gpu_count", "accelerator_driver"],
}

# the generic reports compare points within the same indicator
REPORT_GROUP_BY = "indicator"

REPORTS = {
    "indicator_report": (indicator_report, "Throughput against problem size, by dtype and backend"),
}

# the units of the settings the reports put on an axis
SETTING_UNITS = {"size": "n, for n x n matrices", "batch": "samples", "length": "elements", "height": "pixels",
                 "width": "pixels", "channels": "channels", "filters": "filters", "kernel": "elements",
                 "stride": "elements", "padding": "elements", "threads": "threads", "reps": "repetitions",
                 "warmup": "repetitions", "gflop_per_repetition": "GFLOP"}

SHAPE_KEYS = ("size", "batch", "length", "height", "width", "channels", "filters", "kernel", "stride", "padding")


# --------------------------------------------------------------------------
# parsing


def parse_once(ctx, settings):
    results = {"indicator": settings.get("indicator")}
    results.update(base.read_failure(ctx))
    output = base.read_document(ctx)
    results.update(
        indicator=output.get("name", results["indicator"]),
        framework=output.get("framework"),
        parameters=base.mapping(output.get("@parameters")),
        result=base.mapping(output.get("@result")),
        overall_score=output.get("overall_score"),
        measurement=base.mapping(output.get("environment")),
    )

    point = base.read_point(ctx, warn_missing=True)
    results.update(duration_s=point.get("duration_s"), started=point.get("started"), ended=point.get("ended"),
                   load_average=[point.get("load_average_start"), point.get("load_average_end")])

    environment = base.read_host_environment(ctx, optional=False)
    gpus = [gpu for gpu in base.listed(environment.get("gpus")) if isinstance(gpu, dict)]
    results["host"] = dict(
        base.host_identity(environment),
        cpu_count=base.field(environment, "cpu", "count"),
        memory_total_bytes=base.field(environment, "memory", "total_bytes"),
        gpu_model=gpu_product(gpus[0]) if gpus else None,
        gpu_models=sorted({gpu_product(gpu) for gpu in gpus if gpu_product(gpu)}),
        gpu_mig_enabled=any(base.field(gpu, "mig", "enabled") is True for gpu in gpus),
        gpu_count=len(gpus),
        accelerator_driver=gpus[0].get("driver_version") if gpus else None,
        load_average=environment.get("load_average"),
        os=base.field(environment, "os", "pretty_name"),
        python=base.field(environment, "python", "version"),
        gpus=base.listed(environment.get("gpus")),
    ) if environment else {}
    presets = ctx.read_text(artifact="RUN_PRESETS")
    results["presets"] = [line for line in (presets or "").splitlines() if line.strip()]
    results["run_id"] = base.read_run_id(ctx, optional=False)
    return results


def gpu_product(gpu):
    """The product name of an inventory GPU: ``product_name`` (the typed inventory), or ``name`` (the
    inventory of earlier captures, read from nvidia-smi's CSV)."""
    name = gpu.get("product_name") or gpu.get("name")
    return name if isinstance(name, str) and name.strip() else None


parse_always = base.parse_always
timestamp = base.timestamp


# --------------------------------------------------------------------------
# noise (regression.noise compares these with its thresholds)


def spread(entry):
    """The relative spread of the repetitions: the CV of their times."""
    return (entry.results.get("result") or {}).get("time_cv")


def load_per_cpu(entry):
    """The host's highest 1-minute load average per CPU seen around the point (its start and
    end, and the environment capture), or None."""
    host = entry.results.get("host") or {}
    cpus = host.get("cpu_count") or (entry.results.get("measurement") or {}).get("cpu_count")
    samples = [load[0] for load in (entry.results.get("load_average") or []) + [host.get("load_average")]
               if isinstance(load, list) and load]
    if not cpus or not samples:
        return None
    return max(samples) / cpus


# --------------------------------------------------------------------------
# labels


def labels_model():
    return base.labels_model(
        indicator=str, framework=str, backend=str, device=str, dtype=str,
        **{key: Optional[int] for key in SHAPE_KEYS},
        threads=Optional[int], cpu_model=str, cpu_count=int, memory_gib=Optional[int], gpu_model=Optional[str],
        gpu_count=int, accelerator_driver=Optional[str], device_name=str, library_version=str, blas=Optional[str],
        python_version=str, hostname=Optional[str], collection_version=str, git_commit=Optional[str], presets=str)


def kpi_labels(entry):
    results = entry.results
    measurement = results.get("measurement") or {}
    host = results.get("host") or {}
    # a parameter the harness reported as None is its value (the settings are not asked)
    setting = base.settings_reader(entry, none_is_unset=False)
    return base.kpi_labels(
        KPI_SETTINGS_VERSION, entry,
        indicator=results.get("indicator"),
        framework=results.get("framework"),
        backend=setting("backend"),
        device=setting("device"),
        dtype=setting("dtype"),
        **{key: setting(key) for key in SHAPE_KEYS},
        threads=setting("threads"),
        cpu_model=host.get("cpu_model") or measurement.get("cpu_model"),
        cpu_count=host.get("cpu_count") or measurement.get("cpu_count"),
        # whole GiB: the total a kernel reports moves by a few MB between boots
        memory_gib=round(host["memory_total_bytes"] / 2 ** 30) if host.get("memory_total_bytes") else None,
        gpu_model=host.get("gpu_model"),
        gpu_count=host.get("gpu_count") or 0,
        accelerator_driver=host.get("accelerator_driver"),
        device_name=measurement.get("device_name"),
        library_version=measurement.get("numpy") or measurement.get("torch"),
        blas=measurement.get("blas"),
        python_version=measurement.get("python") or host.get("python"),
        hostname=host.get("hostname"),
        collection_version=host.get("collection_version"),
        git_commit=host.get("git_commit"),
        presets=",".join(results.get("presets") or []),
    )


def efficiency(entry):
    """The median rate against the dense datasheet peak of the GPU the point ran on, for its dtype
    (``gpu_peaks.efficiency``: value, peak_tflops, product, dtype, source, reason). The GPU is the one
    torch reported (``device_name``), else the host's when all its GPUs are one product."""
    results = entry.results
    setting = base.settings_reader(entry, none_is_unset=False)
    rate = (results.get("result") or {}).get("rate")
    measurement = results.get("measurement") or {}
    host = results.get("host") or {}
    blank = gpu_peaks.efficiency(None, None, "float32")
    if setting("device") != "cuda":
        return dict(blank, reason="not a GPU point (device %s): no datasheet peak to compare with"
                    % (setting("device") or "unset"))
    if host.get("gpu_mig_enabled"):
        return dict(blank, reason="MIG is enabled on the host's GPU: a process sees one instance, not the whole "
                                  "chip the datasheet peak is for")
    product = measurement.get("device_name")
    if not product and len(host.get("gpu_models") or []) == 1:
        product = host["gpu_models"][0]
    return gpu_peaks.efficiency(rate, product, setting("dtype"))


def payload_results(entry):
    result = entry.results.get("result") or {}
    peak = efficiency(entry)
    return {
        "rate": result.get("rate"),
        "rate_best": result.get("rate_best"),
        "elapsed": result.get("elapsed"),
        "time_median": result.get("time_median"),
        "time_stdev": result.get("time_stdev"),
        "time_cv": result.get("time_cv"),
        "flop": result.get("flop"),
        "overall_score": entry.results.get("overall_score"),
        "duration_s": entry.results.get("duration_s"),
        "timed_batches": result.get("timed_batches"),
        "reps_per_batch": result.get("reps_per_batch"),
        "efficiency": peak["value"],
        "peak_tflops": peak["peak_tflops"],
        "peak_product": peak["product"],
        "peak_source": peak["source"],
        "efficiency_reason": peak["reason"],
    }


# --------------------------------------------------------------------------
# KPIs


KPIS = [
    base.kpi("rate", "Median throughput of the operation, from its FLOP count and the median repetition time",
             "GFLOP/s", "higher", fmt="{:.1f}",
             error_bar=lambda payload: payload["results"]["rate"] * payload["results"]["time_cv"]),
    base.kpi("efficiency", "Median throughput against the dense datasheet peak of the GPU for the dtype "
             "(plugins/module_utils/gpu_peaks.py); null with its reason on a CPU, an unknown GPU or a MIG instance",
             "ratio", "higher", view_of="rate", divisor=0.01, display_unit="% of peak", fmt="{:.0f}",
             null_reason=lambda payload: payload["results"]["efficiency_reason"]),
    base.kpi("rate_best", "Throughput of the fastest repetition", "GFLOP/s", "higher", fmt="{:.1f}", ignored=True),
    base.kpi("time_median", "Median time of one repetition of the operation (the measurement behind rate)", "s",
             "lower", view_of="rate", divisor=1e-3, display_unit="ms", fmt="{:.3f}", error_bar="time_stdev"),
    base.kpi("time_cv", "Coefficient of variation of the repetition times (stdev / mean)", "ratio", "lower",
             fmt="{:.3f}", ignored=True),
    base.kpi("point_duration", "Wall time of the whole point, process start-up and warm-up included", "s", "lower",
             fmt="{:.2f}", ignored=True, key="duration_s"),
]
