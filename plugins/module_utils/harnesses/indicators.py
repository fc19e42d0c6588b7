# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Built-in performance indicators: matmul, conv1d, conv2d (the script the
``perf_indicator`` harness runs; see ``perf_indicator.py`` beside it).

Run one by hand::

    python -m ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.indicators \\
        matmul size=1024 dtype=float32 reps=10

It prints one JSON document on stdout (the performance-indicator contract:
``name``, ``framework``, ``@parameters``, ``@result``, optional
``overall_score``) and free text on stderr.

Measurement: ``warmup`` untimed iterations, then ``reps`` timings. On the CPU each
timing is one repetition (``perf_counter_ns``). On CUDA each timing is a *batch* of
back-to-back repetitions between two CUDA events, so the launch latency of one
kernel is amortised over the batch instead of being added to every repetition:
the batch size is calibrated first (doubled from 1 until one batch lasts at least
``min_batch_ms``, at most ``MAX_CUDA_BATCH``), and a repetition's time is its
batch's time divided by the batch size; the spread is the spread across batches.
``rate`` (GFLOP/s) is computed from the median repetition time and the FLOP count
of the operation's definition (matmul: 2·n³; convolution:
2·batch·out_positions·filters·channels·kernel).

Only the standard library is imported at module level: numpy (or torch) is
imported once the thread settings are in the environment.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
import time

THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
BACKENDS = ("numpy", "torch")
DEVICES = ("cpu", "cuda")
DTYPES = {
    "numpy": ("float32", "float64"),
    "torch": ("float32", "float64", "float16", "bfloat16"),
}

# settings every built-in indicator accepts (harness-level)
COMMON_PARAMETERS = {
    "backend": ("choice", "numpy"),
    "device": ("choice", "cpu"),
    "dtype": ("choice", "float32"),
    "reps": ("positive_int", 10),
    "warmup": ("non_negative_int", 2),
    "threads": ("optional_positive_int", None),
    "seed": ("non_negative_int", 0),
    "peak_gflops": ("optional_positive_float", None),
    # CUDA: the shortest timed batch of back-to-back repetitions (the batch size is calibrated to it)
    "min_batch_ms": ("positive_float", 10.0),
}

# the largest batch of repetitions timed between two CUDA events (bounds the calibration)
MAX_CUDA_BATCH = 65536

INDICATOR_PARAMETERS = {
    "matmul": {"size": ("positive_int", 1024)},
    "conv1d": {
        "batch": ("positive_int", 8), "length": ("positive_int", 1024), "channels": ("positive_int", 32),
        "filters": ("positive_int", 64), "kernel": ("positive_int", 3), "stride": ("positive_int", 1),
        "padding": ("non_negative_int", 1),
    },
    "conv2d": {
        "batch": ("positive_int", 8), "height": ("positive_int", 64), "width": ("positive_int", 64),
        "channels": ("positive_int", 16), "filters": ("positive_int", 32), "kernel": ("positive_int", 3),
        "stride": ("positive_int", 1), "padding": ("non_negative_int", 1),
    },
}


try:
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import IndicatorError
except ImportError:  # run by path as a script (only the standard library is importable then)
    class IndicatorError(ValueError):
        """Invalid indicator settings, with a one-line message."""


def known_indicators():
    return sorted(INDICATOR_PARAMETERS)


def parameter_names(indicator):
    return sorted(set(COMMON_PARAMETERS) | set(INDICATOR_PARAMETERS[indicator]))


def _coerce(name, kind, value):
    if kind == "choice":
        if not isinstance(value, str):
            raise IndicatorError("%s must be a string, got %r" % (name, value))
        return value
    if kind in ("optional_positive_int", "optional_positive_float") and value is None:
        return None
    if kind.endswith("int"):
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                value = int(value)
            else:
                raise IndicatorError("%s must be an integer, got %r" % (name, value))
        if kind == "non_negative_int" and value < 0:
            raise IndicatorError("%s must be >= 0, got %d" % (name, value))
        if kind in ("positive_int", "optional_positive_int") and value <= 0:
            raise IndicatorError("%s must be a positive integer, got %d" % (name, value))
        return value
    if kind.endswith("float"):
        try:
            value = float(value)
        except (TypeError, ValueError, OverflowError):
            raise IndicatorError("%s must be a number, got %r" % (name, value)) from None
        if not math.isfinite(value):
            raise IndicatorError("%s must be a finite number, got %r" % (name, value))
        if value <= 0:
            raise IndicatorError("%s must be > 0, got %r" % (name, value))
        return value
    raise IndicatorError("unknown parameter kind %s" % kind)


def validate_settings(indicator, settings):
    """Normalized parameters of a built-in indicator; errors name the setting."""
    if indicator not in INDICATOR_PARAMETERS:
        raise IndicatorError("unknown indicator %r; built-in indicators: %s" % (indicator, ", ".join(known_indicators())))
    spec = dict(COMMON_PARAMETERS)
    spec.update(INDICATOR_PARAMETERS[indicator])
    unknown = sorted(set(settings) - set(spec))
    if unknown:
        raise IndicatorError("indicator %s has no parameter %s; its parameters: %s"
                             % (indicator, ", ".join(repr(u) for u in unknown), ", ".join(sorted(spec))))
    params = {}
    for name, (kind, default) in spec.items():
        params[name] = _coerce(name, kind, settings[name]) if name in settings else default
    if params["backend"] not in BACKENDS:
        raise IndicatorError("backend must be one of %s, got %r" % (", ".join(BACKENDS), params["backend"]))
    if params["device"] not in DEVICES:
        raise IndicatorError("device must be one of %s, got %r" % (", ".join(DEVICES), params["device"]))
    if params["device"] == "cuda" and params["backend"] != "torch":
        raise IndicatorError("device cuda needs backend torch")
    if params["dtype"] not in DTYPES[params["backend"]]:
        raise IndicatorError("dtype %r is not supported by backend %s; supported: %s"
                             % (params["dtype"], params["backend"], ", ".join(DTYPES[params["backend"]])))
    if indicator in ("conv1d", "conv2d"):
        extents = [params["length"]] if indicator == "conv1d" else [params["height"], params["width"]]
        for extent in extents:
            if extent + 2 * params["padding"] < params["kernel"]:
                raise IndicatorError("kernel %d is larger than the padded input (%d)" % (params["kernel"], extent + 2 * params["padding"]))
    return params


# --------------------------------------------------------------------------
# FLOP counts (from the definition of the operation)


def output_extent(extent, kernel, stride, padding):
    return (extent + 2 * padding - kernel) // stride + 1


def flop_count(indicator, params):
    if indicator == "matmul":
        return 2 * params["size"] ** 3
    if indicator == "conv1d":
        out = output_extent(params["length"], params["kernel"], params["stride"], params["padding"])
        return 2 * params["batch"] * out * params["filters"] * params["channels"] * params["kernel"]
    out_h = output_extent(params["height"], params["kernel"], params["stride"], params["padding"])
    out_w = output_extent(params["width"], params["kernel"], params["stride"], params["padding"])
    return 2 * params["batch"] * out_h * out_w * params["filters"] * params["channels"] * params["kernel"] ** 2


# --------------------------------------------------------------------------
# numpy implementations


def numpy_conv(np, inputs, weights, stride, padding, dims):
    """Convolution (cross-correlation, as deep-learning frameworks define it) via im2col + matmul.

    inputs: (batch, channels, *spatial); weights: (filters, channels, *kernel).
    """
    pad = [(0, 0), (0, 0)] + [(padding, padding)] * dims
    padded = np.pad(inputs, pad) if padding else inputs
    kernel = weights.shape[2:]
    windows = np.lib.stride_tricks.sliding_window_view(padded, kernel, axis=tuple(range(2, 2 + dims)))
    if stride > 1:
        slicer = (slice(None), slice(None)) + (slice(None, None, stride),) * dims
        windows = windows[slicer]
    batch, channels = inputs.shape[:2]
    out_shape = windows.shape[2:2 + dims]
    # (batch, *out, channels, *kernel) -> rows of the im2col matrix
    order = (0,) + tuple(range(2, 2 + dims)) + (1,) + tuple(range(2 + dims, 2 + 2 * dims))
    columns = windows.transpose(order).reshape(batch * int(np.prod(out_shape)), -1)
    result = columns @ weights.reshape(weights.shape[0], -1).T
    return result.reshape((batch,) + tuple(out_shape) + (weights.shape[0],))


def _numpy_operation(indicator, params):
    import numpy as np

    rng = np.random.default_rng(params["seed"])
    dtype = np.dtype(params["dtype"])
    if indicator == "matmul":
        n = params["size"]
        a = rng.standard_normal((n, n), dtype=np.float64).astype(dtype)
        b = rng.standard_normal((n, n), dtype=np.float64).astype(dtype)
        return lambda: a @ b
    dims = 1 if indicator == "conv1d" else 2
    spatial = (params["length"],) if dims == 1 else (params["height"], params["width"])
    inputs = rng.standard_normal((params["batch"], params["channels"]) + spatial).astype(dtype)
    weights = rng.standard_normal((params["filters"], params["channels"]) + (params["kernel"],) * dims).astype(dtype)
    return lambda: numpy_conv(np, inputs, weights, params["stride"], params["padding"], dims)


def _torch_operation(torch, indicator, params):
    device = torch.device(params["device"])
    dtype = getattr(torch, params["dtype"])
    generator = torch.Generator(device="cpu").manual_seed(params["seed"])
    if indicator == "matmul":
        n = params["size"]
        a = torch.randn((n, n), generator=generator).to(device=device, dtype=dtype)
        b = torch.randn((n, n), generator=generator).to(device=device, dtype=dtype)
        return lambda: torch.matmul(a, b)
    functional = torch.nn.functional
    if indicator == "conv1d":
        inputs = torch.randn((params["batch"], params["channels"], params["length"]), generator=generator)
        weights = torch.randn((params["filters"], params["channels"], params["kernel"]), generator=generator)
        inputs, weights = inputs.to(device=device, dtype=dtype), weights.to(device=device, dtype=dtype)
        return lambda: functional.conv1d(inputs, weights, stride=params["stride"], padding=params["padding"])
    inputs = torch.randn((params["batch"], params["channels"], params["height"], params["width"]), generator=generator)
    weights = torch.randn((params["filters"], params["channels"], params["kernel"], params["kernel"]), generator=generator)
    inputs, weights = inputs.to(device=device, dtype=dtype), weights.to(device=device, dtype=dtype)
    return lambda: functional.conv2d(inputs, weights, stride=params["stride"], padding=params["padding"])


# --------------------------------------------------------------------------
# timing


def time_cpu(operation, warmup, reps, clock=time.perf_counter_ns):
    """Seconds of each timed repetition after ``warmup`` untimed ones."""
    for _warm in range(warmup):
        operation()
    times = []
    for _rep in range(reps):
        start = clock()
        operation()
        times.append((clock() - start) / 1e9)
    return times


def _time_cuda_batch(torch, operation, batch):
    """Seconds for ``batch`` back-to-back repetitions between two CUDA events (waits for the end event)."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _rep in range(batch):
        operation()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def calibrate_cuda_batch(torch, operation, min_batch_s, max_batch=MAX_CUDA_BATCH):
    """The batch size: doubled from 1 until one batch lasts ``min_batch_s`` (or ``max_batch`` is reached)."""
    batch = 1
    while batch < max_batch and _time_cuda_batch(torch, operation, batch) < min_batch_s:
        batch = min(max_batch, batch * 2)
    return batch


def time_cuda(torch, operation, warmup, reps, min_batch_s=0.01, max_batch=MAX_CUDA_BATCH):
    """``(per-repetition seconds of each of ``reps`` timed batches, batch size)``, measured with CUDA
    events around back-to-back repetitions, the batch size calibrated after the warm-up."""
    for _warm in range(warmup):
        operation()
    torch.cuda.synchronize()
    batch = calibrate_cuda_batch(torch, operation, min_batch_s, max_batch)
    torch.cuda.synchronize()
    times = [_time_cuda_batch(torch, operation, batch) / batch for _timing in range(reps)]
    return times, batch


def summarize(times, flop, reps_per_batch=1):
    """Statistics of the repetition times (one per timing: a repetition, or a batch's time divided by
    its ``reps_per_batch`` repetitions) and the rates derived from them."""
    median = statistics.median(times)
    mean = statistics.fmean(times)
    stdev = statistics.stdev(times) if len(times) > 1 else 0.0
    if len(times) >= 4:
        quartiles = statistics.quantiles(times, n=4)
        iqr = quartiles[2] - quartiles[0]
    else:
        iqr = max(times) - min(times)
    return {
        "rate": flop / median / 1e9,
        "rate_best": flop / min(times) / 1e9,
        "elapsed": sum(times) * reps_per_batch,
        "time_median": median,
        "time_min": min(times),
        "time_max": max(times),
        "time_mean": mean,
        "time_stdev": stdev,
        "time_iqr": iqr,
        "time_cv": stdev / mean if mean else 0.0,
        "flop": flop,
        "timed_reps": len(times) * reps_per_batch,
        "timed_batches": len(times),
        "reps_per_batch": reps_per_batch,
    }


# --------------------------------------------------------------------------
# environment of the measurement


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _numpy_blas(np):
    config = getattr(getattr(np, "__config__", None), "CONFIG", None)
    if isinstance(config, dict):
        blas = (config.get("Build Dependencies") or {}).get("blas") or {}
        return ("%s %s" % (blas.get("name", "?"), blas.get("version", ""))).strip()
    return None


def environment(backend, device, torch=None):
    env = {
        "python": platform.python_version(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "thread_env": {name: os.environ.get(name) for name in THREAD_ENV if os.environ.get(name)},
    }
    if backend == "numpy":
        import numpy as np

        env.update(numpy=np.__version__, blas=_numpy_blas(np), device_name=env["cpu_model"])
    else:
        env.update(torch=torch.__version__, torch_threads=torch.get_num_threads(),
                   device_name=torch.cuda.get_device_name() if device == "cuda" else env["cpu_model"])
        if device == "cuda":
            env["cuda"] = torch.version.cuda
            env["compute_capability"] = "%d.%d" % tuple(torch.cuda.get_device_capability())
    return env


# --------------------------------------------------------------------------
# running


def apply_thread_settings(threads, environ=None):
    """Set the BLAS/OpenMP thread variables; must happen before numpy/torch import."""
    environ = os.environ if environ is None else environ
    if threads:
        for name in THREAD_ENV:
            environ[name] = str(threads)


def run_indicator(indicator, settings):
    """Run one built-in indicator and return its contract document."""
    params = validate_settings(indicator, settings)
    apply_thread_settings(params["threads"])
    flop = flop_count(indicator, params)
    torch = None
    if params["backend"] == "torch":
        try:
            import torch  # pylint: disable=import-outside-toplevel,redefined-outer-name
        except ImportError:
            raise IndicatorError("backend torch requested but torch is not installed (pip install torch)") from None
        if params["device"] == "cuda" and not torch.cuda.is_available():
            raise IndicatorError("device cuda requested but torch.cuda.is_available() is false")
        if params["threads"]:
            torch.set_num_threads(params["threads"])
        operation = _torch_operation(torch, indicator, params)
        if params["device"] == "cuda":
            times, reps_per_batch = time_cuda(torch, operation, params["warmup"], params["reps"],
                                              min_batch_s=params["min_batch_ms"] / 1e3)
        else:
            times, reps_per_batch = time_cpu(operation, params["warmup"], params["reps"]), 1
    else:
        operation = _numpy_operation(indicator, params)
        times, reps_per_batch = time_cpu(operation, params["warmup"], params["reps"]), 1
    result = summarize(times, flop, reps_per_batch)
    document = {
        "name": indicator,
        "framework": params["backend"],
        "@parameters": params,
        "@result": result,
        "environment": environment(params["backend"], params["device"], torch),
    }
    if params["peak_gflops"]:
        document["overall_score"] = min(1.0, result["rate"] / params["peak_gflops"])
    return document


def parse_cli_settings(arguments):
    """``key=value`` arguments; values are read as JSON when they parse (numbers, null...)."""
    settings = {}
    for argument in arguments:
        key, sep, value = argument.partition("=")
        if not sep or not key:
            raise IndicatorError("argument %r: expected key=value" % argument)
        try:
            settings[key] = json.loads(value)
        except ValueError:
            settings[key] = value
    return settings


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        sys.stderr.write("usage: indicators {%s} [key=value ...]\n" % ",".join(known_indicators()))
        for name in known_indicators():
            sys.stderr.write("  %s: %s\n" % (name, ", ".join(parameter_names(name))))
        return 0 if argv else 2
    try:
        document = run_indicator(argv[0], parse_cli_settings(argv[1:]))
    except IndicatorError as exc:
        sys.stderr.write("indicators: %s\n" % exc)
        return 2
    sys.stdout.write(json.dumps(document) + "\n")
    result = document["@result"]
    sys.stderr.write("%s: %.2f GFLOP/s (median of %d timings of %d repetition(s), cv %.1f%%)\n"
                     % (argv[0], result["rate"], result["timed_batches"], result["reps_per_batch"],
                        100 * result["time_cv"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
