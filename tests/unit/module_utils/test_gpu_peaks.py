"""Efficiency against the chip's dense datasheet peak: the table, the exact product match, the KPI that is
null with its reason where it does not apply (never missing data, never a guess), and the report's text."""

import json
import os
import sys
import types

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import gpu_peaks as gp
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import kpi as kpi_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess as pp
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg
from ansible_collections.perfscale.topsail.plugins.module_utils.run import gpu_inventory as gi
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import MissingData
from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import perf_indicators as pi
from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import perf_indicators_report as report

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
SHIPPED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml")


@pytest.mark.parametrize("name,dtype,tflops,halved", [
    ("NVIDIA H200", "bfloat16", 989.5, True),               # 1,979 with sparsity
    ("NVIDIA H200", "float32", 67, False),
    ("NVIDIA H200", "float64", 67, False),                  # FP64 Tensor Core
    ("NVIDIA H200 NVL", "float16", 835.5, True),
    ("NVIDIA H100 80GB HBM3", "bfloat16", 989.5, True),     # the SXM board
    ("NVIDIA H100 PCIe", "bfloat16", 756.5, True),
    ("NVIDIA H100 PCIe", "fp8", 1513, True),
    ("NVIDIA A100-SXM4-80GB", "bfloat16", 312, False),      # the datasheet gives the dense figure
    ("NVIDIA A100-SXM4-80GB", "tf32", 156, False),
    ("NVIDIA L40S", "float16", 362.05, False),
    ("NVIDIA L4", "bfloat16", 121, True),
    ("NVIDIA B200", "bfloat16", 2250, True),
    ("NVIDIA B200", "fp8", 4500, True),
    ("AMD Instinct MI300X", "bfloat16", 1307.4, False),
    ("AMD Instinct MI300X", "float64", 163.4, False),
])
def test_dense_peaks_per_product_and_dtype(name, dtype, tflops, halved):
    entry, reason = gp.peak(name, dtype)
    assert reason is None
    assert entry["tflops"] == pytest.approx(tflops) and entry["halved"] is halved
    assert entry["source"].startswith("https://") and entry["figure"]


def test_every_entry_of_the_table_has_a_source_and_a_positive_dense_peak():
    for product, spec in gp.PRODUCTS.items():
        assert spec["source"].startswith("https://"), product
        assert spec["names"] and spec["vendor"] in ("NVIDIA", "AMD"), product
        for dtype, entry in spec["peaks"].items():
            assert dtype in gp.DTYPES, (product, dtype)
            assert entry["tflops"] > 0 and ("sparsity" in entry["figure"]) >= entry["halved"], (product, dtype)


def test_every_figure_has_its_source_url_its_printed_words_and_is_confirmed_or_says_why_not():
    """Each figure as its source prints it: the URL, the number in the source's words, the dense value
    derived from it (halved when "with sparsity"), and either confirmed or an explicit unconfirmed reason."""
    for product, spec in gp.PRODUCTS.items():
        assert spec["checked"].strip(), product                       # how the figures were checked
        assert set(spec["figures"]) <= set(gp.FIGURE_KEYS) and spec["figures"], product
        for key, entry in spec["figures"].items():
            where = (product, key)
            assert entry["source"].startswith("https://") and " " not in entry["source"], where
            assert entry["confirmed"] in (True, False), where
            assert entry["confirmed"] == (entry["unconfirmed"] is None), where
            if not entry["confirmed"]:
                assert entry["unconfirmed"].strip(), where
            printed = entry["printed"]
            assert format(printed, ",g") in entry["figure"] or format(printed, "g") in entry["figure"], where
            assert entry["unit"] in gp.UNITS and entry["unit"] in entry["figure"], where
            dense = entry["tops" if key == "int8" else "tflops"]
            assert dense == pytest.approx(printed * gp.UNITS[entry["unit"]] / (2 if entry["halved"] else 1)), where
            assert ("sparsity" in entry["figure"].lower()) >= entry["halved"], where
        # the peak a product is compared with is one of its figures: FP64 on the Tensor Core / Matrix unit
        for dtype, entry in spec["peaks"].items():
            expected = (spec["figures"].get("fp64_tensor") or spec["figures"]["fp64"]) if dtype == "fp64" \
                else spec["figures"][dtype]
            assert entry is expected, (product, dtype)


@pytest.mark.parametrize("product,key,printed,unit,dense", [
    ("H100 SXM", "fp64", 34, "teraFLOPS", 34), ("H100 SXM", "int8", 3958, "TOPS", 1979),
    ("H100 PCIe", "fp8", 3026, "teraFLOPS", 1513), ("H100 NVL", "tf32", 835, "teraFLOPS", 417.5),
    ("H200 NVL", "fp64_tensor", 60, "teraFLOPS", 60), ("H200 SXM", "int8", 3958, "TFLOPS", 1979),
    ("A100 PCIe 40GB", "fp64", 9.7, "TFLOPS", 9.7), ("A100 SXM 80GB", "int8", 624, "TOPS", 624),
    ("L40S", "fp8", 733, "teraFLOPS", 733), ("L4", "fp8", 485, "teraFLOPs", 242.5),
    ("B200", "tf32", 2.2, "PFLOPS", 1100), ("B200", "int8", 9, "POPS", 4500),
    ("MI300X", "fp64", 81.7, "TFLOPS", 81.7), ("MI300X", "tf32", 653.7, "TFLOPS", 653.7),
])
def test_figures_as_their_sources_print_them(product, key, printed, unit, dense):
    entry = gp.PRODUCTS[product]["figures"][key]
    assert (entry["printed"], entry["unit"]) == (printed, unit)
    assert entry["tops" if key == "int8" else "tflops"] == pytest.approx(dense)


def test_an_efficiency_built_on_an_unconfirmed_figure_says_so_in_its_reason(monkeypatch):
    peaks = dict(gp.PRODUCTS["L4"]["peaks"])
    peaks["bf16"] = dict(peaks["bf16"], confirmed=False, unconfirmed="not found in any copy of the L4 datasheet")
    monkeypatch.setitem(gp.PRODUCTS, "L4", dict(gp.PRODUCTS["L4"], peaks=peaks))
    result = gp.efficiency(60_500.0, "NVIDIA L4", "bfloat16")
    assert result["value"] == pytest.approx(0.5)
    assert result["reason"] == ("the L4 bf16 peak (121 TFLOP/s) is unconfirmed: not found in any copy of the "
                                "L4 datasheet")
    assert gp.efficiency(60_500.0, "NVIDIA L4", "float16")["reason"] is None      # a confirmed figure


@pytest.mark.parametrize("name,product", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("  nvidia   h200 ", "H200 SXM"),
    ("NVIDIA H200 NVL", "H200 NVL"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"),
    ("AMD Instinct MI300X", "MI300X"),
    ("NVIDIA H100", None),                               # which board? not a guess
    ("NVIDIA A100-SXM4-40GB MIG 3g.20gb", None),         # a MIG instance is not the chip
    ("NVIDIA H200X", None),
    ("", None),
    (None, None),
    (["NVIDIA H200"], None),
])
def test_a_product_is_matched_by_its_exact_name_only(name, product):
    assert gp.match_product(name) == product


def test_efficiency_of_the_h200_bf16_run():
    result = gp.efficiency(748_000.0, "NVIDIA H200", "bfloat16")   # 748 TFLOP/s measured at 8192
    assert result["value"] == pytest.approx(748 / 989.5)
    assert (result["product"], result["dtype"], result["peak_tflops"], result["reason"]) == (
        "H200 SXM", "bf16", 989.5, None)
    assert gp.percent_of_peak(result["value"]) == "76 % of peak"
    assert gp.percent_of_peak(0.0123) == "1.2 % of peak"
    assert gp.percent_of_peak(None) is None and gp.percent_of_peak(float("nan")) is None


@pytest.mark.parametrize("rate,name,dtype,reason", [
    (1e5, "NVIDIA GeForce RTX 4090", "float16",
     "GPU product 'NVIDIA GeForce RTX 4090' is not in the peak table (plugins/module_utils/gpu_peaks.py)"),
    (1e5, None, "float16", "GPU product unknown (no product name recorded)"),
    (1e5, "NVIDIA L40S", "float64", "the L40S datasheet gives no fp64 figure"),
    (1e5, "NVIDIA A100-SXM4-80GB", "fp8", "the A100 SXM 80GB datasheet gives no fp8 figure"),
    (1e5, "NVIDIA H200", "int8", "no datasheet peak for dtype 'int8'; known: fp64, fp32, tf32, bf16, fp16, fp8"),
    (None, "NVIDIA H200", "bfloat16", "no measured rate (None)"),
    (float("nan"), "NVIDIA H200", "bfloat16", "no measured rate (nan)"),
    (True, "NVIDIA H200", "bfloat16", "no measured rate (True)"),
])
def test_no_efficiency_without_a_known_peak_or_a_rate_and_the_reason_says_why(rate, name, dtype, reason):
    result = gp.efficiency(rate, name, dtype)
    assert result["value"] is None and result["reason"] == reason


# --------------------------------------------------------------------------
# the workload's KPI


def entry(device="cuda", dtype="bfloat16", rate=748_000.0, device_name="NVIDIA H200", gpus=None):
    host_gpus = gpus if gpus is not None else [{"product_name": "NVIDIA H200", "mig": {"enabled": False}}]
    results = {"indicator": "matmul", "parameters": {"device": device, "dtype": dtype, "size": 8192},
               "result": {"rate": rate, "rate_best": rate, "time_median": 0.00147, "time_stdev": 1e-5, "time_cv": 0.01},
               "duration_s": 12.0, "measurement": {"device_name": device_name},
               "host": {"gpu_model": None, "gpu_models": sorted({pi.gpu_product(g) for g in host_gpus
                                                                 if pi.gpu_product(g)}),
                        "gpu_mig_enabled": any((g.get("mig") or {}).get("enabled") for g in host_gpus)}}
    return types.SimpleNamespace(results=results, settings={"indicator": "matmul"})


def payload_of(test_entry):
    return {"results": pi.payload_results(test_entry)}


def test_the_efficiency_kpi_of_a_gpu_point_is_formatted_as_percent_of_peak():
    values, warnings = kpi_lib.compute_kpis(kpi_lib.collect_kpis(pi.KPIS), payload_of(entry()), strict=True)
    assert values["efficiency"]["value"] == pytest.approx(748 / 989.5)
    assert values["efficiency"]["formatted"] == "76 % of peak"
    assert values["efficiency"]["view_of"] == "rate" and values["efficiency"]["null_reason"] is None
    assert warnings == []
    results = pi.payload_results(entry())
    assert (results["peak_tflops"], results["peak_product"]) == (989.5, "H200 SXM")
    assert results["peak_source"] == gp.H200_URL


@pytest.mark.parametrize("test_entry,reason", [
    (entry(device="cpu", device_name="AMD EPYC"),
     "not a GPU point (device cpu): no datasheet peak to compare with"),
    (entry(device_name="NVIDIA GeForce RTX 4090"),
     "GPU product 'NVIDIA GeForce RTX 4090' is not in the peak table (plugins/module_utils/gpu_peaks.py)"),
    (entry(gpus=[{"product_name": "NVIDIA A100-SXM4-40GB", "mig": {"enabled": True}}],
           device_name="NVIDIA A100-SXM4-40GB MIG 3g.20gb"),
     "MIG is enabled on the host's GPU: a process sees one instance, not the whole chip the datasheet peak is for"),
])
def test_the_efficiency_kpi_is_null_with_its_reason_never_missing_in_strict_mode(test_entry, reason):
    values, warnings = kpi_lib.compute_kpis(kpi_lib.collect_kpis(pi.KPIS), payload_of(test_entry), strict=True)
    assert values["efficiency"]["value"] is None and values["efficiency"]["null_reason"] == reason
    assert warnings == []
    records = kpi_lib.flat_records({"indicator": "matmul"}, values)
    assert "efficiency" not in [record["kpi_name"] for record in records] and len(records) == len(values) - 1


def test_the_product_comes_from_torch_then_from_a_host_of_one_product_including_older_inventories():
    older = entry(device_name=None, gpus=[{"name": "NVIDIA H100 80GB HBM3", "memory_total": "81559"}] * 2)
    assert pi.efficiency(older)["product"] == "H100 SXM"
    mixed = entry(device_name=None, gpus=[{"product_name": "NVIDIA H200"}, {"product_name": "NVIDIA L4"}])
    assert pi.efficiency(mixed)["reason"] == "GPU product unknown (no product name recorded)"


def test_a_null_kpi_that_may_not_be_null_is_still_missing_in_strict_mode():
    @kpi_lib.HigherBetter
    @kpi_lib.KPIMetadata(help="h", unit="u")
    def plain(payload):
        return payload["results"]["x"]

    @kpi_lib.HigherBetter
    @kpi_lib.KPIMetadata(help="h", unit="u")
    @kpi_lib.MayBeNull(lambda payload: payload["results"]["why"])
    def optional(payload):
        return payload["results"]["x"]

    @kpi_lib.HigherBetter
    @kpi_lib.KPIMetadata(help="h", unit="u")
    @kpi_lib.MayBeNull(lambda payload: payload["results"]["why"])
    def broken(payload):
        return payload["results"]["absent"]

    with pytest.raises(MissingData) as error:
        kpi_lib.compute_kpis(kpi_lib.collect_kpis([plain, optional]), {"results": {"x": None, "why": "n/a"}},
                             strict=True)
    assert error.value.missing == ["kpi plain"]
    values, _warnings = kpi_lib.compute_kpis(kpi_lib.collect_kpis([optional]), {"results": {"x": None}})
    assert values["optional"]["null_reason"] == "not applicable"     # the reason itself could not be read
    with pytest.raises(MissingData):       # a KPI function that fails is missing data, MayBeNull or not
        kpi_lib.compute_kpis(kpi_lib.collect_kpis([broken]), {"results": {"why": "n/a"}}, strict=True)
    values, _warnings = kpi_lib.compute_kpis(kpi_lib.collect_kpis([optional]), {"results": {"x": float("inf")}})
    assert values["optional"]["null_reason"] is None                 # not finite: missing, not "not applicable"


def test_the_report_says_percent_of_peak_beside_the_rate_or_why_not():
    pd = pytest.importorskip("pandas")
    entries = [types.SimpleNamespace(relative="m/000", test_dir="/t/m/000"),
               types.SimpleNamespace(relative="m/001", test_dir="/t/m/001")]
    payloads = {"/t/m/000": {"results": {"efficiency_reason": None}},
                "/t/m/001": {"results": {"efficiency_reason": "not a GPU point (device cpu): no datasheet peak"}}}
    ctx = types.SimpleNamespace(entries=entries, payloads=payloads)
    data = pd.DataFrame([{"test_path": "m/000", "efficiency": 0.7912}, {"test_path": "m/001", "efficiency": None}])
    assert report.peak_texts(ctx, data) == ["79 % of peak", "not a GPU point (device cpu): no datasheet peak"]


def test_a_gpu_run_through_post_processing_reports_its_efficiency(tmp_path):
    """A tree as an H200 run leaves it: the typed inventory, a bf16 CUDA point and a CPU point."""
    root = tmp_path / "run"
    gpu_point, _cpu_point = trees.make_tree(str(root), points=2)
    environment = json.loads((root / "000__host__capture_environment" / "environment.json").read_text())
    with open(os.path.join(FIXTURES, "nvidia-smi", "netdata-tesla-p100.xml"), encoding="utf-8") as handle:
        gpu = gi.parse_nvidia_smi_xml(handle.read())["gpus"][0]
    gpu["product_name"] = "NVIDIA H200"
    environment["gpus"] = [gpu]
    (root / "000__host__capture_environment" / "environment.json").write_text(json.dumps(environment))
    with open(os.path.join(gpu_point, "output.json"), encoding="utf-8") as handle:
        document = json.load(handle)
    document["framework"] = "torch"
    document["@parameters"].update(backend="torch", device="cuda", dtype="bfloat16", size=8192)
    document["@result"].update(rate=748_000.0, timed_batches=50, reps_per_batch=8, timed_reps=400)
    document["environment"].update(device_name="NVIDIA H200", torch="2.11.0", compute_capability="9.0")
    for name in ("output.json", "stdout.log"):
        with open(os.path.join(gpu_point, name), "w", encoding="utf-8") as handle:
            handle.write(json.dumps(document))

    config = cfg.resolve_config(SHIPPED, presets="cpu_smoke").config
    summary = pp.visualize(str(root), config, ["cpu_smoke"], strict=True)
    assert summary["strict_gaps"] == []
    plots = root / "002__plots"
    gpu_payload = json.loads((plots / "tests" / "001__matbenchmarking" / os.path.basename(gpu_point)
                              / "payload.json").read_text())
    assert gpu_payload["kpis"]["efficiency"]["formatted"] == "76 % of peak"
    assert gpu_payload["labels"]["gpu_model"] == "NVIDIA H200"
    assert gpu_payload["results"]["reps_per_batch"] == 8
    records = json.loads((plots / "kpi_records.json").read_text())
    assert [r["kpi_name"] for r in records].count("efficiency") == 1     # the CPU point has none
    html = (plots / "indicator_report.html").read_text()
    assert "76 % of peak" in html and "not a GPU point (device cpu)" in html and "TFLOP/s" in html
