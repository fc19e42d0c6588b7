# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Capture the environment a benchmark ran in (standard library only).

CPU model and count, memory, operating system, Python and package versions,
thread settings and, when ``nvidia-smi`` (or ``rocm-smi``) is present, the typed GPU
inventory (``gpu_inventory.py``). Every probe degrades on its own: a missing file or tool
gives ``None`` and a note in ``warnings``, never an exception.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys

from ansible_collections.perfscale.topsail.plugins.module_utils.run import gpu_inventory

DEFAULT_PACKAGES = ("numpy", "scipy", "pandas", "plotly", "pydantic", "torch", "ansible-core", "opensearch-py")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "CUDA_VISIBLE_DEVICES")
NVIDIA_SMI_XML = ("-q", "-x")
NVIDIA_SMI_COMPUTE_CAP = ("--query-gpu=pci.bus_id,compute_cap", "--format=csv,noheader")
ROCM_SMI_JSON = ("--showproductname", "--showmeminfo", "vram", "--json")


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def parse_cpuinfo(text):
    models, physical = [], set()
    flags = None
    physical_id = None
    for line in text.splitlines():
        key, _sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "model name":
            models.append(value)
        elif key == "physical id":
            physical_id = value
        elif key == "core id" and physical_id is not None:
            physical.add((physical_id, value))
        elif key == "flags" and flags is None:
            flags = value.split()
    return {
        "model": models[0] if models else None,
        "logical_cpus_in_cpuinfo": len(models) or None,
        "physical_cores": len(physical) or None,
        "has_avx2": ("avx2" in flags) if flags else None,
        "has_avx512f": ("avx512f" in flags) if flags else None,
    }


def parse_meminfo(text):
    values = {}
    for line in text.splitlines():
        key, _sep, value = line.partition(":")
        parts = value.split()
        if parts and parts[0].isdigit():
            factor = 1024 if len(parts) > 1 and parts[1].lower() == "kb" else 1
            values[key.strip()] = int(parts[0]) * factor
    return {"total_bytes": values.get("MemTotal"), "available_bytes": values.get("MemAvailable")}


def parse_os_release(text):
    data = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            data[key.strip()] = value.strip().strip('"')
    return {"id": data.get("ID"), "version_id": data.get("VERSION_ID"), "pretty_name": data.get("PRETTY_NAME")}


def package_versions(packages):
    from importlib import metadata

    versions = {}
    for package in packages:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def _run_tool(command, timeout, run):
    """(stdout, None) or (None, one-line warning) of a GPU tool."""
    name = os.path.basename(command[0])
    try:
        completed = run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, "%s did not answer within %s s" % (name, timeout)
    except OSError as exc:
        return None, "%s could not be run: %s" % (name, exc)
    if completed.returncode != 0:
        detail = " ".join((completed.stderr or completed.stdout or "").split())[:200]
        return None, "%s exited with %d: %s" % (name, completed.returncode, detail)
    return completed.stdout, None


def capture_gpus(timeout, which=shutil.which, run=subprocess.run):
    """GPU inventory (``gpu_inventory.empty_gpu`` entries): (gpus or None, warning or None).

    ``nvidia-smi -q -x`` (and ``--query-gpu=pci.bus_id,compute_cap`` for the compute capability,
    which the XML does not give); without nvidia-smi, ``rocm-smi ... --json``; neither: no GPU."""
    nvidia = which("nvidia-smi")
    if nvidia:
        text, warning = _run_tool([nvidia] + list(NVIDIA_SMI_XML), timeout, run)
        if warning:
            return None, warning
        try:
            gpus = gpu_inventory.parse_nvidia_smi_xml(text)["gpus"]
        except gpu_inventory.GpuInventoryError as exc:
            return None, str(exc)
        text, warning = _run_tool([nvidia] + list(NVIDIA_SMI_COMPUTE_CAP), timeout, run)
        if warning:
            return gpus, "compute capability not read: %s" % warning
        gpu_inventory.add_compute_capabilities(gpus, gpu_inventory.parse_compute_capabilities(text))
        return gpus, None
    rocm = which("rocm-smi")
    if rocm:
        text, warning = _run_tool([rocm] + list(ROCM_SMI_JSON), timeout, run)
        if warning:
            return None, warning
        try:
            return gpu_inventory.parse_rocm_smi_json(text)["gpus"], None
        except gpu_inventory.GpuInventoryError as exc:
            return None, str(exc)
    return [], None


def capture_environment(packages=DEFAULT_PACKAGES, gpu=True, nvidia_smi_timeout=30, environ=None,
                        proc_dir="/proc", os_release="/etc/os-release"):
    environ = os.environ if environ is None else environ
    warnings = []

    def probe(description, function, *args):
        try:
            return function(*args)
        except (OSError, ValueError) as exc:
            warnings.append("%s: %s" % (description, exc))
            return None

    cpuinfo = probe("cpu info", lambda: parse_cpuinfo(_read(os.path.join(proc_dir, "cpuinfo")))) or {}
    affinity = probe("cpu affinity", lambda: len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else None
    cpu = {
        "model": cpuinfo.get("model") or platform.processor() or None,
        "count": os.cpu_count(),
        "usable": affinity,
        "physical_cores": cpuinfo.get("physical_cores"),
        "architecture": platform.machine(),
        "has_avx2": cpuinfo.get("has_avx2"),
        "has_avx512f": cpuinfo.get("has_avx512f"),
    }
    memory = probe("memory info", lambda: parse_meminfo(_read(os.path.join(proc_dir, "meminfo")))) or {}
    release = probe("os release", lambda: parse_os_release(_read(os_release))) or {}
    uname = platform.uname()
    operating_system = dict(release, system=uname.system, kernel=uname.release, hostname=uname.node)
    python = {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
    }
    gpus = []
    if gpu:
        gpus, warning = capture_gpus(nvidia_smi_timeout)
        if warning:
            warnings.append(warning)
    load = probe("load average", os.getloadavg) if hasattr(os, "getloadavg") else None
    return {
        "cpu": cpu,
        "memory": memory,
        "os": operating_system,
        "python": python,
        "packages": package_versions(packages),
        "threads": {name: environ.get(name) for name in THREAD_VARIABLES},
        "gpus": gpus,
        "load_average": list(load) if load else None,
        "warnings": warnings,
    }
