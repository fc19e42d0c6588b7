"""Horreum as an export target: one Horreum run per run (its KPIs and verdicts, a $schema), idempotent by
run id, the API key from the secrets directory and never written, spooled and replayed like any export -
against a stand-in built from Horreum's OpenAPI description."""

import json
import os
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors, stores
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from notify_servers import Horreum, dead_url, serving  # noqa: E402

API_KEY = "HUSR_00000000_0000_0000_0000_unit-test-key"


def export_section(tmp_path, url, **horreum):
    section = {"export": {"backend": "sqlite", "timeout_s": 5, "sqlite": {"path": str(tmp_path / "results.sqlite")},
                          "horreum": dict({"enabled": True, "url": url, "test": "perfscale-demo", "owner": "perf-team",
                                           "access": "PUBLIC", "api_key_file": "horreum-key"}, **horreum)}}
    return config_schema.read_section(section, "export")


@pytest.fixture
def secrets(tmp_path):
    directory = tmp_path / "secrets"
    directory.mkdir()
    (directory / "horreum-key").write_text(API_KEY + "\n")
    (directory / "wrong-key").write_text("HUSR_wrong")
    return {"secrets": {"dir_env": "TEST_SECRETS_DIR"}}, {"TEST_SECRETS_DIR": str(directory)}


def documents(run_id, minute=0):
    out = []
    for index, kpi in enumerate(("rate", "time_median")):
        fields = {"indicator": "matmul", "run_id": run_id, "kpi_name": kpi, "value": 10.0 + index, "unit": "x",
                  "higher_is_better": True, "ignored_for_regression": False, "test_uuid": "%s-t%d" % (run_id, index),
                  "workload": "perf_indicators", "@timestamp": "2026-11-26T10:%02d:%02d+00:00" % (minute, index * 30)}
        out.append(base.kpi_document(fields))
    out.append({"kind": "regression", "doc_id": base.doc_id("regression", run_id), "run_id": run_id,
                "kpi_name": "rate", "verdict": "no_change", "@timestamp": "2026-11-26T10:%02d:45+00:00" % minute})
    # a point's wall time (capacity estimates): delivered, not uploaded
    out.append({"kind": "point", "doc_id": base.doc_id("point", run_id), "test_uuid": run_id + "-t0",
                "@timestamp": "2026-11-26T10:%02d:50+00:00" % minute})
    return out


def horreum_target(export):
    return dict(export, backend="horreum")


def test_one_horreum_run_per_run_idempotent_by_run_id(tmp_path, secrets):
    config, environ = secrets
    with serving(Horreum(API_KEY)) as horreum:
        # 130 runs already there: the look-up goes through the pages
        horreum.runs.extend({"id": i, "testid": 10, "description": "someone else's %d" % i, "start": 0, "stop": 0,
                             "owner": "x", "access": "PUBLIC", "data": {}} for i in range(130))
        export = export_section(tmp_path, horreum.url)
        spool = str(tmp_path / "spool")
        first = export_lib.export_documents(documents("run-a") + documents("run-b", 5), horreum_target(export), spool,
                                            config, environ=environ)
        assert (first["delivered"], first["undelivered"]) == (8, 0), first
        ours = [r for r in horreum.runs if r["description"].startswith("perfscale.topsail run ")]
        assert sorted(r["description"] for r in ours) == ["perfscale.topsail run run-a", "perfscale.topsail run run-b"]
        run_a = next(r for r in ours if r["description"].endswith("run-a"))
        assert (run_a["start"], run_a["stop"]) == ("2026-11-26T10:00:00Z", "2026-11-26T10:00:45Z")
        assert (run_a["owner"], run_a["access"], run_a["schema"]) == ("perf-team", "PUBLIC", "urn:perfscale-topsail:run:1")
        assert run_a["data"]["$schema"] == "urn:perfscale-topsail:run:1"
        assert [d["kpi_name"] for d in run_a["data"]["kpis"]] == ["rate", "time_median"]
        assert run_a["data"]["regressions"][0]["verdict"] == "no_change"
        again = export_lib.export_documents(documents("run-a"), horreum_target(export), spool, config, environ=environ)
        assert again["delivered"] == 4 and len(horreum.runs) == 132
        assert any("page=2" in r["query"] for r in horreum.requests)
        assert {r["headers"].get("X-Horreum-API-Key") for r in horreum.requests} == {API_KEY}
    assert not os.path.exists(spool)


def test_a_refused_key_or_a_dead_server_spools_and_the_replay_uploads(tmp_path, secrets):
    config, environ = secrets
    spool = str(tmp_path / "spool")
    with serving(Horreum(API_KEY)) as horreum:
        refused = export_lib.export_documents(documents("run-c"), horreum_target(
            export_section(tmp_path, horreum.url, api_key_file="wrong-key")), spool, config, environ=environ)
        assert refused["undelivered"] == 4 and "401" in refused["reason"], refused
        assert horreum.runs == []
    dead = export_lib.export_documents(documents("run-d"), horreum_target(export_section(tmp_path, dead_url())),
                                       spool, config, environ=environ)
    assert dead["undelivered"] == 4 and dead["spool_file"]
    for name in os.listdir(spool):
        assert API_KEY not in (tmp_path / "spool" / name).read_text()
    # the replay goes to the Horreum each spool file recorded, with the configuration's key
    with serving(Horreum(API_KEY)) as horreum:
        for name in os.listdir(spool):
            path = os.path.join(spool, name)
            with open(path, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
            header = json.loads(lines[0])
            header["perfscale_spool"]["target"]["horreum"].update(url=horreum.url, api_key_file="horreum-key")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("\n".join([json.dumps(header)] + lines[1:]) + "\n")
        outcome = export_lib.replay_spool(spool, export_section(tmp_path, horreum.url), config, environ)
        assert outcome["delivered"] == 8 and outcome["undelivered"] == 0, outcome
        descriptions = sorted(r["description"] for r in horreum.runs)
        assert descriptions == ["perfscale.topsail run run-c", "perfscale.topsail run run-d"]


def test_horreum_is_an_export_target_never_the_history_store(tmp_path, secrets):
    config, environ = secrets
    with pytest.raises(errors.ConfigError, match="export.backend"):
        config_schema.read_section({"export": {"backend": "horreum"}}, "export")
    assert "horreum" not in stores.backend_names() and "horreum" in stores.BACKENDS
    store = stores.open_store(horreum_target(export_section(tmp_path, "http://127.0.0.1:9")), config, environ)
    with pytest.raises(errors.StoreError, match="horreum is an export target, not a history store"):
        store.history("w", "rate", {})
    with pytest.raises(errors.ConfigError, match="enabled: true needs url, test, api_key_file"):
        config_schema.read_section({"export": {"horreum": {"enabled": True}}}, "export")
    with pytest.raises(errors.StoreError, match="export.horreum.api_key_file"):
        stores.open_store(horreum_target(export_section(tmp_path, "http://127.0.0.1:9", api_key_file="missing")),
                          config, environ)
