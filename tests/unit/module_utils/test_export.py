import json
import multiprocessing
import os
import sqlite3

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as ex
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
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
    spooled = ex.SpoolFile(outcome["spool_file"])
    assert (len(spooled.documents), spooled.bad) == (30, 0)
    assert spooled.target == {"backend": "sqlite", "timeout_s": 5, "sqlite": {"path": str(blocker / "r.sqlite")}}

    good = sqlite_export(tmp_path / "r.sqlite")
    # by default a spool goes where it was going (still unreachable): told otherwise, to the configured store
    assert ex.replay_spool(str(spool), good)["delivered"] == 0
    replay = ex.replay_spool(str(spool), good, target="config")
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
    spooled = ex.SpoolFile(outcome["spool_file"])
    assert [d["test_uuid"] for d in spooled.documents] == ["bad"]


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
    assert secret_refs.redact_url("https://admin:pw@os.example.com:9200") == "https://***@os.example.com:9200"
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


def test_a_spool_replays_into_the_store_it_was_going_to_not_the_configured_one(tmp_path):
    wanted, configured = tmp_path / "wanted.sqlite", tmp_path / "configured.sqlite"
    spool = tmp_path / "spool"
    outcome = ex.export_documents([record("u1", 1.0)], sqlite_export(wanted), str(spool))
    assert outcome["delivered"] == 1
    # a spool left by an export that was going to `wanted`
    path = ex.write_spool(str(spool / "export-by-hand.jsonl"), [record("u2", 2.0)],
                          ex.spool_target(sqlite_export(wanted)))
    assert os.path.exists(path)
    replay = ex.replay_spool(str(spool), sqlite_export(configured))
    assert replay["delivered"] == 1 and replay["stores"] == ["sqlite %s" % wanted]
    assert not configured.exists()
    store = SQLiteStore(wanted)
    assert store.count() == 2
    store.close()


def test_a_spool_never_records_credentials():
    export = dict(SQLITE, backend="opensearch", opensearch=dict(SQLITE["opensearch"], hosts=["https://admin:pw@os:9200"],
                                                                credentials_file="secret:os-creds"))
    target = ex.spool_target(export)
    assert target["opensearch"]["hosts"] == ["https://***@os:9200"]
    assert "pw" not in json.dumps(target)
    assert target["opensearch"]["credentials_file"] == "secret:os-creds"  # a reference, not a credential


def test_every_bundle_is_spooled_before_any_is_delivered(tmp_path, monkeypatch):
    records = tmp_path / "kpis.json"
    records.write_text(json.dumps([dict(record("k", 1.0))]))
    regression = tmp_path / "regression.json"
    regression.write_text(json.dumps([dict(record("r", 1.0), kind="regression", doc_id="reg-1")]))
    spool = tmp_path / "spool"
    bundles = [{"kind": kind, "file": str(path), "export": sqlite_export(tmp_path / "r.sqlite"), "secrets": {},
                "spool_dir": str(spool), "label_fields": []} for kind, path in (("kpi", records),
                                                                                ("regression", regression))]

    def crash(*_args, **_kwargs):
        raise KeyboardInterrupt("the process dies during the first delivery")

    monkeypatch.setattr(ex, "deliver", crash)
    with pytest.raises(KeyboardInterrupt):
        ex.export_bundles(bundles, environ={})
    spooled = sorted(d["doc_id"] for path in ex.spool_files(str(spool)) for d in ex.SpoolFile(path).documents)
    assert spooled == sorted([stores_base.kpi_document(record("k", 1.0))["doc_id"], "reg-1"])


def test_two_replays_of_one_spool_at_once_the_second_says_so(tmp_path):
    spool = tmp_path / "spool"
    spool.mkdir()
    ex.write_spool(str(spool / "export-1.jsonl"), [record("u", 1.0)], None)
    with artifacts.ExclusiveLock(str(spool / ex.REPLAY_LOCK_FILE), "spool %s (a replay)" % spool):
        with pytest.raises(errors.RunLockError, match=r"spool .*/spool \(a replay\) is in use by pid \d+"):
            ex.replay_spool(str(spool), sqlite_export(tmp_path / "r.sqlite"))
    assert ex.replay_spool(str(spool), sqlite_export(tmp_path / "r.sqlite"))["delivered"] == 1


def test_a_spool_file_linked_from_outside_is_not_read(tmp_path):
    outside = tmp_path / "outside.jsonl"
    ex.write_spool(str(outside), [record("x", 1.0)], None)
    spool = tmp_path / "spool"
    spool.mkdir()
    os.symlink(outside, spool / "export-link.jsonl")
    assert ex.spool_files(str(spool)) == []
