"""The long-term dashboard: runs exported to a store, then dashboard.yml builds the site from the store
alone; checked in headless Chromium (no JavaScript error, the time axis, the regression marked, the
filters and the permalink)."""

import json
import os
import sys
import time

import pytest

from helpers import REPO, run_playbook

sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position
from browser import Chromium, chromium_binary  # noqa: E402  pylint: disable=wrong-import-position

SCREENSHOTS = os.path.join(REPO, "tests", "output", "screenshots")


def overrides(database):
    return json.dumps({"overrides": {"export.sqlite.path": str(database)}})


@pytest.mark.skipif(chromium_binary() is None, reason="chromium is not installed (make test installs it)")
def test_the_dashboard_shows_the_store_s_history_with_its_regression_marked(tmp_path):
    database = tmp_path / "history.sqlite"
    for day in range(1, 4):
        history = tmp_path / ("history-%d" % day)
        trees.make_tree(str(history), points=2, started="2026-11-%02dT10:00:00+00:00" % day)
        assert run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % history,
                            "-e", overrides(database)).returncode == 0
    slower = tmp_path / "slower"
    trees.make_tree(str(slower), points=2, rate_scale=0.7, started="2026-11-04T10:00:00+00:00")
    assert run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % slower, "-e", overrides(database)).returncode == 0
    site = tmp_path / "site"
    run = run_playbook("playbooks/dashboard.yml", "-e", "artifact_dir=%s" % site, "-e", overrides(database))
    assert run.returncode == 0, run.output[-3000:]
    assert "dashboard of 8 test(s)" in run.flat
    page = "file://%s" % (site / "dashboard" / "perf_indicators.html")
    plot = "document.getElementById('ex-plot')"
    with Chromium() as browser:
        browser.load("file://%s" % (site / "dashboard" / "index.html"))
        assert browser.errors() == []
        assert browser.evaluate("Array.from(document.querySelectorAll('a')).map(a => a.getAttribute('href'))") == [
            "perf_indicators.html"]
        browser.load(page, settle=2.0)
        assert browser.errors() == []
        assert browser.evaluate(plot + ".getAttribute('data-points')") == "8"
        # the time axis, and the two regressions of the slower run marked on their points
        assert browser.evaluate(plot + ".layout.xaxis.type") == "date"
        assert browser.evaluate(plot + ".getAttribute('data-marked')") == "2"
        # filter one size: its four runs; the permalink restores the view
        browser.evaluate("(function(){var el=document.querySelector('#explorer select[data-dim=size]');"
                         "el.value=el.options[1].value; el.dispatchEvent(new Event('change'));})()")
        assert browser.evaluate(plot + ".getAttribute('data-points')") == "4"
        link = browser.evaluate("window.location.hash")
        assert "f.size=" in link
        browser.load("about:blank", settle=0.1)
        browser.load(page + link, settle=2.0)
        assert browser.errors() == [] and browser.evaluate(plot + ".getAttribute('data-points')") == "4"
        os.makedirs(SCREENSHOTS, exist_ok=True)
        browser.screenshot(os.path.join(SCREENSHOTS, "dashboard.png"))


def test_dashboard_needs_a_destination():
    run = run_playbook("playbooks/dashboard.yml")
    assert run.returncode != 0 and "dashboard: expected -e artifact_dir=DIR" in run.flat


@pytest.mark.skipif(chromium_binary() is None, reason="chromium is not installed (make test installs it)")
def test_a_click_on_a_point_opens_only_an_http_link_and_without_an_opener(tmp_path):
    from ansible_collections.perfscale.topsail.plugins.module_utils import stores
    from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import dashboard
    from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

    store = stores.open_store({"backend": "sqlite", "timeout_s": 5, "sqlite": {"path": str(tmp_path / "s.sqlite")}})
    store.ensure_schema([])
    store.write([base.kpi_document({"test_uuid": "u%d" % day, "kpi_name": "rate", "value": float(day), "size": 256,
                                    "workload": "perf_indicators", "artifacts_url": url,
                                    "@timestamp": "2026-11-%02dT10:00:00+00:00" % day})
                 for day, url in ((1, "https://ci.example/run1"), (2, "javascript:window.ran=1"))])
    built = dashboard.build(store, str(tmp_path / "site"))
    store.close()
    plot = "document.getElementById('ex-plot')"
    with Chromium() as browser:
        browser.load("file://%s" % (tmp_path / "site" / built["pages"]["perf_indicators"]), settle=2.0)
        assert browser.errors() == []
        browser.evaluate("window.opened = []; window.open = function (url, target, features) {"
                         " window.opened.push([url, target, features]); return null; }")
        # a click on each point (plotly's own event), then on a point whose data would carry the script itself
        browser.evaluate("%s.data.forEach(function (t) { t.customdata.forEach(function (link) {"
                         " %s.emit('plotly_click', {points: [{customdata: link}]}); }); })" % (plot, plot))
        browser.evaluate("%s.emit('plotly_click', {points: [{customdata: 'javascript:window.ran=1'}]})" % plot)
        assert browser.evaluate("window.opened") == [["https://ci.example/run1", "_blank", "noopener"]]
        assert browser.evaluate("window.ran === undefined") is True
        # the other URL is there as text, on its point's hover
        assert browser.evaluate("%s.data[0].text.join(' | ')" % plot).endswith("artifacts: javascript:window.ran=1")


# --------------------------------------------------------------------------
# readable at first sight: a store as CI fills it, every run on another runner, commit and collection version

POINTS = [{"indicator": "matmul", "size": size, "dtype": dtype} for size in (256, 512, 1024)
          for dtype in ("float32", "float64")] + [
    {"indicator": "conv1d", "dtype": "float32", "batch": 8, "length": 2048},
    {"indicator": "conv2d", "dtype": "float32", "batch": 8, "height": 56, "width": 56}]


def realistic_store(path, runs=30):
    """``runs`` nightly runs of the cpu_smoke matrix (8 points, 2 KPIs) with the labels perf_indicators stores:
    the provenance ones (run, commit, host, collection and python versions) differ from run to run, numpy's
    version changes twice."""
    from ansible_collections.perfscale.topsail.plugins.module_utils import stores
    from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

    documents = []
    for run in range(runs):
        when = "2026-%02d-%02dT02:00:00+00:00" % (1 + run // 28, 1 + run % 28)
        for index, point in enumerate(POINTS):
            labels = dict(point, backend="numpy", device="cpu", framework="numpy", threads=None,
                          cpu_model="AMD EPYC 7763", cpu_count=8, memory_gib=31, gpu_model=None, gpu_count=0,
                          accelerator_driver=None, device_name="cpu", library_version="2.%d.0" % (run // 10),
                          blas="openblas", python_version="3.11.%d" % (run % 3), hostname="ci-runner-%02d" % run,
                          collection_version="1.%d.%d" % (run // 10, run % 10), git_commit="%040x" % (run * 7919),
                          presets="cpu_smoke,ci", kpi_settings_version="1.1", run_id="run-%03d" % run)
            rate = 100.0 * (1 + index) + run % 5
            for name, value, unit in (("rate", rate, "GFLOP/s"), ("time_median", 1.0 / rate, "s")):
                document = dict(labels, kpi_name=name, value=value, unit=unit, higher_is_better=name == "rate",
                                ignored_for_regression=False, test_uuid="r%d-p%d" % (run, index),
                                workload="perf_indicators", artifacts_url="https://ci.example/runs/%d" % run,
                                test_path="run-%03d/001__matbenchmarking/%03d" % (run, index),
                                error=2.0 if name == "rate" else None)
                document["@timestamp"] = when
                documents.append(base.kpi_document(document))
    store = stores.open_store({"backend": "sqlite", "timeout_s": 5, "sqlite": {"path": str(path)}})
    store.ensure_schema([])
    store.write(documents)
    return store


MEASURE = """(function () {
  var plot = document.getElementById('ex-plot'), axes = plot.querySelector('.nsewdrag').getBoundingClientRect();
  var legend = document.getElementById('ex-legend');
  return {width: innerWidth, height: innerHeight, axesWidth: axes.width, axesHeight: axes.height,
          legendHeight: legend ? legend.getBoundingClientRect().height : null,
          legendOverflow: legend ? getComputedStyle(legend).overflowY : null,
          traces: plot.data.length, names: plot.data.map(function (t) { return t.name; }),
          hover: plot.data[0].text[0], bodyWidth: document.body.getBoundingClientRect().width,
          yFrom: plot._fullLayout.yaxis.range[0]};
})()"""


@pytest.mark.skipif(chromium_binary() is None, reason="chromium is not installed (make test installs it)")
@pytest.mark.parametrize("width, height", [(1400, 900), (1920, 1080)])
def test_the_default_view_of_a_realistic_store_gives_the_plot_most_of_the_window(tmp_path, width, height):
    from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import dashboard

    store = realistic_store(tmp_path / "ci.sqlite")
    built = dashboard.build(store, str(tmp_path / "site"))
    store.close()
    page = "file://%s" % (tmp_path / "site" / built["pages"]["perf_indicators"])
    with Chromium() as browser:
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        browser.load(page, settle=2.0)
        assert browser.errors() == []
        seen = browser.evaluate(MEASURE)
        # the plot area holds most of the window; the legend below it is a few lines that scroll
        assert seen["axesWidth"] >= 0.6 * width and seen["axesHeight"] >= 0.6 * height, seen
        assert seen["legendHeight"] <= 0.15 * height and seen["legendOverflow"] == "auto", seen
        # one series per point of the matrix and numpy version (8 points, 3 versions), not one per run
        assert seen["traces"] == 24, seen["names"]
        for name in seen["names"]:
            assert not any(label in name for label in ("git_commit", "hostname", "run_id", "collection_version",
                                                       "python_version", "(unset)")), name
        # the provenance is on the hover
        assert "git_commit: " in seen["hover"] and "hostname: ci-runner-" in seen["hover"]
        assert seen["bodyWidth"] >= width - 60     # no fixed page width
        assert seen["yFrom"] == 0                  # a rate is drawn from 0
        os.makedirs(SCREENSHOTS, exist_ok=True)
        browser.screenshot(os.path.join(SCREENSHOTS, "dashboard-realistic-%d.png" % width))
        # the plot follows the window
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": 1000, "height": height, "deviceScaleFactor": 1, "mobile": False})
        time.sleep(1.0)    # plotly redraws a moment after the window's resize event
        resized = browser.evaluate(MEASURE)
        assert resized["width"] == 1000 and 0.6 * 1000 <= resized["axesWidth"] < seen["axesWidth"], resized


@pytest.mark.skipif(chromium_binary() is None, reason="chromium is not installed (make test installs it)")
def test_label_values_are_text_on_the_hover_and_in_the_legend(tmp_path):
    """A label's value is whatever the store holds: on the hover (plotly's pseudo-HTML) it is escaped, in the
    legend a text node; neither is markup."""
    from ansible_collections.perfscale.topsail.plugins.module_utils import stores
    from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import dashboard
    from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

    markup = "<a href='javascript:window.ran=1'>x</a><img src=x onerror='window.ran=2'>"
    store = stores.open_store({"backend": "sqlite", "timeout_s": 5, "sqlite": {"path": str(tmp_path / "s.sqlite")}})
    store.ensure_schema([])
    store.write([base.kpi_document({"test_uuid": "u%d-%s" % (day, dtype), "kpi_name": "rate", "value": float(day),
                                    "dtype": dtype, "hostname": markup if day == 1 else "ci-%d" % day,
                                    "workload": "perf_indicators", "@timestamp": "2026-11-%02dT10:00:00+00:00" % day})
                 for day in (1, 2) for dtype in (markup, "float32")])
    built = dashboard.build(store, str(tmp_path / "site"))
    store.close()
    plot = "document.getElementById('ex-plot')"
    with Chromium() as browser:
        browser.load("file://%s" % (tmp_path / "site" / built["pages"]["perf_indicators"]), settle=2.0)
        assert browser.errors() == []
        hover = browser.evaluate("%s.data.map(function (t) { return t.text.join(' | '); }).join(' | ')" % plot)
        assert "hostname: &lt;a href='javascript:window.ran=1'&gt;x&lt;/a&gt;&lt;img" in hover and "<a" not in hover
        legend = browser.evaluate("Array.from(document.querySelectorAll('#ex-legend .legend-item'))"
                                  ".map(function (e) { return e.textContent; })")
        assert any(markup in item for item in legend), legend
        assert browser.evaluate("document.querySelectorAll('#ex-legend a, #ex-legend img').length") == 0
        assert browser.evaluate("window.ran === undefined") is True
