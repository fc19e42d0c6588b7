# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU inventory of a host, typed and with units, from the documents the vendors' tools write.

``parse_nvidia_smi_xml`` reads ``nvidia-smi -q -x`` (the XML every NVIDIA driver writes);
``parse_compute_capabilities`` reads ``nvidia-smi --query-gpu=pci.bus_id,compute_cap
--format=csv,noheader`` (the XML does not carry the compute capability);
``parse_rocm_smi_json`` reads ``rocm-smi --showproductname --showmeminfo vram --json``.

Every GPU has the same keys whatever the vendor (``empty_gpu``): memory in MiB, clocks in MHz and
power in W as numbers, on/off modes as booleans; what a document does not give (an older driver, a
field reported as ``N/A``, a unit other than the expected one) is ``None``, never a failure and
never a guess. A document that cannot be read at all (too big, not well-formed, a DOCTYPE with an
internal subset or an ENTITY declaration, another root element) is one line:
``GpuInventoryError``.

XML from a tool is still outside input: it is bounded in size, and a DOCTYPE is accepted only in
the form nvidia-smi writes (``<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">``: a
name and a system identifier, no internal subset); external DTDs are never loaded. The element
tree is read by fixed paths, without recursion.

Standard library only (the ``capture_environment`` module runs it on the host).
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

# an 8-GPU host writes ~0.6 MB (each GPU lists its supported clocks); far above any real document
MAX_DOCUMENT_CHARS = 16 * 1024 * 1024
# at most this many ECC counters per section are kept (a real document has fewer than 40)
MAX_ECC_COUNTERS = 64

NOT_AVAILABLE = ("n/a", "[n/a]", "not supported", "[not supported]", "unknown error", "[unknown error]",
                 "insufficient permissions", "[insufficient permissions]", "", "none")
_ALLOWED_DOCTYPE = re.compile(r'<!DOCTYPE\s+[A-Za-z_][A-Za-z0-9_.-]*\s+SYSTEM\s+"[^"<>\[\]]*"\s*>')
_COMPUTE_CAPABILITY = re.compile(r"^\d{1,3}\.\d{1,3}$")
_NUMBER = re.compile(r"^[0-9]+(\.[0-9]+)?$")


class GpuInventoryError(PerfscaleError, ValueError):
    """A GPU tool's document that cannot be read at all, with a one-line message."""


def empty_gpu():
    """Every key of one GPU of the inventory, all unknown."""
    return {
        "index": None, "vendor": None, "product_name": None, "product_brand": None, "product_architecture": None,
        "serial": None, "uuid": None, "pci_bus_id": None, "compute_capability": None,
        "driver_version": None, "cuda_version": None,
        "memory": {"total_mib": None, "used_mib": None, "free_mib": None, "reserved_mib": None},
        "clocks_mhz": {"sm": None, "sm_max": None, "memory": None, "memory_max": None},
        "power": {"limit_w": None, "default_limit_w": None, "max_limit_w": None},
        "persistence_mode": None,
        "compute_mode": None,
        "mig": {"enabled": None, "pending_enabled": None, "devices": []},
        "ecc": {"enabled": None, "pending_enabled": None, "errors": {"volatile": {}, "aggregate": {}}},
        "pcie": {"generation_current": None, "generation_max": None, "width_current": None, "width_max": None},
    }


# --------------------------------------------------------------------------
# values


def _text(element, path):
    """The stripped text at ``path`` below ``element``, or None when absent or not available."""
    if element is None:
        return None
    found = element.find(path) if path else element
    if found is None or found.text is None:
        return None
    text = " ".join(found.text.split())
    return None if text.casefold() in NOT_AVAILABLE else text


def number(text, unit=None, integer=False):
    """``"143771 MiB"`` -> 143771 (``unit`` "MiB"; an int without a decimal point, else a float); None
    when it is not a finite non-negative number with exactly that unit (or not whole, ``integer``)."""
    if text is None:
        return None
    value = text.strip()
    if unit is not None:
        if not value.endswith(unit):
            return None
        value = value[:-len(unit)].strip()
    if len(value) > 32 or not _NUMBER.match(value):
        return None
    if "." not in value:
        return int(value)
    if integer:
        return None
    result = float(value)
    return result if math.isfinite(result) else None


def _on_off(text):
    if text is None:
        return None
    folded = text.casefold()
    if folded in ("enabled", "enable", "on", "yes"):
        return True
    if folded in ("disabled", "disable", "off", "no"):
        return False
    return None


def _whole(text):
    return number(text, integer=True)


def _width(text):
    return number(text, "x", integer=True)


def _ecc_counters(section):
    """ECC counters of one section, flattened (``sram_correctable``, ``single_bit_total``...):
    whole numbers or None."""
    counters = {}
    if section is None:
        return counters
    for child in section:
        leaves = [(child.tag, child)] if len(child) == 0 else [("%s_%s" % (child.tag, leaf.tag), leaf)
                                                               for leaf in child if len(leaf) == 0]
        for name, leaf in leaves:
            if len(counters) >= MAX_ECC_COUNTERS:
                return counters
            text = _text(leaf, None)
            value = _whole(text)
            if value is not None or text is None:
                counters[name] = value
    return counters


# --------------------------------------------------------------------------
# nvidia-smi -q -x


def _check_document(text, source):
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise GpuInventoryError("%s: not UTF-8 text; expected the XML nvidia-smi -q -x writes" % source) from None
    if not isinstance(text, str):
        raise GpuInventoryError("%s: %s, not text; expected the XML nvidia-smi -q -x writes"
                                % (source, type(text).__name__))
    if len(text) > MAX_DOCUMENT_CHARS:
        raise GpuInventoryError("%s: %d characters; expected at most %d" % (source, len(text), MAX_DOCUMENT_CHARS))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise GpuInventoryError("%s: not UTF-8 text (a lone surrogate); expected the XML nvidia-smi -q -x writes"
                                % source) from None
    if "<!ENTITY" in text:
        raise GpuInventoryError("%s: declares an ENTITY; expected the XML nvidia-smi -q -x writes, without "
                                "entity declarations" % source)
    doctypes = text.count("<!DOCTYPE")
    if doctypes > 1 or (doctypes == 1 and not _ALLOWED_DOCTYPE.search(text)):
        raise GpuInventoryError("%s: a DOCTYPE other than <!DOCTYPE name SYSTEM \"file.dtd\">; expected the XML "
                                "nvidia-smi -q -x writes, without an internal subset" % source)
    return text


def _parse_xml(text, source):
    try:
        parser = ET.XMLParser()
        parser.feed(text)
        return parser.close()
    except ET.ParseError as exc:
        line, column = getattr(exc, "position", (None, None))
        raise GpuInventoryError("%s: not well-formed XML (line %s, column %s); expected the XML nvidia-smi -q -x "
                                "writes" % (source, line, column)) from None
    except (RecursionError, MemoryError):
        raise GpuInventoryError("%s: nested too deeply to read; expected the XML nvidia-smi -q -x writes"
                                % source) from None


def _mig_devices(gpu):
    devices = []
    container = gpu.find("mig_devices")
    for device in (container.findall("mig_device") if container is not None else []):
        devices.append({
            "index": _whole(_text(device, "index")),
            "gpu_instance_id": _whole(_text(device, "gpu_instance_id")),
            "compute_instance_id": _whole(_text(device, "compute_instance_id")),
            "multiprocessor_count": _whole(_text(device, "device_attributes/shared/multiprocessor_count")),
            "memory_total_mib": number(_text(device, "fb_memory_usage/total"), "MiB"),
            "memory_used_mib": number(_text(device, "fb_memory_usage/used"), "MiB"),
        })
    return devices


def _first(gpu, paths, unit):
    for path in paths:
        value = number(_text(gpu, path), unit)
        if value is not None:
            return value
    return None


def _nvidia_gpu(gpu, index, driver_version, cuda_version):
    entry = empty_gpu()
    entry.update(
        index=index, vendor="NVIDIA",
        product_name=_text(gpu, "product_name"), product_brand=_text(gpu, "product_brand"),
        product_architecture=_text(gpu, "product_architecture"),
        serial=_text(gpu, "serial"), uuid=_text(gpu, "uuid"),
        pci_bus_id=_text(gpu, "pci/pci_bus_id") or (" ".join(gpu.get("id", "").split()) or None),
        driver_version=driver_version, cuda_version=cuda_version,
        persistence_mode=_on_off(_text(gpu, "persistence_mode")),
        compute_mode=_text(gpu, "compute_mode"),
    )
    entry["memory"] = {key: number(_text(gpu, "fb_memory_usage/" + key), "MiB")
                       for key in ("total", "used", "free", "reserved")}
    entry["memory"] = {key + "_mib": value for key, value in entry["memory"].items()}
    entry["clocks_mhz"] = {
        "sm": number(_text(gpu, "clocks/sm_clock"), "MHz"),
        "sm_max": number(_text(gpu, "max_clocks/sm_clock"), "MHz"),
        "memory": number(_text(gpu, "clocks/mem_clock"), "MHz"),
        "memory_max": number(_text(gpu, "max_clocks/mem_clock"), "MHz"),
    }
    # drivers >= 535 write gpu_power_readings/current_power_limit, older ones power_readings/power_limit
    entry["power"] = {
        "limit_w": _first(gpu, ("gpu_power_readings/current_power_limit", "power_readings/enforced_power_limit",
                                "power_readings/power_limit"), "W"),
        "default_limit_w": _first(gpu, ("gpu_power_readings/default_power_limit",
                                        "power_readings/default_power_limit"), "W"),
        "max_limit_w": _first(gpu, ("gpu_power_readings/max_power_limit", "power_readings/max_power_limit"), "W"),
    }
    entry["mig"] = {"enabled": _on_off(_text(gpu, "mig_mode/current_mig")),
                    "pending_enabled": _on_off(_text(gpu, "mig_mode/pending_mig")),
                    "devices": _mig_devices(gpu)}
    errors = gpu.find("ecc_errors")
    entry["ecc"] = {"enabled": _on_off(_text(gpu, "ecc_mode/current_ecc")),
                    "pending_enabled": _on_off(_text(gpu, "ecc_mode/pending_ecc")),
                    "errors": {"volatile": _ecc_counters(errors.find("volatile") if errors is not None else None),
                               "aggregate": _ecc_counters(errors.find("aggregate") if errors is not None else None)}}
    link = "pci/pci_gpu_link_info/"
    entry["pcie"] = {
        "generation_current": _whole(_text(gpu, link + "pcie_gen/current_link_gen")),
        "generation_max": _whole(_text(gpu, link + "pcie_gen/max_link_gen")),
        "width_current": _width(_text(gpu, link + "link_widths/current_link_width")),
        "width_max": _width(_text(gpu, link + "link_widths/max_link_width")),
    }
    return entry


def parse_nvidia_smi_xml(text, source="nvidia-smi -q -x"):
    """``{"driver_version", "cuda_version", "gpus": [gpu...]}`` from ``nvidia-smi -q -x``'s output."""
    root = _parse_xml(_check_document(text, source), source)
    if root.tag != "nvidia_smi_log":
        raise GpuInventoryError("%s: the root element is <%s>; expected <nvidia_smi_log>"
                                % (source, str(root.tag)[:80]))
    driver_version, cuda_version = _text(root, "driver_version"), _text(root, "cuda_version")
    gpus = [_nvidia_gpu(gpu, index, driver_version, cuda_version) for index, gpu in enumerate(root.findall("gpu"))]
    return {"driver_version": driver_version, "cuda_version": cuda_version, "gpus": gpus}


def parse_compute_capabilities(text):
    """``{pci_bus_id: "9.0"}`` from ``--query-gpu=pci.bus_id,compute_cap --format=csv,noheader``;
    lines that are not a bus id and a ``major.minor`` are left out."""
    capabilities = {}
    for line in str(text or "").splitlines()[:4096]:
        bus_id, sep, capability = line.partition(",")
        bus_id, capability = bus_id.strip(), capability.strip()
        if sep and bus_id and _COMPUTE_CAPABILITY.match(capability):
            capabilities[bus_id.casefold()] = capability
    return capabilities


def add_compute_capabilities(gpus, capabilities):
    """Set each GPU's ``compute_capability`` from ``parse_compute_capabilities``, matched by bus id."""
    for gpu in gpus:
        bus_id = (gpu.get("pci_bus_id") or "").casefold()
        if bus_id in capabilities:
            gpu["compute_capability"] = capabilities[bus_id]
    return gpus


# --------------------------------------------------------------------------
# rocm-smi --showproductname --showmeminfo vram --json


def _field(fields, *names):
    folded = {str(key).casefold(): value for key, value in fields.items()}
    for name in names:
        value = folded.get(name.casefold())
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            text = " ".join(str(value).split())
            if text.casefold() not in NOT_AVAILABLE:
                return text
    return None


def _mib(byte_text):
    value = number(byte_text, integer=True)
    if value is None:
        return None
    return value // 2 ** 20 if value % 2 ** 20 == 0 else round(value / 2 ** 20, 2)


def parse_rocm_smi_json(text, source="rocm-smi --json"):
    """``{"driver_version", "gpus": [gpu...]}`` from rocm-smi's JSON (one object per ``cardN``)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str) or len(text) > MAX_DOCUMENT_CHARS:
        raise GpuInventoryError("%s: not text of at most %d characters; expected rocm-smi's JSON"
                                % (source, MAX_DOCUMENT_CHARS))
    try:
        document = json.loads(text, parse_constant=lambda _constant: None)
    except ValueError:
        raise GpuInventoryError("%s: not JSON; expected rocm-smi's JSON (one object per card)" % source) from None
    except RecursionError:
        raise GpuInventoryError("%s: nested too deeply to read; expected rocm-smi's JSON" % source) from None
    if not isinstance(document, dict):
        raise GpuInventoryError("%s: a JSON %s; expected an object with one entry per card"
                                % (source, type(document).__name__))
    system = document.get("system") if isinstance(document.get("system"), dict) else {}
    driver_version = _field(system, "Driver version")
    cards = sorted((key for key, value in document.items()
                    if isinstance(key, str) and re.match(r"^card[0-9]{1,4}$", key) and isinstance(value, dict)),
                   key=lambda key: int(key[4:]))
    gpus = []
    for index, card in enumerate(cards):
        fields = document[card]
        entry = empty_gpu()
        total, used = _mib(_field(fields, "VRAM Total Memory (B)")), _mib(_field(fields, "VRAM Total Used Memory (B)"))
        entry.update(index=index, vendor="AMD",
                     product_name=_field(fields, "Card Series", "Card series", "Marketing Name"),
                     product_brand=_field(fields, "Card Vendor"),
                     product_architecture=_field(fields, "GFX Version"),
                     serial=_field(fields, "Serial Number"), uuid=_field(fields, "Unique ID"),
                     pci_bus_id=_field(fields, "PCI Bus"),
                     driver_version=_field(fields, "Driver version") or driver_version)
        entry["memory"].update(total_mib=total, used_mib=used,
                               free_mib=total - used if total is not None and used is not None and used <= total
                               else None)
        gpus.append(entry)
    return {"driver_version": driver_version, "cuda_version": None, "gpus": gpus}
