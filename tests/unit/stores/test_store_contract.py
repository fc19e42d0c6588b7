"""One contract, every backend: the same behaviour from SQLite and OpenSearch.

Each test runs against a SQLite file and against OpenSearch (osmem-server: an
in-memory OpenSearch-compatible server, driven through the real opensearch-py
client). A new backend joins by adding a fixture parameter.
"""

import socket

import pytest
from osmem_server import OsmemServer

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils import stores
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

BACKENDS = ["sqlite", "opensearch"]


@pytest.fixture(scope="module")
def opensearch_url():
    with OsmemServer.start() as server:
        yield server.url


def export_section(backend, tmp_path, opensearch_url=None, prefix="contract-"):
    return {
        "enabled": True, "backend": backend, "timeout_s": 5,
        "sqlite": {"path": str(tmp_path / "results.sqlite")},
        "opensearch": {"hosts": [opensearch_url or "http://127.0.0.1:9"], "index_prefix": prefix,
                       "verify_certs": False, "ca_file": None, "credentials_file": None, "max_retries": 1,
                       "chunk_size": 500},
    }


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path, opensearch_url):
    # every test gets its own OpenSearch indexes (a prefix per test)
    prefix = "t%d-" % abs(hash(request.node.nodeid))
    opened = stores.open_store(export_section(request.param, tmp_path, opensearch_url, prefix))
    opened.ensure_schema(["indicator", "size", "dtype", "version", "test_path", "extra"])
    yield opened
    opened.close()


def record(uuid, value, timestamp="2026-11-20T10:00:00+00:00", kpi="rate", **labels):
    fields = {"indicator": "matmul", "size": 256, "dtype": "float32", "version": "1.0", "test_path": "p/%s" % uuid}
    fields.update(labels)
    fields.update(kpi_name=kpi, value=value, unit="GFLOP/s", higher_is_better=True, ignored_for_regression=False,
                  test_uuid=uuid, workload="w")
    fields["@timestamp"] = timestamp
    return base.kpi_document(fields)


LABELS = {"indicator": "matmul", "size": 256, "dtype": "float32", "version": "3.0", "test_path": "x", "extra": None}


def test_bulk_write_then_count(store):
    result = store.write([record("u%d" % i, float(i)) for i in range(1200)])
    assert (len(result.delivered), len(result.rejected)) == (1200, 0)
    assert store.count() == 1200


def test_every_document_of_a_kind_is_read_back_page_by_page(store):
    store.write([record("u%d" % i, float(i), "2026-11-20T10:%02d:%02d+00:00" % (i // 60 % 60, i % 60))
                 for i in range(1200)])
    store.write([dict(base.mark_document("run-1", True, "noisy"))])
    documents = list(store.documents("kpi"))
    assert len(documents) == 1200 and {d["test_uuid"] for d in documents} == {"u%d" % i for i in range(1200)}
    assert [d["run_id"] for d in store.documents("mark")] == ["run-1"]
    assert list(store.documents("regression")) == []


def test_ids_are_deterministic_so_a_rewrite_never_duplicates(store):
    stamp = "2026-11-20T10:00:%02d+00:00"
    store.write([record("u%d" % i, float(i), stamp % i) for i in range(20)])
    store.write([record("u%d" % i, float(i) + 100, stamp % i) for i in range(20)])
    assert store.count() == 20
    assert [d["value"] for d in store.history("w", "rate", LABELS, ["version", "test_path"])] == \
        [float(i) + 100 for i in range(20)]


def test_history_matches_labels_except_ignored_keys_in_time_order(store):
    store.write([
        # the same instant written with different offsets: ordered by time, not by string
        record("late", 3.0, "2026-11-20T12:00:00+02:00"),    # 10:00 UTC
        record("early", 1.0, "2026-11-20T09:30:00+00:00"),
        record("v2", 2.0, "2026-11-20T09:45:00+00:00", version="2.0"),
        record("other-size", 9.0, size=512),
        record("other-kpi", 9.0, kpi="time_median"),
        record("none-label", 4.0, "2026-11-20T11:00:00+00:00", extra=None),
        record("extra-label", 5.0, extra="set"),
    ])
    history = store.history("w", "rate", LABELS, ignore_keys=["version", "test_path"])
    assert [d["test_uuid"] for d in history] == ["early", "v2", "late", "none-label"]
    assert history[0]["size"] == 256 and history[0]["value"] == 1.0
    assert store.history("w", "rate", LABELS, ignore_keys=["test_path"]) == []
    assert [d["test_uuid"] for d in store.history("w", "rate", LABELS, ["version", "test_path"],
                                                  exclude_test_uuid="v2")] == ["early", "late", "none-label"]
    assert store.history("other-workload", "rate", LABELS, ["version", "test_path"]) == []


def test_a_batch_answers_each_query_as_alone(store):
    store.write([record("s%d-%d" % (size, i), float(i), "2026-11-20T10:%02d:00+00:00" % i, size=size)
                 for size in (128, 256, 512) for i in range(5)])
    queries = [base.HistoryQuery("w", "rate", dict(LABELS, size=size), exclude_test_uuid="s%d-0" % size)
               for size in (512, 128, 1024, 256)]
    batch = store.history_batch(queries, ignore_keys=["version", "test_path"])
    alone = [store.history("w", "rate", q.labels, ["version", "test_path"], q.exclude_test_uuid) for q in queries]
    assert batch == alone
    assert [len(answer) for answer in batch] == [4, 4, 0, 4]


def test_history_is_paged_past_ten_thousand(store):
    total = 10500
    store.write([record("h%05d" % i, float(i), "2026-01-01T00:00:00+00:00") for i in range(total)])
    history = store.history("w", "rate", LABELS, ["version", "test_path"])
    assert len(history) == total
    assert len({d["test_uuid"] for d in history}) == total


def test_invalid_documents_are_rejected_with_a_reason_and_the_rest_lands(store):
    result = store.write([record("ok", 1.0), dict(record("bad", 2.0), **{"@timestamp": "not a time"})])
    assert len(result.delivered) == 1
    assert len(result.rejected) == 1
    assert store.count() == 1


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_unreachable_store_is_the_same_error_everywhere(backend, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    section = export_section(backend, tmp_path, "http://127.0.0.1:%d" % _closed_port())
    section["sqlite"]["path"] = str(blocker / "results.sqlite")
    with pytest.raises(errors.StoreUnavailable) as error:
        opened = stores.open_store(section)
        opened.ensure_schema()
        opened.write([record("u", 1.0)])
    message = str(error.value)
    assert "\n" not in message and message.startswith(backend)
    assert isinstance(error.value, errors.StoreError) and isinstance(error.value, errors.PerfscaleError)


def test_an_unknown_backend_names_the_known_ones(tmp_path):
    with pytest.raises(errors.StoreConfigError, match="export.backend 'mongo': expected one of opensearch, sqlite"):
        stores.open_store(export_section("mongo", tmp_path))


def test_prometheus_kpis_are_their_own_kind_with_a_history_per_series(store):
    def prom(uuid, value, series, timestamp):
        fields = dict(LABELS, version="1.0", extra=None, prom_query="gpu_memory", prom_series=series,
                      kpi_name="gpu_memory_max", value=value, unit="MiB", higher_is_better=False,
                      ignored_for_regression=True, test_uuid=uuid, workload="w")
        fields["@timestamp"] = timestamp
        return base.prom_document(fields)

    store.write([prom("a", 10.0, 'gpu="0"', "2026-11-20T10:00:00+00:00"),
                 prom("a", 20.0, 'gpu="1"', "2026-11-20T10:00:00+00:00"),
                 prom("b", 11.0, 'gpu="0"', "2026-11-20T11:00:00+00:00"),
                 record("a", 5.0)])
    # the same test and KPI, two series: two documents, not one overwriting the other
    assert (store.count("prom"), store.count("kpi")) == (3, 1)
    history = store.history("w", "gpu_memory_max", dict(LABELS, prom_query="gpu_memory", prom_series='gpu="0"'),
                            ["version", "test_path", "extra"], kind="prom")
    assert [(d["test_uuid"], d["value"]) for d in history] == [("a", 10.0), ("b", 11.0)]
    assert store.history("w", "gpu_memory_max", dict(LABELS, prom_query="gpu_memory", prom_series='gpu="0"'),
                         ["version", "test_path", "extra"]) == []


def test_opensearch_keeps_prometheus_kpis_in_the_suffixed_kpi_index(tmp_path, opensearch_url):
    section = export_section("opensearch", tmp_path, opensearch_url, prefix="suffix-")
    section["opensearch"]["prom_index_suffix"] = "-promx"
    opened = stores.open_store(section)
    try:
        assert (opened.index("kpi"), opened.index("prom")) == ("suffix-kpis", "suffix-kpis-promx")
        opened.ensure_schema(["prom_series"])
        opened.write([base.prom_document({"test_uuid": "u", "kpi_name": "k_max", "prom_series": "", "value": 1.0,
                                          "@timestamp": "2026-11-20T10:00:00+00:00", "workload": "w"})])
        assert opened.client.count(index="suffix-kpis-promx")["count"] == 1
    finally:
        opened.close()


def test_a_stored_document_of_other_types_is_skipped_counted_once_and_the_rest_read(store):
    # what anyone who can write to a shared store may leave in it, through the store's own write
    store.write([record("ok-1", 1.0, "2026-11-20T10:00:00+00:00"), record("ok-2", 2.0, "2026-11-20T11:00:00+00:00"),
                 dict(record("listed-run", 3.0), run_id=["not", "text"]),
                 dict(record("worded-flag", 4.0), noisy="yes"),
                 dict(base.mark_document("run-1", True), forgotten="yes"), base.mark_document("run-2", True)])
    for _read in range(2):
        history = store.history("w", "rate", LABELS, ["version", "test_path", "run_id"])
        assert [d["test_uuid"] for d in history] == ["ok-1", "ok-2"]
        assert sorted(d["test_uuid"] for d in store.documents("kpi")) == ["ok-1", "ok-2"]
        assert list(store.marks()) == ["run-2"]
    # each counted once, however many times it was read
    assert dict(store.skipped.reasons()) == {"field run_id is a list, expected text": 1,
                                             "field noisy is text, expected a boolean": 1,
                                             "field forgotten is text, expected a boolean": 1}
    assert store.skipped.count("w") == 2 and store.skipped.nulled() == 0
    assert store.skipped.words() == ("3 stored document(s) skipped: 1 field forgotten is text, expected a boolean, "
                                     "1 field noisy is text, expected a boolean, 1 field run_id is a list, "
                                     "expected text")
