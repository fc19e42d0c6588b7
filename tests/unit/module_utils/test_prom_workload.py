"""The prom workload: Prometheus captures of a test as KPIs (max and mean per query and series),
in the plots directory, the OpenMetrics text, the records exported as kind prom, and the report."""

import json
import os
import sys

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import checks as config_checks
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg
from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess as pp
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import prom

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fixtures"))
import bounded_call  # noqa: E402  pylint: disable=wrong-import-position
import trees  # noqa: E402  pylint: disable=wrong-import-position

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml")


def capture(directory, queries, start=1000.0, end=1060.0):
    """A capture as cluster query_prometheus_db writes it: {name: (unit, [(labels, [(ts, text)])])}."""
    os.makedirs(directory)
    index = {"start": start, "end": end, "step_s": 15, "queries": {}}
    for name, (unit, series) in queries.items():
        index["queries"][name] = {"query": "q_" + name, "unit": unit, "help": "help of " + name,
                                  "higher_is_better": False, "file": name + ".json", "series": len(series)}
        with open(os.path.join(directory, name + ".json"), "w") as handle:
            json.dump({"query": "q_" + name, "data": {"resultType": "matrix", "result": [
                {"metric": labels, "values": [[ts, text] for ts, text in values]} for labels, values in series]}}, handle)
    with open(os.path.join(directory, "queries.json"), "w") as handle:
        json.dump(index, handle)


GPU = {"gpu_memory": ("MiB", [({"__name__": "DCGM_FI_DEV_FB_USED", "gpu": "0", "pod": "vllm"},
                               [(1000, "100"), (1015, "300"), (1030, "200"), (1045, "NaN")]),
                              ({"__name__": "DCGM_FI_DEV_FB_USED", "gpu": "1", "pod": "vllm"},
                               [(1000, "50"), (1015, "+Inf"), (1030, "70")])])}


def test_capture_files_are_read_by_the_bounded_reader_a_fifo_or_a_link_out_is_a_warning(tmp_path):
    # on main a FIFO blocked the post-processing for ever and a link out of the test was followed
    test = tmp_path / "test"
    capture(str(test / "001__cluster__query_prometheus_db"), GPU)
    capture(str(test / "002__cluster__query_prometheus_db"), {"cpu": ("cores", [({}, [(2000, "1.5")])])})
    os.remove(test / "001__cluster__query_prometheus_db" / "gpu_memory.json")
    os.mkfifo(test / "001__cluster__query_prometheus_db" / "gpu_memory.json")
    (tmp_path / "elsewhere.json").write_text(json.dumps({"data": {"result": [{"metric": {}, "values": [[1, "9"]]}]}}))
    os.remove(test / "002__cluster__query_prometheus_db" / "cpu.json")
    os.symlink(tmp_path / "elsewhere.json", test / "002__cluster__query_prometheus_db" / "cpu.json")

    def read():
        captured = prom.read_captures(str(test))
        return prom.kpis_of(captured), captured.warnings
    assert bounded_call.call(read) == ("returned", ([], [
        "001__cluster__query_prometheus_db/gpu_memory.json: a FIFO, not a regular file; expected a regular file",
        "002__cluster__query_prometheus_db/cpu.json: a link out of the results directory (to %s), not followed; "
        "expected a file inside %s" % (tmp_path / "elsewhere.json", test)]))


def test_max_and_mean_per_query_and_series_non_finite_samples_left_out(tmp_path):
    capture(str(tmp_path / "test" / "003__cluster__query_prometheus_db"), GPU)
    captured = prom.read_captures(str(tmp_path / "test"))
    assert captured.captures == ["003__cluster__query_prometheus_db"] and captured.warnings == []
    assert captured.window == (1000.0, 1060.0)
    kpis = {(k["kpi_name"], k["series"]): k for k in prom.kpis_of(captured)}
    assert {key: k["value"] for key, k in kpis.items()} == {
        ("gpu_memory_max", 'gpu="0",pod="vllm"'): 300.0, ("gpu_memory_mean", 'gpu="0",pod="vllm"'): 200.0,
        ("gpu_memory_max", 'gpu="1",pod="vllm"'): 70.0, ("gpu_memory_mean", 'gpu="1",pod="vllm"'): 60.0}
    peak = kpis[("gpu_memory_max", 'gpu="0",pod="vllm"')]
    assert (peak["unit"], peak["query"], peak["stat"]) == ("MiB", "gpu_memory", "max")
    assert peak["series_labels"] == {"gpu": "0", "pod": "vllm"}  # the metric name is the query's business
    assert peak["help"] == "Peak of gpu_memory while the test ran: help of gpu_memory"
    assert peak["ignored_for_regression"] is True and peak["higher_is_better"] is False


def test_a_later_capture_of_a_query_wins_and_problems_are_warnings(tmp_path):
    test = tmp_path / "test"
    capture(str(test / "001__cluster__query_prometheus_db"), GPU)
    capture(str(test / "004__cluster__query_prometheus_db"),
            {"gpu_memory": ("MiB", [({"gpu": "0"}, [(2000, "9")])]), "cpu": ("cores", [({}, [(2000, "1.5")])])})
    os.remove(test / "004__cluster__query_prometheus_db" / "cpu.json")
    broken = test / "005__cluster__query_prometheus_db"
    broken.mkdir()
    (broken / "queries.json").write_text("{not json")
    failed = test / "nested" / "006__cluster__query_prometheus_db"
    failed.mkdir(parents=True)
    (failed / "queries.json").write_text(json.dumps({"queries": {"vllm": {"query": "x", "error": "GET /api: 400 bad"}}}))
    (test / "_previous" / "007__cluster__query_prometheus_db").mkdir(parents=True)  # an earlier attempt: ignored
    captured = prom.read_captures(str(test))
    kpis = [(k["kpi_name"], k["value"]) for k in prom.kpis_of(captured)]
    assert kpis == [("gpu_memory_max", 9.0), ("gpu_memory_mean", 9.0)]
    text = "\n".join(captured.warnings)
    assert "004__cluster__query_prometheus_db: query gpu_memory captured again, the later capture is kept" in text
    assert "004__cluster__query_prometheus_db/cpu.json: missing" in text
    assert "005__cluster__query_prometheus_db/queries.json: unreadable, ignored" in text
    assert "nested/006__cluster__query_prometheus_db: query vllm failed when captured: GET /api: 400 bad" in text
    assert not prom.read_captures(str(tmp_path / "nothing"))


@pytest.fixture
def config():
    return cfg.resolve_config(SHIPPED, presets="cpu_smoke").config


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=3, failed=(2,))
    points = sorted((root / "001__matbenchmarking").iterdir())
    for index, point in enumerate(points):
        capture(str(point / "000__cluster__query_prometheus_db"),
                {"gpu_memory": ("MiB", [({"gpu": "0"}, [(1000, str(100 * (index + 1))), (1015, "10")])])})
    return root


def test_visualize_writes_prometheus_kpis_openmetrics_records_and_a_report(tree, config):
    summary = pp.visualize(str(tree), config, ["cpu_smoke"])
    plots = tree / "002__plots"
    assert (summary["prom_tests"], summary["prom_kpi_records"]) == (3, 4)  # the failed test is not exported
    assert str(plots / "prometheus_report.html") in summary["reports"]
    assert "prometheus_report.html" in (plots / "reports_index.html").read_text()
    records = json.loads((plots / "prom_kpi_records.json").read_text())
    first = [r for r in records if r["test_path"].endswith("000__matmul_float32_64")]
    assert {(r["kpi_name"], r["value"]) for r in first} == {("gpu_memory_max", 100.0), ("gpu_memory_mean", 55.0)}
    assert first[0]["prom_query"] == "gpu_memory" and first[0]["prom_series"] == 'gpu="0"'
    assert first[0]["indicator"] == "matmul" and first[0]["test_uuid"]  # the test's own labels, then the series
    per_test = json.loads((plots / "prom_kpis.json").read_text())
    assert [item["failed"] for item in per_test] == [False, False, True]
    families = {f.name: f for f in text_string_to_metric_families((plots / "prom_kpis.openmetrics").read_text())}
    samples = families["perfscale_gpu_memory_max_mib"].samples
    assert sorted(s.value for s in samples) == [100.0, 200.0] and samples[0].labels["gpu"] == "0"
    report = (plots / "prometheus_report.html").read_text()
    assert "gpu_memory over time" in report and "gpu_memory_max by size" in report
    assert (plots / "tests" / "001__matbenchmarking" / "000__matmul_float32_64" / "prom_kpis.json").exists()


def test_the_prometheus_kpis_travel_with_the_kpis_to_the_store(tree, config, tmp_path):
    summary = pp.visualize(str(tree), config)
    config["export"]["sqlite"]["path"] = str(tmp_path / "results.sqlite")
    bundle = export_lib.make_bundle("kpi", summary["kpi_records_file"], config, str(tree), summary["prom_label_fields"],
                                    [{"kind": "prom", "file": summary["prom_kpi_records_file"]}])
    outcome = export_lib.export_bundles([bundle], environ={})
    assert (outcome["kpi"], outcome["prom"], outcome["undelivered"]) == (summary["kpi_records"], 4, 0)
    assert ", 4 Prometheus KPI and 0 regression document(s)" in outcome["message"]


def test_no_prom_workload_no_prometheus_outputs(tree, config):
    config["postprocess"]["prom_workload"] = None
    summary = pp.visualize(str(tree), config)
    assert summary["prom_kpi_records"] == 0 and not os.path.exists(os.path.join(summary["plots_dir"], "prom_kpis.json"))


def test_a_prom_workload_that_cannot_be_loaded_is_one_line(tmp_path, config):
    with pytest.raises(errors.WorkloadError, match=r"^postprocess.prom_workload: workload 'nope' cannot be imported"):
        workload_lib.load_prom_workload("nope")
    partial = tmp_path / "partial.py"
    partial.write_text("CAPTURE_DIR_GLOB = '*__x'\n")
    with pytest.raises(errors.WorkloadError, match=r"prom_workload .*partial.py lacks read_captures, kpis_of"):
        workload_lib.load_prom_workload(str(partial))
    config["postprocess"]["prom_workload"] = "nope"
    with pytest.raises(errors.ConfigError, match=r"^postprocess: postprocess.prom_workload: workload 'nope'"):
        config_checks.validate_config(config)
