# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU products as nodes label them, and the memory CUDA reports for each.

A GPU's memory comes in three figures: the marketing size (80 GB), what NVML reports and the GPU
operator's feature discovery puts in the node label ``nvidia.com/gpu.memory`` (MiB, e.g. 81559 for an
H100 80GB HBM3), and what CUDA reports as the device's total (``torch.cuda.mem_get_info``), which is
what vLLM multiplies by ``gpu_memory_utilization`` ("total_gpu_memory (79.19GiB)" in its log). The
planner needs the last; ``GPUS`` records it where a vLLM log shows it (``cuda_source``) and otherwise
derives it from NVML's figure minus ``NVML_RESERVE_MIB`` (the driver's reserve, measured on the H100:
81559 MiB in NVML, 79.19 GiB = 81091 MiB in CUDA).
"""

from __future__ import annotations

import re

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

NVML_RESERVE_MIB = 468
MIB_PER_GIB = 1024.0
# nvidia.com/gpu.product of a time-sliced GPU (the GPU operator's renameByDefault: false) or a MIG slice
SHARED_SUFFIX = "-SHARED"
_MIG = re.compile(r"^(?P<base>.+)-MIG-(?P<compute>\d+)g\.(?P<memory>\d+)gb$")

# product label -> NVML memory (MiB, as nvidia.com/gpu.memory), CUDA total (GiB, None: derived), its source
GPUS = {
    "NVIDIA-H100-80GB-HBM3": (81559, 79.19, "vLLM logs on H100 80GB HBM3 (benchmarks/results/capacity_vllm_measured.json)"),
    "NVIDIA-H100-PCIe": (81559, None, None),
    "NVIDIA-H100-NVL": (95830, None, None),
    "NVIDIA-H200": (143771, None, None),
    "NVIDIA-B200": (183359, None, None),
    "NVIDIA-A100-SXM4-80GB": (81920, 79.15, "vLLM logs on A100-SXM4-80GB (benchmarks/results/capacity_vllm_measured.json)"),
    "NVIDIA-A100-80GB-PCIe": (81920, 79.15, "same memory as the SXM4 80GB"),
    "NVIDIA-A100-SXM4-40GB": (40960, 39.39, "CUDA total of the A100 40GB (torch.cuda.mem_get_info)"),
    "NVIDIA-A100-PCIE-40GB": (40960, 39.39, "same memory as the SXM4 40GB"),
    "NVIDIA-L40S": (46068, None, None),
    "NVIDIA-L40": (46068, None, None),
    "NVIDIA-L4": (23034, None, None),
    "NVIDIA-A10G": (23028, None, None),
    "NVIDIA-A10": (23028, None, None),
    "Tesla-T4": (15360, None, None),
    "Tesla-V100-SXM2-16GB": (16384, None, None),
    "Tesla-V100-SXM2-32GB": (32768, None, None),
}


def cuda_gib_from_nvml(memory_mib):
    """CUDA's total of a GPU whose NVML memory (the ``nvidia.com/gpu.memory`` label) is ``memory_mib``."""
    return round((float(memory_mib) - NVML_RESERVE_MIB) / MIB_PER_GIB, 2)


def product_memory(product):
    """``(cuda_gib, how)`` of a product label; CapacityError names an unknown product."""
    if not isinstance(product, str) or not product:
        raise CapacityError("gpu %r: expected a GPU product as nodes label it (nvidia.com/gpu.product), e.g. "
                            "NVIDIA-H100-80GB-HBM3" % (product,))
    name = product[:-len(SHARED_SUFFIX)] if product.endswith(SHARED_SUFFIX) else product
    mig = _MIG.match(name)
    if mig:
        # a MIG slice: its profile names its memory in GB (1g.10gb: 10 GB)
        gib = int(mig.group("memory")) * 1e9 / 2 ** 30
        return round(gib, 2), "MIG profile %sg.%sgb of %s" % (mig.group("compute"), mig.group("memory"), mig.group("base"))
    if name not in GPUS:
        known = ", ".join(sorted(GPUS))
        close = close_products(name)
        hint = (" (did you mean %s?)" % close[0] if len(close) == 1 else
                " (did you mean one of %s?)" % ", ".join(close) if close else "")
        raise CapacityError("gpu %r is not a GPU product this planner knows%s; known: %s; give gpu_memory_gib instead"
                            % (product, hint, known))
    nvml, cuda, source = GPUS[name]
    if cuda is not None:
        return cuda, source
    return cuda_gib_from_nvml(nvml), "NVML's %d MiB minus the driver's reserve (%d MiB)" % (nvml, NVML_RESERVE_MIB)


# suggestions are looked for in names this long at most (a longer one is no product name mistyped)
SUGGEST_MAX_CHARS = 64
SUGGESTIONS = 4
VENDOR_PREFIXES = ("NVIDIA-", "Tesla-")


def close_products(name):
    """The known products a user may have meant by ``name``: those whose name holds it (``H100``: every
    H100; the one named by it without the vendor's prefix first, then the shorter names), else those
    close to it (difflib, without the vendor's prefix: ``H200x``, ``NVIDIA-H900``); case is ignored; at
    most ``SUGGESTIONS``."""
    if not isinstance(name, str) or not name.strip() or len(name) > SUGGEST_MAX_CHARS:
        return []
    import difflib

    stems = {}
    for product in sorted(GPUS):
        stem = product.split("-", 1)[1] if product.startswith(VENDOR_PREFIXES) else product
        stems.setdefault(stem.casefold(), product)
    folded = name.strip().casefold()
    asked = folded.split("-", 1)[1] if folded.startswith(tuple(p.casefold() for p in VENDOR_PREFIXES)) else folded
    holding = sorted((product for product in GPUS if folded in product.casefold()),
                     key=lambda product: (product.casefold() not in (folded, "nvidia-" + asked, "tesla-" + asked),
                                          len(product), product))
    if holding:
        return holding[:SUGGESTIONS]
    return [stems[stem] for stem in difflib.get_close_matches(asked, list(stems), n=SUGGESTIONS, cutoff=0.6)]


def known_products():
    return sorted(GPUS)
