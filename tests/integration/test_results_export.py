import json
import os
import socket
import sqlite3
import sys
import time

import pytest
import yaml
from osmem_server import OsmemServer

from helpers import tree, REPO, grep_tree, run_playbook, CpuBurner

sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position
from proxy import Proxy  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as ex  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.opensearch import OpenSearchStore  # noqa: E402

EXPORT = {"enabled": True, "backend": "opensearch", "timeout_s": 5, "sqlite": {"path": None},
          "opensearch": {"hosts": [], "index_prefix": "perfscale-", "verify_certs": True, "ca_file": None,
                         "credentials_file": None, "max_retries": 1, "chunk_size": 100}}


@pytest.fixture(scope="module")
def server():
    with OsmemServer.start() as running:
        yield running


@pytest.fixture
def clone(server):
    with server.clone() as fresh:
        yield fresh


def opensearch_export(url, **changes):
    export = json.loads(json.dumps(EXPORT))
    export["opensearch"]["hosts"] = [url]
    export["opensearch"].update(changes)
    return export


def record(uuid, value, day=1, second=0, **labels):
    base = {"indicator": "matmul", "size": 256, "dtype": "float32", "test_path": "p/%s" % uuid}
    base.update(labels)
    base.update(kpi_name="rate", value=value, unit="GFLOP/s", higher_is_better=True, ignored_for_regression=False,
                test_uuid=uuid, workload="perf_indicators",
                **{"@timestamp": "2026-%02d-%02dT10:%02d:%02d+00:00" % (1 + day // 28, 1 + day % 28, second // 60, second % 60)})
    return stores_base.kpi_document(base)


def count(url, kind="kpi"):
    store = OpenSearchStore([url])
    try:
        return store.count(kind)
    finally:
        store.close()


def test_mapping_bulk_export_and_idempotent_re_export(clone):
    store = OpenSearchStore([clone.url], timeout=5)
    store.ensure_schema(["indicator", "size", "dtype"])
    properties = store.client.indices.get_mapping(index="perfscale-kpis")["perfscale-kpis"]["mappings"]["properties"]
    assert properties["indicator"] == {"type": "keyword"} and properties["size"] == {"type": "keyword"}
    assert properties["value"] == {"type": "double"} and properties["@timestamp"] == {"type": "date"}
    documents = [record("u%d" % i, float(i), day=i) for i in range(250)]
    assert len(store.write(documents).delivered) == 250
    assert len(store.write(documents).delivered) == 250
    assert store.count() == 250
    store.close()


def test_history_query_pages_past_ten_thousand_records(clone):
    store = OpenSearchStore([clone.url], timeout=30, chunk_size=2000)
    store.ensure_schema(["indicator", "size", "dtype"])
    total = 10_500
    documents = [record("h%05d" % i, float(i), day=i // 3600, second=i % 3600) for i in range(total)]
    documents.append(record("elsewhere", 1.0, size=512))
    assert len(store.write(documents).delivered) == total + 1
    history = store.history("perfscale_indicators".replace("perfscale_", "perf_"), "rate",
                            {"indicator": "matmul", "size": 256, "dtype": "float32", "test_path": "x"},
                            ignore_keys=["test_path"])
    assert len(history) == total
    assert [h["value"] for h in history[:3]] == [0.0, 1.0, 2.0]
    assert [h["value"] for h in history] == sorted(h["value"] for h in history)
    store.close()


def test_server_killed_in_the_middle_of_a_bulk_export_then_replayed_exactly_once(clone, tmp_path):
    target_port = int(clone.url.rsplit(":", 1)[1])
    documents = [record("k%04d" % i, float(i), day=i % 300, second=i // 300) for i in range(3000)]
    proxy = Proxy(target_port, cut_after_bytes=200_000).start()
    spool = tmp_path / "spool"
    export = opensearch_export(proxy.url, max_retries=1)
    outcome = ex.export_documents(documents, export, str(spool), label_fields=["indicator", "size", "dtype"])
    assert outcome["undelivered"] > 0 and outcome["delivered"] + outcome["undelivered"] == 3000
    assert outcome["spool_file"] and os.path.exists(outcome["spool_file"])
    delivered_before = count(clone.url)
    assert 0 < delivered_before < 3000
    proxy.cut_after_bytes = None
    proxy.start()  # the server is back, on the same address
    replay = ex.replay_spool(str(spool), export)
    proxy.stop()
    assert replay["undelivered"] == 0 and replay["delivered"] == outcome["undelivered"]
    assert count(clone.url) == 3000


def test_unreachable_server_never_hangs(tmp_path):
    started = time.monotonic()
    outcome = ex.export_documents([record("u", 1.0)], opensearch_export("http://127.0.0.1:9", max_retries=1),
                                  str(tmp_path / "spool"))
    assert time.monotonic() - started < 10
    assert outcome["undelivered"] == 1 and "opensearch http://127.0.0.1:9" in outcome["reason"]


def overrides_for(url=None, sqlite_path=None, **extra):
    overrides = {}
    if url:
        overrides.update({"export.backend": "opensearch", "export.opensearch.hosts": [url],
                          "export.opensearch.max_retries": 1, "export.timeout_s": 3})
    if sqlite_path:
        overrides["export.sqlite.path"] = str(sqlite_path)
    overrides.update(extra)
    return json.dumps({"overrides": overrides})


def test_play_exports_to_opensearch_with_credentials_that_never_leak(clone, tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=3)
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    password = "pw-Zq81-never-printed"
    (secrets / "opensearch.yaml").write_text("username: perf\npassword: %s\n" % password)
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root, "-v",
                       "-e", overrides_for(clone.url, **{"export.opensearch.credentials_file": "opensearch.yaml"}),
                       env={"PERFSCALE_SECRETS_DIR": str(secrets)})
    assert run.returncode == 0, run.output
    assert "kpi_export: 15 KPI and 6 regression document(s) exported to opensearch %s" % clone.url in run.flat
    assert count(clone.url) == 15 and count(clone.url, "regression") == 6
    assert password not in run.output
    assert grep_tree(str(root), password) == []


def test_server_down_at_play_end_spools_and_the_printed_command_replays_there_exactly_once(clone, tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=3)
    # the store's address, down during the play
    proxy = Proxy(int(clone.url.rsplit(":", 1)[1]))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        proxy.port = probe.getsockname()[1]
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root, "-e", overrides_for(proxy.url))
    assert run.returncode == 0, run.output
    assert "history unavailable" in run.flat
    # 15 KPIs and the 3 points' wall times
    assert "kpi_export: 18 document(s) not delivered to opensearch %s" % proxy.url in run.flat
    spool = root / "kpi_export_spool"
    assert len(ex.spool_files(str(spool))) == 1
    command = run.flat.split("replay with: ", 1)[1].split()[:4]
    assert command == ["ansible-playbook", "perfscale.topsail.export", "-e", "spool_dir=%s" % spool]
    proxy.start()  # the store is back
    try:
        # the printed command, as is: no override says where the documents go
        replay = run_playbook(command[1], *command[2:])
        assert replay.returncode == 0, replay.output
        assert "replayed 1 spool file(s): 18 of 18 document(s) delivered to opensearch %s" % proxy.url in replay.flat
        assert count(clone.url) == 15
        again = run_playbook(command[1], *command[2:])
        assert again.returncode == 0 and "replayed 0 spool file(s)" in again.flat
    finally:
        proxy.stop()
    assert count(clone.url) == 15


def test_a_spool_can_be_sent_to_the_configured_store_instead(clone, tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=3)
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root,
                       "-e", overrides_for("http://127.0.0.1:9"))
    assert run.returncode == 0, run.output
    spool = root / "kpi_export_spool"
    elsewhere = tmp_path / "elsewhere.sqlite"
    replay = run_playbook("playbooks/export.yml", "-e", "spool_dir=%s" % spool, "-e", "spool_target=config",
                          "-e", overrides_for(sqlite_path=elsewhere))
    assert replay.returncode == 0, replay.output
    assert "delivered to sqlite %s" % elsewhere in replay.flat


def test_export_playbook_exports_a_results_tree_idempotently(tmp_path):
    root = tmp_path / "old-run"
    trees.make_tree(str(root), points=4, failed=(3,))
    database = tmp_path / "results.sqlite"
    before = tree(str(root))
    for _attempt in range(2):
        run = run_playbook("playbooks/export.yml", "-e", "results_dir=%s" % root, "-e", overrides_for(sqlite_path=database))
        assert run.returncode == 0, run.output
        assert "exported 15 of 15 KPI document(s) of 4 test(s) to sqlite %s" % database in run.flat
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT COUNT(*) FROM documents WHERE kind = 'kpi'").fetchone()[0] == 15
    # exporting only exports: no plots directory, no parse cache; only the run's log of the tasks grew
    assert [name for name in tree(str(root)) if name != "_ansible.log"] == before


def test_a_replot_exports_again_only_when_asked_and_an_undelivered_export_fails_the_test_only_when_asked(tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=2)
    database = tmp_path / "results.sqlite"

    def documents():
        with sqlite3.connect(database) as connection:
            return connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0]

    first = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root, "-e", overrides_for(sqlite_path=database))
    assert first.returncode == 0, first.output
    exported = documents()
    assert exported > 0
    # the same tree again: a replot, nothing exported (the reference's enabled_on_replot: false)
    database.unlink()
    replot = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root, "-v", "-e",
                          overrides_for(sqlite_path=database))
    assert replot.returncode == 0, replot.output
    assert "not exported: a replot of a tree post-processed before (export.enabled_on_replot)" in replot.flat
    assert not database.exists() or documents() == 0
    again = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root, "-e",
                         overrides_for(sqlite_path=database, **{"export.enabled_on_replot": True}))
    assert again.returncode == 0, again.output
    assert documents() == exported
    # a store that does not take the documents: a warning, unless export.fail_test_on_fail
    fresh = tmp_path / "fresh"
    trees.make_tree(str(fresh), points=2)
    unreachable = overrides_for("http://127.0.0.1:9", **{"export.fail_test_on_fail": True})
    failed = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % fresh, "-e", unreachable)
    assert failed.returncode != 0
    assert "export.fail_test_on_fail: kpi_export:" in failed.flat and "not delivered" in failed.flat
    assert (fresh / "kpi_export_spool").is_dir()


def test_the_play_end_export_uploads_the_run_to_horreum_once(tmp_path):
    sys.path.insert(0, os.path.join(REPO, "tests"))
    from notify_servers import Horreum, serving  # pylint: disable=import-outside-toplevel

    key = "HUSR_integration_horreum_key_0123"
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "horreum-key").write_text(key)
    root = tmp_path / "run"
    trees.make_tree(str(root), points=2)
    with serving(Horreum(key)) as horreum:
        settings = {"export.horreum.enabled": True, "export.horreum.url": horreum.url,
                    "export.horreum.test": "perfscale-demo", "export.horreum.api_key_file": "horreum-key",
                    "export.enabled_on_replot": True}
        for _attempt in range(2):
            run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root, "-v", "-e",
                               overrides_for(sqlite_path=tmp_path / "results.sqlite", **settings),
                               env={"PERFSCALE_SECRETS_DIR": str(secrets)})
            assert run.returncode == 0, run.output[-3000:]
            assert "uploaded to horreum %s (test perfscale-demo)" % horreum.url in run.flat, run.flat[-2000:]
        assert len(horreum.runs) == 1
        data = horreum.runs[0]["data"]
        assert len(data["kpis"]) == 10 and data["regressions"] and data["$schema"] == "urn:perfscale-topsail:run:1"
    assert grep_tree(str(root), key) == [] and key not in run.output


def test_export_playbook_needs_one_input():
    run = run_playbook("playbooks/export.yml")
    assert run.returncode != 0
    assert "expected -e results_dir=PATH (export a results tree) or -e spool_dir=PATH (replay a spool)" in run.flat


def test_regression_fails_the_test_only_when_configured_and_improvements_never_do(tmp_path):
    database = tmp_path / "history.sqlite"
    for _run in range(3):
        history = tmp_path / ("history-%d" % _run)
        trees.make_tree(str(history), points=2)
        assert run_playbook("playbooks/export.yml", "-e", "results_dir=%s" % history,
                            "-e", overrides_for(sqlite_path=database)).returncode == 0
    slower = tmp_path / "slower"
    trees.make_tree(str(slower), points=2, rate_scale=0.7)
    lenient = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % slower, "-e",
                           overrides_for(sqlite_path=database, **{"export.enabled": False}))
    assert lenient.returncode == 0, lenient.output
    # rate regressed on both points; time_median, a view of rate, is shown, not counted again
    assert "2 regression(s), 0 persisting regression(s), 0 improvement(s)" in lenient.flat
    strict = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % slower, "-e",
                          overrides_for(sqlite_path=database, **{"regression.fail_test_on_regression": True,
                                                                 "export.enabled": False}))
    assert strict.returncode != 0
    assert ("2 new regression(s): 2 KPI(s) of 2 entries compared (linear_segments): 2 regression(s), 0 persisting "
            "regression(s), 0 improvement(s)") in strict.flat
    assert "regression_report.html" in strict.flat
    faster = tmp_path / "faster"
    trees.make_tree(str(faster), points=2, rate_scale=1.4)
    improved = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % faster, "-e",
                            overrides_for(sqlite_path=database, **{"regression.fail_test_on_regression": True}))
    assert improved.returncode == 0, improved.output
    assert "0 regression(s), 0 persisting regression(s), 2 improvement(s)" in improved.flat
    summary = (faster / "002__plots" / "regression_summary.yaml").read_text()
    assert "history_points: 3" in summary


def test_demo_twice_then_a_cpt_gate_on_a_loaded_runner_compares_with_noisy_history_and_passes(tmp_path):
    """A shared CI runner: a CPU burner beside the runs, so the runs are noisy (host load). The
    second run, with the cpt preset (require_history, fail on regression), compares every KPI
    with the first run's noisy ones (regression.noise.baseline: prefer_quiet), says so in one
    line, and identical runs do not fail the gate."""
    database = tmp_path / "demo.sqlite"
    runs = []
    with CpuBurner():
        for name, preset in (("first", "cpu_smoke"), ("second", "cpu_smoke,cpt")):
            root = tmp_path / name
            run = run_playbook("playbooks/benchmark.yml", "-e", "preset=%s" % preset, "-e", "artifact_dir=%s" % root,
                               "-e", overrides_for(sqlite_path=database))
            runs.append((root, run))
    first, second = ([yaml.safe_load((root / "002__plots" / "regression_summary.yaml").read_text()), run]
                     for root, run in runs)
    assert first[1].returncode == 0, first[1].output
    assert "0 KPI(s) of 8 entries compared (linear_segments)" in first[1].flat
    assert "8 KPI(s) without history (8 none stored)" in first[1].flat
    assert first[0]["noisy_entries"], "the burner did not make the first run noisy"
    # exported once: by the play itself, the enabled kpi_export callback has nothing left to do
    # (8 points x (5 KPIs + the 5 resource-usage KPIs the local executor measured))
    assert first[1].flat.count("kpi_export: 80 KPI and 16 regression document(s) exported to sqlite %s"
                               % database) == 1
    assert first[1].flat.count("kpi_export:") == 1
    summary, run = second
    assert run.returncode == 0, run.output
    assert summary["entries_analysed"] == 8 and summary["kpis_with_history"] == 8 and not summary["fail_test"]
    assert summary["not_enough_history"] == [] and summary["store"] == "sqlite %s" % database
    # the noisy first run is the baseline (too few quiet runs), and the line says so
    assert summary["baselines_with_noisy_runs"] >= 1 and summary["baseline_policy"] == "prefer_quiet"
    assert "8 KPI(s) of 8 entries compared (linear_segments)" in run.flat and "with noisy runs" in run.flat
    # one history point: a change beyond the threshold cannot be told from noise yet, never a verdict
    assert summary["regressions"] == summary["improvements"] == []
    assert len(summary["inconclusive"]) + summary["no_change"] == 8
    assert all(line["runs_needed"] == 2 for line in summary["inconclusive"])
    report = (runs[1][0] / "002__plots" / "regression_report.html").read_text()
    assert report.count("method short_history &middot; 1 history point(s)") == 16
    assert "noisy runs enter a baseline only where there are too few quiet ones" in report


def test_export_environment_overrides_the_export_section_for_history_and_export(tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=2)
    configured = tmp_path / "configured.sqlite"
    chosen = tmp_path / "from-env.sqlite"
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root,
                       "-e", overrides_for(sqlite_path=configured),
                       env={"PERFSCALE_EXPORT_SQLITE_PATH": str(chosen)})
    assert run.returncode == 0, run.output
    assert "exported to sqlite %s" % chosen in run.flat
    with sqlite3.connect(chosen) as connection:
        assert connection.execute("SELECT COUNT(*) FROM documents WHERE kind = 'kpi'").fetchone()[0] == 10
    # the history of the regression step came from the same store: the configured one was never opened
    assert not configured.exists()
    summary = yaml.safe_load(next(root.glob("*__plots/regression_summary.yaml")).read_text())
    assert summary["store"] == "sqlite %s" % chosen


def test_callback_exports_what_a_playbook_of_your_own_did_not(tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=2)
    database = tmp_path / "own.sqlite"
    playbook = tmp_path / "own.yml"
    playbook.write_text("""
- hosts: localhost
  gather_facts: false
  tasks:
    - perfscale.topsail.resolve_config:
        artifact_dir: "{{ results_dir }}"
        write: false
    - perfscale.topsail.visualize:
        results_dir: "{{ results_dir }}"
""")
    run = run_playbook(str(playbook), "-e", "results_dir=%s" % root, "-e", overrides_for(sqlite_path=database))
    assert run.returncode == 0, run.output
    assert run.flat.count("kpi_export: 10 KPI and 0 regression document(s) exported to sqlite %s" % database) == 1
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT COUNT(*) FROM documents WHERE kind = 'kpi'").fetchone()[0] == 10
