"""The Prometheus helpers that need no server: the query file, the window (the server: tests/integration)."""

import json
import re

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import prometheus


def test_the_query_file_is_a_mapping_or_a_list(tmp_path):
    (tmp_path / "map.yml").write_text("gpu_util: DCGM_FI_DEV_GPU_UTIL\ncpu: rate(container_cpu_usage_seconds_total[1m])\n"
                                      "mem: {query: DCGM_FI_DEV_FB_USED, unit: MiB, help: GPU memory used}\n")
    (tmp_path / "list.yml").write_text("- {name: gpu_util, query: DCGM_FI_DEV_GPU_UTIL, unit: '%', higher_is_better: true}\n")
    queries = prometheus.load_query_file(str(tmp_path / "map.yml"))
    assert list(queries) == ["gpu_util", "cpu", "mem"]
    assert queries["gpu_util"] == {"query": "DCGM_FI_DEV_GPU_UTIL", "unit": "", "help": "", "higher_is_better": False}
    assert queries["mem"] == {"query": "DCGM_FI_DEV_FB_USED", "unit": "MiB", "help": "GPU memory used",
                              "higher_is_better": False}
    assert prometheus.load_query_file(str(tmp_path / "list.yml")) == {"gpu_util": {
        "query": "DCGM_FI_DEV_GPU_UTIL", "unit": "%", "help": "", "higher_is_better": True}}


@pytest.mark.parametrize("text, message", [
    ("[1, 2]\n", "expected a mapping of name: PromQL"),
    ("{}\n", "expected a mapping of name: PromQL"),
    ("'../x': up\n", "query name '../x': expected letters, digits"),
    ("a: ''\n", "query a: expected a PromQL expression"),
    ("a: [up\n", "not YAML"),
    ("a: {query: up, colour: red}\n", "query a: unknown key(s) colour; expected query, unit, help, higher_is_better"),
    ("a: {query: up, unit: 3}\n", "query a: unit 3: expected a string"),
    ("a: {query: up, higher_is_better: 'yes'}\n", "query a: higher_is_better 'yes': expected a boolean"),
    ("a: {unit: s}\n", "query a: expected a PromQL expression"),
    ("a: [up]\n", "query a: expected a PromQL expression or a mapping with query"),
])
def test_a_bad_query_file_is_one_line(tmp_path, text, message):
    (tmp_path / "q.yml").write_text(text)
    with pytest.raises(prometheus.PrometheusError, match=re.escape(message)):
        prometheus.load_query_file(str(tmp_path / "q.yml"))


def test_the_window_from_timestamps_a_duration_or_the_runs_last_reset(tmp_path):
    assert prometheus.window("100", "160") == (100.0, 160.0)
    assert prometheus.window(None, "2026-11-20T10:00:10Z", 10) == (1795168800.0, 1795168810.0)
    assert prometheus.window(None, None, 30, now=1000.0) == (970.0, 1000.0)
    for index, ts in ((0, 500.0), (3, 700.0)):
        directory = tmp_path / ("%03d__cluster__reset_prometheus_db" % index)
        directory.mkdir()
        (directory / prometheus.RESET_RECORD).write_text(json.dumps({"ts": ts}))
    (tmp_path / "004__other").mkdir()
    (tmp_path / "004__other" / prometheus.RESET_RECORD).write_text(json.dumps({"ts": 900.0}))
    assert prometheus.window(run_root=str(tmp_path), now=800.0) == (700.0, 800.0)
    with pytest.raises(prometheus.PrometheusError, match="query window: no start"):
        prometheus.window(now=1.0)
    with pytest.raises(prometheus.PrometheusError, match="is not before end"):
        prometheus.window("200", "100")


def test_an_unknown_reset_mode_is_one_line(tmp_path):
    client = prometheus.PrometheusClient("http://127.0.0.1:9")
    with pytest.raises(prometheus.PrometheusError, match="mode 'wipe': expected one of reset, mark"):
        prometheus.reset(client, "wipe", str(tmp_path))


def test_the_shipped_query_files_load():
    import glob
    import os

    files = glob.glob(os.path.join(os.path.dirname(__file__), "..", "..", "..", "playbooks", "files", "promqueries", "*.yaml"))
    assert files
    for path in files:
        queries = prometheus.load_query_file(path)
        assert queries and all(spec["unit"] and spec["help"] for spec in queries.values()), path
