"""A real Prometheus (Debian's `prometheus`, which `make setup-test` installs) scraping, every
second, a small exporter on 127.0.0.1 whose values the test sets: for the integration and the
cluster tests."""

import contextlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
INSTALLED = os.path.exists(PROMETHEUS)
EXPORTED = ('# TYPE perfscale_test_gpu_utilization gauge\n'
            'perfscale_test_gpu_utilization{gpu="0"} 42\n'
            'perfscale_test_gpu_utilization{gpu="1"} 77\n'
            '# TYPE perfscale_test_memory_bytes gauge\n'
            'perfscale_test_memory_bytes{container="server"} 3000000000\n')


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Exporter(http.server.BaseHTTPRequestHandler):
    """Serves ``exposed`` on /metrics (404 elsewhere); a test may change it (and puts it back), or
    make a subclass exposing its own text (``exporter``)."""
    exposed = EXPORTED

    def do_GET(self):  # noqa: N802 - the http.server interface
        body = type(self).exposed.encode()
        self.send_response(200 if self.path == "/metrics" else 404)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def exporter(text=None):
    """A started exporter on 127.0.0.1 (``server_address[1]`` is its port; ``shutdown()`` stops it):
    ``text`` when given, else what ``Exporter.exposed`` says when scraped."""
    handler = type("TextExporter", (Exporter,), {"exposed": text}) if text is not None else Exporter
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def instant(url, query):
    with urllib.request.urlopen("%s/api/v1/query?query=%s" % (url, urllib.request.quote(query)), timeout=5) as answer:
        return json.load(answer)["data"]["result"]


@contextlib.contextmanager
def running(base):
    """A Prometheus with the admin API, scraping the exporter every second, answering:
    ``{"url", "port", "data_dir"}``."""
    scraped = exporter()
    (base / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n  - job_name: exporter\n    static_configs:\n"
        "      - targets: ['127.0.0.1:%d']\n" % scraped.server_address[1])
    port = free_port()
    server = subprocess.Popen([PROMETHEUS, "--config.file=%s" % (base / "prometheus.yml"),
                               "--storage.tsdb.path=%s" % (base / "data"), "--web.listen-address=127.0.0.1:%d" % port,
                               "--web.enable-admin-api"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % port
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if instant(url, 'up{job="exporter"} == 1'):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "prometheus did not start scraping"
            time.sleep(0.3)
        yield {"url": url, "port": port, "data_dir": str(base / "data")}
    finally:
        server.terminate()
        server.wait(timeout=20)
        scraped.shutdown()
