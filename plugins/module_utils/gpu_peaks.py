# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Datasheet dense peaks of accelerators, and the efficiency of a measured rate against them.

Each product lists, per dtype, the vendor's datasheet figure in TFLOP/s *without* structured
sparsity: where the datasheet gives only a "with sparsity" figure, the table holds half of it and
says so (``halved``). The peak a matrix product of a dtype can reach is taken:

- ``fp64``: the FP64 Tensor Core (NVIDIA) or FP64 matrix (AMD) figure when the datasheet gives
  one (DGEMM runs on those units), else plain FP64;
- ``fp32``: plain FP32 (a float32 product on CUDA runs without TF32 unless the program allows it;
  torch does not by default), FP32 matrix on AMD;
- ``tf32``, ``bf16``, ``fp16``, ``fp8``: the Tensor Core / matrix figures.

A product is recognised only by its exact name as the tools print it (``nvidia-smi``'s
``product_name``, ``torch.cuda.get_device_name()``, ``rocm-smi``'s card series), compared without
case and with runs of spaces folded: never by a prefix or a guess. An unknown product, a dtype the
datasheet gives no figure for, a MIG slice: the efficiency is ``None`` with the reason.

Standard library only; nothing runs at import time but building the name index.
"""

from __future__ import annotations

import math

# the indicator dtypes (torch/numpy names) and the datasheet dtype they are compared with
DTYPE_OF_SETTING = {"float64": "fp64", "float32": "fp32", "bfloat16": "bf16", "float16": "fp16",
                    "tf32": "tf32", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8"}
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8")

H100_URL = "https://www.nvidia.com/en-us/data-center/h100/"
H200_URL = "https://www.nvidia.com/en-us/data-center/h200/"
A100_URL = ("https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
            "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf")
L40S_URL = "https://www.nvidia.com/en-us/data-center/l40s/"
L4_URL = "https://www.nvidia.com/en-us/data-center/l4/"
B200_URL = "https://www.nvidia.com/en-us/data-center/gb200-nvl72/"
MI300X_URL = "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"


def _dense(tflops, figure):
    return {"tflops": tflops, "figure": figure, "halved": False}


def _sparse(sparse_tflops, figure):
    """A datasheet figure given "with sparsity": the dense peak is half of it."""
    return {"tflops": sparse_tflops / 2, "figure": figure, "halved": True}


def _hopper(sxm_fp64, fp64_tc, fp32, tf32_sparse, bf16_sparse, fp8_sparse):
    return {
        "fp64": _dense(fp64_tc, "FP64 Tensor Core %g teraFLOPS (FP64 %g)" % (fp64_tc, sxm_fp64)),
        "fp32": _dense(fp32, "FP32 %g teraFLOPS" % fp32),
        "tf32": _sparse(tf32_sparse, "TF32 Tensor Core %s teraFLOPS, with sparsity" % format(tf32_sparse, ",g")),
        "bf16": _sparse(bf16_sparse, "BFLOAT16 Tensor Core %s teraFLOPS, with sparsity" % format(bf16_sparse, ",g")),
        "fp16": _sparse(bf16_sparse, "FP16 Tensor Core %s teraFLOPS, with sparsity" % format(bf16_sparse, ",g")),
        "fp8": _sparse(fp8_sparse, "FP8 Tensor Core %s teraFLOPS, with sparsity" % format(fp8_sparse, ",g")),
    }


_A100 = {
    "fp64": _dense(19.5, "FP64 Tensor Core 19.5 TFLOPS (FP64 9.7)"),
    "fp32": _dense(19.5, "FP32 19.5 TFLOPS"),
    "tf32": _dense(156, "TF32 Tensor Core 156 TFLOPS | 312 TFLOPS with sparsity"),
    "bf16": _dense(312, "BFLOAT16 Tensor Core 312 TFLOPS | 624 TFLOPS with sparsity"),
    "fp16": _dense(312, "FP16 Tensor Core 312 TFLOPS | 624 TFLOPS with sparsity"),
}

# product -> names the tools print, source, peaks per dtype (TFLOP/s, dense)
PRODUCTS = {
    "H100 SXM": {"vendor": "NVIDIA", "names": ["NVIDIA H100 80GB HBM3"], "source": H100_URL,
                 "peaks": _hopper(34, 67, 67, 989, 1979, 3958)},
    "H100 PCIe": {"vendor": "NVIDIA", "names": ["NVIDIA H100 PCIe"], "source": H100_URL,
                  "peaks": _hopper(26, 51, 51, 756, 1513, 3026)},
    "H100 NVL": {"vendor": "NVIDIA", "names": ["NVIDIA H100 NVL"], "source": H100_URL,
                 "peaks": _hopper(30, 60, 60, 835, 1671, 3341)},
    "H200 SXM": {"vendor": "NVIDIA", "names": ["NVIDIA H200"], "source": H200_URL,
                 "peaks": _hopper(34, 67, 67, 989, 1979, 3958)},
    "H200 NVL": {"vendor": "NVIDIA", "names": ["NVIDIA H200 NVL"], "source": H200_URL,
                 "peaks": _hopper(30, 60, 60, 835, 1671, 3341)},
    # the A100 datasheet gives the same compute peaks for the 40GB and 80GB, PCIe and SXM boards
    "A100 SXM 80GB": {"vendor": "NVIDIA", "names": ["NVIDIA A100-SXM4-80GB"], "source": A100_URL, "peaks": _A100},
    "A100 SXM 40GB": {"vendor": "NVIDIA", "names": ["NVIDIA A100-SXM4-40GB"], "source": A100_URL, "peaks": _A100},
    "A100 PCIe 80GB": {"vendor": "NVIDIA", "names": ["NVIDIA A100 80GB PCIe"], "source": A100_URL, "peaks": _A100},
    "A100 PCIe 40GB": {"vendor": "NVIDIA", "names": ["NVIDIA A100-PCIE-40GB"], "source": A100_URL, "peaks": _A100},
    "L40S": {"vendor": "NVIDIA", "names": ["NVIDIA L40S"], "source": L40S_URL, "peaks": {
        "fp32": _dense(91.6, "FP32 91.6 teraFLOPS"),
        "tf32": _dense(183, "TF32 Tensor Core 183 | 366 teraFLOPS with sparsity"),
        "bf16": _dense(362.05, "BFLOAT16 Tensor Core 362.05 | 733 teraFLOPS with sparsity"),
        "fp16": _dense(362.05, "FP16 Tensor Core 362.05 | 733 teraFLOPS with sparsity"),
        "fp8": _dense(733, "FP8 Tensor Core 733 | 1,466 teraFLOPS with sparsity"),
    }},
    "L4": {"vendor": "NVIDIA", "names": ["NVIDIA L4"], "source": L4_URL, "peaks": {
        "fp32": _dense(30.3, "FP32 30.3 teraFLOPS"),
        "tf32": _sparse(120, "TF32 Tensor Core 120 teraFLOPS, with sparsity"),
        "bf16": _sparse(242, "BFLOAT16 Tensor Core 242 teraFLOPS, with sparsity"),
        "fp16": _sparse(242, "FP16 Tensor Core 242 teraFLOPS, with sparsity"),
        "fp8": _sparse(485, "FP8 Tensor Core 485 teraFLOPS, with sparsity"),
    }},
    # the HGX B200 column of the per-GPU table (preliminary specifications; tensor figures with sparsity)
    "B200": {"vendor": "NVIDIA", "names": ["NVIDIA B200"], "source": B200_URL, "peaks": {
        "fp64": _dense(37, "FP64/FP64 Tensor Core 37 TFLOPS"),
        "fp32": _dense(75, "FP32 75 TFLOPS"),
        "tf32": _sparse(2200, "TF32 Tensor Core 2.2 PFLOPS, with sparsity"),
        "bf16": _sparse(4500, "FP16/BF16 Tensor Core 4.5 PFLOPS, with sparsity"),
        "fp16": _sparse(4500, "FP16/BF16 Tensor Core 4.5 PFLOPS, with sparsity"),
        "fp8": _sparse(9000, "FP8/FP6 Tensor Core 9 PFLOPS, with sparsity"),
    }},
    "MI300X": {"vendor": "AMD", "names": ["AMD Instinct MI300X"], "source": MI300X_URL, "peaks": {
        "fp64": _dense(163.4, "Peak FP64 Matrix 163.4 TFLOPs (Vector 81.7)"),
        "fp32": _dense(163.4, "Peak FP32 Matrix 163.4 TFLOPs"),
        "tf32": _dense(653.7, "Peak TF32 653.7 TFLOPs (1307.4 with structured sparsity)"),
        "bf16": _dense(1307.4, "Peak BFLOAT16 1307.4 TFLOPs (2614.9 with structured sparsity)"),
        "fp16": _dense(1307.4, "Peak FP16 1307.4 TFLOPs (2614.9 with structured sparsity)"),
        "fp8": _dense(2614.9, "Peak FP8 2614.9 TFLOPs (5229.8 with structured sparsity)"),
    }},
}


def normalize_name(name):
    """A product name compared: without case, surrounding spaces or runs of spaces."""
    return " ".join(str(name).split()).casefold()


def _index():
    index = {}
    for product, spec in PRODUCTS.items():
        for name in spec["names"]:
            index[normalize_name(name)] = product
    return index


_NAMES = _index()


def match_product(name):
    """The table's product for a name a tool printed, or None (an exact name only, never a guess)."""
    if not isinstance(name, str) or not name.strip():
        return None
    return _NAMES.get(normalize_name(name))


def peak(name, dtype):
    """``(entry, None)``: the product's dense peak for ``dtype`` (a datasheet dtype or an indicator
    setting such as ``bfloat16``) with its source; or ``(None, reason)``."""
    key = DTYPE_OF_SETTING.get(dtype, dtype)
    if key not in DTYPES:
        return None, "no datasheet peak for dtype %r; known: %s" % (dtype, ", ".join(DTYPES))
    product = match_product(name)
    if product is None:
        shown = name if isinstance(name, str) and name.strip() else None
        return None, ("GPU product unknown (no product name recorded)" if shown is None else
                      "GPU product %r is not in the peak table (plugins/module_utils/gpu_peaks.py)" % shown)
    spec = PRODUCTS[product]
    entry = spec["peaks"].get(key)
    if entry is None:
        return None, "the %s datasheet gives no %s figure" % (product, key)
    return dict(entry, product=product, dtype=key, source=spec["source"]), None


def efficiency(rate_gflops, name, dtype):
    """The achieved rate against the product's dense peak: ``{value, peak_tflops, product, dtype,
    source, reason}``; ``value`` (a ratio) is None with ``reason`` when it cannot be told."""
    result = {"value": None, "peak_tflops": None, "product": None, "dtype": None, "source": None, "reason": None}
    entry, reason = peak(name, dtype)
    if entry is None:
        result["reason"] = reason
        return result
    result.update(peak_tflops=entry["tflops"], product=entry["product"], dtype=entry["dtype"], source=entry["source"])
    if isinstance(rate_gflops, bool) or not isinstance(rate_gflops, (int, float)) or not math.isfinite(rate_gflops) \
            or rate_gflops < 0:
        result["reason"] = "no measured rate (%r)" % (rate_gflops,)
        return result
    result["value"] = rate_gflops / 1e3 / entry["tflops"]
    return result


def percent_of_peak(ratio):
    """``"79 % of peak"`` (whole percent; one decimal under 10 %), or None."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not math.isfinite(ratio):
        return None
    percent = 100 * ratio
    return ("%.1f %% of peak" if percent < 10 else "%.0f %% of peak") % percent
