# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTML reports, built DataFrame-first.

Every plot is a function of a pandas DataFrame (shape the data first, then
plotly express), so it can be tested on a hand-made DataFrame. Reports are
standalone HTML pages that load ``plotly.min.js`` from beside them: they work
offline, with no CDN.

``GENERIC_REPORTS`` holds the reports every workload gets (they know no
workload's fields); a workload adds its own (``REPORTS`` of the workload
module). ``postprocess.reports`` names the reports to draw, in order; when it
is null, the generic ones then the workload's defaults are drawn.
"""

from __future__ import annotations

import datetime
import html
import json
import math
import os
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ReportError
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import verdicts as verdicts_lib

PLOTLY_JS = "plotly.min.js"
INDEX = "reports_index.html"
STATUS_COLUMNS = ("test_path", "status", "uuid")

STYLE = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1em 0;color:#222;padding:0 1.5em}
h1{font-size:1.6em;margin-bottom:.2em} h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}
.meta{color:#666;font-size:.9em} table{border-collapse:collapse;margin:.6em 0;font-size:.88em}
th,td{border:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top} th{background:#f4f4f4}
.table-scroll{overflow-x:auto;max-width:100%}
pre{background:#f8f8f8;padding:.6em;overflow-x:auto;font-size:.85em;max-height:24em}
.failed{color:#b00020;font-weight:bold} .ok{color:#1b7f3b} .plot{margin:1em 0}
nav a{margin-right:1em} .card{border:1px solid #ddd;border-radius:6px;padding:.8em 1em;margin:.8em 0}
.controls{margin:.4em 0} .controls label{margin-right:1em;white-space:nowrap}
.note{background:#fff8e1;border-left:4px solid #f9a825;padding:.3em .6em;margin:.3em 0;font-size:.9em}
#explorer h2{margin-top:.2em} #ex-series-words{margin:.2em 0}
#ex-plot{width:100%;height:75vh;min-height:420px;margin:.4em 0 0}
.legend{max-height:7.5em;overflow:auto;font-size:.85em;border-top:1px solid #eee;padding:.3em 0}
.legend-item{border:0;background:none;cursor:pointer;padding:.1em .8em .1em 0;font:inherit;color:inherit}
.legend-group{margin:.1em 0} .legend-group-title{font-weight:bold;margin-right:.6em}
.legend-item.hidden{opacity:.35;text-decoration:line-through}
.swatch{display:inline-block;width:1.1em;margin-right:.2em;text-align:center}
"""


def escape(value):
    return html.escape("" if value is None else str(value))


# a URL's scheme (RFC 3986): what follows is the scheme's business
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
# what a browser strips or skips in a URL before reading its scheme: controls, whitespace, backslashes
_UNSAFE_URL_CHARACTERS = re.compile(r"[\x00-\x20\x7f\\]")


def safe_link(url):
    """Whether a URL from data may be a link a click opens: ``http:``/``https:``, or relative (a path,
    a query or a fragment of this site); not ``javascript:``, ``data:``, ``file:``, ``s3:`` or any other
    scheme, nor a network-path ``//host``, nor a URL a browser would read otherwise than this check
    does (controls, whitespace or backslashes anywhere). A URL that is not safe is shown as text."""
    if not isinstance(url, str) or not url or _UNSAFE_URL_CHARACTERS.search(url) or url.startswith("//"):
        return False
    scheme = _SCHEME.match(url)
    return scheme is None or scheme.group(1).lower() in ("http", "https")


# --------------------------------------------------------------------------
# data


def entries_dataframe(rows):
    """One row per test: settings, labels, KPI values, status. ``rows`` are dicts."""
    import pandas as pd

    return pd.DataFrame(list(rows))


def test_rows(entries, payloads):
    """Flat rows (settings + KPI values) of the entries, for the DataFrames."""
    rows = []
    for entry in entries:
        payload = payloads.get(entry.test_dir) or {}
        row = {"test_path": entry.relative, "uuid": entry.uuid,
               "status": "failed" if entry.failed else "succeeded", "exit_code": entry.exit_code}
        for key, value in entry.settings.items():
            if isinstance(value, (str, int, float, bool)) or value is None:
                row[key] = value
        for name, value in (payload.get("results") or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                row.setdefault(name, value)
        for name, kpi in (payload.get("kpis") or {}).items():
            row[name] = kpi.get("value")
            if kpi.get("error") is not None:
                row[error_column(name)] = kpi["error"]
        for name, value in (payload.get("labels") or {}).items():
            # labels the settings do not already give (the machine, versions): filters of the explorer
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                row.setdefault(name, value)
        rows.append(row)
    return rows


def error_column(kpi):
    """The DataFrame column holding a KPI's ± spread (its error bars)."""
    return "%s__error" % kpi


def error_bars(data, kpi):
    """``error_y`` for plotly express: the KPI's spread column when it has values, else None."""
    column = error_column(kpi)
    return column if column in data.columns and data[column].notna().any() else None


def error_bar_options(data, kpi):
    """plotly express options drawing a KPI's ± spread within the quantity's domain: a KPI that is
    never negative (a rate, a time) gets a lower bar that stops at 0 (``error_y_minus``), never a
    bar down to -200 GFLOP/s. Adds the ``<kpi>__error_minus`` column to ``data``."""
    column = error_bars(data, kpi)
    if column is None:
        return {}
    options = {"error_y": column}
    if (data[kpi].dropna() >= 0).all():
        minus = column + "_minus"
        data[minus] = [min(error, value) if not is_missing(error) else error
                       for error, value in zip(data[column], data[kpi])]
        options["error_y_minus"] = minus
    return options


def axis_title(column, units):
    """``column (unit)`` when the unit is known, else the column's name."""
    unit = (units or {}).get(column)
    return "%s (%s)" % (column, unit) if unit else column


def varying(data, column):
    """Whether a column takes at least two values in ``data`` (unset counts as a value: a line
    must not join a point with threads unset and one with threads=2)."""
    return column in data.columns and data[column].map(lambda v: json.dumps(v, default=str)
                                                       if not is_missing(v) else "<unset>").nunique() > 1


def is_missing(value):
    """None or NaN (pandas fills gaps with NaN)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def display_value(value):
    """Integral floats (pandas turns int columns with gaps into float) shown as ints."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def combination_label(df, columns):
    """A legend label per row: ``dtype=float32, backend=numpy`` of the given columns."""
    if not columns:
        return ["all"] * len(df)
    labels = []
    for _index, row in df[columns].iterrows():
        parts = ["%s=%s" % (c, display_value(row[c])) for c in columns if not is_missing(row[c])]
        labels.append(", ".join(parts) or "(unset)")
    return labels


# labels that say where and from what a test ran, not what it measured: never a default series
# (a line per commit or per host is a legend per test), shown on the hover and offered as filters
PROVENANCE_LABELS = frozenset((
    "run_id", "test_path", "test_uuid", "uuid", "git_commit", "commit", "hostname", "host", "node_name", "pod_name",
    "presets", "collection_version", "kpi_settings_version", "python_version", "artifacts_url", "build_id",
    "build_number", "pipeline_id", "pipeline_run", "job_id", "ci_job_id", "ci_build_id"))
PROVENANCE_SUFFIXES = ("_commit", "_sha", "_hostname", "_path", "_dir", "_url", "_uuid", "_run_id", "_build_id")


def is_provenance(name):
    """Whether a label names a test's provenance (its run, commit, host, path, the collection's
    version) rather than a factor a user varies."""
    lowered = str(name).lower()
    return lowered in PROVENANCE_LABELS or lowered.endswith(PROVENANCE_SUFFIXES)


def from_zero(values):
    """Whether an axis of these values starts from 0: a quantity that is never negative (a rate, a
    latency), so that a 0.02 % difference is not drawn across the whole plot."""
    present = [v for v in values if not is_missing(v)]
    return bool(present) and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                                 for v in present)


def scroll_table(table_html):
    """A table in a box that scrolls sideways when the table is wider than the page (never cut off)."""
    return "<div class='table-scroll'>%s</div>" % table_html


# --------------------------------------------------------------------------
# plots (each one: DataFrame in, figure out)


def plot_kpi_by_factor(df, kpi, factor, unit, other_factors=(), title_prefix="", units=None):
    """KPI against one factor, one series per combination of the other varying factors.

    A numeric factor gives lines (sorted by the factor); a categorical one gives markers only
    (a line between two categories means nothing). The KPI's spread, when known, is drawn as
    error bars."""
    import plotly.express as px

    # a test the factor does not apply to (a convolution on the size axis) is no position on that axis
    left_out = int((df[kpi].notna() & df[factor].isna()).sum())
    data = df[df[kpi].notna() & df[factor].notna()].copy()
    others = [f for f in other_factors if f != factor and varying(data, f)]
    data["combination"] = combination_label(data, others)
    numeric = data[factor].map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)).all()
    legend = ", ".join(others) if others else "series"
    options = dict(x=factor, y=kpi, color="combination", **error_bar_options(data, kpi),
                   hover_data=[c for c in ("test_path",) + tuple(others) if c in data.columns],
                   labels={kpi: "%s (%s)" % (kpi, unit), factor: axis_title(factor, units), "combination": legend},
                   title="%s%s by %s%s" % (title_prefix, kpi, factor,
                                           left_out_words(left_out, factor, "<br><sup>%s</sup>")))
    if numeric:
        fig = px.line(data.sort_values(by=[factor]), markers=True, **options)
    else:
        fig = px.scatter(data, **options)
        fig.update_traces(marker={"size": 10})
        fig.update_xaxes(type="category")
    if from_zero(data[kpi]):
        fig.update_yaxes(rangemode="tozero")
    fig.update_layout(legend_title_text=legend, height=420)
    return fig


def left_out_words(count, factor, template="%s"):
    """The note of a plot that leaves out the tests a factor does not apply to ('' when none)."""
    if not count:
        return ""
    return template % ("%d test(s) without %s left out (it does not apply to them)" % (count, factor))


def with_units(columns, units):
    """Table headers: a KPI column gets its unit, ``rate (GFLOP/s)``."""
    return {c: "%s (%s)" % (c, units[c]) for c in columns if units.get(c)}


def figure_html(fig, div_id):
    rendered = fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config={"displaylogo": False})
    return '<div class="plot">%s</div>' % rendered


# --------------------------------------------------------------------------
# pages


def page(title, body, subtitle="", notes=(), index=INDEX):
    """A standalone page; ``notes`` are header lines every report of a run shows (the host's
    load, the noisy tests): what a reader must know before trusting a number. ``index``: the page its
    "all reports" link goes to (None: no link, the page is an index)."""
    header = "".join("<p class='note' id='note-%d'>%s</p>" % (i, escape(note)) for i, note in enumerate(notes))
    return """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<script src="%s"></script><style>%s</style></head>
<body>%s
<h1>%s</h1><p class="meta">%s</p>%s
%s
</body></html>
""" % (escape(title), PLOTLY_JS, STYLE,
       '<nav><a href="%s">&larr; all reports</a></nav>' % escape(index) if index else "",
       escape(title), escape(subtitle), header, body)


def settings_table(settings):
    rows = "".join("<tr><th>%s</th><td>%s</td></tr>" % (escape(k), escape(v)) for k, v in settings.items())
    return scroll_table("<table>%s</table>" % rows)


class ReportContext:
    """What report builders get: entries, payloads, KPI definitions, warnings."""

    def __init__(self, entries, payloads, definitions, warnings, title, group_by=None, setting_units=None):
        self.entries = entries
        self.setting_units = dict(setting_units or {})
        self.payloads = payloads
        self.definitions = definitions
        self.warnings = warnings
        self.title = title
        self.group_by = group_by
        self.df = entries_dataframe(test_rows(entries, payloads))

    def units(self):
        return {d.name: d.unit for d in self.definitions}

    def axis_units(self):
        """The unit of every column a plot may put on an axis: the KPIs' and the workload's settings'."""
        return dict(self.setting_units, **self.units())

    def label_names(self):
        """Names of the payloads' labels (the explorer filters by them too)."""
        names = set()
        for payload in self.payloads.values():
            names.update((payload or {}).get("labels") or {})
        return names

    def entries_settings_keys(self):
        keys = set()
        for entry in self.entries:
            keys.update(entry.settings)
        return keys


def error_report(ctx):
    failed = [e for e in ctx.entries if e.failed]
    with_warnings = [e for e in ctx.entries if e.warnings]
    parts = ["<p>%d test(s), <span class='%s'>%d failed</span>, %d with parse warnings.</p>"
             % (len(ctx.entries), "failed" if failed else "meta", len(failed), len(with_warnings))]
    if not failed:
        parts.append("<p class='ok'>No test failed.</p>")
    for entry in failed:
        parts.append("<div class='card'><h2 class='failed'>%s</h2>" % escape(entry.relative))
        parts.append("<p>exit code: <b>%s</b> &middot; uuid: %s</p>" % (escape(entry.exit_code), escape(entry.uuid)))
        parts.append(settings_table(entry.settings))
        failure = entry.results.get("failure")
        parts.append("<h3>FAILURE</h3><pre>%s</pre>" % escape(failure if failure else "(no FAILURE file)"))
        if entry.results.get("stderr_tail"):
            parts.append("<h3>stderr (tail)</h3><pre>%s</pre>" % escape(entry.results["stderr_tail"]))
        if entry.warnings:
            parts.append("<h3>Missing or unreadable files</h3><ul>%s</ul>"
                         % "".join("<li>%s</li>" % escape(w) for w in entry.warnings))
        parts.append("</div>")
    others = [e for e in with_warnings if not e.failed]
    if others:
        parts.append("<h2>Parse warnings of tests that did not fail</h2>")
        for entry in others:
            parts.append("<div class='card'><b>%s</b><ul>%s</ul></div>" % (
                escape(entry.relative), "".join("<li>%s</li>" % escape(w) for w in entry.warnings)))
    if ctx.warnings:
        parts.append("<h2>Tree warnings</h2><ul>%s</ul>" % "".join("<li>%s</li>" % escape(w) for w in ctx.warnings))
    return "Error report", "".join(parts)


def overview_factors(df, exclude=()):
    """Columns with at least two distinct set values: the factors of a matrix."""
    factors = []
    for column in df.columns:
        if column in exclude or column in STATUS_COLUMNS or column == "exit_code" or column.endswith("__error"):
            continue
        if df[column].dropna().map(lambda v: json.dumps(v, default=str)).nunique() > 1:
            factors.append(column)
    return factors


# --------------------------------------------------------------------------
# the explorer: one plot the reader steers (KPI, x axis, series, filters), with a permalink

EXPLORER_SCRIPT = r"""
(function () {
  var data = JSON.parse(document.getElementById('ex-data').textContent);
  var plot = document.getElementById('ex-plot');
  var legend = document.getElementById('ex-legend');
  var PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
                 '#bcbd22', '#17becf'];
  // past ten series the colours come round again, with another marker: no two series look the same
  var SYMBOLS = [['circle', '\u25cf'], ['square', '\u25a0'], ['diamond', '\u25c6'], ['triangle-up', '\u25b2'],
                 ['triangle-down', '\u25bc'], ['star', '\u2605']];
  function missing(v) { return v === null || v === undefined; }
  function text(v) { return missing(v) ? '(unset)' : String(v); }
  // hover text is plotly's pseudo-HTML: data is shown as text, never as markup
  function plain(v) { return String(v).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); }
  function numeric(values) { return values.every(function (v) { return typeof v === 'number'; }); }
  function select(id) { return document.getElementById(id); }
  function varies(rows, d) {
    var seen = Object.create(null), count = 0;
    rows.forEach(function (r) { var t = text(r[d]); if (!seen[t]) { seen[t] = true; count += 1; } });
    return count > 1;
  }
  // what reports.safe_link lets through, again here: only http(s) and relative links are opened
  function safeLink(link) {
    if (typeof link !== 'string' || link === '' || /[\x00-\x20\x7f\\]/.test(link) || link.slice(0, 2) === '//') {
      return false;
    }
    var scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(link);
    return scheme === null || /^https?$/i.test(scheme[1]);
  }
  function state() {
    var s = {kpi: select('ex-kpi').value, x: select('ex-x').value, series: select('ex-series').value,
             y: select('ex-y').value, filters: {}};
    document.querySelectorAll('#explorer select[data-dim]').forEach(function (el) {
      if (el.value !== '') { s.filters[el.getAttribute('data-dim')] = el.value; }
    });
    return s;
  }
  function apply(hash) {
    var params = new URLSearchParams(hash.replace(/^#/, ''));
    [['kpi', 'ex-kpi'], ['x', 'ex-x'], ['series', 'ex-series'], ['y', 'ex-y']].forEach(function (pair) {
      var wanted = params.get(pair[0]), el = select(pair[1]);
      if (wanted !== null && Array.prototype.some.call(el.options, function (o) { return o.value === wanted; })) {
        el.value = wanted;
      }
    });
    document.querySelectorAll('#explorer select[data-dim]').forEach(function (el) {
      var wanted = params.get('f.' + el.getAttribute('data-dim'));
      el.value = (wanted !== null && Array.prototype.some.call(el.options, function (o) { return o.value === wanted; }))
        ? wanted : '';
    });
  }
  function permalink(s) {
    var params = new URLSearchParams();
    params.set('kpi', s.kpi); params.set('x', s.x); params.set('series', s.series); params.set('y', s.y);
    Object.keys(s.filters).sort().forEach(function (k) { params.set('f.' + k, s.filters[k]); });
    return '#' + params.toString();
  }
  // the legend: below the plot, at most a few lines high (it scrolls), series grouped by their first
  // factor; a click hides or shows a series (or a group). The plot keeps its whole box.
  function drawLegend(traces, labels, seriesDims) {
    legend.textContent = '';
    legend.hidden = traces.length < 2;
    if (legend.hidden) { return; }
    var title = document.createElement('div');
    title.className = 'meta';
    title.textContent = traces.length + ' series, one per ' + seriesDims.join(', ') + ' (click one to hide or show it)';
    legend.appendChild(title);
    var box = null, current = null;
    traces.forEach(function (trace, i) {
      if (box === null || trace.legendgroup !== current) {
        current = trace.legendgroup;
        box = document.createElement('div');
        box.className = 'legend-group';
        if (current) {
          var heading = document.createElement('button');
          heading.type = 'button'; heading.className = 'legend-item legend-group-title'; heading.textContent = current;
          heading.addEventListener('click', (function (group) {
            return function () {
              var members = [];
              plot.data.forEach(function (t, j) { if (t.legendgroup === group) { members.push(j); } });
              var show = members.every(function (j) { return plot.data[j].visible === false; });
              Plotly.restyle(plot, {visible: show}, members);
              legend.querySelectorAll('[data-trace]').forEach(function (el) {
                if (members.indexOf(Number(el.getAttribute('data-trace'))) >= 0) {
                  el.classList.toggle('hidden', !show);
                }
              });
            };
          })(current));
          box.appendChild(heading);
        }
        legend.appendChild(box);
      }
      var item = document.createElement('button');
      item.type = 'button'; item.className = 'legend-item'; item.setAttribute('data-trace', String(i));
      var swatch = document.createElement('span');
      swatch.className = 'swatch'; swatch.style.color = trace.line.color;
      swatch.textContent = SYMBOLS[Math.floor(i / PALETTE.length) % SYMBOLS.length][1];
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(labels[i]));
      item.addEventListener('click', function () {
        var shown = plot.data[i].visible !== false;
        Plotly.restyle(plot, {visible: !shown}, [i]);
        item.classList.toggle('hidden', shown);
      });
      box.appendChild(item);
    });
  }
  function render() {
    var s = state(), leftOut = 0;
    var rows = data.rows.filter(function (r) {
      if (missing(r[s.kpi])) { return false; }
      if (!Object.keys(s.filters).every(function (k) { return text(r[k]) === s.filters[k]; })) { return false; }
      // a factor that does not apply to a test (a convolution's size) is no position on its axis: left out, said
      if (missing(r[s.x])) { leftOut += 1; return false; }
      return true;
    });
    // series "*": one per combination of the factors (the settings a user varies, never a run's provenance)
    // that vary among the rows shown
    var seriesDims = s.series === '*' ? [] : (s.series ? [s.series] : []);
    if (s.series === '*') {
      (data.factors || data.dimensions).forEach(function (d) {
        if (d === s.x) { return; }
        // a factor the ones already chosen determine (a convolution's batch, given the indicator) splits no
        // series: it is left out of their names
        var seen = Object.create(null), splits = false;
        rows.forEach(function (r) {
          var k = seriesDims.map(function (c) { return text(r[c]); }).join('\u0001'), v = text(r[d]);
          if (!(k in seen)) {
            seen[k] = v;
          } else if (seen[k] !== v) {
            splits = true;
          }
        });
        if (splits) { seriesDims.push(d); }
      });
    }
    var groupDim = seriesDims.length > 1 ? seriesDims[0] : null;
    var groups = Object.create(null), groupOf = Object.create(null), order = [];
    rows.forEach(function (r) {
      // a factor unset for a test (a convolution's size) is not part of its series' name
      var named = seriesDims.filter(function (d) { return !missing(r[d]); });
      var key = seriesDims.length ? (named.length ? named : seriesDims)
        .map(function (d) { return d + '=' + text(r[d]); }).join(', ') : 'all';
      if (!groups[key]) {
        groups[key] = []; order.push(key); groupOf[key] = groupDim ? groupDim + '=' + text(r[groupDim]) : '';
      }
      groups[key].push(r);
    });
    order.sort(function (a, b) {
      return groupOf[a] < groupOf[b] ? -1 : groupOf[a] > groupOf[b] ? 1 : a < b ? -1 : a > b ? 1 : 0; });
    var isNumeric = numeric(rows.map(function (r) { return r[s.x]; }));
    // ISO times (a long-term view's x): a date axis, in time order
    var isDate = !isNumeric && rows.length > 0 && rows.every(function (r) {
      return typeof r[s.x] === 'string' && /^\d{4}-\d\d-\d\dT/.test(r[s.x]); });
    var verdictKey = s.kpi + '__verdict';
    var MARKS = {regression: ['x', '#d62728'], persisting_regression: ['x-thin-open', '#8c1c1c'],
                 drift: ['star-triangle-down-open', '#9467bd'],
                 improvement: ['triangle-up', '#2ca02c'], inconclusive: ['diamond-open', '#ff7f0e']};
    var errorKey = s.kpi + '__error', meta = data.kpis[s.kpi] || {};
    // the other labels (a run's provenance, the machine) on the hover, when they vary
    var hoverDims = (data.hover || []).filter(function (d) {
      return d !== s.x && seriesDims.indexOf(d) < 0 && varies(rows, d); });
    var labels = [];
    var traces = order.map(function (key, i) {
      var g = groups[key].slice(), color = PALETTE[i % PALETTE.length];
      var symbol = SYMBOLS[Math.floor(i / PALETTE.length) % SYMBOLS.length][0];
      if (isNumeric) { g.sort(function (a, b) { return a[s.x] - b[s.x]; }); }
      if (isDate) { g.sort(function (a, b) { return a[s.x] < b[s.x] ? -1 : a[s.x] > b[s.x] ? 1 : 0; }); }
      var xs = g.map(function (r) { return isNumeric || isDate ? r[s.x] : text(r[s.x]); });
      // a line joins points of distinct x only: tests that share one (runs at one size) are markers
      var repeated = xs.some(function (v, j) { return j > 0 && v === xs[j - 1]; });
      var group = groupOf[key];
      labels.push(groupDim ? seriesDims.slice(1).filter(function (d) { return !missing(g[0][d]); })
        .map(function (d) { return d + '=' + text(g[0][d]); }).join(', ') || '(no other factor set)' : key);
      var trace = {type: 'scatter', mode: (isNumeric || isDate) && !repeated ? 'lines+markers' : 'markers', name: key,
                   legendgroup: group, x: xs, y: g.map(function (r) { return r[s.kpi]; }),
                   line: {color: color}, marker: {size: 9, color: color, symbol: symbol},
                   text: g.map(function (r) {
                     return [r.test_path].concat(hoverDims.filter(function (d) { return !missing(r[d]); })
                       .map(function (d) { return d + ': ' + text(r[d]); }))
                       .concat(r[verdictKey] ? [r[verdictKey]] : [])
                       .concat(r.artifacts ? ['artifacts: ' + r.artifacts] : []).map(plain).join('<br>'); }),
                   customdata: g.map(function (r) { return safeLink(r.link) ? r.link : null; })};
      if (g.some(function (r) { return MARKS[r[verdictKey]]; })) {
        trace.marker = {color: color, size: g.map(function (r) { return MARKS[r[verdictKey]] ? 14 : 9; }),
                        symbol: g.map(function (r) { return (MARKS[r[verdictKey]] || [symbol])[0]; }),
                        line: {width: 2, color: g.map(function (r) { return (MARKS[r[verdictKey]] || [null, '#444'])[1]; })}};
      }
      if (g.some(function (r) { return typeof r[errorKey] === 'number'; })) {
        // within the quantity's domain: a value that is never negative gets no bar below 0
        var nonNegative = rows.every(function (r) { return r[s.kpi] >= 0; });
        trace.error_y = {type: 'data', symmetric: false, visible: true, color: color,
                         array: g.map(function (r) { return r[errorKey] || 0; }),
                         arrayminus: g.map(function (r) {
                           var e = r[errorKey] || 0; return nonNegative ? Math.min(e, r[s.kpi]) : e; })};
      }
      return trace;
    });
    // a rate or a latency (never negative) is drawn from 0 unless the reader zooms in, and then the axis says so
    var positive = rows.length > 0 && rows.every(function (r) {
      return typeof r[s.kpi] === 'number' && r[s.kpi] >= 0; });
    var zoomed = s.y === 'fit' && positive;
    var layout = {autosize: true, margin: {l: 70, r: 20, t: 40, b: 60}, showlegend: false,
                  title: {text: s.kpi + ' by ' + s.x + (seriesDims.length ? ', one series per ' + seriesDims.join(', ') : '')},
                  xaxis: {title: {text: s.x + (data.units[s.x] ? ' (' + data.units[s.x] + ')' : '')},
                          type: isNumeric ? 'linear' : isDate ? 'date' : 'category', automargin: true},
                  yaxis: {title: {text: s.kpi + (meta.unit ? ' (' + meta.unit + ')' : '') +
                                        (zoomed ? ' - zoomed, not from 0' : '')},
                          rangemode: positive && !zoomed ? 'tozero' : 'normal', automargin: true}};
    Plotly.react(plot, traces, layout, {displaylogo: false, responsive: true});
    drawLegend(traces, labels, seriesDims);
    plot.setAttribute('data-marked', String(rows.filter(function (r) { return MARKS[r[verdictKey]]; }).length));
    plot.setAttribute('data-points', String(rows.length));
    plot.setAttribute('data-traces', String(traces.length));
    plot.setAttribute('data-left-out', String(leftOut));
    select('ex-count').textContent = rows.length + ' of ' + data.rows.length + ' test(s) shown' +
      (leftOut ? '; ' + leftOut + ' without ' + s.x + ' left out (it does not apply to them)' : '') +
      (meta.higher_is_better === true ? '; higher is better' : meta.higher_is_better === false ? '; lower is better' : '');
    var link = permalink(s);
    select('ex-permalink').setAttribute('href', link);
    if (window.location.hash !== link) { history.replaceState(null, '', link); }
  }
  apply(window.location.hash);
  render();
  // a point that knows where its run is: a click opens its reports and artifacts
  plot.on('plotly_click', function (event) {
    var link = event && event.points && event.points[0] && event.points[0].customdata;
    // noopener: the page opened gets no handle on this one (window.opener is null)
    if (safeLink(link)) { window.open(link, '_blank', 'noopener'); }
  });
  document.querySelectorAll('#explorer select').forEach(function (el) { el.addEventListener('change', render); });
  window.addEventListener('hashchange', function () { apply(window.location.hash); render(); });
})();
"""


def _json_for_script(value):
    """JSON safe inside a <script> element (no '</' to close it early)."""
    return json.dumps(value, default=str, allow_nan=False).replace("</", "<\\/")


def _plain(value):
    if is_missing(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    return value


def explorer_html(df, kpis, dimensions, definitions, units=None, factors=None):
    """The explorer's controls, its data (the successful tests' settings, labels and KPI values)
    and its script: choose the KPI, the x axis and the series, filter by any setting or label; the
    URL fragment holds the view (a permalink that restores it). Offline, in the same page.
    ``factors``: the dimensions the default series are made of (see ``explorer_block``)."""
    if df.empty or not kpis or not dimensions:
        return ""
    columns = ["test_path"] + list(dimensions) + [c for k in kpis for c in (k, error_column(k)) if c in df.columns]
    rows = [{c: _plain(row[c]) for c in columns if c in df.columns} for _i, row in df.iterrows()]
    meta = {d.name: {"unit": d.unit, "higher_is_better": d.higher_is_better} for d in definitions if d.name in kpis}
    filter_values = {dimension: sorted({"(unset)" if is_missing(v) else display_value(v) if isinstance(v, float)
                                        else str(v) for v in df[dimension]}) for dimension in dimensions}
    return explorer_block(rows, meta, dimensions, filter_values, units, factors=factors)


def explorer_block(rows, meta, dimensions, filter_values, units=None, factors=None, hover=None):
    """The explorer of ``rows`` (dicts: ``test_path``, the dimensions, each KPI, its ``<kpi>__error``, and
    optionally ``<kpi>__verdict`` - marked on the points - ``link`` - opened on a click when ``safe_link``
    says so, dropped otherwise - and ``artifacts`` - a URL shown as text on hover);
    ``meta`` {kpi: {unit, higher_is_better}}; ``filter_values`` {dimension: values offered} (a dimension
    without an entry is an axis or series only). ``factors``: the dimensions a user varies, whose
    combinations are the default series (None: every dimension but the provenance labels,
    ``is_provenance``); ``hover``: the columns shown on a point's hover when they vary (None: the
    dimensions that are not factors). A test without the x axis' dimension is left out of the plot,
    and the count says so; a quantity that is never negative is drawn from 0 unless the reader zooms in."""
    kpis = list(meta)
    if factors is None:
        factors = [d for d in dimensions if not is_provenance(d)]
    factors = [d for d in factors if d in dimensions]
    if hover is None:
        hover = [d for d in dimensions if d not in factors]

    def options(values, selected=None, blank=None):
        found = ([("", blank)] if blank is not None else []) + [(v, v) for v in values]
        return "".join("<option value='%s'%s>%s</option>" % (escape(v), " selected" if v == selected else "",
                                                             escape(label)) for v, label in found)

    filters = []
    for dimension in dimensions:
        if dimension not in filter_values:
            continue
        filters.append("<label>%s <select data-dim='%s'>%s</select></label>" % (
            escape(dimension), escape(dimension), options(filter_values[dimension], blank="all")))
    # by default one series per combination of the factors that vary (dtype and indicator never merged
    # into one line, as the overview's plots); a run's provenance (its commit, host) is on the hover
    series = [("*", "(every factor that varies)")] + [(d, d) for d in dimensions]
    series_options = "".join("<option value='%s'%s>%s</option>" % (
        escape(v), " selected" if v == "*" else "", escape(label)) for v, label in series)
    controls = ("<div class='controls'><label>KPI <select id='ex-kpi'>%s</select></label> "
                "<label>x <select id='ex-x'>%s</select></label> "
                "<label>series <select id='ex-series'><option value=''>(none)</option>%s</select></label> "
                "<label>y axis <select id='ex-y'><option value='zero' selected>from 0</option>"
                "<option value='fit'>zoomed to the data (not from 0)</option></select></label> "
                "<a id='ex-permalink' href='#'>permalink</a> <span id='ex-count' class='meta'></span></div>"
                "<div class='controls'>filters: %s</div>%s") % (
        options(kpis), options(dimensions), series_options, " ".join(filters), series_words(factors, hover))
    axis_units = {d: (units or {}).get(d) for d in dimensions if (units or {}).get(d)}
    rows = [row if safe_link(row.get("link")) or "link" not in row else
            {k: v for k, v in row.items() if k != "link"} for row in rows]
    data = {"rows": rows, "kpis": meta, "dimensions": list(dimensions), "units": axis_units,
            "factors": factors, "hover": list(hover)}
    return ("<div id='explorer' class='card'><h2>Explore</h2>%s<div id='ex-plot'></div>"
            "<div id='ex-legend' class='legend' hidden></div>"
            "<script type='application/json' id='ex-data'>%s</script><script>%s</script></div>") % (
        controls, _json_for_script(data), EXPLORER_SCRIPT)


def series_words(factors, hover, shown=12):
    """The line under the explorer's controls: what the default series are made of, and what is on the hover."""
    def names(values):
        values = list(values)
        return ", ".join(values[:shown]) + (" and %d more" % (len(values) - shown) if len(values) > shown else "")

    words = ["series by default: one per combination of the factors that vary among the tests shown (%s)"
             % (names(factors) or "none")]
    if hover:
        words.append("on each point's hover, when they vary: %s" % names(hover))
    return "<p class='meta' id='ex-series-words'>%s</p>" % escape("; ".join(words))


def matrix_overview(ctx):
    df = ctx.df[ctx.df["status"] == "succeeded"] if "status" in ctx.df else ctx.df
    definitions = [d for d in ctx.definitions if not d.ignored_for_regression]
    kpis = [d.name for d in definitions if d.name in df.columns and df[d.name].notna().any()]
    if df.empty or not kpis:
        return "Matrix overview", "<p>No successful test with KPI values to plot.</p>"
    numeric_results = {c for c in df.columns if c not in ctx.entries_settings_keys()}
    group_by = ctx.group_by if ctx.group_by in df.columns else None
    groups = [(value, df[df[group_by] == value]) for value in sorted(df[group_by].dropna().unique())] if group_by else [(None, df)]
    parts = ["<p>Each KPI against each factor that varies%s; one line per combination of the other factors. "
             "KPIs ignored for regression are in the other reports.</p>"
             % (" within each %s" % escape(group_by) if group_by else "")]
    labels = ctx.label_names()
    dimensions = overview_factors(df, exclude=set(kpis) | (numeric_results - labels))
    # the settings before the labels, numeric ones first: the default x axis is a numeric factor
    dimensions.sort(key=lambda d: (d in labels and d not in ctx.entries_settings_keys(),
                                   not df[d].dropna().map(lambda v: isinstance(v, (int, float))
                                                          and not isinstance(v, bool)).all()))
    # the default series: the matrix's settings (a label - the machine, a version - is on the hover and a filter)
    settings = ctx.entries_settings_keys()
    factors = [d for d in dimensions if d in settings and not is_provenance(d)]
    parts.append(explorer_html(df, kpis, dimensions, definitions, units=ctx.axis_units(), factors=factors))
    units = ctx.units()
    count = 0
    for value, data in groups:
        factors = overview_factors(data, exclude=set(kpis) | numeric_results | {group_by})
        if group_by:
            parts.append("<h2>%s = %s</h2>" % (escape(group_by), escape(value)))
        if not factors:
            parts.append("<p class='meta'>%d test(s); no factor varies: nothing to compare.</p>" % len(data))
            continue
        for kpi in kpis:
            for factor in factors:
                count += 1
                prefix = "%s: " % value if group_by else ""
                parts.append(figure_html(plot_kpi_by_factor(data, kpi, factor, units[kpi], factors, prefix,
                                                            units=ctx.axis_units()), "overview-%d" % count))
    return "Matrix overview", "".join(parts)


GENERIC_REPORTS = {
    "error_report": (error_report, "Every failed test with its settings, FAILURE and stderr; missing or corrupt files"),
    "matrix_overview": (matrix_overview, "Every KPI against every factor that varies"),
}


def report_names(configured, workload, report_sets=(), report_set=None):
    """The reports to draw: the ``report_set`` of ``report_sets`` (by id), else ``configured`` (validated),
    else the generic ones then the workload's defaults."""
    available = dict(GENERIC_REPORTS)
    available.update(workload.reports)
    if report_set is not None:
        configured = next(item["generate"] for item in report_sets if item["id"] == report_set)
    if configured is None:
        return list(GENERIC_REPORTS) + [name for name in workload.default_reports if name not in GENERIC_REPORTS]
    unknown = [name for name in configured if name not in available]
    if unknown:
        where = "postprocess.report_sets[%s]" % report_set if report_set is not None else "postprocess.reports"
        raise ReportError("%s: unknown report(s) %s; reports of workload %s: %s"
                          % (where, ", ".join(unknown), workload.name, ", ".join(sorted(available))))
    return list(configured)


def report_builder(name, workload):
    """(builder, description) of a report name (generic or the workload's)."""
    return workload.reports.get(name) or GENERIC_REPORTS[name]


INDEX_REGISTRY = "reports_index.json"


def _read_registry(plots_dir):
    with open(os.path.join(plots_dir, INDEX_REGISTRY), encoding="utf-8") as handle:
        return json.load(handle)


def render_index(plots_dir):
    """(Re)write reports_index.html from the registry of written reports."""
    registry = _read_registry(plots_dir)
    items = "".join("<li class='card'>%s<br><span class='meta'>%s</span></li>" % (
        "<a href='%s'>%s</a>" % (escape(r["file"]), escape(r["title"])) if safe_link(r["file"]) else
        "%s (%s)" % (escape(r["title"]), escape(r["file"])), escape(r["description"])) for r in registry["reports"])
    body = "<p>%s Generated %s.</p><ul style='list-style:none;padding:0'>%s</ul>" % (
        registry["counts"], registry["generated"], items)
    index = page(registry["title"], body, registry["subtitle"], registry.get("notes", ()), index=None)
    artifacts.write_text_atomic(os.path.join(plots_dir, INDEX), index)


def add_to_index(plots_dir, filename, title, description):
    path = os.path.join(plots_dir, INDEX_REGISTRY)
    registry = _read_registry(plots_dir)
    registry["reports"] = [r for r in registry["reports"] if r["file"] != filename]
    registry["reports"].append({"file": filename, "title": title, "description": description})
    artifacts.write_json_atomic(path, registry)
    render_index(plots_dir)


def count_summary(total, failed):
    """'N test(s): X succeeded, Y failed.' with the failed count in red only when there are failures."""
    failed_class = "failed" if failed else "meta"
    return "%d test(s): <span class='ok'>%d succeeded</span>, <span class='%s'>%d failed</span>." % (
        total, total - failed, failed_class, failed)


def write_reports(plots_dir, ctx, names, workload, subtitle="", notes=()):
    """Write plotly.min.js, every report and the index; returns [(name, title, file, description)]."""
    import plotly.offline

    artifacts.write_text_atomic(os.path.join(plots_dir, PLOTLY_JS), plotly.offline.get_plotlyjs())
    written = []
    for name in names:
        builder, description = report_builder(name, workload)
        title, body = builder(ctx)
        filename = "%s.html" % name
        artifacts.write_text_atomic(os.path.join(plots_dir, filename), page(title, body, subtitle, notes))
        written.append((name, title, filename, description))
    counts = count_summary(len(ctx.entries), sum(1 for e in ctx.entries if e.failed))
    artifacts.write_json_atomic(os.path.join(plots_dir, INDEX_REGISTRY), {
        "title": ctx.title, "subtitle": subtitle, "notes": list(notes), "counts": counts,
        "generated": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
        "reports": [{"file": f, "title": t, "description": d} for _n, t, f, d in written]})
    render_index(plots_dir)
    return written


# --------------------------------------------------------------------------
# regression report


def plot_history(df, kpi, unit, title, baseline=None, change_times=()):
    """History of one KPI on a time axis, the current value marked, run id and commit on hover;
    ``baseline`` ({"mean", "stdev", "start", "end"}) draws the baseline's mean +/- its spread;
    ``change_times`` are the change points the method found (dashed vertical lines)."""
    import plotly.express as px

    fig = px.line(df[df["kind"] == "history"], x="time", y="value", markers=True,
                  hover_data={"run_id": True, "git_commit": True, "time": True},
                  labels={"value": "%s (%s)" % (kpi, unit), "time": "time"}, title=title)
    current = df[df["kind"] == "current"]
    fig.add_scatter(x=current["time"], y=current["value"], mode="markers", name="current",
                    marker={"size": 13, "symbol": "star", "color": "#d62728"})
    if baseline and baseline.get("mean") is not None:
        mean, stdev = baseline["mean"], baseline.get("stdev")
        if stdev:
            # data coordinates on both axes (add_hrect would take x0/x1 as fractions of the axis)
            fig.add_shape(type="rect", xref="x", yref="y", x0=baseline["start"], x1=baseline["end"],
                          y0=mean - stdev, y1=mean + stdev, fillcolor="#90caf9", opacity=0.3, line_width=0)
        fig.add_scatter(x=[baseline["start"], baseline["end"]], y=[mean, mean], mode="lines", name="baseline mean",
                        line={"dash": "dash", "color": "#1565c0"})
    for when in change_times:
        fig.add_shape(type="line", xref="x", yref="paper", x0=when, x1=when, y0=0, y1=1,
                      line={"dash": "dot", "color": "#6a1b9a", "width": 2})
        fig.add_annotation(x=when, y=1, xref="x", yref="paper", text="change", showarrow=False,
                           font={"color": "#6a1b9a", "size": 10}, yanchor="bottom")
    fig.update_xaxes(type="date")
    fig.update_layout(height=280, margin={"l": 50, "r": 20, "t": 40, "b": 40}, showlegend=False)
    return fig


def change_times(evidence, df):
    """The times of the change points of ``evidence`` (indexes into history + current)."""
    times = list(df["time"])
    return [times[c["index"]] for c in evidence.get("change_points") or ()
            if isinstance(c.get("index"), int) and 0 <= c["index"] < len(times)]


def history_dataframe(history, current, current_time=None):
    """One row per history point and one for the current value: time, value, run id, commit."""
    import pandas as pd

    rows = [{"time": h["timestamp"], "value": h["value"], "run_id": h.get("run_id") or "",
             "git_commit": (h.get("git_commit") or "")[:12], "kind": "history"} for h in history]
    rows.append({"time": current_time, "value": current, "run_id": "this run", "git_commit": "", "kind": "current"})
    df = pd.DataFrame(rows)
    df["time"] = pd.to_datetime(df["time"], utc=True, errors="coerce", format="ISO8601")
    return df


def baseline_band(evidence, df):
    """The baseline the verdict compared with, as a band on the history plot: the pre-change
    mean for a persisting regression, else the current segment's mean, +/- its spread."""
    history = df[df["kind"] == "history"]
    if history.empty:
        return None
    if evidence.get("pre_change_mean") is not None:
        return {"mean": evidence["pre_change_mean"], "stdev": None, "start": history["time"].min(),
                "end": history["time"].max()}
    mean = evidence.get("baseline_mean", evidence.get("mean_before", evidence.get("history_mean")))
    if mean is None:
        return None
    points = evidence.get("baseline_points") or len(history)
    segment = history.tail(points)
    return {"mean": mean, "stdev": evidence.get("baseline_stdev"), "start": segment["time"].min(),
            "end": segment["time"].max()}


VERDICT_STYLE = {"regression": "failed", "persisting_regression": "failed", "drift": "failed", "improvement": "ok",
                 "inconclusive": "meta", "no_change": "meta", "not_enough_history": "meta"}


def _fmt(value):
    if isinstance(value, float):
        return "%.4g" % value
    return escape(value)


def _percent(value):
    return "%+.1f%%" % (100 * value) if isinstance(value, (int, float)) else ""


def _change(line):
    """A verdict line's change: relative when it is defined, else absolute (a rise from 0)."""
    relative = line.get("relative_change_since", line.get("relative_change"))
    if isinstance(relative, (int, float)):
        return _percent(relative)
    absolute = line.get("absolute_change_since", line.get("absolute_change"))
    return "%s (absolute; from 0)" % _fmt_signed(absolute) if isinstance(absolute, (int, float)) else ""


def _fmt_signed(value):
    return ("+" if value > 0 else "") + _fmt(value)


def drift_words(drift):
    """A drift in words: how far it moved, since which run, its slope and p-value."""
    since = drift.get("since") or {}
    return "drift for the %s since %s (run %s, commit %s): %s over %d run(s), %s per run, p %s" % (
        drift.get("direction") or "?", since.get("timestamp"), since.get("run_id") or "?",
        (since.get("git_commit") or "?")[:12], _percent(drift.get("relative_change")), drift.get("points") or 0,
        _fmt_signed(drift["slope_per_run"]) if isinstance(drift.get("slope_per_run"), (int, float)) else "?",
        _fmt(drift.get("pvalue")))


def _since(line):
    since = line.get("since") or {}
    if not since:
        return ""
    return "since %s (run %s, commit %s): %s" % (since.get("timestamp"), since.get("run_id") or "?",
                                                 (since.get("git_commit") or "?")[:12],
                                                 _percent(line.get("relative_change_since")))


def uncertainty_words(uncertainty):
    """A run's uncertainty in words: its repetitions' spread and its host's load."""
    words = []
    if uncertainty.get("spread") is not None:
        words.append("repetitions spread %.3f" % uncertainty["spread"])
    if uncertainty.get("load_per_cpu") is not None:
        words.append("host load %.2f per CPU" % uncertainty["load_per_cpu"])
    return ", ".join(words)


def regression_report(summary, details):
    parts = ["<p><b>%s</b></p>" % escape(summary["message"]),
             "<p class='meta'>history from %s; compared along %s; ignoring %s; %s; fail the test on regression: %s"
             "%s%s</p>" % (
                 escape(summary.get("store") or "(no store)"), escape(", ".join(summary["comparison_keys"]) or "-"),
                 escape(", ".join(summary["ignored_keys"]) or "-"),
                 "across machines" if summary.get("compare_across_machines") else
                 "on comparable machines only (%s)" % escape(", ".join(summary.get("machine_keys") or []) or "-"),
                 escape(summary["fail_test_on_regression"]),
                 ", and on persisting ones" if summary.get("fail_on_persisting") else "",
                 "; history is required" if summary.get("require_history") else "")]
    excluded = summary.get("excluded_from_baselines") or {}
    if excluded.get("noisy") or excluded.get("forgotten"):
        parts.append("<p class='meta'>kept out of the baselines: %d noisy and %d forgotten history point(s)</p>"
                     % (excluded.get("noisy", 0), excluded.get("forgotten", 0)))
    if summary.get("noisy_entries"):
        parts.append("<div class='note'><b>Noisy tests</b> (%s):<ul>%s</ul></div>" % (
            escape(verdicts_lib.noise_words(summary)), "".join(
                "<li>%s: %s</li>" % (escape(n["test"]), escape("; ".join(n["reasons"])))
                for n in summary["noisy_entries"])))
    if summary.get("inconclusive"):
        rows = "".join("<tr><td>%s%s</td><td>%s</td><td>%s %s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            escape(r["test"]), " <span class='failed'>(noisy)</span>" if r.get("noisy") else "", escape(r["kpi"]),
            _fmt(r["current"]), escape(r["unit"]), _fmt(r.get("baseline_mean", r.get("history_mean"))),
            escape(_change(r)), _fmt(r.get("pvalue")) if r.get("pvalue") is not None else "",
            escape(r.get("why") or "")) for r in summary["inconclusive"])
        parts.append("<h2 class='meta'>Inconclusive</h2><p class='meta'>changes the evidence cannot tell from noise "
                     "yet; they never fail the test</p><div class='table-scroll'><table><tr><th>test</th>"
                     "<th>KPI</th><th>current</th>"
                     "<th>baseline</th><th>change</th><th>p-value</th><th>why</th></tr>%s</table></div>" % rows)
    if summary.get("drifts"):
        rows = "".join("<tr><td>%s</td><td>%s</td><td>%s %s</td><td class='%s'>%s</td></tr>" % (
            escape(r["test"]), escape(r["kpi"]), _fmt(r["current"]), escape(r["unit"]),
            "failed" if (r.get("drift") or {}).get("direction") == "worse" else "ok",
            escape(drift_words(r.get("drift") or {}))) for r in summary["drifts"])
        parts.append("<h2>Drifts</h2><p class='meta'>no step, but the latest runs slope: a slow trend, reported apart "
                     "from regressions%s</p><div class='table-scroll'><table><tr><th>test</th><th>KPI</th>"
                     "<th>current</th><th>drift</th></tr>%s</table></div>" % (
                         "; drifts for the worse fail the test" if summary.get("fail_on_drift") else "", rows))
    headings = (("regressions", "New regressions"), ("persisting_regressions", "Persisting regressions"),
                ("improvements", "Improvements"))
    for kind, heading in headings:
        if summary.get(kind):
            rows = "".join("<tr><td>%s%s</td><td>%s</td><td>%s %s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
                           "</tr>" % (
                               escape(r["test"]), " <span class='failed'>(noisy)</span>" if r.get("noisy") else "",
                               escape(r["kpi"]), _fmt(r["current"]), escape(r["unit"]),
                               _fmt(r.get("pre_change_mean", r.get("mean_before", r.get("history_mean")))),
                               escape(_change(r)),
                               _fmt(r.get("pvalue")) if r.get("pvalue") is not None else "",
                               escape(_since(r) or r["method"])) for r in summary[kind])
            parts.append("<h2 class='%s'>%s</h2><div class='table-scroll'><table><tr><th>test</th><th>KPI</th>"
                         "<th>current</th><th>baseline</th>"
                         "<th>change</th><th>p-value</th><th>where</th></tr>%s</table></div>" % (
                             "ok" if kind == "improvements" else "failed", heading, rows))
    if summary["not_analysed"]:
        parts.append("<h2>Not analysed</h2><ul>%s</ul>" % "".join(
            "<li>%s: %s</li>" % (escape(n["test"]), escape(n["reason"])) for n in summary["not_analysed"]))
    count = 0
    for entry in details:
        noisy = entry.get("noise") or []
        parts.append("<div class='card'><h2>%s%s</h2>" % (escape(entry["test"]),
                                                          " <span class='failed'>(noisy)</span>" if noisy else ""))
        if noisy:
            parts.append("<p class='note'>noisy: %s</p>" % escape("; ".join(noisy)))
        parts.append("<details><summary>labels</summary>%s</details>" % settings_table(entry["labels"]))
        for kpi in entry["kpis"]:
            evidence = kpi["evidence"]
            parts.append("<h3>%s: <span class='%s'>%s</span>%s</h3>" % (
                escape(kpi["name"]), VERDICT_STYLE[kpi["verdict"]], escape(kpi["verdict"].replace("_", " ")),
                " <span class='meta'>(a view of %s: its verdict)</span>" % escape(kpi["view_of"])
                if kpi.get("view_of") else ""))
            facts = ["method %s" % evidence["method"], "%d history point(s)" % evidence["history_points"]]
            for key in ("history_mean", "baseline_mean", "mean_before", "mean_after", "pre_change_mean",
                        "absolute_change", "relative_change", "relative_change_since", "pvalue", "effect_size"):
                if evidence.get(key) is not None:
                    value = evidence[key]
                    facts.append("%s %s" % (key.replace("_", " "), _percent(value) if key.startswith("relative_change")
                                            else _fmt(value)))
            if evidence.get("since"):
                facts.append(_since(dict(evidence, relative_change_since=evidence.get("relative_change_since"))))
            if evidence.get("drift"):
                facts.append(drift_words(evidence["drift"]))
            if evidence.get("gaps"):
                facts.append("%d history run(s) without a value (gaps: left out, their places kept)" % evidence["gaps"])
            if evidence.get("note"):
                facts.append(evidence["note"])
            if evidence.get("why"):
                facts.append(evidence["why"])
            if evidence.get("baseline_noisy_points"):
                facts.append("%d noisy run(s) in the baseline" % evidence["baseline_noisy_points"])
            if evidence.get("uncertainty"):
                facts.append(uncertainty_words(evidence["uncertainty"]))
            if evidence.get("no_history_reason"):
                facts.append("no history: %s" % verdicts_lib.NO_HISTORY_WORDS[evidence["no_history_reason"]])
            for key, reason in sorted((evidence.get("undefined") or {}).items()):
                facts.append("%s undefined: %s" % (key.replace("_", " "), reason))
            parts.append("<p class='meta'>%s &middot; %s is better</p>" % (
                " &middot; ".join(escape(f) for f in facts), "higher" if kpi["higher_is_better"] else "lower"))
            if kpi["history"]:
                count += 1
                df = history_dataframe(kpi["history"], evidence["current"], entry.get("timestamp"))
                figure = plot_history(df, kpi["name"], kpi["unit"], "%s history" % kpi["name"],
                                      baseline_band(evidence, df), change_times(evidence, df))
                parts.append(figure_html(figure, "history-%d" % count))
                # a run exported with export_artifacts names where its files are (download.yml -e url=...)
                rows = "".join("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
                    escape(h["timestamp"]), _fmt(h["value"]), escape(h.get("run_id") or ""),
                    escape((h.get("git_commit") or "")[:12]), escape(h.get("artifacts_url") or ""))
                    for h in kpi["history"])
                rows += "<tr class='failed'><td>current</td><td>%s</td><td>this run</td><td></td><td></td></tr>" % _fmt(
                    evidence["current"])
                parts.append("<div class='table-scroll'><table><tr><th>timestamp</th><th>%s (%s)</th><th>run</th>"
                             "<th>commit</th><th>artifacts</th>"
                             "</tr>%s</table></div>" % (escape(kpi["name"]), escape(kpi["unit"]), rows))
        parts.append("</div>")
    return "Regression analysis", "".join(parts)


def write_regression_report(plots_dir, summary, details, subtitle="", notes=()):
    import plotly.offline

    if not os.path.exists(os.path.join(plots_dir, PLOTLY_JS)):
        artifacts.write_text_atomic(os.path.join(plots_dir, PLOTLY_JS), plotly.offline.get_plotlyjs())
    title, body = regression_report(summary, details)
    artifacts.write_text_atomic(os.path.join(plots_dir, "regression_report.html"), page(title, body, subtitle, notes))
    if os.path.exists(os.path.join(plots_dir, INDEX_REGISTRY)):
        add_to_index(plots_dir, "regression_report.html", title, "Every KPI against its history: regressions, "
                     "improvements, evidence")
    return os.path.join(plots_dir, "regression_report.html")
