import multiprocessing
import os
import sqlite3

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import export as ex
from ansible_collections.perfscale.topsail.plugins.module_utils import results_store as rs

SQLITE = {"enabled": True, "backend": "sqlite", "timeout_s": 5, "sqlite": {"path": None},
          "opensearch": {"hosts": [], "index_prefix": "p-", "verify_certs": True, "ca_file": None,
                         "credentials_file": None, "max_retries": 1, "chunk_size": 100}}


def record(uuid, value, timestamp="2026-11-20T10:00:00+00:00", kpi="rate", **labels):
    base = {"indicator": "matmul", "size": 256, "dtype": "float32", "version": "1.0", "test_path": "p/%s" % uuid}
    base.update(labels)
    base.update(kpi_name=kpi, value=value, unit="GFLOP/s", higher_is_better=True, ignored_for_regression=False,
                test_uuid=uuid, workload="w")
    base["@timestamp"] = timestamp
    return rs.kpi_document(base)


def sqlite_export(path):
    return dict(SQLITE, sqlite={"path": str(path)})


def test_document_ids_are_deterministic():
    assert record("u1", 1.0)["doc_id"] == record("u1", 2.0)["doc_id"] != record("u2", 1.0)["doc_id"]


def test_sqlite_writes_are_idempotent_and_in_wal_mode(tmp_path):
    store = rs.SQLiteStore(tmp_path / "r.sqlite")
    store.ensure_schema()
    documents = [record("u%d" % i, float(i)) for i in range(20)]
    assert len(store.write(documents).delivered) == 20
    assert len(store.write(documents).delivered) == 20
    assert store.count() == 20
    assert store.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_history_matches_labels_except_chosen_keys_ordered_by_time(tmp_path):
    store = rs.SQLiteStore(tmp_path / "r.sqlite")
    store.ensure_schema()
    store.write([
        # the same instant written with different offsets: ordered by time, not by string
        record("late", 3.0, "2026-11-20T12:00:00+02:00"),    # 10:00 UTC
        record("early", 1.0, "2026-11-20T09:30:00+00:00"),
        record("v2", 2.0, "2026-11-20T09:45:00+00:00", version="2.0"),
        record("other-size", 9.0, size=512),
        record("other-kpi", 9.0, kpi="time_median"),
        record("none-label", 4.0, "2026-11-20T11:00:00+00:00", extra=None),
    ])
    labels = {"indicator": "matmul", "size": 256, "dtype": "float32", "version": "3.0", "test_path": "x", "extra": None}
    history = store.history("w", "rate", labels, ignore_keys=["version", "test_path"])
    assert [d["test_uuid"] for d in history] == ["early", "v2", "late", "none-label"]
    assert store.history("w", "rate", labels, ignore_keys=["test_path"]) == []
    assert [d["test_uuid"] for d in store.history("w", "rate", labels, ["version", "test_path"], exclude_test_uuid="v2")] \
        == ["early", "late", "none-label"]
    store.close()


def _export_many(args):
    path, worker, count = args
    documents = [record("w%d-%d" % (worker, i), float(i)) for i in range(count)]
    outcome = ex.export_documents(documents, sqlite_export(path), os.path.join(os.path.dirname(path), "spool%d" % worker))
    return outcome["delivered"], outcome["undelivered"]


def test_two_processes_exporting_at_once_lose_nothing(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        outcomes = pool.map(_export_many, [(path, 0, 800), (path, 1, 800)])
    assert outcomes == [(800, 0), (800, 0)]
    store = rs.SQLiteStore(path)
    assert store.count() == 1600
    store.close()


def test_unreachable_store_keeps_everything_in_the_spool_and_replay_delivers_once(tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    documents = [record("u%d" % i, float(i)) for i in range(30)]
    spool = tmp_path / "spool"
    outcome = ex.export_documents(documents, sqlite_export(blocker / "r.sqlite"), str(spool))
    assert (outcome["delivered"], outcome["undelivered"]) == (0, 30)
    assert "sqlite store" in outcome["reason"]
    spooled, bad = ex.read_spool(outcome["spool_file"])
    assert (len(spooled), bad) == (30, 0)

    good = sqlite_export(tmp_path / "r.sqlite")
    replay = ex.replay_spool(str(spool), good)
    assert (replay["files"], replay["delivered"], replay["undelivered"]) == (1, 30, 0)
    assert os.listdir(spool) == ["replayed"]
    assert ex.replay_spool(str(spool), good)["files"] == 0
    store = rs.SQLiteStore(tmp_path / "r.sqlite")
    assert store.count() == 30
    store.close()


def test_rejected_documents_stay_in_the_spool(tmp_path):
    documents = [record("ok", 1.0), dict(record("bad", 2.0), **{"@timestamp": "not a time"})]
    outcome = ex.export_documents(documents, sqlite_export(tmp_path / "r.sqlite"), str(tmp_path / "spool"))
    assert (outcome["delivered"], outcome["undelivered"]) == (1, 1)
    assert "invalid document" in outcome["reason"]
    spooled, _bad = ex.read_spool(outcome["spool_file"])
    assert [d["test_uuid"] for d in spooled] == ["bad"]


def test_delivered_export_leaves_no_spool(tmp_path):
    spool = tmp_path / "spool"
    outcome = ex.export_documents([record("u", 1.0)], sqlite_export(tmp_path / "r.sqlite"), str(spool))
    assert outcome["delivered"] == 1 and outcome["spool_file"] is None
    assert not spool.exists()


def test_replay_of_a_missing_spool_is_a_clear_error(tmp_path):
    with pytest.raises(ex.ExportError, match="spool_dir .*absent: not a directory"):
        ex.replay_spool(str(tmp_path / "absent"), SQLITE)


def test_credentials_come_from_the_secrets_directory(tmp_path):
    (tmp_path / "os.yaml").write_text("username: admin\npassword: s3cret-pw\n")
    config = {"secrets": {"dir_env": "MY_SECRETS"}}
    assert rs.read_credentials(config, "os.yaml", {"MY_SECRETS": str(tmp_path)}) == ("admin", "s3cret-pw")
    (tmp_path / "bad.yaml").write_text("just-a-token\n")
    with pytest.raises(rs.StoreConfigError) as error:
        rs.read_credentials(config, "bad.yaml", {"MY_SECRETS": str(tmp_path)})
    assert "expected a mapping with username and password" in str(error.value)
    assert "just-a-token" not in str(error.value)


def test_urls_are_redacted_in_messages():
    assert rs.redact_url("https://admin:pw@os.example.com:9200") == "https://***@os.example.com:9200"
    store = rs.OpenSearchStore(["https://admin:pw@os.example.com:9200"], client=object())
    assert "pw" not in store.describe()


def test_opensearch_mapping_types():
    mapping = rs.OpenSearchStore.mapping(["indicator", "size"])
    assert mapping["properties"]["indicator"] == {"type": "keyword"}
    assert mapping["properties"]["size"] == {"type": "keyword"}
    assert mapping["properties"]["value"] == {"type": "double"}
    assert mapping["properties"]["@timestamp"] == {"type": "date"}


def test_sqlite_store_in_an_unwritable_place_is_unavailable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(rs.StoreUnavailable, match="sqlite store"):
        rs.SQLiteStore(blocker / "sub" / "r.sqlite")
    assert sqlite3.sqlite_version
