"""Fuzz: what anyone who can write to a shared results store leaves in it (a shared SQLite file, an
OpenSearch index), read by the dashboard and by the history of the regression step. Whatever the
documents, the answer is a page or a result with the bad documents counted, never an exception;
no workload a document names is imported, no number in a page is NaN or infinite, no link a click
opens is anything but http(s) or relative."""

import json
import os
import re
import sys
import tempfile

from hypothesis import given, settings, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_strategies import JSON, SCALARS  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import dashboard  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import verdicts  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.opensearch import OpenSearchStore  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.sqlite import SQLiteStore  # noqa: E402

# a store's documents and verdicts: a few SQLite files per example
STORE_EXAMPLES = 60

WORKLOADS = ["perf_indicators", "llm_load", "this", "os.path", "/tmp/perfscale-fuzz-nowhere/w.py", "", "index", "/"]
URLS = ["https://ci.example/run", "runs/1/", "javascript:alert(1)", " javascript:alert(1)", "s3://bucket/run",
        "data:text/html,x", "//evil.example", ""]
TIMES = ["2026-11-20T10:00:00+00:00", "2026-11-21T10:00:00Z", "not a time", "9999-99-99", ""]


def values(*good):
    return st.one_of(st.sampled_from(list(good)), JSON)


def document_like():
    """Mostly documents of the expected shape with some fields of any type, some anything at all."""
    fields = st.fixed_dictionaries({}, optional={
        "kind": values("kpi", "regression"), "workload": values(*WORKLOADS), "kpi_name": values("rate", "time"),
        "test_uuid": values("u1", "u2", "u3"), "run_id": values("run-1", "run-2"),
        "value": st.one_of(st.floats(), st.integers(), JSON), "error": st.one_of(st.floats(), JSON),
        "unit": values("GFLOP/s"), "higher_is_better": values(True, False), "ignored_for_regression": values(False),
        "@timestamp": st.one_of(st.sampled_from(TIMES), st.floats(), st.integers(), JSON),
        "artifacts_url": values(*URLS), "verdict": values("regression", "improvement"), "noisy": values(False, True),
        "test_path": values("run/a"), "size": st.one_of(st.floats(), JSON), "link": values(*URLS), "when": JSON,
        "rate__verdict": JSON, "forgotten": values(True)})
    labels = st.dictionaries(st.text(max_size=6), SCALARS, max_size=3)
    return st.one_of(st.tuples(fields, labels).map(lambda pair: dict(pair[1], **pair[0])), JSON)


TEXTS = st.one_of(document_like().map(json.dumps), st.text(max_size=30), st.just("[" * 3000 + "]" * 3000),
                  st.binary(max_size=20))
ROWS = st.lists(st.tuples(st.sampled_from(["kpi", "regression", "mark"]), TEXTS,
                          st.one_of(st.floats(allow_nan=False), st.text(max_size=5)),
                          st.one_of(st.just('{"size": 256}'), st.text(max_size=10))), max_size=8)


def sqlite_with(directory, rows):
    store = SQLiteStore(os.path.join(directory, "shared.sqlite"))
    store.ensure_schema()
    store.write([base.kpi_document({"test_uuid": "good", "kpi_name": "rate", "value": 1.0, "workload": "w",
                                    "@timestamp": "2026-11-01T10:00:00+00:00", "size": 256})])
    for index, (kind, text, ts, labels) in enumerate(rows):
        store.connection.execute(
            "INSERT INTO documents (doc_id, kind, workload, kpi_name, test_uuid, ts, labels, document) "
            "VALUES (?, ?, 'w', 'rate', 'x', ?, ?, ?)", ("raw-%d" % index, kind, ts, labels, text))
    return store


def strict(value):
    def refuse(constant):
        raise AssertionError("%s in strict JSON" % constant)

    return json.loads(json.dumps(value, allow_nan=False), parse_constant=refuse)


def checked(document):
    """A document a reader gave: an object whose fields have their types, finite numbers only."""
    assert isinstance(document, dict)
    strict(document)
    assert base.read_document(document, text=False).reason is None, document


@settings(max_examples=STORE_EXAMPLES)
@given(rows=ROWS)
def test_the_dashboard_of_any_store_documents(rows):
    sys.modules.pop("this", None)
    with tempfile.TemporaryDirectory() as directory:
        store = sqlite_with(directory, rows)
        try:
            views = dashboard.collect(store)
            taken = set()
            for name, view in views.items():
                comparison_keys, machine_keys, why = dashboard._regression_keys(  # pylint: disable=protected-access
                    name, None, ["perf_indicators"])
                assert why is None or "\n" not in why
                page = dashboard.workload_page(view, comparison_keys, machine_keys, "t", [why] if why else [])
                data = re.search(r"<script type='application/json' id='ex-data'>(.*?)</script>", page, re.S)
                rows_shown = strict(json.loads(data.group(1).replace("<\\/", "</")))["rows"]
                assert all(reports.safe_link(row["link"]) for row in rows_shown if "link" in row)
                filename = dashboard.page_filename(name, taken)
                assert filename not in taken and filename != dashboard.INDEX and "/" not in filename
                taken.add(filename)
            assert "this" not in sys.modules
            skipped = store.skipped.words()
            assert "\n" not in skipped
        finally:
            store.close()


@settings(max_examples=STORE_EXAMPLES)
@given(rows=ROWS)
def test_sqlite_history_of_any_store_documents(rows):
    with tempfile.TemporaryDirectory() as directory:
        store = sqlite_with(directory, rows)
        try:
            history = store.history("w", "rate", {"size": 256})
            assert "good" in [document.get("test_uuid") for document in history]
            read = list(store.documents("kpi")) + list(store.documents("regression")) + list(store.marks().values())
            for document in history + read:
                checked(document)
            # every row read is either given or counted
            marks = sum(1 for kind, *_rest in rows if kind == "mark")
            assert len(read) + store.skipped.count() >= 1 + len(rows) - marks
        finally:
            store.close()


def payload(value):
    return {"metadata": {"test_uuid": "new", "timestamp": "2026-11-22T10:00:00+00:00", "test_path": "run/new",
                         "exit_code": 0},
            "labels": {"size": 256},
            "kpis": {"rate": {"value": value, "unit": "u", "help": "r", "higher_is_better": True,
                              "ignored_for_regression": False}}}


SECTION = {"enabled": True, "method": "zscore", "fail_test_on_regression": True, "short_history_threshold": 0.1,
           "fail_on_persisting": False, "require_history": False, "compare_across_machines": False,
           "machine_keys": None, "short_history_max_pvalue": 0.01, "options": {}, "comparison_keys": None,
           "ignored_keys": None, "sorting_keys": None, "ignored_entries": None,
           "noise": {"max_spread": 0.1, "max_load_per_cpu": 0.75, "baseline": "prefer_quiet"}}


@settings(max_examples=STORE_EXAMPLES)
@given(rows=ROWS, value=st.floats(min_value=0, max_value=1e6))
def test_verdicts_against_any_stored_history(rows, value):
    settings_ = verdicts.effective_settings(SECTION, {})
    with tempfile.TemporaryDirectory() as directory:
        store = sqlite_with(directory, rows)
        try:
            summary, records, details = verdicts.analyse([payload(value)], store, settings_, "w")
        finally:
            store.close()
    strict([summary, records, details])
    assert summary["kpis_analysed"] == 1 and "\n" not in summary["message"]
    assert summary["skipped_documents"]["count"] == sum(summary["skipped_documents"]["reasons"].values())


class Answers:
    def __init__(self, hits):
        self.hits = hits

    def msearch(self, body, request_timeout):
        return {"responses": [{"hits": {"hits": self.hits}} for _line in body[::2]]}

    def search(self, index, body, request_timeout):
        return {"hits": {"hits": self.hits}}


HIT_IDS = st.one_of(st.text(max_size=4), JSON)
HITS = st.lists(st.fixed_dictionaries({"_source": document_like()}, optional={"_id": HIT_IDS}), max_size=6)


@given(hits=HITS)
def test_opensearch_history_of_any_store_documents(hits):
    store = OpenSearchStore(["http://opensearch.invalid"], client=Answers(hits))
    documents = list(store.documents("kpi"))
    # every hit is either given or counted (once per id: hits of one id are one document)
    ids = [hit.get("_id") for hit in hits]
    if all(isinstance(hit_id, str) for hit_id in ids) and len(set(ids)) == len(ids):
        assert len(documents) + store.skipped.count() == len(hits)
    history = store.history("w", "rate", {"size": 256})
    marks = store.marks()
    for document in history + documents + list(marks.values()):
        checked(document)
    assert all(isinstance(run_id, str) for run_id in marks)
