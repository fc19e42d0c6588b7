"""Reading a store written by other hands: every document read back is checked alone; a bad one is
skipped and counted with its reason, NaN and infinity are read as null, the others are read."""

import json
import math

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import StoreError
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.opensearch import OpenSearchStore
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.sqlite import SQLiteStore

GOOD = {"kind": "kpi", "doc_id": "d", "workload": "w", "kpi_name": "rate", "test_uuid": "u", "value": 1.5,
        "@timestamp": "2026-11-20T10:00:00+00:00", "higher_is_better": True, "size": 256}


@pytest.mark.parametrize("raw, reason", [
    ("{", "not JSON"),
    (b"\xff\xfe{}", "not JSON"),
    ("[1]", "not a JSON object (a list)"),
    ("null", "not a JSON object (null)"),
    ("3", "not a JSON object (a number)"),
    ([1], "not a JSON object (a list)"),
    (None, "not a JSON object (null)"),
    ('{"a": ' + "[" * 70 + "]" * 70 + "}", "nested deeper than 64 levels"),
    ("[" * 5000 + "]" * 5000, "nested deeper than 64 levels"),
    ({"a": json.loads("[" * 70 + "]" * 70)}, "nested deeper than 64 levels"),
    (dict(GOOD, kpi_name=5), "field kpi_name is a number, expected text"),
    (dict(GOOD, workload=["w"]), "field workload is a list, expected text"),
    (dict(GOOD, test_uuid={"a": 1}), "field test_uuid is an object, expected text"),
    (dict(GOOD, value="1.5"), "field value is text, expected a number"),
    (dict(GOOD, value=True), "field value is a boolean, expected a number"),
    (dict(GOOD, higher_is_better="yes"), "field higher_is_better is text, expected a boolean"),
    (dict(GOOD, **{"@timestamp": [1]}), "field @timestamp is a list, expected a time (text or a number)"),
    (dict(GOOD, run_id=7), "field run_id is a number, expected text"),
])
def test_a_document_no_reader_may_use_is_refused_with_its_reason(raw, reason):
    read = base.read_document(raw)
    assert (read.document, read.reason, read.nulled) == (None, reason, 0)


def test_a_usable_document_is_read_as_it_is_and_nan_or_infinity_as_null():
    assert base.read_document(json.dumps(GOOD)) == (GOOD, None, 0, "w")
    read = base.read_document('{"value": NaN, "error": Infinity, "size": -Infinity, "deep": {"x": [NaN, 1]}, '
                              '"workload": "w"}')
    assert read == ({"value": None, "error": None, "size": None, "deep": {"x": [None, 1]}, "workload": "w"}, None, 4,
                    "w")
    assert base.read_document(dict(GOOD, value=math.nan)).document["value"] is None
    # the workload a refused document names, for the page of that workload
    assert base.read_document(dict(GOOD, kpi_name=5)).workload == "w"


def test_the_words_count_each_reason_the_most_frequent_first_and_the_rest_in_one_number():
    skipped = base.SkippedDocuments()
    assert skipped.words() == ""
    for index, reason in enumerate(["b", "a", "a", "c", "d", "e", "f", "g"]):
        skipped.skip(("t", index), reason, "w" if index < 2 else None)
    skipped.skip(("t", 0), "again", "w")          # the same document read twice counts once
    skipped.null(("t", 9), 2, "w")
    assert skipped.count() == 8 and skipped.count("w") == 2 and skipped.nulled("w") == 1
    assert skipped.words() == ("8 stored document(s) skipped: 2 a, 1 b, 1 c, 1 d, 1 e, 2 for other reasons; "
                               "1 stored document(s) held NaN or infinite numbers, read as null")
    assert skipped.words("w") == ("2 stored document(s) skipped: 1 a, 1 b; 1 stored document(s) held NaN or infinite "
                                  "numbers, read as null")


# --------------------------------------------------------------------------
# SQLite: a shared file anyone may have written rows into


def sqlite_store(tmp_path):
    store = SQLiteStore(tmp_path / "shared.sqlite")
    store.ensure_schema()
    store.write([base.kpi_document({"test_uuid": "ok", "kpi_name": "rate", "value": 1.0, "workload": "w",
                                    "@timestamp": "2026-11-20T10:00:00+00:00", "size": 256}),
                 base.mark_document("run-ok", True)])
    return store


def insert(store, doc_id, document, labels='{"size": 256}', ts=0.0, kind="kpi"):
    store.connection.execute("INSERT INTO documents (doc_id, kind, workload, kpi_name, test_uuid, ts, labels, "
                             "document) VALUES (?, ?, 'w', 'rate', 'x', ?, ?, ?)", (doc_id, kind, ts, labels, document))


def test_sqlite_rows_that_are_not_documents_are_skipped_and_the_history_is_read(tmp_path):
    store = sqlite_store(tmp_path)
    insert(store, "not-json", "{not json")
    insert(store, "a-list", "[1, 2]")
    insert(store, "deep", "[" * 5000 + "]" * 5000)
    insert(store, "bad-labels", '{"kpi_name": "rate", "value": 2, "workload": "w"}', labels="{oops")
    insert(store, "a-text-time", '{"kpi_name": "rate", "value": 3, "workload": "w", "test_uuid": "t", "size": 256}',
           ts="yesterday")
    insert(store, "nan", '{"kpi_name": "rate", "value": NaN, "workload": "w", "test_uuid": "n", "size": 256}', ts=5.0)
    insert(store, "bad-mark", '{"run_id": ["x"], "forgotten": true}', kind="mark")
    history = store.history("w", "rate", {"size": 256})
    # the rows without a number for a time sort last; NaN is null
    assert [(d["test_uuid"], d["value"]) for d in history] == [("n", None), ("ok", 1.0), ("t", 3)]
    # the row whose labels column is broken is out of every history, its document is still read whole
    assert len(list(store.documents("kpi"))) == 4 and list(store.marks()) == ["run-ok"]
    assert dict(store.skipped.reasons()) == {"not JSON": 1, "not a JSON object (a list)": 1,
                                             "nested deeper than 64 levels": 1, "labels column not JSON": 1,
                                             "field run_id is a list, expected text": 1}
    assert store.skipped.nulled() == 1
    store.close()


# --------------------------------------------------------------------------
# OpenSearch: a hit whose document is not one is skipped; an answer that is not hits fails in one line


class Answers:
    def __init__(self, hits):
        self.hits = hits

    def msearch(self, body, request_timeout):
        return {"responses": [{"hits": {"hits": self.hits}} for _line in body[::2]]}

    def search(self, index, body, request_timeout):
        return {"hits": {"hits": self.hits}}


def test_opensearch_hits_that_are_not_documents_are_skipped_and_counted():
    hits = [{"_id": "ok", "_source": {"kpi_name": "rate", "value": 1.0, "size": "256", "workload": "w"}},
            {"_id": "a-list", "_source": [1, 2]},
            {"_id": "text", "_source": "text"},
            {"_id": "no-source"},
            {"_id": "nan", "_source": {"kpi_name": "rate", "value": float("nan"), "workload": "w"}},
            {"_id": "bad-uuid", "_source": {"kpi_name": "rate", "test_uuid": {"a": 1}, "workload": "w"}}]
    store = OpenSearchStore(["http://opensearch.invalid"], client=Answers(hits))
    history = store.history("w", "rate", {})
    assert history == [{"kpi_name": "rate", "value": 1.0, "size": 256, "workload": "w"},
                       {"kpi_name": "rate", "value": None, "workload": "w"}]
    assert len(list(store.documents("kpi"))) == 2
    assert dict(store.skipped.reasons()) == {"not a JSON object (a list)": 1, "not a JSON object (text)": 1,
                                             "not a JSON object (null)": 1,
                                             "field test_uuid is an object, expected text": 1}
    assert store.skipped.count("w") == 1 and store.skipped.nulled("w") == 1


def test_an_opensearch_answer_that_is_not_a_list_of_hits_fails_in_one_line():
    store = OpenSearchStore(["http://opensearch.invalid"], client=Answers(["not a hit"]))
    with pytest.raises(StoreError, match="^opensearch http://opensearch.invalid: history query: its answer holds no "
                                         "list of hits with their documents$"):
        store.history("w", "rate", {})
