import json
import os
import sys

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess as pp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml")


@pytest.fixture
def config():
    return cfg.resolve_config(SHIPPED, presets="cpu_smoke").config


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=4, failed=(3,))
    return root


def test_visualize_writes_payloads_kpis_reports_in_a_new_plots_dir(tree, config):
    summary = pp.visualize(str(tree), config, ["cpu_smoke"])
    plots = tree / "002__plots"
    assert summary["plots_dir"] == str(plots)
    assert (summary["tests"], summary["failed_tests"]) == (4, ["001__matbenchmarking/003__matmul_float64_512"])
    for name in ("parse.log", "kpis.json", "kpis.openmetrics", "kpi_records.json", "summary.json", "config.yaml",
                 "presets_applied", "reports_index.html", "error_report.html", "matrix_overview.html",
                 "indicator_report.html", "plotly.min.js", "skip"):
        assert (plots / name).exists(), name
    test_dir = plots / "tests" / "001__matbenchmarking" / "000__matmul_float32_64"
    payload = json.loads((test_dir / "payload.json").read_text())
    assert set(payload) == {"metadata", "results", "labels", "kpis"}
    assert payload["labels"]["indicator"] == "matmul" and payload["labels"]["cpu_model"] == "Test CPU"
    assert payload["labels"]["presets"] == "cpu_smoke"
    assert payload["kpis"]["rate"]["value"] == 100.0
    assert payload["kpis"]["time_median"]["formatted"].endswith(" ms")
    assert "labels" not in payload["kpis"]["rate"]  # labels once per payload, not per KPI
    families = {f.name: f for f in text_string_to_metric_families((test_dir / "kpis.openmetrics").read_text())}
    assert families["perfscale_rate_gflop_per_s"].samples[0].labels["dtype"] == "float32"
    records = json.loads((plots / "kpi_records.json").read_text())
    assert len(records) == 3 * 5  # three successful tests, five KPIs each
    assert records[0]["indicator"] == "matmul" and records[0]["kpi_name"] == "rate" and records[0]["test_uuid"]
    log = (plots / "parse.log").read_text()
    assert "001__matbenchmarking/003__matmul_float64_512: FAILED (exit code 3) [parsed]" in log


def test_second_run_uses_the_cache_and_leaves_earlier_plots_alone(tree, config):
    first = pp.visualize(str(tree), config)
    before = {name: os.path.getmtime(os.path.join(first["plots_dir"], name)) for name in os.listdir(first["plots_dir"])}
    second = pp.visualize(str(tree), config)
    assert os.path.basename(second["plots_dir"]) == "003__plots"
    assert second["from_cache"] == 4 and second["tests"] == 4
    after = {name: os.path.getmtime(os.path.join(first["plots_dir"], name)) for name in os.listdir(first["plots_dir"])}
    assert before == after


def test_deleted_and_corrupted_files_degrade_with_warnings(tree, config):
    points = tree / "001__matbenchmarking"
    os.remove(points / "000__matmul_float32_64" / "output.json")
    (points / "001__matmul_float64_128" / "point.json").write_text("{bad")
    os.remove(tree / "000__host__capture_environment" / "environment.json")
    summary = pp.visualize(str(tree), config)
    assert summary["tests"] == 4 and summary["warnings"] > 0
    log = open(os.path.join(summary["plots_dir"], "parse.log")).read()
    assert "output.json: missing" in log
    assert "point.json: unreadable, ignored" in log
    assert "HOST_CAPTURE_ENVIRONMENT/environment.json: missing" in log
    error_report = open(os.path.join(summary["plots_dir"], "error_report.html")).read()
    assert "output.json: missing" in error_report


def test_strict_mode_fails_with_the_list_of_what_is_missing(tree, config):
    os.remove(tree / "000__host__capture_environment" / "environment.json")
    summary = pp.visualize(str(tree), config, strict=True)
    assert len(summary["strict_gaps"]) == 3  # the failed test is reported as a failure, not as a gap
    assert summary["strict_gaps"][0] == "001__matbenchmarking/000__matmul_float32_64: label collection_version"
    lenient = pp.visualize(str(tree), config, strict=False)
    assert lenient["strict_gaps"] == [] and lenient["kpi_records"] == 15


def test_bad_configuration_is_refused_before_writing(tree, config):
    config["postprocess"]["reports"] = ["error_report", "typo_report"]
    with pytest.raises(errors.ReportError, match=r"unknown report\(s\) typo_report"):
        pp.visualize(str(tree), config)
    config["postprocess"]["reports"] = ["error_report"]
    config["postprocess"]["workload"] = "no_such_workload"
    with pytest.raises(errors.WorkloadError, match="cannot be imported"):
        pp.visualize(str(tree), config)
    assert not [d for d in os.listdir(tree) if d.endswith("__plots")]
    with pytest.raises(errors.PostProcessError, match="not a directory"):
        pp.visualize(str(tree / "absent"), config)
