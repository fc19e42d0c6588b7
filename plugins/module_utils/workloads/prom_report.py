# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report of the ``prom`` workload: each query's series over time, and its KPIs across the matrix.

DataFrame first, as the other reports: the samples become one DataFrame (test, series, seconds
since the test's window started, value), the KPIs another (test settings, series, value); each
plot is a function of one of them.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports as reports_lib

MAX_TRACES = 60        # lines per time plot; beyond, the plot says how many were left out
MAX_FACTOR_PLOTS = 40  # KPI-by-factor plots in one report


class PromReportContext:
    """What the report gets: ``tests`` [(entry, PromTest, kpis)] of the tests that have captures."""

    def __init__(self, tests):
        self.tests = tests


def samples_dataframe(tests):
    """One row per sample: query, test path, series, seconds since the test's window started, value."""
    import pandas as pd

    rows = []
    for entry, captured, _kpis in tests:
        origin = captured.window[0] if captured.window else None
        for query, series_list in captured.series.items():
            for series in series_list:
                start = origin if origin is not None else (series.samples[0][0] if series.samples else 0)
                for ts, value in series.samples:
                    rows.append({"query": query, "test_path": entry.relative, "series": series.name or "(one series)",
                                 "time_s": ts - start, "value": value})
    return pd.DataFrame(rows, columns=["query", "test_path", "series", "time_s", "value"])


def kpis_dataframe(tests):
    """One row per test, series and KPI: the test's scalar settings, ``kpi_name``, ``prom_series``, value."""
    import pandas as pd

    rows = []
    for entry, _captured, kpis in tests:
        settings = {k: v for k, v in entry.settings.items()
                    if isinstance(v, (str, int, float, bool)) or v is None}
        for kpi in kpis:
            rows.append(dict(settings, test_path=entry.relative, status="failed" if entry.failed else "succeeded",
                             kpi_name=kpi["kpi_name"], query=kpi["query"],
                             stat=kpi["stat"], prom_series=kpi["series"] or "(one series)", value=kpi["value"],
                             unit=kpi["unit"]))
    return pd.DataFrame(rows)


def plot_query_over_time(samples, query, unit):
    """A query's series against time since the window started: one line per test and series."""
    import plotly.express as px

    data = samples[samples["query"] == query].copy()
    data["trace"] = data["test_path"] + " · " + data["series"]
    traces = sorted(data["trace"].unique())
    shown = traces[:MAX_TRACES]
    data = data[data["trace"].isin(shown)]
    title = "%s over time%s" % (query, " (%d of %d series shown)" % (len(shown), len(traces))
                                if len(traces) > len(shown) else "")
    fig = px.line(data.sort_values(["trace", "time_s"]), x="time_s", y="value", color="trace", markers=True,
                  labels={"time_s": "seconds since the test's window started",
                          "value": "%s (%s)" % (query, unit) if unit else query, "trace": "test · series"},
                  title=title)
    fig.update_layout(height=420, legend_title_text="test · series")
    return fig


def kpi_table(kpis_df):
    """HTML table: test, KPI, series, value with its unit."""
    if kpis_df.empty:
        return "<p>No series had a value in its window.</p>"
    rows = "".join("<tr><td>%s%s</td><td>%s</td><td><code>%s</code></td><td>%s</td></tr>" % (
        reports_lib.escape(row["test_path"]), " <span class='failed'>(failed)</span>" if row["status"] == "failed" else "",
        reports_lib.escape(row["kpi_name"]),
        reports_lib.escape(row["prom_series"]),
        reports_lib.escape("%.6g%s" % (row["value"], " " + row["unit"] if row["unit"] else "")))
        for _index, row in kpis_df.iterrows())
    return ("<table><tr><th>test</th><th>KPI</th><th>series</th><th>value</th></tr>%s</table>" % rows)


def prometheus_report(ctx):
    samples = samples_dataframe(ctx.tests)
    kpis_df = kpis_dataframe(ctx.tests)
    units = {}
    for _entry, captured, _kpis in ctx.tests:
        for query, described in captured.queries.items():
            units.setdefault(query, described.get("unit") or "")
    parts = ["<p>%d test(s) with Prometheus captures; %d KPI value(s): the max and mean of every series "
             "over the test's window (a failed test's are drawn over time and listed, not compared).</p>"
             % (len(ctx.tests), len(kpis_df))]
    warnings = [(entry.relative, warning) for entry, captured, _kpis in ctx.tests for warning in captured.warnings]
    if warnings:
        parts.append("<h2>Warnings</h2><ul>%s</ul>" % "".join(
            "<li>%s: %s</li>" % (reports_lib.escape(test), reports_lib.escape(text)) for test, text in warnings))
    count = 0
    for query in sorted(samples["query"].unique()) if not samples.empty else []:
        parts.append("<h2>%s</h2>" % reports_lib.escape(query))
        parts.append(reports_lib.figure_html(plot_query_over_time(samples, query, units.get(query, "")),
                                             "prom-time-%d" % count))
        count += 1
    factor_parts = _by_factor(kpis_df)
    if factor_parts:
        parts.append("<h2>KPIs across the matrix</h2>")
        parts.extend(factor_parts)
    parts.append("<h2>KPIs</h2>")
    parts.append(kpi_table(kpis_df))
    return "Prometheus metrics", "".join(parts)


def _by_factor(kpis_df):
    """Each KPI of the successful tests against each setting that varies, one line per series."""
    if kpis_df.empty:
        return []
    kpis_df = kpis_df[kpis_df["status"] == "succeeded"]
    fixed = {"test_path", "status", "kpi_name", "query", "stat", "prom_series", "value", "unit"}
    factors = reports_lib.overview_factors(kpis_df, exclude=fixed)
    parts, count = [], 0
    for kpi_name in sorted(kpis_df["kpi_name"].unique()):
        data = kpis_df[kpis_df["kpi_name"] == kpi_name].rename(columns={"value": kpi_name})
        unit = data["unit"].iloc[0]
        for factor in factors:
            if count >= MAX_FACTOR_PLOTS or not reports_lib.varying(data, factor):
                continue
            fig = reports_lib.plot_kpi_by_factor(data, kpi_name, factor, unit or "no unit", factors + ["prom_series"])
            parts.append(reports_lib.figure_html(fig, "prom-factor-%d" % count))
            count += 1
    return parts


REPORTS = {"prometheus_report": (prometheus_report, "What Prometheus saw during each test: every query over time, "
                                                    "max and mean of each series across the matrix")}
