# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``prom`` workload: what Prometheus saw while each test ran, as KPIs and plots over time.

``cluster query_prometheus_db`` leaves in a test's directory a ``NNN__cluster__query_prometheus_db/``
holding ``queries.json`` (the window, and each query's PromQL, unit, help and direction) and one
``<query>.json`` per query (the ``query_range`` matrix: series, each a label set and its samples).
For every query, every series and every statistic of ``STATS`` (a registry), a test gets one KPI
``<query>_<stat>`` (``gpu_memory_used_max``), its series named by the series' labels
(``prom_series``: ``gpu="0",pod="vllm-0"``, the metric name left out).

``postprocess.prom_workload`` names the module (this one: ``prom``; any module with the same
functions); the records are exported as documents of kind ``prom`` (the OpenSearch index of KPIs
with ``export.opensearch.prom_index_suffix``). They are reported and kept with history, not judged
for regressions (``ignored_for_regression``): a resource's peak is a symptom, the test's KPIs say
whether it got slower.

Several captures in one test (a query run before and after a step): every capture counts, and a
query name seen twice keeps the later capture, with a warning.
"""

from __future__ import annotations

import fnmatch
import math
import os

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import prometheus
from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import prom_report

CAPTURE_DIR_GLOB = "*__query_prometheus_db"
SKIPPED_DIRS = ("_previous",)


def _max(values):
    return max(values)


def _mean(values):
    return math.fsum(values) / len(values)


class Stat:
    def __init__(self, function, help_text):
        self.function = function
        self.help_text = help_text


# the statistics a series gives (name -> how, and what the KPI's help says)
STATS = {
    "max": Stat(_max, "Peak of %s while the test ran"),
    "mean": Stat(_mean, "Mean of %s over the test's window"),
}


def series_text(labels):
    """A series' identity: its labels (the metric name left out), sorted, Prometheus-style."""
    return ",".join('%s="%s"' % (key, labels[key]) for key in sorted(labels) if key != "__name__")


def _finite(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


class Series:
    """One series of one query: its labels and its finite samples ``[(unix time, value)]``."""

    def __init__(self, query, labels, samples):
        self.query = query
        self.labels = {k: v for k, v in labels.items() if k != "__name__"}
        self.samples = samples

    @property
    def name(self):
        return series_text(self.labels)


class PromTest:
    """What the captures of one test hold: queries (name -> description), series, window, warnings."""

    def __init__(self):
        self.captures = []
        self.queries = {}
        self.series = {}          # query -> [Series]
        self.window = None        # (start, end) of the last capture
        self.warnings = []

    def __bool__(self):
        return bool(self.series)


def find_captures(test_dir):
    """The capture directories inside a test directory, in the order they were made."""
    found = []
    for top, dirnames, _files in os.walk(test_dir):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        found.extend(os.path.join(top, d) for d in dirnames if fnmatch.fnmatchcase(d, CAPTURE_DIR_GLOB))
    return sorted(found, key=lambda path: (os.path.basename(path), path))


def _read_json(path, warnings, relative, root):
    """A capture's JSON file, read by the tree's bounded reader (inside ``root``, a regular file, at
    most ``bounded_input.MAX_TREE_FILE_BYTES``: a saved range query can be large), or None with a
    warning naming it."""
    try:
        return bounded_input.read_json_file(path, root, bounded_input.MAX_TREE_FILE_BYTES, relative, finite=False)
    except bounded_input.FileRefused as exc:
        warnings.append(" ".join(str(exc).split()))
    except ValueError as exc:
        warnings.append("%s: unreadable, ignored (%s)" % (relative, " ".join(str(exc).split())))
    return None


def read_captures(test_dir, results_dir=None):
    """Every capture of a test: its queries and their series (``PromTest``); problems are warnings.
    Its files are read inside ``results_dir`` (default: the test directory)."""
    result = PromTest()
    root = results_dir or test_dir
    for capture in find_captures(test_dir):
        relative = os.path.relpath(capture, test_dir)
        index = _read_json(os.path.join(capture, prometheus.QUERIES_INDEX), result.warnings,
                           os.path.join(relative, prometheus.QUERIES_INDEX), root)
        if not isinstance(index, dict) or not isinstance(index.get("queries"), dict):
            continue
        result.captures.append(relative)
        if isinstance(index.get("start"), (int, float)) and isinstance(index.get("end"), (int, float)):
            result.window = (index["start"], index["end"])
        for name, described in index["queries"].items():
            if not isinstance(described, dict) or described.get("error") or not described.get("file"):
                if isinstance(described, dict) and described.get("error"):
                    result.warnings.append("%s: query %s failed when captured: %s" % (relative, name, described["error"]))
                continue
            data = _read_json(os.path.join(capture, os.path.basename(described["file"])), result.warnings,
                              os.path.join(relative, described["file"]), root)
            matrix = ((data or {}).get("data") or {}).get("result") if isinstance(data, dict) else None
            if not isinstance(matrix, list):
                continue
            if name in result.series:
                result.warnings.append("%s: query %s captured again, the later capture is kept" % (relative, name))
            result.queries[name] = described
            result.series[name] = [Series(name, item.get("metric") or {},
                                          [(float(ts), value) for ts, value in
                                           ((ts, _finite(text)) for ts, text in item.get("values") or [])
                                           if value is not None])
                                   for item in matrix if isinstance(item, dict)]
    return result


def kpis_of(prom_test):
    """One KPI per query, series and statistic: dicts with the KPI's name, value, unit, help, the
    series and the query (what ``kpi.flat_records`` and the OpenMetrics writer take)."""
    kpis = []
    for query, series_list in prom_test.series.items():
        described = prom_test.queries.get(query) or {}
        for series in series_list:
            values = [value for _ts, value in series.samples]
            if not values:
                continue
            for stat_name, stat in STATS.items():
                kpis.append({
                    "kpi_name": "%s_%s" % (query, stat_name), "query": query, "stat": stat_name,
                    "series": series.name, "series_labels": dict(series.labels),
                    "value": float(stat.function(values)), "unit": described.get("unit") or "",
                    "help": "%s%s" % (stat.help_text % query,
                                      (": " + described["help"]) if described.get("help") else ""),
                    "higher_is_better": bool(described.get("higher_is_better", False)),
                    "ignored_for_regression": True, "view_of": None, "error": None})
    return kpis


# builder(report_context(tests)) -> (title, html); drawn when a test has captures
REPORTS = prom_report.REPORTS


def report_context(tests):
    """What the report builders get, from [(entry, PromTest, kpis)]."""
    return prom_report.PromReportContext(tests)
