"""The pods/proxy and services/proxy subresources: a client reaches a pod's port through the API
server (kubesim's pods share the host's network: the pod's port is 127.0.0.1:<port>)."""

import http.server
import json
import threading
import time

import pytest


class Echo(http.server.BaseHTTPRequestHandler):
    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.dumps({"method": self.command, "path": self.path,
                           "body": self.rfile.read(length).decode() if length else ""}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def echo():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def pod(name, port, labels=None, outcome="Running"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels or {},
                         "annotations": {"kubesim.perfscale.io/outcome": outcome}},
            "spec": {"containers": [{"name": "c", "image": "quay.io/x/server:1",
                                     "ports": [{"name": "web", "containerPort": port}]}]}}


def wait_phase(http, name, phase, namespace="default"):
    deadline = time.monotonic() + 20
    while True:
        status, _headers, body = http("GET", "/api/v1/namespaces/%s/pods/%s" % (namespace, name))
        if status == 200 and body.get("status", {}).get("phase") == phase:
            return
        assert time.monotonic() < deadline, body
        time.sleep(0.1)


def test_a_pods_port_through_the_api_server_by_number_name_or_default(http, echo, kubectl):
    assert http("POST", "/api/v1/namespaces/default/pods", pod("server", echo))[0] == 201
    wait_phase(http, "server", "Running")
    for target in ("server:%d" % echo, "server:web", "server", "http:server:%d" % echo):
        status, _headers, body = http("GET", "/api/v1/namespaces/default/pods/%s/proxy/api/v1/query?query=up" % target)
        assert (status, body["method"], body["path"]) == (200, "GET", "/api/v1/query?query=up"), target
    status, _headers, body = http("POST", "/api/v1/namespaces/default/pods/server:web/proxy/api/v1/admin/x",
                                  b"match=1", content_type="application/x-www-form-urlencoded")
    assert (status, body["method"], body["body"]) == (200, "POST", "match=1")
    # kubectl's own way in
    raw = kubectl("get", "--raw", "/api/v1/namespaces/default/pods/server:web/proxy/metrics").stdout
    assert json.loads(raw)["path"] == "/metrics"


def test_a_service_reaches_a_running_pod_of_its_selector(http, echo):
    assert http("POST", "/api/v1/namespaces/default/pods", pod("svc-backend", echo, {"app": "prom"}))[0] == 201
    wait_phase(http, "svc-backend", "Running")
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "prom"},
               "spec": {"selector": {"app": "prom"}, "ports": [{"name": "web", "port": 80, "targetPort": "web"}]}}
    assert http("POST", "/api/v1/namespaces/default/services", service)[0] == 201
    for target in ("prom:80", "prom:web", "prom"):
        status, _headers, body = http("GET", "/api/v1/namespaces/default/services/%s/proxy/federate" % target)
        assert (status, body["path"]) == (200, "/federate"), target
    lonely = dict(service, metadata={"name": "lonely"}, spec=dict(service["spec"], selector={"app": "none"}))
    assert http("POST", "/api/v1/namespaces/default/services", lonely)[0] == 201
    status, _headers, body = http("GET", "/api/v1/namespaces/default/services/lonely/proxy/")
    assert (status, body["message"]) == (503, 'no endpoints available for service "lonely"')


def test_unreachable_pods_answer_as_the_api_server_does(http, echo):
    status, _headers, body = http("GET", "/api/v1/namespaces/default/pods/absent:9090/proxy/")
    assert status == 404 and body["reason"] == "NotFound"
    assert http("POST", "/api/v1/namespaces/default/pods", pod("done", echo, outcome="Succeeded"))[0] == 201
    wait_phase(http, "done", "Succeeded")
    status, _headers, body = http("GET", "/api/v1/namespaces/default/pods/done/proxy/")
    assert status == 503 and "pod done is not running (phase Succeeded)" in body["message"]
    assert http("POST", "/api/v1/namespaces/default/pods", pod("deaf", 9))[0] == 201
    wait_phase(http, "deaf", "Running")
    status, _headers, body = http("GET", "/api/v1/namespaces/default/pods/deaf/proxy/")
    assert status == 503 and body["message"].startswith("error trying to reach service: dial tcp 127.0.0.1:9")
    status, _headers, body = http("GET", "/api/v1/namespaces/default/pods/deaf:nope/proxy/")
    assert status == 503 and "has no container port named nope" in body["message"]
