"""The long-term dashboard: runs exported to a store, then dashboard.yml builds the site from the store
alone; checked in headless Chromium (no JavaScript error, the time axis, the regression marked, the
filters and the permalink)."""

import json
import os
import sys

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
