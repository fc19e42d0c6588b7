# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report of the fine_tuning workload (registered in its ``REPORTS``): throughput and runtime
against the GPU count, one series per dataset replication and batch size, and the loss curves.
Kept apart from the parsers (changing a plot does not invalidate parse caches); plotly is lazy."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports

SERIES = ("model", "dataset_replication", "batch_size", "pod_count", "hyper_parameters")
TABLE = ("test_path", "model", "gpus_total", "dataset_replication", "batch_size", "train_runtime",
         "train_samples_per_second", "train_steps_per_second", "train_tokens_per_second", "final_loss")


def plot_losses(entries):
    """The logged loss against the epoch, one line per point."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for entry in entries:
        losses = [r for r in entry.results.get("losses") or [] if r.get("loss") is not None]
        if losses:
            fig.add_trace(go.Scatter(x=[r.get("epoch") for r in losses], y=[r["loss"] for r in losses],
                                     mode="lines+markers", name=entry.relative.rsplit("/", 1)[-1]))
    fig.update_layout(title="Training loss", xaxis_title="epoch (passes over the dataset)",
                      yaxis_title="loss (the trainer's, unitless)", height=420)
    return fig if fig.data else None


def fine_tuning_report(ctx):
    df = ctx.df[ctx.df["status"] == "succeeded"] if "status" in ctx.df else ctx.df
    title = "Fine-tuning throughput"
    if df.empty or "train_samples_per_second" not in df or not df["train_samples_per_second"].notna().any():
        return title, "<p>No successful fine-tuning job to plot.</p>"
    units = ctx.units()
    df = df.copy()
    if "gpus_total" not in df and "gpu_count" in df:
        df["gpus_total"] = df["gpu_count"]
    parts = []
    for number, kpi in enumerate(("train_samples_per_second", "train_runtime", "train_tokens_per_second")):
        if kpi in df and df[kpi].notna().any() and "gpus_total" in df:
            figure = reports.plot_kpi_by_factor(df, kpi, "gpus_total", units.get(kpi, ""), other_factors=SERIES,
                                                units=dict(ctx.axis_units(), gpus_total="GPUs"))
            parts.append(reports.figure_html(figure, "fine-tuning-%d" % number))
    losses = plot_losses([e for e in ctx.entries if not e.failed])
    if losses is not None:
        parts.append(reports.figure_html(losses, "fine-tuning-loss"))
    columns = [c for c in TABLE if c in df.columns]
    table = df[columns].rename(columns=reports.with_units(columns, units))
    parts.append(table.to_html(index=False, na_rep="", float_format=lambda v: "%.4g" % v, escape=True))
    return title, "".join(parts)
