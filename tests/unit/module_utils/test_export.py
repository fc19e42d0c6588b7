import multiprocessing
import os
import sqlite3

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils import export as ex
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import opensearch as os_store
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.sqlite import SQLiteStore

SQLITE = {"enabled": True, "backend": "sqlite", "timeout_s": 5, "sqlite": {"path": None},
          "opensearch": {"hosts": [], "index_prefix": "p-", "verify_certs": True, "ca_file": None,
                         "credentials_file": None, "max_retries": 1, "chunk_size": 100}}


def record(uuid, value, timestamp="2026-11-20T10:00:00+00:00", kpi="rate", **labels):
    base = {"indicator": "matmul", "size": 256, "dtype": "float32", "version": "1.0", "test_path": "p/%s" % uuid}
    base.update(labels)
    base.update(kpi_name=kpi, value=value, unit="GFLOP/s", higher_is_better=True, ignored_for_regression=False,
                test_uuid=uuid, workload="w")
    base["@timestamp"] = timestamp
    return stores_base.kpi_document(base)


def sqlite_export(path):
    return dict(SQLITE, sqlite={"path": str(path)})


def test_document_ids_are_deterministic():
    assert record("u1", 1.0)["doc_id"] == record("u1", 2.0)["doc_id"] != record("u2", 1.0)["doc_id"]


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
    store = SQLiteStore(path)
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
    store = SQLiteStore(tmp_path / "r.sqlite")
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
    with pytest.raises(errors.ExportError, match="spool_dir .*absent: not a directory"):
        ex.replay_spool(str(tmp_path / "absent"), SQLITE)


def test_credentials_come_from_the_secrets_directory(tmp_path):
    (tmp_path / "os.yaml").write_text("username: admin\npassword: s3cret-pw\n")
    config = {"secrets": {"dir_env": "MY_SECRETS"}}
    assert os_store.read_credentials(config, "os.yaml", {"MY_SECRETS": str(tmp_path)}) == ("admin", "s3cret-pw")
    (tmp_path / "bad.yaml").write_text("just-a-token\n")
    with pytest.raises(errors.StoreConfigError) as error:
        os_store.read_credentials(config, "bad.yaml", {"MY_SECRETS": str(tmp_path)})
    assert "expected a mapping with username and password" in str(error.value)
    assert "just-a-token" not in str(error.value)


def test_urls_are_redacted_in_messages():
    assert stores_base.redact_url("https://admin:pw@os.example.com:9200") == "https://***@os.example.com:9200"
    store = os_store.OpenSearchStore(["https://admin:pw@os.example.com:9200"], client=object())
    assert "pw" not in store.describe()


def test_opensearch_mapping_types():
    mapping = os_store.OpenSearchStore.mapping(["indicator", "size"])
    assert mapping["properties"]["indicator"] == {"type": "keyword"}
    assert mapping["properties"]["size"] == {"type": "keyword"}
    assert mapping["properties"]["value"] == {"type": "double"}
    assert mapping["properties"]["@timestamp"] == {"type": "date"}


def test_sqlite_store_in_an_unwritable_place_is_unavailable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(errors.StoreUnavailable, match="sqlite store"):
        SQLiteStore(blocker / "sub" / "r.sqlite")
    assert sqlite3.sqlite_version


def test_sqlite_runs_in_wal_mode(tmp_path):
    store = SQLiteStore(tmp_path / "r.sqlite")
    store.ensure_schema()
    assert store.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_environment_overrides_the_export_section_for_every_reader(tmp_path):
    config = {"export": dict(SQLITE)}
    environ = {"PERFSCALE_EXPORT_BACKEND": "opensearch", "PERFSCALE_EXPORT_OPENSEARCH_HOSTS": "http://a:9200, http://b:9200",
               "PERFSCALE_EXPORT_TIMEOUT": "3.5", "PERFSCALE_EXPORT_SQLITE_PATH": str(tmp_path / "x.sqlite")}
    export = ex.read_export(config, environ)
    assert export["backend"] == "opensearch" and export["timeout_s"] == 3.5
    assert export["opensearch"]["hosts"] == ["http://a:9200", "http://b:9200"]
    assert export["sqlite"]["path"] == str(tmp_path / "x.sqlite")
    with pytest.raises(errors.ExportError, match=r"PERFSCALE_EXPORT_TIMEOUT='soon': not a valid value for export.timeout_s"):
        ex.read_export(config, {"PERFSCALE_EXPORT_TIMEOUT": "soon"})
    with pytest.raises(errors.ConfigError, match=r"'export.backend': Input should be 'opensearch' or 'sqlite'"):
        ex.read_export(config, {"PERFSCALE_EXPORT_BACKEND": "mongo"})
