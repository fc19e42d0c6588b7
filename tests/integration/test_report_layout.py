"""Per-run report pages in headless Chromium at a laptop's width: a wide table scrolls sideways in its box
instead of being cut off, and the LLM latency plots start their axes from 0."""

import os
import sys

import pandas as pd
import pytest

from helpers import REPO

sys.path.insert(0, os.path.join(REPO, "tests"))
from browser import Chromium, chromium_binary  # noqa: E402  pylint: disable=wrong-import-position


def latency_page(directory):
    """The LLM latency report of four stages within 0.02 % of 164 tokens/s, with the percentile table of
    every latency metric (16 columns), written as the per-run reports are."""
    import plotly.offline

    from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports
    from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import llm_load_reports

    stages = pd.DataFrame([dict({"%s_%s_ms" % (metric, p): 10.0 + i for metric in llm_load_reports.LATENCY_METRICS
                                 for p in ("p50", "p90", "p99")},
                                test_path="001__matbenchmarking/000__rate_%d_model_granite-3.1-8b-instruct" % i,
                                model="granite-3.1-8b-instruct", server_version="vllm-0.11.0", stage=i,
                                name="rate-%d" % i, load="rate", offered=float(i + 1), achieved_rate=float(i + 1),
                                output_token_throughput=163.99 + 0.01 * i) for i in range(4)])
    title, body = llm_load_reports.latency_throughput_report(stages)
    path = os.path.join(str(directory), "llm_load_latency_throughput.html")
    with open(os.path.join(str(directory), reports.PLOTLY_JS), "w", encoding="utf-8") as handle:
        handle.write(plotly.offline.get_plotlyjs())
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(reports.page(title, body))
    return path


@pytest.mark.skipif(chromium_binary() is None, reason="chromium is not installed (make test installs it)")
def test_the_llm_latency_page_scrolls_its_wide_table_and_draws_its_axes_from_zero(tmp_path):
    page = latency_page(tmp_path)
    with Chromium() as browser:
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        browser.load("file://%s" % page, settle=2.0)
        assert browser.errors() == []
        table = browser.evaluate("""(function () {
          var box = document.querySelector('table').parentElement;
          return {overflow: getComputedStyle(box).overflowX, scroll: box.scrollWidth, client: box.clientWidth,
                  right: box.getBoundingClientRect().right, page: document.documentElement.scrollWidth,
                  window: innerWidth};
        })()""")
        # the table is wider than the window: its box scrolls, the page does not grow past the window
        assert table["overflow"] == "auto" and table["scroll"] > table["client"], table
        assert table["right"] <= table["window"] and table["page"] <= table["window"], table
        # 163.99 to 164.02 tokens/s: the throughput axis starts from 0 (a 0.02 % difference looks like one)
        ranges = browser.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot')).map(function (p) {"
                                  " return [p._fullLayout.xaxis.range[0], p._fullLayout.yaxis.range[0]]; })")
        assert ranges and all(x == 0 and y == 0 for x, y in ranges), ranges
