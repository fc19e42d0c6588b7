# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Report builders of the LLM load workload: plain functions of a pandas DataFrame.

``stage_rows(entries)`` makes one row per *stage* of every parsed test (the
stages are in ``entry.results["stages"]``, see ``workloads/llm_load.py``), with
the test's labels as columns; each builder takes that DataFrame:

- ``plot_latency_vs_throughput``: a latency percentile against a throughput, one
  line per configuration (points in the order of the offered load): the curve of
  a server version, to compare with another;
- ``percentile_table``: p50/p90/p99 of TTFT, TPOT, ITL and E2E per stage;
- ``error_table``: the errors by class per stage, with the client-bound flag;
- ``latency_throughput_report`` / ``error_report``: (title, HTML body) pairs for a
  report registry (they use ``reports.figure_html``).
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports as reports_lib

CONFIGURATION_COLUMNS = ("model", "server", "server_version", "endpoint", "deployment", "workers")
LATENCY_METRICS = ("ttft", "tpot", "itl", "e2e")


def stage_rows(entries, labels_of):
    """One dict per stage of every entry that has stages; ``labels_of(entry)`` gives the labels
    (the workload's ``kpi_labels``: passed in, this module stands below the workload)."""
    rows = []
    for entry in entries:
        stages = (entry.results or {}).get("stages") or []
        if not stages:
            continue
        labels = labels_of(entry)
        for stage in stages:
            row = {key: value for key, value in labels.items() if key not in ("stage", "stage_name", "rate", "concurrency", "load")}
            for key, value in stage.items():
                if isinstance(value, (str, int, float, bool)) or value is None:
                    row[key] = value
            row["errors_by_class"] = stage.get("errors_by_class") or {}
            row["offered"] = stage.get("rate") if stage.get("rate") is not None else stage.get("concurrency")
            rows.append(row)
    return rows


def stages_dataframe(rows):
    import pandas as pd

    return pd.DataFrame(list(rows))


def configuration_labels(df, columns=CONFIGURATION_COLUMNS):
    """A legend label per row from the configuration columns that vary."""
    present = [c for c in columns if c in df.columns and df[c].astype(str).nunique(dropna=False) > 1]
    if not present:
        present = [c for c in ("model", "server_version") if c in df.columns]
    return reports_lib.combination_label(df, present), present


# the units of the stage columns a plot puts on an axis
STAGE_UNITS = {"output_token_throughput": "tokens/s", "request_throughput": "requests/s",
               "input_token_throughput": "tokens/s", "offered": "requests/s", "achieved_rate": "requests/s"}


def plot_latency_vs_throughput(df, latency="ttft_p99_ms", throughput="output_token_throughput", columns=CONFIGURATION_COLUMNS):
    """Latency against throughput, one line per configuration, points in offered-load order."""
    import plotly.express as px

    data = df[df[latency].notna() & df[throughput].notna()].copy()
    data["configuration"], present = configuration_labels(data, columns)
    data = data.sort_values(by=["configuration", "offered" if "offered" in data.columns else throughput])
    hover = [c for c in ("test_path", "stage", "name", "load", "offered", "achieved_rate", "client_bound") if c in data.columns]
    fig = px.line(data, x=throughput, y=latency, color="configuration", markers=True, hover_data=hover,
                  labels={latency: latency.replace("_ms", " (ms)"), throughput: reports_lib.axis_title(throughput, STAGE_UNITS),
                          "configuration": ", ".join(present) or "configuration"},
                  title="%s against %s" % (latency, throughput))
    if "client_bound" in data.columns and data["client_bound"].fillna(False).astype(bool).any():
        bound = data[data["client_bound"].fillna(False).astype(bool)]
        fig.add_scatter(x=bound[throughput], y=bound[latency], mode="markers", name="client-bound (not trusted)",
                        marker={"symbol": "x", "size": 12, "color": "black"})
    # a latency and a throughput are never negative: both axes start from 0, so that stages 0.02 % apart
    # (164.01 and 164.03 tokens/s) are not drawn across the whole plot
    if reports_lib.from_zero(data[throughput]):
        fig.update_xaxes(rangemode="tozero")
    if reports_lib.from_zero(data[latency]):
        fig.update_yaxes(rangemode="tozero")
    fig.update_layout(height=460, legend_title_text=", ".join(present) or "configuration")
    return fig


def percentile_table(df, metrics=LATENCY_METRICS, percentiles=("p50", "p90", "p99")):
    """p50/p90/p99 (ms) of each latency metric per stage row, with its identity columns."""
    identity = [c for c in ("test_path", "model", "server_version", "stage", "name", "load", "offered", "achieved_rate")
                if c in df.columns]
    columns = identity + ["%s_%s_ms" % (m, p) for m in metrics for p in percentiles if "%s_%s_ms" % (m, p) in df.columns]
    return df[columns].copy()


def error_table(df):
    """Errors by class per stage (one column per class), error rate and the client-bound flag."""
    import pandas as pd

    identity = [c for c in ("test_path", "model", "server_version", "stage", "name", "load", "offered") if c in df.columns]
    classes = sorted({name for errors in df.get("errors_by_class", pd.Series(dtype=object)) for name in (errors or {})})
    table = df[identity].copy()
    for name in classes:
        table[name] = [int((errors or {}).get(name, 0)) for errors in df["errors_by_class"]]
    for column in ("total_requests", "error_rate", "client_bound"):
        if column in df.columns:
            table[column] = df[column]
    return table


def _table_html(table):
    """The table in a box that scrolls sideways when it is wider than the page (never cut off)."""
    return reports_lib.scroll_table(table.to_html(index=False, na_rep="", float_format=lambda v: "%.4g" % v,
                                                  escape=True))


def latency_throughput_report(df):
    """(title, HTML body): TTFT p99 and ITL p50 against output throughput, and the percentile table."""
    if df.empty or "output_token_throughput" not in df.columns:
        return "LLM load: latency against throughput", "<p>No LLM load stage to plot.</p>"
    parts = []
    for number, latency in enumerate(("ttft_p99_ms", "ttft_p50_ms", "itl_p50_ms", "e2e_p99_ms")):
        if latency in df.columns and df[latency].notna().any():
            parts.append(reports_lib.figure_html(plot_latency_vs_throughput(df, latency), "llm-load-curve-%d" % number))
    parts.append("<h2>Latency percentiles per stage (ms)</h2>")
    parts.append(_table_html(percentile_table(df)))
    return "LLM load: latency against throughput", "".join(parts)


def error_report(df):
    """(title, HTML body): errors by class per stage."""
    if df.empty:
        return "LLM load: errors", "<p>No LLM load stage.</p>"
    table = error_table(df)
    failing = int((table.get("error_rate", 0) > 0).sum()) if "error_rate" in table else 0
    bound = int(table["client_bound"].fillna(False).astype(bool).sum()) if "client_bound" in table else 0
    summary = "<p>%d stage(s), %d with errors, %d client-bound (their latencies measure the client).</p>" % (len(table), failing, bound)
    return "LLM load: errors", summary + _table_html(table)


# --------------------------------------------------------------------------
# the workload's reports (``REPORTS`` of workloads/llm_load.py): builders of a ReportContext


def latency_throughput(ctx, labels_of):
    return latency_throughput_report(stages_dataframe(stage_rows(ctx.entries, labels_of)))


def errors(ctx, labels_of):
    return error_report(stages_dataframe(stage_rows(ctx.entries, labels_of)))
