"""Request bodies at kubesim's door (kubesim/bodies.py, kubesim/server.py), against a `python -m kubesim`
child process: a body that would once have crashed the server (a 30,000-deep YAML list ended the
process with a segmentation fault) shows up here as a failed test, not as a dead pytest.

- a body over MaxRequestBodyBytes (3 MiB) is 413 RequestEntityTooLarge before it is read; an
  unauthenticated one is 401 before it is read; both close the connection;
- nesting deeper than kubesim's limit, YAML alias bombs and recursive aliases are 400 BadRequest
  before any parser runs; the server answers the next request;
- a bad Content-Length is 400 and the connection closes.
"""

import base64
import json
import socket
import ssl
import time
import urllib.parse

import pytest

from kube_fixtures import kubesim_cluster
from kubesim import bodies

LIMIT = 3 * 1024 * 1024


@pytest.fixture(scope="module")
def child():
    with kubesim_cluster(subprocess=True, run_local_pods=False) as sim:
        yield sim


def tls_context(sim):
    with open(sim.kubeconfig, encoding="utf-8") as handle:
        ca_data = json.load(handle)["clusters"][0]["cluster"]["certificate-authority-data"]
    context = ssl.create_default_context(cadata=base64.b64decode(ca_data).decode())
    context.check_hostname = False
    return context


def raw(sim, method, path, headers, body=b"", read_timeout=20.0):
    """Send a request line, headers and (part of) a body; ``(status, headers, body)`` of the answer."""
    address = urllib.parse.urlsplit(sim.url)
    with socket.create_connection((address.hostname, address.port), timeout=read_timeout) as plain:
        with tls_context(sim).wrap_socket(plain, server_hostname=address.hostname) as conn:
            head = "%s %s HTTP/1.1\r\nHost: %s\r\n" % (method, path, address.netloc)
            head += "".join("%s: %s\r\n" % item for item in headers.items()) + "\r\n"
            conn.sendall(head.encode() + body)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            header_block, _sep, rest = data.partition(b"\r\n\r\n")
            lines = header_block.decode("latin-1").split("\r\n")
            answer = {k.strip().lower(): v.strip() for k, _s, v in (line.partition(":") for line in lines[1:])}
            length = int(answer.get("content-length", "0"))
            while len(rest) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                rest += chunk
            return int(lines[0].split()[1]), answer, json.loads(rest[:length]) if length else None


def post(sim, path, body, content_type="application/json", token=True):
    headers = {"Content-Type": content_type, "Content-Length": str(len(body))}
    if token:
        headers["Authorization"] = "Bearer " + sim.admin_token
    return raw(sim, "POST", path, headers, body)


def alive(sim):
    status, _headers, body = raw(sim, "GET", "/version", {})
    return status == 200 and "gitVersion" in body


def test_an_unauthenticated_400_mb_body_is_401_before_it_is_read(child):
    started = time.monotonic()
    status, headers, body = raw(child, "POST", "/api/v1/namespaces/default/configmaps",
                                {"Content-Type": "application/json", "Content-Length": str(400 * 1024 * 1024)},
                                b"{" + b" " * 1000)
    assert status == 401 and body["reason"] == "Unauthorized"
    assert headers["connection"] == "close"
    assert time.monotonic() - started < 10  # on main: the server waited for the 400 MB it was promised
    assert alive(child)


def test_a_body_over_3_mib_is_413_before_it_is_read(child):
    status, headers, body = raw(child, "POST", "/api/v1/namespaces/default/configmaps",
                                {"Content-Type": "application/json", "Content-Length": str(LIMIT + 1),
                                 "Authorization": "Bearer " + child.admin_token}, b"{")
    assert status == 413 and headers["connection"] == "close"
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "Request entity too large: limit is 3145728", "reason": "RequestEntityTooLarge",
                    "code": 413}
    assert alive(child)


def test_a_body_of_exactly_3_mib_is_read_and_answered(child):
    document = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "three-mib"}, "data": {"k": ""}}
    padding = LIMIT - len(json.dumps(document).encode())
    document["data"]["k"] = "x" * padding
    encoded = json.dumps(document).encode()
    assert len(encoded) == LIMIT
    status, _headers, body = post(child, "/api/v1/namespaces/default/configmaps", encoded)
    assert status == 201 and len(body["data"]["k"]) == padding


def test_a_30000_deep_yaml_body_is_400_and_the_server_lives(child):
    # 60 KB: on main the server process ended with a segmentation fault (libyaml's composer on the C stack)
    deep = b"[" * 30000 + b"]" * 30000
    status, _headers, body = post(child, "/api/v1/namespaces/default/configmaps", deep, "application/yaml")
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == "the body of the request could not be decoded: exceeded max depth of 256"
    assert alive(child)


@pytest.mark.parametrize("content_type, document", [
    ("application/json", b'{"a":' * 5000 + b"1" + b"}" * 5000),
    ("application/yaml", "".join(" " * i + "a:\n" for i in range(300)).encode()),
    ("application/merge-patch+json", b"[" * 100000 + b"]" * 100000),
])
def test_bodies_nested_past_the_limit_are_400_before_parsing(child, content_type, document):
    method = "PATCH" if "patch" in content_type else "POST"
    path = "/api/v1/namespaces/default/configmaps" + ("/three-mib" if method == "PATCH" else "")
    status, _headers, body = raw(child, method, path, {"Content-Type": content_type,
                                                       "Content-Length": str(len(document)),
                                                       "Authorization": "Bearer " + child.admin_token}, document)
    assert status == 400
    assert body["message"] == "the body of the request could not be decoded: exceeded max depth of 256"
    assert alive(child)


def test_a_body_at_the_depth_limit_goes_through_validation_storage_and_back(child):
    schema = {"type": "object", "properties": {"spec": {"type": "object",
                                                        "x-kubernetes-preserve-unknown-fields": True}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "deeps.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "deeps", "singular": "deep", "kind": "Deep"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema}}]}}
    status, _headers, _body = post(child, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                   json.dumps(crd).encode())
    assert status == 201
    nested = {}
    for _level in range(bodies.MAX_DEPTH - 2):  # the object and its spec are two levels
        nested = {"n": nested}
    document = {"apiVersion": "example.com/v1", "kind": "Deep", "metadata": {"name": "deep"}, "spec": nested}
    assert bodies.json_depth(json.dumps(document).encode()) == bodies.MAX_DEPTH
    deadline = time.monotonic() + 30
    while True:  # the CRD is served once Established
        status, _headers, body = post(child, "/apis/example.com/v1/namespaces/default/deeps",
                                      json.dumps(document).encode())
        if status != 404 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert status == 201, body
    status, _headers, body = raw(child, "GET", "/apis/example.com/v1/namespaces/default/deeps/deep",
                                 {"Authorization": "Bearer " + child.admin_token})
    assert status == 200 and body["spec"] == nested


@pytest.mark.parametrize("document, message", [
    (b"a: &a [x,x,x,x,x,x,x,x,x,x]\n" + b"".join(
        b"%c: &%c [%s]\n" % (98 + i, 98 + i, b",".join([b"*%c" % (97 + i)] * 10)) for i in range(8)),
     "yaml: document contains excessive aliasing"),
    (b"a: &a [1, *a]\n", "yaml: anchor 'a' value contains itself"),
])
def test_yaml_alias_bombs_and_recursive_aliases_are_400(child, document, message):
    status, _headers, body = post(child, "/api/v1/namespaces/default/configmaps", document, "application/yaml")
    assert (status, body["message"]) == (400, "the body of the request could not be decoded: " + message)
    assert alive(child)


@pytest.mark.parametrize("value", ["-5", "abc", "1e3", "99999999999999999999"])
def test_a_bad_content_length_is_400_and_closes_the_connection(child, value):
    # on main: "-5" read the socket to its end (a request that never ends); the others dropped the connection
    status, headers, body = raw(child, "POST", "/api/v1/namespaces/default/configmaps",
                                {"Content-Type": "application/json", "Content-Length": value,
                                 "Authorization": "Bearer " + child.admin_token}, b"{}", read_timeout=10)
    assert (status, body["reason"]) == (400, "BadRequest") and headers["connection"] == "close"
    assert body["message"].startswith("bad Content-Length")
    assert alive(child)
