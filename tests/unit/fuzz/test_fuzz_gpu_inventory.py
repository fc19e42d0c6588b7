"""Fuzz: what a GPU tool prints (nvidia-smi -q -x, rocm-smi --json) and the efficiency of a rate against
the peak table. Whatever the document: an inventory of typed GPUs (every key present, numbers finite
and non-negative) or one line; whatever the name, dtype or rate: an efficiency or a reason."""

import json
import math
import os
import sys

from hypothesis import given, settings, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_strategies import JSON  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils import gpu_peaks  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.run import gpu_inventory as gi  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
with open(os.path.join(FIXTURES, "nvidia-smi", "netdata-a100-sxm4-mig.xml"), encoding="utf-8") as _handle:
    A100_MIG = _handle.read()

TAGS = ["nvidia_smi_log", "gpu", "product_name", "fb_memory_usage", "total", "used", "free", "reserved", "clocks",
        "sm_clock", "max_clocks", "mem_clock", "gpu_power_readings", "power_readings", "current_power_limit",
        "power_limit", "mig_mode", "current_mig", "mig_devices", "mig_device", "ecc_mode", "current_ecc",
        "ecc_errors", "volatile", "aggregate", "single_bit", "total", "pci", "pci_gpu_link_info", "pcie_gen",
        "max_link_gen", "link_widths", "current_link_width", "persistence_mode", "driver_version", "x"]
VALUES = st.one_of(st.sampled_from(["143771 MiB", "700.00 W", "1980 MHz", "16x", "N/A", "Enabled", "Disabled",
                                    "-1 MiB", "1e400 MiB", "9" * 400 + " MiB", "0x10 MHz", " 5 ", "NaN W", "inf W",
                                    "[Not Supported]", "", "&amp;", "<![CDATA[12 MiB]]>"]),
                   st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="<&"),
                           max_size=12))


def element(children):
    return st.tuples(st.sampled_from(TAGS), st.lists(children, max_size=4)).map(
        lambda pair: "<%s>%s</%s>" % (pair[0], "".join(pair[1]), pair[0]))


XML_TREES = st.recursive(
    st.tuples(st.sampled_from(TAGS), VALUES).map(lambda pair: "<%s>%s</%s>" % (pair[0], pair[1], pair[0])),
    element, max_leaves=30)
DOCUMENTS = st.one_of(
    XML_TREES.map(lambda body: "<nvidia_smi_log>%s</nvidia_smi_log>" % body),
    XML_TREES,
    st.text(max_size=200),
    st.binary(max_size=200),
    # the real document cut, or with something inserted
    st.tuples(st.integers(0, len(A100_MIG)),
              st.sampled_from(["", "<", "&x;", "<!ENTITY a 'b'>", "]]>", "\x00", "<!DOCTYPE a [<!ELEMENT a ANY>]>",
                               "<gpu>", "</gpu>", "é", "\ud800"]), st.booleans()).map(
        lambda t: A100_MIG[:t[0]] + t[1] + ("" if t[2] else A100_MIG[t[0]:])),
    st.sampled_from(['<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd"><nvidia_smi_log/>',
                     '<!DOCTYPE nvidia_smi_log PUBLIC "x" "y"><nvidia_smi_log/>',
                     '<!DOCTYPE nvidia_smi_log SYSTEM "/dev/zero"><nvidia_smi_log>&a;</nvidia_smi_log>',
                     "<nvidia_smi_log>" + "<x>" * 5000 + "</x>" * 5000 + "</nvidia_smi_log>",
                     "<nvidia_smi_log><gpu>" + "<total>1 MiB</total>" * 2000 + "</gpu></nvidia_smi_log>"]),
)


def one_line(exc):
    assert str(exc) and "\n" not in str(exc) and len(str(exc)) < 400, repr(exc)


def check_numbers(value, path="gpu"):
    if isinstance(value, dict):
        for key, item in value.items():
            check_numbers(item, "%s.%s" % (path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_numbers(item, "%s[%d]" % (path, index))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        assert math.isfinite(value) and value >= 0, (path, value)
    else:
        assert value is None or isinstance(value, (str, bool)), (path, value)


def check_inventory(inventory):
    keys = set(gi.empty_gpu())
    for gpu in inventory["gpus"]:
        assert set(gpu) == keys
        assert set(gpu["memory"]) == {"total_mib", "used_mib", "free_mib", "reserved_mib"}
        check_numbers(gpu)
    json.dumps(inventory, allow_nan=False)


@given(document=DOCUMENTS)
def test_nvidia_smi_documents(document):
    try:
        inventory = gi.parse_nvidia_smi_xml(document)
    except gi.GpuInventoryError as exc:
        one_line(exc)
        return
    check_inventory(inventory)


ROCM = st.one_of(
    JSON.map(json.dumps),
    st.dictionaries(st.sampled_from(["card0", "card1", "card12", "cardX", "system", "card99999"]),
                    st.dictionaries(st.sampled_from(["Card Series", "Card series", "VRAM Total Memory (B)",
                                                     "VRAM Total Used Memory (B)", "PCI Bus", "GFX Version",
                                                     "Driver version"]),
                                    st.one_of(JSON, st.sampled_from(["206158430208", "-5", "1e30", "N/A", "9" * 5000])),
                                    max_size=5),
                    max_size=4).map(json.dumps),
    st.text(max_size=100),
    st.sampled_from(["[" * 50000 + "]" * 50000, '{"card0": NaN}', '{"card0": {"VRAM Total Memory (B)": Infinity}}']),
)


@given(text=ROCM)
def test_rocm_smi_documents(text):
    try:
        inventory = gi.parse_rocm_smi_json(text)
    except gi.GpuInventoryError as exc:
        one_line(exc)
        return
    check_inventory(inventory)


NAMES = st.one_of(st.none(), st.text(max_size=30), JSON,
                  st.sampled_from([name for spec in gpu_peaks.PRODUCTS.values() for name in spec["names"]]))
RATES = st.one_of(st.none(), st.booleans(), st.floats(), st.integers(), st.text(max_size=5))
DTYPE_SETTINGS = st.one_of(st.sampled_from(sorted(gpu_peaks.DTYPE_OF_SETTING) + list(gpu_peaks.DTYPES)),
                           st.text(max_size=8), st.none())


@settings(max_examples=300)
@given(rate=RATES, name=NAMES, dtype=DTYPE_SETTINGS)
def test_efficiency_of_anything(rate, name, dtype):
    result = gpu_peaks.efficiency(rate, name, dtype)
    assert set(result) == {"value", "peak_tflops", "product", "dtype", "source", "reason"}
    if result["value"] is None:
        one_line(result["reason"])
    else:
        assert math.isfinite(result["value"]) and result["value"] >= 0
        # a value carries a reason only when its peak is one the table marks unconfirmed
        if result["reason"] is not None:
            one_line(result["reason"])
            assert "is unconfirmed" in result["reason"]
        text = gpu_peaks.percent_of_peak(result["value"])
        assert text.endswith("% of peak")
