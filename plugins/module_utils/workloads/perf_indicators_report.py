# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reports of the perf_indicators workload (registered in its ``REPORTS``).

Kept apart from the workload's parsers: changing a plot does not invalidate
the parse caches of existing trees. pandas and plotly are imported lazily.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils import gpu_peaks
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports


# the settings a series of the rate-vs-size plot may differ by (never joined by one line)
SERIES_SETTINGS = ("dtype", "backend", "device", "threads", "batch", "length", "height", "width", "channels",
                   "filters", "kernel", "stride", "padding", "reps")


def plot_rate_vs_size(df, x, y="rate", unit="GFLOP/s", series=SERIES_SETTINGS, title_prefix="", units=None):
    """Throughput against problem size, one line per combination of the settings that vary
    (dtype, backend, threads...), with the repetitions' spread as error bars."""
    import plotly.express as px

    data = df[df[y].notna() & df[x].notna()].copy()
    present = [c for c in series if c != x and reports.varying(data, c)]
    data["series"] = reports.combination_label(data, present)
    data = data.sort_values(by=[x])
    fig = px.line(data, x=x, y=y, color="series", markers=True, log_x=data[x].nunique() > 2,
                  **reports.error_bar_options(data, y),
                  hover_data=[c for c in ("test_path",) if c in data.columns],
                  labels={y: "%s (%s)" % (y, unit), x: reports.axis_title(x, units),
                          "series": ", ".join(present) or "series"},
                  title="%s%s vs %s" % (title_prefix, y, x))
    fig.update_layout(legend_title_text=", ".join(present) or "series", height=420)
    return fig


def plot_kpi_per_test(df, kpi, unit, color="indicator"):
    """One bar per test: every point of the run at a glance."""
    import plotly.express as px

    data = df[df[kpi].notna()].copy()
    data["test"] = data["test_path"].map(lambda p: p.rsplit("/", 1)[-1])
    fig = px.bar(data, x=kpi, y="test", color=color if color in data.columns else None, orientation="h",
                 hover_data=["test_path"], labels={kpi: "%s (%s)" % (kpi, unit), "test": "test"},
                 title="%s of every test" % kpi)
    fig.update_layout(height=max(300, 40 + 28 * len(data)),
                      yaxis={"categoryorder": "array", "categoryarray": list(data["test"])[::-1]})
    return fig


def peak_texts(ctx, data):
    """Per row of ``data``: ``"79 % of peak"`` from the efficiency KPI, else why there is none (the
    payload's ``efficiency_reason``), else empty."""
    reasons = {}
    for entry in ctx.entries:
        results = (ctx.payloads.get(entry.test_dir) or {}).get("results") or {}
        reasons[entry.relative] = results.get("efficiency_reason")
    values = data["efficiency"] if "efficiency" in data else [None] * len(data)
    return [gpu_peaks.percent_of_peak(value) or reasons.get(path) or ""
            for path, value in zip(data["test_path"], values)]


def indicator_report(ctx):
    df = ctx.df[ctx.df["status"] == "succeeded"] if "status" in ctx.df else ctx.df
    if df.empty or "indicator" not in df or "rate" not in df or not df["rate"].notna().any():
        return "Performance indicators", "<p>No successful performance-indicator test to plot.</p>"
    units = ctx.units()
    parts = [reports.figure_html(plot_kpi_per_test(df, "rate", units.get("rate", "")), "indicator-all")]
    count = 0
    for indicator in sorted(df["indicator"].dropna().unique()):
        data = df[df["indicator"] == indicator].copy()
        x = "size" if "size" in data and data["size"].notna().any() else None
        if x is None and "flop" in data:
            data["gflop_per_repetition"] = data["flop"] / 1e9
            x = "gflop_per_repetition"
        parts.append("<h2>%s</h2>" % reports.escape(indicator))
        count += 1
        if x is not None and data[x].notna().sum() >= 2 and data["rate"].notna().sum() >= 2:
            figure = plot_rate_vs_size(data, x, unit=units.get("rate", ""), title_prefix="%s: " % indicator,
                                       units=ctx.axis_units())
            parts.append(reports.figure_html(figure, "indicator-%d" % count))
        else:
            parts.append("<p class='meta'>One point only: see the table.</p>")
        data["TFLOP/s"] = data["rate"] / 1e3
        data["of peak"] = peak_texts(ctx, data)
        columns = [c for c in ("test_path", "dtype", "backend", "device", "threads", x, "rate", "TFLOP/s", "of peak",
                               "time_median", "time_cv") if c and c in data.columns]
        table = data[columns].rename(columns=reports.with_units(columns, units))
        parts.append(table.to_html(index=False, na_rep="", float_format=lambda v: "%.4g" % v, escape=True))
    return "Performance indicators", "".join(parts)
