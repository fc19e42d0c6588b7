# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The long-term dashboard: every KPI of the results store across runs, as a static site.

MatrixBenchmarking's long-term-storage view and TOPSAIL's continuous-testing dashboards, from the
store alone (no run directory): one page per workload, each the per-run reports' explorer over every
stored test of that workload - pick the KPI, the x axis (``when``: the test's time, on a date axis;
or a comparison key such as a version), the series (by default one per combination of the workload's
factors that vary, never a run's provenance: ``series_factors``), filter by any configuration label
(the labels that are not comparison keys) - with the regression step's verdicts marked on their points
(regression, persisting regression, improvement, inconclusive: where the history changed), the
KPIs' error bars, the machines the tests ran on (the workload's ``machine_keys``) listed in the
page's header, and a click on a point opening its run's reports and artifacts (``artifacts_url``).
The view lives in the URL fragment: a permalink. Offline: ``plotly.min.js`` beside the pages.

The pages carry their data: one row per test (its labels, each KPI, its error and verdict), so the
page weight grows with the tests kept (benchmarks/dashboard_scale.py measures it at 100,000
documents).

The store is data whoever can write to it controls (docs/security.md): a document the store's readers
or this view cannot use is skipped and counted with its reason (the index and the workload's page say
so), NaN and infinite numbers are null in the pages; a workload's comparison keys come from a workload
a document names only when it is built in or the configuration names it (data never names code); a
point's link opens only an ``http(s)`` or relative URL, any other is shown as text.
"""

from __future__ import annotations

import collections
import datetime
import hashlib
import os

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

INDEX = "index.html"
# a label with more distinct values than this is an axis or a series, not a filter (a run id, a path)
MAX_FILTER_VALUES = 200
# fields of a stored KPI document that are not labels of its test
TEST_FIELDS = set(base.RECORD_FIELDS) | {"test_path", "run_id", "doc_id", "@timestamp", "kind"}
VERDICTS = ("regression", "persisting_regression", "improvement", "drift", "inconclusive", "no_change",
            "not_enough_history")
# the columns of a row that are not labels: a stored label of one of these names is not shown as a label
ROW_FIELDS = ("test_path", "when", "run_id", "link", "artifacts")
ROW_SUFFIXES = ("__verdict", "__error")


class WorkloadView:
    """What one workload's page shows."""

    def __init__(self, name):
        self.name = name
        self.rows = {}            # test_uuid -> row
        self.kpis = {}            # kpi -> {unit, higher_is_better}
        self.ignored = set()      # KPIs ignored for regression (offered after the others)
        self.labels = collections.OrderedDict()
        self.skipped = collections.Counter()  # reason -> documents of this workload the view cannot use

    def add(self, document):
        uuid, name = document.get("test_uuid"), document.get("kpi_name")
        if not isinstance(uuid, str) or not uuid or not isinstance(name, str) or not name:
            self.skipped["a KPI document without %s" % ("its test_uuid" if not isinstance(uuid, str) or not uuid
                                                        else "its kpi_name")] += 1
            return
        row = self.rows.get(uuid)
        if row is None:
            path = document.get("test_path")
            row = {"test_path": path if isinstance(path, str) and path else uuid,
                   "when": _iso(document.get("@timestamp")), "run_id": document.get("run_id")}
            for key, value in base.label_part(document).items():
                if key not in TEST_FIELDS and key not in ROW_FIELDS and not key.startswith("@") \
                        and not key.endswith(ROW_SUFFIXES):
                    row[key] = value
                    self.labels.setdefault(key, None)
            row.update(link_columns(document.get("artifacts_url")))
            self.rows[uuid] = row
        row[name] = document.get("value")
        if isinstance(document.get("error"), (int, float)):
            row[reports.error_column(name)] = document["error"]
        self.kpis.setdefault(name, {"unit": document.get("unit"), "higher_is_better": document.get("higher_is_better")})
        if document.get("ignored_for_regression"):
            self.ignored.add(name)

    def mark(self, verdict_document):
        row = self.rows.get(verdict_document.get("test_uuid"))
        name = verdict_document.get("kpi_name")
        if row is not None and isinstance(name, str) and verdict_document.get("verdict") in VERDICTS:
            row[name + "__verdict"] = verdict_document["verdict"]


def link_columns(url):
    """A row's link to its run: ``link`` (opened on a click) only for an http(s) or relative URL;
    ``artifacts`` (the URL as text, shown on hover) for any other (``s3://...``, ``javascript:...``)."""
    if not isinstance(url, str) or not url:
        return {}
    return {"link": url} if reports.safe_link(url) else {"artifacts": url}


def _iso(stamp):
    if stamp is None:
        return None
    try:
        return datetime.datetime.fromtimestamp(base.parse_timestamp(stamp), tz=datetime.timezone.utc) \
            .strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError):
        return None


def collect(store, workloads=None):
    """``{workload: WorkloadView}`` of every KPI document of the store (and its verdicts); the documents
    the store's readers skipped are counted in ``store.skipped``, those a view cannot use in its own."""
    views = {}
    for document in store.documents("kpi"):
        workload = document.get("workload") or "unknown"
        if not isinstance(workload, str):   # the store's readers check it; a view is named by text only
            continue
        if workloads and workload not in workloads:
            continue
        views.setdefault(workload, WorkloadView(workload)).add(document)
    for document in store.documents("regression"):
        workload = document.get("workload") or "unknown"
        view = views.get(workload) if isinstance(workload, str) else None
        if view is not None:
            view.mark(document)
    return views


def _regression_keys(workload_name, regression_section, trusted=()):
    """(comparison keys, machine keys, why the workload's own are not used or None) of a workload: the
    configuration's, else the workload's, when the workload is built in or one the configuration names
    (``trusted``): its name comes from the store's documents, and data never names code."""
    keys, why = _workload_keys(workload_name, regression_section, trusted)
    return keys["comparison_keys"], keys["machine_keys"], why


def _workload_keys(workload_name, regression_section, trusted=()):
    """({comparison_keys, machine_keys, ignored_keys, sorting_keys}, why the workload's own are not used
    or None): each the configuration's, else the workload's (loaded as ``_regression_keys`` says)."""
    why = None
    try:
        defaults = workload_lib.load_workload_named_by_data(workload_name, trusted, "the results store").regression
    except PerfscaleError as exc:
        defaults, why = {}, str(exc)
    section = regression_section or {}
    keys = {}
    for name in ("comparison_keys", "machine_keys", "ignored_keys", "sorting_keys"):
        configured = section.get(name)
        keys[name] = list(configured if configured is not None else defaults.get(name) or [])
    return keys, why


def series_factors(labels, comparison_keys=(), machine_keys=(), ignored_keys=(), sorting_keys=()):
    """The labels whose combinations are a page's default series: the factors a user varies - the
    workload's sorting keys (the matrix's settings) first, then its comparison keys, the other labels,
    the machine last (a line never joins two machines) - never a test's provenance (``reports.is_provenance``:
    its run, commit, host, path, the collection's version; and the workload's ``ignored_keys``, which
    the regression step ignores for the same reason): those are on the hover and in the filters."""
    ignored = set(ignored_keys)
    candidates = [k for k in labels if not reports.is_provenance(k) and k not in ignored]
    rank = {key: index for index, key in enumerate(list(sorting_keys) + list(comparison_keys))}
    machines = set(machine_keys)
    return sorted(candidates, key=lambda k: (k in machines, rank.get(k, len(rank)), labels.index(k)))


def _display(value):
    return "(unset)" if reports.is_missing(value) else reports.display_value(value) if isinstance(value, float) \
        else str(value)


def workload_page(view, comparison_keys, machine_keys, title, notes=(), ignored_keys=(), sorting_keys=()):
    """The page of one workload; ``notes``: more header lines (documents skipped, keys not loaded);
    ``ignored_keys`` and ``sorting_keys`` (the workload's): see ``series_factors``."""
    extra_notes = list(notes)
    rows = sorted(view.rows.values(), key=lambda row: (row.get("when") or "", row["test_path"]))
    labels = [key for key in view.labels if key not in ("when",)]
    dimensions = ["when"] + [k for k in comparison_keys if k in labels] + \
        [k for k in labels if k not in comparison_keys]
    factors = series_factors(labels, comparison_keys, machine_keys, ignored_keys, sorting_keys)
    hover = ["run_id", "when"] + [k for k in dimensions if k not in factors and k != "when"]
    values = {dimension: sorted({_display(row.get(dimension)) for row in rows}) for dimension in dimensions}
    # configuration labels (and comparison keys) that vary, with a readable number of values, are filters
    filter_values = {d: v for d, v in values.items() if d != "when" and 1 < len(v) <= MAX_FILTER_VALUES}
    kpis = sorted(k for k in view.kpis if k not in view.ignored) + sorted(k for k in view.kpis if k in view.ignored)
    meta = collections.OrderedDict((k, view.kpis[k]) for k in kpis)
    machines = collections.Counter(" / ".join(_display(row.get(k)) for k in machine_keys) for row in rows) \
        if machine_keys else collections.Counter()
    runs = len({row.get("run_id") for row in rows if row.get("run_id")})
    marked = sum(1 for row in rows for key in row if key.endswith("__verdict")
                 and row[key] in ("regression", "persisting_regression", "improvement", "drift"))
    notes = ["%d test(s) of %d run(s); %d KPI(s); %d change(s) marked (regressions and improvements the regression "
             "step found)" % (len(rows), runs, len(kpis), marked)]
    if machines:
        notes.append("machines (%s): %s" % (", ".join(machine_keys), "; ".join(
            "%s (%d test(s))" % (name, count) for name, count in machines.most_common(12))))
    if comparison_keys:
        notes.append("compared along: %s (choose one as x)" % ", ".join(comparison_keys))
    notes.extend(extra_notes)
    if view.skipped:
        notes.append("%d document(s) of this workload skipped: %s" % (sum(view.skipped.values()), ", ".join(
            "%d %s" % (count, reason) for reason, count in sorted(view.skipped.items()))))
    body = reports.explorer_block(rows, meta, dimensions, filter_values, factors=factors, hover=hover)
    return reports.page("%s - %s" % (title, view.name), body, "the long-term view of the results store", notes,
                        index=INDEX)


def page_filename(name, taken):
    """The file of a workload's page: its sanitized name, unless nothing usable remains, it is the index's
    or another workload's (``taken``), then one made of its hash."""
    try:
        filename = "%s.html" % artifacts.sanitize_name(name)
    except PerfscaleError:
        filename = None
    if filename is None or filename in taken or filename in (INDEX, reports.PLOTLY_JS):
        filename = "workload-%s.html" % hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:16]
    return filename


def build(store, out_dir, title="perfscale.topsail long-term results", regression_section=None, workloads=None,
          trusted_workloads=()):
    """Write the site into ``out_dir``; returns ``{"index", "pages": {workload: file}, "tests", "values",
    "skipped": documents skipped, "notes": the index's notes}``. ``trusted_workloads``: the workload
    names the configuration gives (``postprocess.workload``, the playbook's ``workloads``), whose
    comparison keys may be loaded besides the built-in workloads'."""
    import plotly.offline

    views = collect(store, workloads)
    trusted = [name for name in list(trusted_workloads or ()) + list(workloads or ()) if isinstance(name, str)]
    artifacts.ensure_dir(out_dir)
    artifacts.write_text_atomic(os.path.join(out_dir, reports.PLOTLY_JS), plotly.offline.get_plotlyjs())
    pages, items = {}, []
    for name in sorted(views):
        view = views[name]
        keys, why = _workload_keys(name, regression_section, trusted)
        comparison_keys, machine_keys = keys["comparison_keys"], keys["machine_keys"]
        notes = ["comparison and machine keys: %s (%s)" % ("the configuration's" if comparison_keys or machine_keys
                                                           else "none", why)] if why else []
        skipped = store.skipped.words(name)
        if skipped:
            notes.append(skipped)
        filename = page_filename(name, set(pages.values()))
        artifacts.write_text_atomic(os.path.join(out_dir, filename),
                                    workload_page(view, comparison_keys, machine_keys, title, notes,
                                                  keys["ignored_keys"], keys["sorting_keys"]))
        pages[name] = filename
        items.append("<li class='card'><a href='%s'>%s</a><br><span class='meta'>%d test(s), %d KPI(s)</span></li>"
                     % (reports.escape(filename), reports.escape(name), len(view.rows), len(view.kpis)))
    body = "<ul class='cards'>%s</ul>" % "".join(items) if items else "<p>The results store holds no KPI yet.</p>"
    skipped = store.skipped.count() + sum(sum(v.skipped.values()) for v in views.values())
    index_notes = [store.skipped.words()] if store.skipped.words() else []
    in_views = sum(sum(v.skipped.values()) for v in views.values())
    if in_views:
        index_notes.append("%d KPI document(s) skipped by their workload's page (each page says why)" % in_views)
    index = reports.page(title, body, "generated %s from %s" % (
        datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"), store.describe()), index_notes, index=None)
    artifacts.write_text_atomic(os.path.join(out_dir, INDEX), index)
    return {"index": os.path.join(out_dir, INDEX), "pages": pages,
            "tests": sum(len(v.rows) for v in views.values()),
            "values": sum(1 for v in views.values() for row in v.rows.values() for k in v.kpis if k in row),
            "skipped": skipped, "notes": index_notes}
