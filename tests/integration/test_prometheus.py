"""The Prometheus commands against a real Prometheus (Debian's `prometheus`, which `make setup-test`
installs) scraping, every second, a small exporter on 127.0.0.1 whose values the test knows."""

import http.server
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
import urllib.request

import pytest

from helpers import grep_tree, run_playbook

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from prometheus_server import EXPORTED, INSTALLED, PROMETHEUS, Exporter, instant, running  # noqa: E402

pytestmark = pytest.mark.skipif(
    not INSTALLED, reason="Debian's prometheus is not installed (make setup-test installs it as root)")


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    with running(tmp_path_factory.mktemp("prometheus")) as server:
        yield server


def toolbox(command, args, artifact_dir, env=None):
    return run_playbook("playbooks/toolbox.yml", "-e", "command=%r" % command, "-e", json.dumps({"args": args}),
                        "-e", "artifact_dir=%s" % artifact_dir, env=env)


TOKEN = "prom-token-6f1d2c9a"


@pytest.fixture
def guarded(prometheus):
    """An authenticating front-end (as OpenShift's thanos-querier route): a bearer token, then the Prometheus."""
    class Guard(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server interface
            if self.headers.get("Authorization") != "Bearer " + TOKEN:
                self.send_response(401)
                self.send_header("Content-Length", "12")
                self.end_headers()
                self.wfile.write(b"Unauthorized")
                return
            with urllib.request.urlopen(prometheus["url"] + self.path, timeout=10) as answer:
                body = answer.read()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Guard)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield "http://127.0.0.1:%d" % server.server_address[1]
    server.shutdown()


def test_a_bearer_token_from_the_secrets_directory_opens_a_guarded_front_end(guarded, tmp_path):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "prom_token").write_text(TOKEN + "\n")
    (secrets / "wrong_token").write_text("nope\n")
    queries = tmp_path / "queries.yml"
    queries.write_text("memory: perfscale_test_memory_bytes\n")
    args = {"prometheus_url": guarded, "promquery_file": str(queries), "duration_s": 60, "step_s": 5}
    env = {"PERFSCALE_SECRETS_DIR": str(secrets)}
    run = toolbox("cluster query_prometheus_db", dict(args, prometheus_token_secret="prom_token"), tmp_path / "run", env)
    assert run.returncode == 0, run.output
    index = json.loads((tmp_path / "run" / "000__cluster__query_prometheus_db" / "queries.json").read_text())
    assert index["queries"]["memory"]["series"] == 1
    refused = toolbox("cluster query_prometheus_db", dict(args, prometheus_token_secret="wrong_token"),
                      tmp_path / "run", env)
    assert refused.returncode != 0
    assert "401 unauthorized (prometheus_token_secret: a bearer token the server accepts)" in refused.flat, refused.output
    for output in (run.output, refused.output):
        assert TOKEN not in output
    assert not grep_tree(str(tmp_path / "run"), TOKEN)


def test_reset_then_query_the_window_then_dump(prometheus, tmp_path):
    url = prometheus["url"]
    assert instant(url, "perfscale_test_gpu_utilization")  # scraped before the reset
    before = time.time()
    reset = toolbox("cluster reset_prometheus_db", {"prometheus_url": url}, tmp_path)
    assert reset.returncode == 0, reset.output
    record = json.loads((tmp_path / "000__cluster__reset_prometheus_db" / "reset.json").read_text())
    assert record["mode"] == "reset" and before <= record["ts"] <= time.time()
    # what was scraped before the reset is gone
    with urllib.request.urlopen("%s/api/v1/query_range?query=up&start=%f&end=%f&step=1s"
                                % (url, before - 300, before - 1), timeout=5) as answer:
        assert json.load(answer)["data"]["result"] == []
    time.sleep(3)  # the test step: a few scrapes
    queries = tmp_path / "queries.yml"
    queries.write_text("gpu_utilization: perfscale_test_gpu_utilization\n"
                       "gpu_utilization_max: max(perfscale_test_gpu_utilization)\n"
                       "container_memory: perfscale_test_memory_bytes{container=\"server\"}\n")
    query = toolbox("cluster query_prometheus_db",
                    {"prometheus_url": url, "promquery_file": str(queries), "step_s": 1}, tmp_path)
    assert query.returncode == 0, query.output
    directory = tmp_path / "001__cluster__query_prometheus_db"
    index = json.loads((directory / "queries.json").read_text())
    # the window starts at the run's reset
    assert index["start"] == record["ts"] and index["step_s"] == 1
    assert {name: item["series"] for name, item in index["queries"].items()} == {
        "gpu_utilization": 2, "gpu_utilization_max": 1, "container_memory": 1}
    by_gpu = {series["metric"]["gpu"]: {value for _ts, value in series["values"]}
              for series in json.loads((directory / "gpu_utilization.json").read_text())["data"]["result"]}
    assert by_gpu == {"0": {"42"}, "1": {"77"}}
    peak = json.loads((directory / "gpu_utilization_max.json").read_text())["data"]["result"][0]["values"]
    assert len(peak) >= 2 and {value for _ts, value in peak} == {"77"}
    dump = toolbox("cluster dump_prometheus_db",
                   {"prometheus_url": url, "prometheus_data_dir": prometheus["data_dir"], "dump_name_prefix": "after_test"},
                   tmp_path)
    assert dump.returncode == 0, dump.output
    directory = tmp_path / "002__cluster__dump_prometheus_db"
    snapshot = json.loads((directory / "snapshot.json").read_text())
    assert snapshot["archive"] == "after_test.tar.gz"
    with tarfile.open(directory / "after_test.tar.gz") as archive:
        names = archive.getnames()
    assert any(name.endswith("/meta.json") for name in names) and any("/chunks/" in name for name in names)


def test_mark_keeps_the_data_and_a_failing_query_is_named(prometheus, tmp_path):
    url = prometheus["url"]
    mark = toolbox("cluster reset_prometheus_db", {"prometheus_url": url, "mode": "mark"}, tmp_path)
    assert mark.returncode == 0, mark.output
    assert instant(url, "perfscale_test_gpu_utilization")
    time.sleep(1.5)
    queries = tmp_path / "queries.yml"
    queries.write_text("good: perfscale_test_memory_bytes\nbroken: sum(perfscale_test_memory_bytes\n")
    query = toolbox("cluster query_prometheus_db",
                    {"prometheus_url": url, "promquery_file": str(queries), "step_s": 1}, tmp_path)
    assert query.returncode != 0
    assert "1 of 2 query(ies)" in query.flat and "failed: GET %s/api/v1/query_range: 400" % url in query.flat
    index = json.loads((tmp_path / "001__cluster__query_prometheus_db" / "queries.json").read_text())
    assert index["queries"]["good"]["series"] == 1 and "error" in index["queries"]["broken"]
    assert (tmp_path / "001__cluster__query_prometheus_db" / "FAILURE").exists()


def exposed(gpu0, gpu1):
    return ('# TYPE perfscale_test_gpu_utilization gauge\n'
            'perfscale_test_gpu_utilization{gpu="0"} %s\n'
            'perfscale_test_gpu_utilization{gpu="1"} %s\n'
            '# TYPE perfscale_test_memory_bytes gauge\n'
            'perfscale_test_memory_bytes{container="server"} 3000000000\n' % (gpu0, gpu1))


def test_the_prom_workload_turns_what_was_exposed_into_kpis_plots_and_stored_documents(prometheus, tmp_path):
    """Two tests of a matrix, each: reset, a few scrapes at a low value, a few at its peak, query into
    the test's directory; then visualize.yml: the KPIs are what the exporter exposed."""
    url = prometheus["url"]
    root = tmp_path / "run"
    trees.make_tree(str(root), points=2)
    points = sorted((root / "001__matbenchmarking").iterdir())
    queries = tmp_path / "queries.yml"
    queries.write_text("gpu_utilization: {query: perfscale_test_gpu_utilization, unit: '%', help: GPU busy}\n"
                       "container_memory: {query: 'perfscale_test_memory_bytes{container=\"server\"}', unit: bytes}\n")
    peaks = {points[0].name: (90, 60), points[1].name: (70, 40)}
    try:
        for point in points:
            Exporter.exposed = exposed(10, 20)
            reset = toolbox("cluster reset_prometheus_db", {"prometheus_url": url}, point)
            assert reset.returncode == 0, reset.output
            time.sleep(2.5)
            Exporter.exposed = exposed(*peaks[point.name])
            time.sleep(2.5)
            query = toolbox("cluster query_prometheus_db",
                            {"prometheus_url": url, "promquery_file": str(queries), "step_s": 1}, point)
            assert query.returncode == 0, query.output
    finally:
        Exporter.exposed = EXPORTED
    database = tmp_path / "results.sqlite"
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root,
                       env={"PERFSCALE_EXPORT_SQLITE_PATH": str(database)})
    assert run.returncode == 0, run.output
    plots = root / "002__plots"
    records = json.loads((plots / "prom_kpi_records.json").read_text())
    by = {(r["test_path"].rsplit("/", 1)[-1], r["kpi_name"], r["prom_series"]): r["value"] for r in records}
    for point in points:
        capture = point / "001__cluster__query_prometheus_db" / "gpu_utilization.json"
        samples = {series["metric"]["gpu"]: [float(v) for _ts, v in series["values"]]
                   for series in json.loads(capture.read_text())["data"]["result"]}
        for gpu, peak, low in (("0", peaks[point.name][0], 10), ("1", peaks[point.name][1], 20)):
            key = [k for k in by if k[0] == point.name and k[1] == "gpu_utilization_max" and 'gpu="%s"' % gpu in k[2]]
            assert len(key) == 1, by
            assert by[key[0]] == peak  # the peak the exporter exposed
            mean = by[(point.name, "gpu_utilization_mean", key[0][2])]
            assert low < mean < peak and mean == pytest.approx(sum(samples[gpu]) / len(samples[gpu]))
            assert set(samples[gpu]) == {float(low), float(peak)}
        memory = [v for k, v in by.items() if k[0] == point.name and k[1].startswith("container_memory_")]
        assert memory == [3e9, 3e9]
    report = (plots / "prometheus_report.html").read_text()
    assert "gpu_utilization over time" in report and "container_memory_max" in report
    with sqlite3.connect(str(database)) as connection:
        stored = connection.execute("SELECT COUNT(*) FROM documents WHERE kind = 'prom'").fetchone()[0]
    assert stored == len(records) == 2 * (2 + 1) * 2  # two tests, three series, max and mean
    assert "4 Prometheus KPI" not in run.flat and "12 Prometheus KPI" in run.flat


@pytest.mark.parametrize("command, args, message", [
    ("cluster reset_prometheus_db", {"prometheus_url": "http://127.0.0.1:9"}, "POST http://127.0.0.1:9/api/v1/admin/tsdb/delete_series:"),
    ("cluster reset_prometheus_db", {"prometheus_url": "prometheus:9090"}, "prometheus_url 'prometheus:9090': expected http(s)://host[:port]"),
    ("cluster query_prometheus_db", {"prometheus_url": "http://127.0.0.1:9", "promquery_file": "/nonexistent.yml"},
     "promquery_file /nonexistent.yml: No such file or directory"),
    ("cluster query_prometheus_db", {"prometheus_url": "http://127.0.0.1:9", "promquery_file": "QUERIES"},
     "query window: no start; expected start_ts, duration_s > 0, or a cluster reset_prometheus_db earlier in the run"),
    ("cluster query_prometheus_db", {"prometheus_url": "http://127.0.0.1:9", "promquery_file": "QUERIES",
                                     "start_ts": "yesterday"}, "start_ts 'yesterday': expected a Unix time or an ISO 8601 date"),
])
def test_bad_input_is_one_line(tmp_path, command, args, message):
    (tmp_path / "q.yml").write_text("a: up\n")
    args = {key: str(tmp_path / "q.yml") if value == "QUERIES" else value for key, value in args.items()}
    run = toolbox(command, args, tmp_path / "run")
    assert run.returncode != 0
    assert message in run.flat, run.output


def test_the_admin_api_off_is_said(tmp_path):
    """A Prometheus without --web.enable-admin-api: the reset says what to do."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (tmp_path / "p.yml").write_text("global: {scrape_interval: 60s}\nscrape_configs: []\n")
    server = subprocess.Popen([PROMETHEUS, "--config.file=%s" % (tmp_path / "p.yml"),
                               "--storage.tsdb.path=%s" % (tmp_path / "data"), "--web.listen-address=127.0.0.1:%d" % port],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % port, timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.3)
        run = toolbox("cluster reset_prometheus_db", {"prometheus_url": "http://127.0.0.1:%d" % port}, tmp_path / "run")
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert run.returncode != 0
    assert "the admin API is off (start Prometheus with --web.enable-admin-api)" in run.flat, run.output
