import json
import os
import re

import pandas as pd
import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports as r
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import perf_indicators_report as perf_report
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree as store

DF = pd.DataFrame([
    {"test_path": "m/0", "indicator": "matmul", "size": 256, "dtype": "float32", "backend": "numpy", "rate": 100.0},
    {"test_path": "m/1", "indicator": "matmul", "size": 512, "dtype": "float32", "backend": "numpy", "rate": 120.0},
    {"test_path": "m/2", "indicator": "matmul", "size": 256, "dtype": "float64", "backend": "numpy", "rate": 50.0},
    {"test_path": "m/3", "indicator": "matmul", "size": 512, "dtype": "float64", "backend": "numpy", "rate": 60.0},
])


def test_kpi_by_factor_one_line_per_combination_with_units_on_axes():
    fig = r.plot_kpi_by_factor(DF, "rate", "size", "GFLOP/s", ["size", "dtype"], title_prefix="matmul: ")
    assert sorted(trace.name for trace in fig.data) == ["dtype=float32", "dtype=float64"]
    assert fig.layout.yaxis.title.text == "rate (GFLOP/s)"
    assert fig.layout.xaxis.title.text == "size"
    assert fig.layout.title.text == "matmul: rate by size"
    assert fig.layout.legend.title.text == "dtype"
    float32 = next(t for t in fig.data if t.name == "dtype=float32")
    assert list(float32.x) == [256, 512] and list(float32.y) == [100.0, 120.0]


def test_categorical_factor_gets_a_category_axis():
    fig = r.plot_kpi_by_factor(DF, "rate", "dtype", "GFLOP/s", ["size", "dtype"])
    assert fig.layout.xaxis.type == "category"
    assert sorted(t.name for t in fig.data) == ["size=256", "size=512"]


def test_rate_vs_size_one_line_per_combination_of_what_varies():
    fig = perf_report.plot_rate_vs_size(DF, "size")
    assert sorted(t.name for t in fig.data) == ["dtype=float32", "dtype=float64"]
    assert fig.layout.yaxis.title.text == "rate (GFLOP/s)"


def test_no_line_joins_points_of_different_threads_even_when_one_is_unset():
    df = pd.concat([DF, pd.DataFrame([{"test_path": "m/4", "indicator": "matmul", "size": 256, "dtype": "float32",
                                       "backend": "numpy", "threads": 2, "rate": 90.0},
                                      {"test_path": "m/5", "indicator": "matmul", "size": 512, "dtype": "float32",
                                       "backend": "numpy", "threads": 2, "rate": 95.0}])])
    fig = perf_report.plot_rate_vs_size(df, "size")
    assert sorted(t.name for t in fig.data) == ["dtype=float32", "dtype=float32, threads=2", "dtype=float64"]
    fig = r.plot_kpi_by_factor(df, "rate", "size", "GFLOP/s", ["size", "dtype", "threads"])
    assert len(fig.data) == 3


def test_categorical_factors_are_markers_and_spread_gives_error_bars():
    df = DF.assign(rate__error=[5.0, 6.0, 2.5, 3.0])
    fig = r.plot_kpi_by_factor(df, "rate", "dtype", "GFLOP/s", ["size", "dtype"])
    assert all(trace.mode == "markers" for trace in fig.data)
    assert all(list(trace.error_y.array) for trace in fig.data)
    fig = r.plot_kpi_by_factor(df, "rate", "size", "GFLOP/s", ["size", "dtype"])
    assert all("lines" in trace.mode for trace in fig.data)
    assert sorted(v for trace in fig.data for v in trace.error_y.array) == [2.5, 3.0, 5.0, 6.0]


def test_history_is_on_a_time_axis_with_run_and_commit_on_hover_and_the_baseline_band():
    history = [{"timestamp": "2026-11-%02dT10:00:00+00:00" % day, "value": 100.0 + day % 2, "run_id": "run-%d" % day,
                "git_commit": "abcdef%d" % day} for day in range(1, 11)]
    df = r.history_dataframe(history, 80.0, "2026-11-12T10:00:00+00:00")
    band = r.baseline_band({"baseline_mean": 100.5, "baseline_stdev": 0.5, "baseline_points": 10}, df)
    fig = r.plot_history(df, "rate", "GFLOP/s", "rate history", band)
    assert fig.layout.xaxis.type == "date"
    assert "run_id" in fig.data[0].hovertemplate and "git_commit" in fig.data[0].hovertemplate
    assert any(shape.fillcolor for shape in fig.layout.shapes)
    assert [t.name for t in fig.data][1:] == ["current", "baseline mean"]


def test_change_points_are_marked_on_the_history():
    history = [{"timestamp": "2026-11-%02dT10:00:00+00:00" % day, "value": 100.0 if day < 6 else 80.0}
               for day in range(1, 11)]
    df = r.history_dataframe(history, 80.0, "2026-11-12T10:00:00+00:00")
    times = r.change_times({"change_points": [{"index": 5}, {"index": 99}]}, df)
    assert [t.day for t in times] == [6]
    fig = r.plot_history(df, "rate", "GFLOP/s", "rate history", None, times)
    lines = [shape for shape in fig.layout.shapes if shape.type == "line"]
    assert len(lines) == 1 and lines[0].yref == "paper"
    assert [a.text for a in fig.layout.annotations] == ["change"]


def test_the_explorer_carries_the_rows_its_filters_and_no_script_breaking_text():
    df = DF.assign(note=["</script><b>x", "a", "a", "b"])
    html_text = r.explorer_html(df, ["rate"], ["size", "dtype", "note"], [])
    assert html_text.count("<select data-dim=") == 3
    assert "</script><b>x" not in html_text and "<\\/script>" in html_text
    assert "<option value='float32'>float32</option>" in html_text
    assert r.explorer_html(df, [], ["size"], []) == ""


def test_kpi_per_test_has_one_bar_per_test():
    fig = perf_report.plot_kpi_per_test(DF, "rate", "GFLOP/s")
    assert sum(len(t.y) for t in fig.data) == 4


def test_factors_with_at_least_two_set_values():
    df = pd.concat([DF, pd.DataFrame([{"test_path": "c/0", "indicator": "conv2d", "height": 56, "rate": 10.0}])])
    assert r.overview_factors(df, exclude={"rate"}) == ["indicator", "size", "dtype"]
    assert r.combination_label(df.iloc[[4]], ["size", "height"]) == ["height=56"]


def test_report_names_come_from_the_generic_registry_and_the_workload():
    workload = workload_lib.load_workload("perf_indicators")
    assert r.report_names(None, workload) == ["error_report", "matrix_overview", "indicator_report"]
    assert r.report_names(["indicator_report"], workload) == ["indicator_report"]
    assert "indicator" not in " ".join(r.GENERIC_REPORTS)  # the generic registry knows no workload
    with pytest.raises(errors.ReportError, match=r"unknown report\(s\) nope; reports of workload perf_indicators: "
                                                 r"error_report, indicator_report, matrix_overview"):
        r.report_names(["error_report", "nope"], workload)


def make_entries():
    ok = store.Entry("/t/ok", "m/ok", {"indicator": "matmul", "size": 64}, 0, "u1", {"failure": None}, [], False)
    bad = store.Entry("/t/bad", "m/bad", {"indicator": "matmul", "size": 128}, 3, "u2",
                      {"failure": "harness exited with 3: <oom>", "stderr_tail": "Killed"}, ["output.json: missing"], False)
    payloads = {"/t/ok": {"kpis": {"rate": {"value": 5.0}}, "results": {"flop": 2 * 64 ** 3}}}
    return [ok, bad], payloads


def test_error_report_lists_failed_tests_with_settings_failure_and_missing_files():
    entries, payloads = make_entries()
    title, body = r.error_report(r.ReportContext(entries, payloads, [], ["tree warning"], "t"))
    assert title == "Error report"
    assert "m/bad" in body and "m/ok" not in body
    assert "harness exited with 3: &lt;oom&gt;" in body  # escaped
    assert "<th>size</th><td>128</td>" in body
    assert "Killed" in body and "output.json: missing" in body and "tree warning" in body


def test_written_reports_work_offline_and_are_linked_from_the_index(tmp_path):
    entries, payloads = make_entries()

    class Definition:
        name, unit, help, ignored_for_regression = "rate", "GFLOP/s", "Throughput", False

    context = r.ReportContext(entries, payloads, [Definition()], [], "My results")
    written = r.write_reports(str(tmp_path), context, ["error_report", "indicator_report", "matrix_overview"],
                              workload_lib.load_workload("perf_indicators"))
    assert [w[2] for w in written] == ["error_report.html", "indicator_report.html", "matrix_overview.html"]
    assert os.path.getsize(tmp_path / r.PLOTLY_JS) > 1_000_000
    index = (tmp_path / r.INDEX).read_text()
    for name in ("error_report.html", "indicator_report.html", "matrix_overview.html"):
        assert 'href=\'%s\'' % name in index
        html = (tmp_path / name).read_text()
        assert '<script src="plotly.min.js"></script>' in html
        assert "cdn" not in html.lower()
    assert "1 failed" in index


def test_failed_count_is_red_only_when_something_failed():
    assert "<span class='meta'>0 failed</span>" in r.count_summary(8, 0)
    assert "<span class='failed'>2 failed</span>" in r.count_summary(8, 2)
    entries, payloads = make_entries()
    _title, body = r.error_report(r.ReportContext(entries[:1], payloads, [], [], "t"))
    assert "<span class='meta'>0 failed</span>" in body


def test_error_bars_stay_within_the_domain_of_a_quantity_that_is_never_negative():
    # a rate of 40 with a spread of 240 (a loaded machine): its bar goes up by 240 and stops at 0
    df = DF.assign(rate__error=[240.0, 6.0, 2.5, 3.0], rate=[40.0, 120.0, 50.0, 60.0])
    for fig in (r.plot_kpi_by_factor(df, "rate", "size", "GFLOP/s", ["size", "dtype"]),
                perf_report.plot_rate_vs_size(df, "size")):
        for trace in fig.data:
            lows = [y - minus for y, minus in zip(trace.y, trace.error_y.arrayminus)]
            assert min(lows) >= 0, (trace.name, lows)
        assert max(v for t in fig.data for v in t.error_y.array) == 240.0
    # a quantity that may be negative (a relative change) keeps symmetric bars
    signed = DF.assign(rate=[-5.0, 3.0, 2.0, 1.0], rate__error=[10.0, 1.0, 1.0, 1.0])
    fig = r.plot_kpi_by_factor(signed, "rate", "size", "%", ["size", "dtype"])
    assert all(trace.error_y.arrayminus is None for trace in fig.data)


def test_every_axis_names_its_unit_when_the_workload_gives_it():
    units = workload_lib.load_workload("perf_indicators").setting_units
    fig = r.plot_kpi_by_factor(DF, "rate", "size", "GFLOP/s", ["size", "dtype"], units=units)
    assert fig.layout.xaxis.title.text == "size (n, for n x n matrices)"
    assert perf_report.plot_rate_vs_size(DF, "size", units=units).layout.xaxis.title.text == \
        "size (n, for n x n matrices)"
    from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import llm_load_reports

    stages = pd.DataFrame([{"output_token_throughput": 100.0 * i, "ttft_p99_ms": 10.0 * i, "model": "m",
                            "offered": float(i)} for i in range(1, 4)])
    fig = llm_load_reports.plot_latency_vs_throughput(stages)
    assert fig.layout.xaxis.title.text == "output_token_throughput (tokens/s)"
    assert fig.layout.yaxis.title.text == "ttft_p99 (ms)"


def explorer_data(html_text):
    found = re.search(r"<script type='application/json' id='ex-data'>(.*?)</script>", html_text, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_explorers_default_series_are_the_factors_that_vary_never_the_provenance():
    df = DF.assign(hostname=["ci-1", "ci-2", "ci-3", "ci-4"], git_commit=["a1", "b2", "c3", "d4"],
                   cpu_model=["EPYC"] * 4)
    html_text = r.explorer_html(df, ["rate"], ["size", "dtype", "indicator", "hostname", "git_commit", "cpu_model"],
                                [], units={"size": "n"})
    assert "<option value='*' selected>(every factor that varies)</option>" in html_text
    data = explorer_data(html_text)
    assert data["units"] == {"size": "n"}
    assert data["dimensions"] == ["size", "dtype", "indicator", "hostname", "git_commit", "cpu_model"]
    # a run's provenance is on the hover (and a filter), never a default series
    assert data["factors"] == ["size", "dtype", "indicator", "cpu_model"]
    assert data["hover"] == ["hostname", "git_commit"]
    assert "<select data-dim='hostname'>" in html_text
    assert "series by default: one per combination of the factors that vary among the tests shown (size, dtype, " \
           "indicator, cpu_model); on each point&#x27;s hover, when they vary: hostname, git_commit" in html_text
    # the caller names the factors (the matrix overview: the settings)
    data = explorer_data(r.explorer_html(df, ["rate"], ["size", "dtype", "cpu_model"], [], factors=["size", "dtype"]))
    assert data["factors"] == ["size", "dtype"] and data["hover"] == ["cpu_model"]


@pytest.mark.parametrize("name, provenance", [
    ("run_id", True), ("git_commit", True), ("hostname", True), ("test_path", True), ("collection_version", True),
    ("kpi_settings_version", True), ("presets", True), ("HOSTNAME", True), ("model_path", True),
    ("build_id", True), ("operator_commit", True), ("results_dir", True), ("image_sha", True),
    ("size", False), ("dtype", False), ("server_version", False), ("library_version", False), ("model", False),
    ("cpu_model", False), ("commits_per_second", False), ("tensor_parallel", False),
])
def test_provenance_labels_are_named_by_a_built_in_list(name, provenance):
    assert r.is_provenance(name) is provenance


def test_rates_and_latencies_are_drawn_from_zero():
    # a rate: its axis starts from 0, so that 100 and 120 GFLOP/s are not drawn as the bottom and top of the plot
    fig = r.plot_kpi_by_factor(DF, "rate", "size", "GFLOP/s", ["size", "dtype"])
    assert fig.layout.yaxis.rangemode == "tozero"
    assert r.plot_kpi_by_factor(DF, "rate", "dtype", "GFLOP/s", ["size", "dtype"]).layout.yaxis.rangemode == "tozero"
    # a quantity that may be negative (a relative change) is drawn as it is
    signed = DF.assign(rate=[-5.0, 3.0, 2.0, 1.0])
    assert r.plot_kpi_by_factor(signed, "rate", "size", "%", ["size", "dtype"]).layout.yaxis.rangemode is None
    # the LLM latency page: four stages within 0.02 % of 164 tokens/s, their TTFT within 2 %
    from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import llm_load_reports

    stages = pd.DataFrame([{"output_token_throughput": 163.99 + 0.01 * i, "ttft_p99_ms": 40.0 + 0.2 * i,
                            "itl_p50_ms": 9.0, "model": "m", "offered": float(i + 1)} for i in range(4)])
    fig = llm_load_reports.plot_latency_vs_throughput(stages)
    assert fig.layout.xaxis.rangemode == "tozero" and fig.layout.yaxis.rangemode == "tozero"
    assert fig.layout.xaxis.title.text == "output_token_throughput (tokens/s)"
    _title, body = llm_load_reports.latency_throughput_report(stages)
    assert body.count('"rangemode":"tozero"') == 4    # two plots, both axes


def test_a_factor_that_does_not_apply_to_a_test_is_no_position_on_its_axis():
    # the convolutions have no size: on the size axis they are left out, and the plot says so
    df = pd.concat([DF, pd.DataFrame([
        {"test_path": "c/0", "indicator": "conv1d", "dtype": "float32", "length": 2048, "rate": 9.0},
        {"test_path": "c/1", "indicator": "conv2d", "dtype": "float32", "height": 56, "rate": 7.0}])])
    fig = r.plot_kpi_by_factor(df, "rate", "size", "GFLOP/s", ["size", "dtype", "indicator"])
    assert fig.layout.xaxis.type != "category"
    xs = [x for trace in fig.data for x in trace.x]
    assert sorted(xs) == [256, 256, 512, 512] and "(unset)" not in [str(x) for x in xs]
    assert fig.layout.title.text == \
        "rate by size<br><sup>2 test(s) without size left out (it does not apply to them)</sup>"
    assert r.plot_kpi_by_factor(DF, "rate", "size", "GFLOP/s", ["size", "dtype"]).layout.title.text == "rate by size"


def test_wide_tables_scroll_sideways_in_their_box():
    from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import llm_load_reports

    latencies = {"%s_%s_ms" % (m, p): 1.0 for m in llm_load_reports.LATENCY_METRICS for p in ("p50", "p90", "p99")}
    stages = pd.DataFrame([dict(latencies, output_token_throughput=164.0, test_path="run/001__matbenchmarking/000",
                                stage=0, model="m", offered=1.0)])
    _title, body = llm_load_reports.latency_throughput_report(stages)
    assert "<div class='table-scroll'><table" in body and body.count("<table") == body.count("class='table-scroll'")
    _title, body = llm_load_reports.error_report(stages.assign(errors_by_class=[{"http_500": 2}]))
    assert body.count("<table") == 1 and "<div class='table-scroll'><table" in body
    assert ".table-scroll{overflow-x:auto;max-width:100%}" in r.page("t", body)
    # and no page has a fixed width any more: the body takes the window's
    assert "max-width:1200px" not in r.page("t", body)


@pytest.mark.parametrize("url, opened", [
    ("https://ci.example/run/1", True), ("HTTP://ci.example/run/1", True), ("runs/1/index.html", True),
    ("/srv/runs/1", True), ("?run=1", True), ("#kpi=rate", True), ("1a:b", True),
    ("javascript:alert(1)", False), ("JavaScript:alert(1)", False), (" javascript:alert(1)", False),
    ("java\tscript:alert(1)", False), ("\x01javascript:alert(1)", False), ("data:text/html,<script>", False),
    ("vbscript:x", False), ("file:///etc/passwd", False), ("s3://bucket/run", False), ("//evil.example/x", False),
    ("\\\\evil.example/x", False), ("https:\\\\evil.example", False), ("", False), (None, False),
    (["https://x"], False),
])
def test_only_http_and_relative_urls_are_links(url, opened):
    assert r.safe_link(url) is opened


def test_the_explorer_drops_a_link_that_is_not_safe_and_opens_the_others_without_an_opener():
    rows = [{"test_path": "a", "size": 1, "rate": 1.0, "link": "javascript:alert(1)"},
            {"test_path": "b", "size": 2, "rate": 2.0, "link": "https://ci.example/b"}]
    html_text = r.explorer_block(rows, {"rate": {"unit": "u", "higher_is_better": True}}, ["size"], {})
    assert "javascript:" not in html_text and '"link": "https://ci.example/b"' in html_text
    assert "window.open(link, '_blank', 'noopener')" in html_text and "if (safeLink(link))" in html_text
    # the caller's rows are left as they were
    assert rows[0]["link"] == "javascript:alert(1)"


def test_the_index_links_only_report_files_with_a_safe_name(tmp_path):
    registry = {"title": "t", "subtitle": "", "notes": [], "counts": "", "generated": "now",
                "reports": [{"file": "overview.html", "title": "Overview", "description": "d"},
                            {"file": "javascript:alert(1)", "title": "Evil", "description": "e"}]}
    (tmp_path / r.INDEX_REGISTRY).write_text(json.dumps(registry))
    r.render_index(str(tmp_path))
    index = (tmp_path / r.INDEX).read_text()
    assert "<a href='overview.html'>Overview</a>" in index
    assert "href='javascript" not in index and "Evil (javascript:alert(1))" in index
