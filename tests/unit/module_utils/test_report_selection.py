"""Reports chosen by id (MatrixBenchmarking's plots.yaml ``- id: ... generate: [...]``) and a subset of
a tree post-processed with filters (its ``--filters``)."""

import json
import os
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import checks as config_checks
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml")


def config(**postprocess):
    resolved = config_lib.resolve_config(SHIPPED, presets="cpu_smoke").config
    resolved["export"]["enabled"] = False
    resolved["regression"]["enabled"] = False
    resolved["postprocess"].update(postprocess)
    return resolved


def test_filters_keep_only_the_matching_tests(tmp_path):
    root = str(tmp_path / "run")
    trees.make_tree(root, points=4)   # sizes 64, 128, 256, 512; float32, float64 alternately
    summary = postprocess.visualize(root, config(filters="dtype=float32"), ["cpu_smoke"])
    with open(os.path.join(summary["plots_dir"], "kpis.json"), encoding="utf-8") as handle:
        kept = [p["labels"]["test_path"].rsplit("/", 1)[-1] for p in json.load(handle)]
    assert kept == ["000__matmul_float32_64", "002__matmul_float32_256"]
    many = postprocess.compute_payloads(root, config(filters={"size": [64, 512], "dtype": ["float32", "float64"]}))
    kept = sorted(os.path.basename(e.test_dir) for e in many.entries)
    assert kept == ["000__matmul_float32_64", "003__matmul_float64_512"]
    assert "postprocess.filters dtype=float32|float64,size=64|512: 2 of 4 test(s) kept" in many.tree_warnings
    with pytest.raises(errors.PostProcessError, match="postprocess.filters size=7: no test of .* matches"):
        postprocess.compute_payloads(root, config(filters={"size": 7}))
    with pytest.raises(errors.ConfigError, match="filters 'size': expected key=value"):
        config_schema.read_section(config(filters="size"), "postprocess")


def test_a_report_set_by_id_draws_its_reports_only(tmp_path):
    root = str(tmp_path / "run")
    trees.make_tree(root, points=2)
    sets = [{"id": "errors_only", "generate": ["error_report"]},
            {"id": "overview", "generate": ["matrix_overview", "error_report"]}]
    summary = postprocess.visualize(root, config(report_sets=sets, report_set="overview"), ["cpu_smoke"])
    assert [os.path.basename(path) for path in summary["reports"]] == ["matrix_overview.html", "error_report.html"]
    with pytest.raises(errors.ConfigError, match=r"report_set 'nope': expected one of the report_sets ids "
                                                 r"\(errors_only, overview\)"):
        config_schema.read_section(config(report_sets=sets, report_set="nope"), "postprocess")
    bad = [{"id": "typo", "generate": ["matrix_overveiw"]}]
    with pytest.raises(errors.ConfigError, match=r"postprocess.report_sets\[typo\]: unknown report\(s\) matrix_overveiw"):
        config_checks.validate_config(config(report_sets=bad, report_set="typo"))
