# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Datasheet dense peaks of accelerators, and the efficiency of a measured rate against them.

Each product records the vendor's figures per datasheet dtype (``FIGURE_KEYS``: FP64, FP64 Tensor
Core / Matrix, FP32, TF32, BF16, FP16, FP8 in TFLOP/s, INT8 in TOPS), each as the source prints it:
``printed`` and ``unit`` (``teraFLOPS``, ``PFLOPS``, ``TOPS``...), ``figure`` (the source's words),
``source`` (the URL it comes from) and ``confirmed``. ``tflops`` (``tops`` for INT8) is the dense
figure: where the source gives only a "with sparsity" figure, half of it (``halved``).

``confirmed`` is True when the figure was checked against the source's own words (the vendor's
page, datasheet or whitepaper, or a verbatim copy of it: ``checked`` says which); a figure that
could not be checked has ``confirmed: False`` and ``unconfirmed`` says why - the efficiency built on
it says so in its reason. docs/gpu-check.md ("The peak table and its sources") lists what was
checked where.

The peak a matrix product of a dtype can reach (``peaks``, derived from the figures) is taken:

- ``fp64``: the FP64 Tensor Core (NVIDIA) or FP64 Matrix (AMD) figure when the datasheet gives
  one (DGEMM runs on those units), else plain FP64;
- ``fp32``: plain FP32 (a float32 product on CUDA runs without TF32 unless the program allows it;
  torch does not by default), FP32 Matrix on AMD;
- ``tf32``, ``bf16``, ``fp16``, ``fp8``: the Tensor Core / Matrix figures.

A product is recognised only by its exact name as the tools print it (``nvidia-smi``'s
``product_name``, ``torch.cuda.get_device_name()``, ``rocm-smi``'s card series), compared without
case and with runs of spaces folded: never by a prefix or a guess. An unknown product, a dtype the
datasheet gives no figure for, a MIG slice: the efficiency is ``None`` with the reason.

Standard library only; nothing runs at import time but building the tables below.
"""

from __future__ import annotations

import math

# the indicator dtypes (torch/numpy names) and the datasheet dtype they are compared with
DTYPE_OF_SETTING = {"float64": "fp64", "float32": "fp32", "bfloat16": "bf16", "float16": "fp16",
                    "tf32": "tf32", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8"}
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8")
# every figure a datasheet may give; int8 is in TOPS (integer operations), the others in TFLOP/s
FIGURE_KEYS = ("fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")
# the units sources print, in TFLOP/s (TOPS for int8)
UNITS = {"teraFLOPS": 1, "teraFLOPs": 1, "TFLOPS": 1, "TFLOPs": 1, "PFLOPS": 1000, "TOPS": 1, "TOPs": 1, "POPS": 1000}

H100_URL = "https://www.nvidia.com/en-us/data-center/h100/"
# the H100 datasheet with SXM | PCIe columns, reproduced by NVIDIA's partner HPC Tech; the H100
# whitepaper (V1.04, Table 1) gives the same BF16 figures (SXM5 989.4 | 1978.9, PCIe 756 | 1513)
H100_PCIE_URL = "https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html"
H100_WHITEPAPER_URL = "https://nvdam.widen.net/s/95bdhpsgrs/nvidia_h100_tensor_core_gpu_architecture_whitepaper_v1.03"
H200_URL = "https://www.nvidia.com/en-us/data-center/h200/"
A100_URL = ("https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
            "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf")
L40S_URL = "https://www.nvidia.com/en-us/data-center/l40s/"
L4_URL = "https://www.nvidia.com/en-us/data-center/l4/"
L4_DATASHEET_COPY_URL = ("https://www.cisco.com/c/dam/en/us/products/collateral/servers-unified-computing/"
                         "ucs-c-series-rack-servers/nvidia-l4-gpu.pdf")
B200_URL = "https://www.nvidia.com/en-us/data-center/gb200-nvl72/"
DGX_B200_URL = "https://www.nvidia.com/en-us/data-center/dgx-b200/"
MI300X_URL = ("https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
              "amd-instinct-mi300x-data-sheet.pdf")

QUOTED = "checked against the source's table as quoted verbatim in public documents (2026)"


def _figure(printed, unit, figure, source, sparse=False, unconfirmed=None, int8=False):
    """One figure as the source prints it; its dense value is half of it when it is given "with sparsity"."""
    dense = printed * UNITS[unit] / (2 if sparse else 1)
    return {("tops" if int8 else "tflops"): dense, "printed": printed, "unit": unit, "figure": figure,
            "halved": sparse, "source": source, "confirmed": unconfirmed is None, "unconfirmed": unconfirmed}


def _hopper(source, fp64, fp64_tc, fp32, tf32, bf16, fp8, int8_unit="TOPS"):
    """The Hopper product pages' rows: FP64, FP64 and FP32 plain, the Tensor Core rows "* With sparsity"."""
    def sparse(label, value, unit="teraFLOPS"):
        return _figure(value, unit, "%s Tensor Core* %s %s (* With sparsity)" % (label, format(value, ",g"), unit),
                       source, sparse=True, int8=label == "INT8")
    return {
        "fp64": _figure(fp64, "teraFLOPS", "FP64 %g teraFLOPS" % fp64, source),
        "fp64_tensor": _figure(fp64_tc, "teraFLOPS", "FP64 Tensor Core %g teraFLOPS" % fp64_tc, source),
        "fp32": _figure(fp32, "teraFLOPS", "FP32 %g teraFLOPS" % fp32, source),
        "tf32": sparse("TF32", tf32),
        "bf16": sparse("BFLOAT16", bf16),
        "fp16": sparse("FP16", bf16),
        "fp8": sparse("FP8", fp8),
        "int8": sparse("INT8", fp8, int8_unit),
    }


def _a100(source):
    def pair(label, dense, with_sparsity, unit="TFLOPS"):
        printed = "%s %s %s | %s %s* (* With sparsity)" % (
            label, format(dense, "g"), unit, format(with_sparsity, "g"), unit)
        return _figure(dense, unit, printed,
                       source, int8=label.startswith("INT8"))
    return {
        "fp64": _figure(9.7, "TFLOPS", "FP64 9.7 TFLOPS", source),
        "fp64_tensor": _figure(19.5, "TFLOPS", "FP64 Tensor Core 19.5 TFLOPS", source),
        "fp32": _figure(19.5, "TFLOPS", "FP32 19.5 TFLOPS", source),
        "tf32": pair("Tensor Float 32 (TF32)", 156, 312),
        "bf16": pair("BFLOAT16 Tensor Core", 312, 624),
        "fp16": pair("FP16 Tensor Core", 312, 624),
        "int8": pair("INT8 Tensor Core", 624, 1248, "TOPS"),
    }


def _l40s():
    def pair(label, dense, with_sparsity, unit="teraFLOPS"):
        return _figure(dense, unit, "%s %s | %s* %s (* With Sparsity)" % (label, format(dense, ",g"),
                                                                          format(with_sparsity, ",g"), unit),
                       L40S_URL, int8=label.startswith("INT8"))
    return {
        "fp32": _figure(91.6, "teraFLOPS", "FP32 91.6 teraFLOPS", L40S_URL),
        "tf32": pair("TF32 Tensor Core", 183, 366),
        # the product page prints 362.05; NVIDIA's zh-CN datasheet (2907810, 2023.9.25) prints 362.5
        "bf16": pair("BFLOAT16 Tensor Core", 362.05, 733),
        "fp16": pair("FP16 Tensor Core", 362.05, 733),
        "fp8": pair("FP8 Tensor Core", 733, 1466),
        "int8": pair("INT8 Tensor Core", 733, 1466, "TOPS"),
    }


def _l4():
    def sparse(label, value, unit="teraFLOPS"):
        return _figure(value, unit, "%s %s %s* (* Shown with sparsity)" % (label, format(value, "g"), unit), L4_URL,
                       sparse=True, int8=label.startswith("INT8"))
    return {
        "fp32": _figure(30.3, "teraFLOPs", "FP32 30.3 teraFLOPs", L4_URL),
        "tf32": sparse("TF32 Tensor Core", 120),
        "bf16": sparse("BFLOAT16 Tensor Core", 242),
        "fp16": sparse("FP16 Tensor Core", 242),
        "fp8": sparse("FP8 Tensor Core", 485, "teraFLOPs"),
        "int8": sparse("INT8 Tensor Core", 485, "TOPs"),
    }


def _b200():
    """The HGX B200 column of the per-GPU table of the GB200 NVL72 page (preliminary specifications).
    Its Tensor Core rows are with sparsity: its FP4 18 PFLOPS is the DGX B200's sparse figure per GPU
    ("FP4 Tensor Core 144 PFLOPS | 72 PFLOPS", "Shown in sparse | dense", 8 GPUs)."""
    def sparse(label, value, unit="PFLOPS"):
        return _figure(value, unit, "%s %g %s (HGX B200, with sparsity)" % (label, value, unit), B200_URL,
                       sparse=True, int8=label.startswith("INT8"))
    return {
        "fp64": _figure(37, "TFLOPS", "FP64/FP64 Tensor Core 37 TFLOPS", B200_URL),
        "fp64_tensor": _figure(37, "TFLOPS", "FP64/FP64 Tensor Core 37 TFLOPS", B200_URL),
        "fp32": _figure(75, "TFLOPS", "FP32 75 TFLOPS", B200_URL),
        "tf32": sparse("TF32 Tensor Core", 2.2),
        "bf16": sparse("FP16/BF16 Tensor Core", 4.5),
        "fp16": sparse("FP16/BF16 Tensor Core", 4.5),
        "fp8": sparse("FP8/FP6 Tensor Core", 9),
        "int8": sparse("INT8 Tensor Core", 9, "POPS"),
    }


def _mi300x():
    """AMD's endnote MI300-11 (the dense peaks at 2,100 MHz; the datasheet adds the figures with
    structured sparsity, twice these for TF32, FP16, BF16, FP8 and INT8)."""
    def peak(value, words, unit="TFLOPS"):
        return _figure(value, unit, "%s %s peak theoretical %s" % (format(value, "g"), unit, words), MI300X_URL,
                       int8=unit == "TOPs")
    return {
        "fp64": peak(81.7, "double precision (FP64)"),
        "fp64_tensor": peak(163.4, "double precision (FP64 Matrix)"),
        "fp32": peak(163.4, "single precision matrix (FP32 Matrix)"),
        "tf32": peak(653.7, "TensorFloat-32 (TF32)"),
        "bf16": peak(1307.4, "Bfloat16 format precision (BF16)"),
        "fp16": peak(1307.4, "half precision (FP16)"),
        "fp8": peak(2614.9, "8-bit precision (FP8)"),
        "int8": _figure(2614.9, "TOPs", "2614.9 TOPs INT8 floating-point performance", MI300X_URL, int8=True),
    }


_HOPPER_PAGES = QUOTED + ": the spec table's columns H100 SXM | H100 NVL (H200 SXM | H200 NVL), footnote " \
                         "'With sparsity' on the Tensor Core rows"
_A100_FIGURES = _a100(A100_URL)

# product -> vendor, names the tools print, the source of its figures, how they were checked, the figures
_PRODUCT_SPECS = {
    "H100 SXM": {"vendor": "NVIDIA", "names": ["NVIDIA H100 80GB HBM3"], "source": H100_URL,
                 "checked": _HOPPER_PAGES + "; BF16 also in the H100 whitepaper V1.04 Table 1 (989.4 | 1978.9 "
                                            "with sparsity): " + H100_WHITEPAPER_URL,
                 "figures": _hopper(H100_URL, 34, 67, 67, 989, 1979, 3958)},
    "H100 PCIe": {"vendor": "NVIDIA", "names": ["NVIDIA H100 PCIe"], "source": H100_PCIE_URL,
                  "checked": "the H100 datasheet's SXM | PCIe columns as reproduced by NVIDIA's partner (footnote "
                             "'Shown with sparsity. Specifications 1/2 lower without sparsity.'); BF16 also in the "
                             "H100 whitepaper V1.04 Table 1 (PCIe 756 | 1513 with sparsity): " + H100_WHITEPAPER_URL
                             + ". A zh-CN datasheet's 'H100 PCIe' column (BF16 1,600 with sparsity, FP64 24) is "
                               "reported for a board of other clocks; not used",
                  "figures": _hopper(H100_PCIE_URL, 26, 51, 51, 756, 1513, 3026)},
    "H100 NVL": {"vendor": "NVIDIA", "names": ["NVIDIA H100 NVL"], "source": H100_URL, "checked": _HOPPER_PAGES,
                 "figures": _hopper(H100_URL, 30, 60, 60, 835, 1671, 3341)},
    "H200 SXM": {"vendor": "NVIDIA", "names": ["NVIDIA H200"], "source": H200_URL,
                 "checked": _HOPPER_PAGES + "; the page prints the INT8 row in TFLOPS and marks the table "
                                            "'Preliminary specifications. May be subject to change.'",
                 "figures": _hopper(H200_URL, 34, 67, 67, 989, 1979, 3958, int8_unit="TFLOPS")},
    "H200 NVL": {"vendor": "NVIDIA", "names": ["NVIDIA H200 NVL"], "source": H200_URL,
                 "checked": _HOPPER_PAGES + "; the page prints the INT8 row in TFLOPS",
                 "figures": _hopper(H200_URL, 30, 60, 60, 835, 1671, 3341, int8_unit="TFLOPS")},
    # the A100 datasheet gives the same compute figures for the 40GB and 80GB, PCIe and SXM boards
    "A100 SXM 80GB": {"vendor": "NVIDIA", "names": ["NVIDIA A100-SXM4-80GB"], "source": A100_URL,
                      "checked": QUOTED + " (datasheet JUN21 1758950 R4, and the A100 product page's "
                                          "'BFLOAT16 Tensor Core 312 TFLOPS | 624 TFLOPS*', '*With sparsity')",
                      "figures": _A100_FIGURES},
    "A100 SXM 40GB": {"vendor": "NVIDIA", "names": ["NVIDIA A100-SXM4-40GB"], "source": A100_URL,
                      "checked": "as A100 SXM 80GB", "figures": _A100_FIGURES},
    "A100 PCIe 80GB": {"vendor": "NVIDIA", "names": ["NVIDIA A100 80GB PCIe"], "source": A100_URL,
                       "checked": "as A100 SXM 80GB", "figures": _A100_FIGURES},
    "A100 PCIe 40GB": {"vendor": "NVIDIA", "names": ["NVIDIA A100-PCIE-40GB"], "source": A100_URL,
                       "checked": "as A100 SXM 80GB", "figures": _A100_FIGURES},
    "L40S": {"vendor": "NVIDIA", "names": ["NVIDIA L40S"], "source": L40S_URL,
             "checked": QUOTED + " (product page fetched 2026-09-15 by their authors: 'FP16 Tensor Core 362.05 | "
                                 "733*', 'FP8 Tensor Core 733 | 1,466*', '* With Sparsity'); NVIDIA's zh-CN "
                                 "datasheet prints BFLOAT16/FP16 362.5 | 733*",
             "figures": _l40s()},
    "L4": {"vendor": "NVIDIA", "names": ["NVIDIA L4"], "source": L4_URL,
           "checked": "the NVIDIA L4 datasheet as distributed by Cisco: " + L4_DATASHEET_COPY_URL,
           "figures": _l4()},
    "B200": {"vendor": "NVIDIA", "names": ["NVIDIA B200"], "source": B200_URL,
             "checked": QUOTED + " (the HGX B200 column of the page's per-GPU table); sparsity from the DGX B200 "
                                 "page's 'FP4 Tensor Core 144 PFLOPS | 72 PFLOPS', 'Shown in sparse | dense': "
                       + DGX_B200_URL,
             "figures": _b200()},
    "MI300X": {"vendor": "AMD", "names": ["AMD Instinct MI300X"], "source": MI300X_URL,
               "checked": QUOTED + " (AMD endnote MI300-11: '163.4 TFLOPS peak theoretical double precision (FP64 "
                                   "Matrix), 81.7 TFLOPS peak theoretical double precision (FP64), ...')",
               "figures": _mi300x()},
}


def _peaks(figures):
    """The peak a matrix product of each dtype is compared with (see the module's docstring)."""
    peaks = {}
    for dtype in DTYPES:
        entry = (figures.get("fp64_tensor") or figures.get("fp64")) if dtype == "fp64" else figures.get(dtype)
        if entry is not None:
            peaks[dtype] = entry
    return peaks


# ... and the peaks derived from them
PRODUCTS = {product: dict(spec, peaks=_peaks(spec["figures"])) for product, spec in _PRODUCT_SPECS.items()}


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
    entry = PRODUCTS[product]["peaks"].get(key)
    if entry is None:
        return None, "the %s datasheet gives no %s figure" % (product, key)
    return dict(entry, product=product, dtype=key), None


def unconfirmed_note(entry):
    """The line an efficiency built on an unconfirmed figure carries, or None for a confirmed one."""
    if entry.get("confirmed"):
        return None
    why = entry.get("unconfirmed") or "no reason recorded"
    return "the %s %s peak (%g TFLOP/s) is unconfirmed: %s" % (entry["product"], entry["dtype"], entry["tflops"], why)


def efficiency(rate_gflops, name, dtype):
    """The achieved rate against the product's dense peak: ``{value, peak_tflops, product, dtype,
    source, reason}``; ``value`` (a ratio) is None with ``reason`` when it cannot be told. A value built
    on a figure the table marks unconfirmed comes with a reason all the same, saying so."""
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
    result["reason"] = unconfirmed_note(entry)
    return result


def percent_of_peak(ratio):
    """``"79 % of peak"`` (whole percent; one decimal under 10 %), or None."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not math.isfinite(ratio):
        return None
    percent = 100 * ratio
    return ("%.1f %% of peak" if percent < 10 else "%.0f %% of peak") % percent
