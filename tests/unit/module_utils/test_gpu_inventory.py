"""The typed GPU inventory: real nvidia-smi -q -x documents (an H200 captured on driver 580, an A100
with MIG and a Tesla P100 from netdata's fixtures), rocm-smi's JSON, and documents that cannot be read."""

import os
import subprocess

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.run import gpu_inventory as gi
from ansible_collections.perfscale.topsail.plugins.module_utils.run import host_environment as he

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
H200_XML = "/work/shared/captured/nvidia-smi/h200-driver-580.159.04.q-x.xml"
A100_MIG_XML = os.path.join(FIXTURES, "nvidia-smi", "netdata-a100-sxm4-mig.xml")
P100_XML = os.path.join(FIXTURES, "nvidia-smi", "netdata-tesla-p100.xml")
MI300X_JSON = os.path.join(FIXTURES, "rocm-smi", "mi300x-two-cards.json")


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


@pytest.fixture(name="h200_xml")
def fixture_h200_xml():
    if not os.path.exists(H200_XML):
        pytest.skip("the captured H200 document is not on this machine (%s)" % H200_XML)
    return read(H200_XML)


def test_the_h200_captured_on_driver_580_is_typed_with_units(h200_xml):
    inventory = gi.parse_nvidia_smi_xml(h200_xml)
    assert inventory["driver_version"] == "580.159.04" and inventory["cuda_version"] == "13.0"
    assert inventory["gpus"] == [{
        "index": 0, "vendor": "NVIDIA", "product_name": "NVIDIA H200", "product_brand": "NVIDIA",
        "product_architecture": "Hopper", "serial": "0000000000000", "uuid": "GPU-00000000-0000-0000-0000-000000000000",
        "pci_bus_id": "00000000:00:06.0", "compute_capability": None, "driver_version": "580.159.04",
        "cuda_version": "13.0",
        "memory": {"total_mib": 143771, "used_mib": 0, "free_mib": 143156, "reserved_mib": 616},
        "clocks_mhz": {"sm": 345, "sm_max": 1980, "memory": 3201, "memory_max": 3201},
        "power": {"limit_w": 700.0, "default_limit_w": 700.0, "max_limit_w": 700.0},
        "persistence_mode": True, "compute_mode": "Default",
        "mig": {"enabled": False, "pending_enabled": False, "devices": []},
        "ecc": {"enabled": True, "pending_enabled": True, "errors": {
            "volatile": {"sram_correctable": 0, "sram_uncorrectable_parity": 0, "sram_uncorrectable_secded": 0,
                         "dram_correctable": 0, "dram_uncorrectable": 0},
            "aggregate": {"sram_correctable": 0, "sram_uncorrectable_parity": 0, "sram_uncorrectable_secded": 0,
                          "dram_correctable": 0, "dram_uncorrectable": 0}}},
        "pcie": {"generation_current": 5, "generation_max": 5, "width_current": 16, "width_max": 16},
    }]


def test_an_a100_with_mig_lists_its_instances_and_the_older_power_elements():
    gpu, = gi.parse_nvidia_smi_xml(read(A100_MIG_XML))["gpus"]
    assert gpu["product_name"] == "NVIDIA A100-SXM4-40GB" and gpu["product_architecture"] == "Ampere"
    assert gpu["mig"] == {"enabled": True, "pending_enabled": True, "devices": [
        {"index": 0, "gpu_instance_id": 1, "compute_instance_id": 0, "multiprocessor_count": 42,
         "memory_total_mib": 19968, "memory_used_mib": 19},
        {"index": 1, "gpu_instance_id": 2, "compute_instance_id": 0, "multiprocessor_count": 42,
         "memory_total_mib": 19968, "memory_used_mib": 19}]}
    # driver 510: power_readings/power_limit and enforced_power_limit, not gpu_power_readings
    assert gpu["power"] == {"limit_w": 400.0, "default_limit_w": 400.0, "max_limit_w": 400.0}
    # volatile counters are N/A with MIG on: unknown, not zero
    assert gpu["ecc"]["errors"]["volatile"] == {"sram_correctable": None, "sram_uncorrectable": None,
                                                "dram_correctable": None, "dram_uncorrectable": None}
    assert gpu["ecc"]["errors"]["aggregate"]["dram_uncorrectable"] == 0
    assert gpu["memory"] == {"total_mib": 40960, "used_mib": 38, "free_mib": 40315, "reserved_mib": 605}
    assert gpu["clocks_mhz"] == {"sm": 1410, "sm_max": 1410, "memory": 1215, "memory_max": 1215}
    assert gpu["persistence_mode"] is False and gpu["pcie"]["generation_max"] == 4


def test_a_pascal_p100_keeps_its_single_and_double_bit_ecc_counters():
    gpu, = gi.parse_nvidia_smi_xml(read(P100_XML))["gpus"]
    assert gpu["product_name"] == "Tesla P100-PCIE-16GB" and gpu["product_brand"] == "Tesla"
    assert gpu["mig"] == {"enabled": None, "pending_enabled": None, "devices": []}   # N/A: no MIG on Pascal
    aggregate = gpu["ecc"]["errors"]["aggregate"]
    assert aggregate["single_bit_device_memory"] == 3 and aggregate["single_bit_total"] == 3
    assert aggregate["double_bit_total"] == 0 and aggregate["single_bit_l1_cache"] is None
    assert gpu["power"]["limit_w"] == 250.0 and gpu["clocks_mhz"]["sm_max"] == 1328
    assert gpu["pcie"] == {"generation_current": 3, "generation_max": 3, "width_current": 16, "width_max": 16}


def test_missing_fields_and_unexpected_units_are_null_never_a_failure():
    document = ("<nvidia_smi_log><driver_version>N/A</driver_version><gpu id='0000:01:00.0'>"
                "<fb_memory_usage><total>140 GiB</total><used>-3 MiB</used><free>1e9 MiB</free></fb_memory_usage>"
                "<clocks><sm_clock>[Unknown Error]</sm_clock></clocks><persistence_mode>Maybe</persistence_mode>"
                "<ecc_errors><volatile><dram_correctable>No</dram_correctable></volatile></ecc_errors>"
                "</gpu></nvidia_smi_log>")
    inventory = gi.parse_nvidia_smi_xml(document)
    expected = gi.empty_gpu()
    expected.update(index=0, vendor="NVIDIA", pci_bus_id="0000:01:00.0")
    assert inventory == {"driver_version": None, "cuda_version": None, "gpus": [expected]}
    assert gi.parse_nvidia_smi_xml("<nvidia_smi_log/>") == {"driver_version": None, "cuda_version": None, "gpus": []}


@pytest.mark.parametrize("document,message", [
    ("<nvidia_smi_log><gpu></nvidia_smi_log>",
     "nvidia-smi -q -x: not well-formed XML (line 1, column 23); expected the XML nvidia-smi -q -x writes"),
    ("", "nvidia-smi -q -x: not well-formed XML (line 1, column 0); expected the XML nvidia-smi -q -x writes"),
    ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>'
     "<nvidia_smi_log>&lol2;</nvidia_smi_log>",
     "nvidia-smi -q -x: declares an ENTITY; expected the XML nvidia-smi -q -x writes, without entity declarations"),
    ('<!DOCTYPE nvidia_smi_log [<!ELEMENT nvidia_smi_log ANY>]><nvidia_smi_log/>',
     'nvidia-smi -q -x: a DOCTYPE other than <!DOCTYPE name SYSTEM "file.dtd">; expected the XML nvidia-smi -q -x '
     "writes, without an internal subset"),
    ('<!DOCTYPE a SYSTEM "a.dtd"><!DOCTYPE b SYSTEM "b.dtd"><nvidia_smi_log/>',
     'nvidia-smi -q -x: a DOCTYPE other than <!DOCTYPE name SYSTEM "file.dtd">; expected the XML nvidia-smi -q -x '
     "writes, without an internal subset"),
    ("<html><body/></html>", "nvidia-smi -q -x: the root element is <html>; expected <nvidia_smi_log>"),
    (b"<nvidia_smi_log>\xff</nvidia_smi_log>",
     "nvidia-smi -q -x: not UTF-8 text; expected the XML nvidia-smi -q -x writes"),
    (None, "nvidia-smi -q -x: NoneType, not text; expected the XML nvidia-smi -q -x writes"),
    ("\ud800<nvidia_smi_log/>",
     "nvidia-smi -q -x: not UTF-8 text (a lone surrogate); expected the XML nvidia-smi -q -x writes"),
    ("<nvidia_smi_log>%s</nvidia_smi_log>" % ("x" * gi.MAX_DOCUMENT_CHARS),
     "nvidia-smi -q -x: %d characters; expected at most %d" % (gi.MAX_DOCUMENT_CHARS + 33, gi.MAX_DOCUMENT_CHARS)),
])
def test_a_document_that_cannot_be_read_is_one_line(document, message):
    with pytest.raises(gi.GpuInventoryError) as error:
        gi.parse_nvidia_smi_xml(document)
    assert str(error.value) == message


def test_the_doctype_nvidia_smi_writes_is_accepted_and_its_dtd_never_loaded(tmp_path):
    dtd = tmp_path / "nvsmi.dtd"
    dtd.write_text('<!ENTITY secret "from the DTD">')
    document = ('<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "%s">\n'
                "<nvidia_smi_log><driver_version>1.0</driver_version></nvidia_smi_log>" % dtd)
    assert gi.parse_nvidia_smi_xml(document)["driver_version"] == "1.0"
    with pytest.raises(gi.GpuInventoryError, match="not well-formed XML"):
        gi.parse_nvidia_smi_xml(document.replace("1.0</driver", "&secret;</driver"))


def test_numbers_with_units():
    assert gi.number("143771 MiB", "MiB") == 143771
    assert gi.number("700.00 W", "W") == 700.0
    assert gi.number("16x", "x", integer=True) == 16
    assert gi.number("2.5x", "x", integer=True) is None
    assert gi.number("143771", "MiB") is None and gi.number("N/A MiB", "MiB") is None
    assert gi.number("9" * 400, None) is None and gi.number("9" * 400 + ".0", None) is None
    assert gi.number(None, "W") is None


def test_compute_capabilities_are_matched_by_bus_id(h200_xml):
    gpus = gi.parse_nvidia_smi_xml(h200_xml)["gpus"]
    capabilities = gi.parse_compute_capabilities("00000000:00:06.0, 9.0\n00000000:00:07.0, [N/A]\nnonsense\n")
    assert capabilities == {"00000000:00:06.0": "9.0"}
    assert gi.add_compute_capabilities(gpus, capabilities)[0]["compute_capability"] == "9.0"


def test_rocm_smi_json_gives_the_same_typed_keys():
    inventory = gi.parse_rocm_smi_json(read(MI300X_JSON))
    first, second = inventory["gpus"]
    assert set(first) == set(gi.empty_gpu())
    assert first["vendor"] == "AMD" and first["product_name"] == "AMD Instinct MI300X"
    assert first["product_architecture"] == "gfx942"
    assert first["memory"] == {"total_mib": 196608, "used_mib": 283.79, "free_mib": 196324.21, "reserved_mib": None}
    assert second["product_name"] == "AMD Instinct MI300X" and second["index"] == 1
    assert second["memory"]["used_mib"] is None and second["memory"]["free_mib"] is None


@pytest.mark.parametrize("text,message", [
    ("not json", "rocm-smi --json: not JSON; expected rocm-smi's JSON (one object per card)"),
    ("[1, 2]", "rocm-smi --json: a JSON list; expected an object with one entry per card"),
    ("[" * 100000 + "]" * 100000, None),
])
def test_rocm_smi_output_that_cannot_be_read_is_one_line(text, message):
    with pytest.raises(gi.GpuInventoryError) as error:
        gi.parse_rocm_smi_json(text)
    assert "\n" not in str(error.value)
    if message:
        assert str(error.value) == message


# --------------------------------------------------------------------------
# the capture


def tools(answers):
    """A fake subprocess.run answering each command by its first argument after the binary."""
    calls = []

    def run(command, **kwargs):
        calls.append(command)
        answer = answers[command[1]]
        if isinstance(answer, Exception):
            raise answer
        return subprocess.CompletedProcess(command, answer[0], answer[1], answer[2])

    return run, calls


def test_capture_reads_nvidia_smi_xml_and_the_compute_capability(h200_xml):
    run, calls = tools({"-q": (0, h200_xml, ""),
                        "--query-gpu=pci.bus_id,compute_cap": (0, "00000000:00:06.0, 9.0\n", "")})
    gpus, warning = he.capture_gpus(5, which=lambda name: "/usr/bin/" + name if name == "nvidia-smi" else None, run=run)
    assert warning is None
    assert calls == [["/usr/bin/nvidia-smi", "-q", "-x"],
                     ["/usr/bin/nvidia-smi", "--query-gpu=pci.bus_id,compute_cap", "--format=csv,noheader"]]
    assert gpus[0]["memory"]["total_mib"] == 143771 and gpus[0]["compute_capability"] == "9.0"
    assert gpus[0]["product_name"] == "NVIDIA H200" and gpus[0]["driver_version"] == "580.159.04"


def test_an_old_driver_without_compute_cap_keeps_the_inventory_with_a_warning(h200_xml):
    run, _calls = tools({"-q": (0, h200_xml, ""),
                         "--query-gpu=pci.bus_id,compute_cap": (2, "Field \"compute_cap\" is not a valid field", "")})
    gpus, warning = he.capture_gpus(5, which=lambda name: "/x/" + name if name == "nvidia-smi" else None, run=run)
    assert gpus[0]["compute_capability"] is None and gpus[0]["product_name"] == "NVIDIA H200"
    assert warning == 'compute capability not read: nvidia-smi exited with 2: Field "compute_cap" is not a valid field'


def test_a_malformed_nvidia_smi_document_is_one_warning_and_no_inventory():
    run, _calls = tools({"-q": (0, "<nvidia_smi_log><gpu>", "")})
    gpus, warning = he.capture_gpus(5, which=lambda name: "/x/" + name if name == "nvidia-smi" else None, run=run)
    assert gpus is None
    assert warning == ("nvidia-smi -q -x: not well-formed XML (line 1, column 21); expected the XML nvidia-smi -q -x "
                       "writes")


def test_without_nvidia_smi_rocm_smi_is_asked():
    run, calls = tools({"--showproductname": (0, read(MI300X_JSON), "")})
    gpus, warning = he.capture_gpus(5, which=lambda name: "/opt/rocm/bin/rocm-smi" if name == "rocm-smi" else None,
                                    run=run)
    assert warning is None and calls == [["/opt/rocm/bin/rocm-smi", "--showproductname", "--showmeminfo", "vram",
                                          "--json"]]
    assert [gpu["product_name"] for gpu in gpus] == ["AMD Instinct MI300X", "AMD Instinct MI300X"]
