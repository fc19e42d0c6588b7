"""Fuzz: Lease objects the cluster lease queue did not write, and request bodies at kubesim's door.

- whatever Leases lie in the lease namespace (names, annotations, missing fields, wrong types), the
  queue answers an outcome, or one ``ClusterLeaseError`` line for an object no API server would
  answer (no metadata); every line it prints is one line without a control character;
- whatever body reaches kubesim (deep, huge, binary, YAML aliases), its body reader answers the
  parsed document or a 4xx ``ApiError`` in one line, never another exception.
"""

import copy
import http.client
import io
import itertools
import os
import sys

from hypothesis import given, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_strategies import JSON  # noqa: E402  pylint: disable=wrong-import-position

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import cluster_lease as cl  # noqa: E402
from kubesim import bodies  # noqa: E402  pylint: disable=wrong-import-order
from kubesim.errors import ApiError  # noqa: E402  pylint: disable=wrong-import-order
from kubesim.server import Request  # noqa: E402  pylint: disable=wrong-import-order


def printable_line(text):
    assert isinstance(text, str) and text, repr(text)
    assert not any(ord(char) < 0x20 or 0x7f <= ord(char) <= 0x9f for char in text), repr(text)


# --------------------------------------------------------------------------
# the cluster lease queue


class Store:
    """Leases as the API server keeps them (resourceVersion checks), holding whatever was put in."""

    namespace = "perfscale-topsail"

    def __init__(self, items):
        self.items = {}
        self.versions = itertools.count(1)
        for item in items:
            metadata = item.get("metadata") if isinstance(item, dict) else None
            name = metadata.get("name") if isinstance(metadata, dict) else None
            key = name if isinstance(name, str) else "unnamed-%d" % len(self.items)
            self.items[key] = item

    def get(self, name):
        return copy.deepcopy(self.items.get(name))

    def list(self):
        return [copy.deepcopy(item) for item in self.items.values()]

    def _version(self, body):
        stored = copy.deepcopy(body)
        stored["metadata"]["resourceVersion"] = str(next(self.versions))
        return stored

    def create(self, body):
        name = body["metadata"]["name"]
        if name in self.items:
            raise cl.LeaseConflict(name)
        self.items[name] = self._version(body)
        return copy.deepcopy(self.items[name])

    def replace(self, body):
        name = body["metadata"]["name"]
        current = self.items.get(name)
        if not isinstance(current, dict) or body["metadata"].get("resourceVersion") != \
                (current.get("metadata") or {}).get("resourceVersion"):
            raise cl.LeaseConflict(name)
        self.items[name] = self._version(body)
        return copy.deepcopy(self.items[name])

    def delete(self, lease):
        name = lease["metadata"]["name"]
        current = self.items.get(name)
        if current is not None and lease["metadata"].get("resourceVersion") != \
                (current.get("metadata") or {}).get("resourceVersion"):
            raise cl.LeaseConflict(name)
        self.items.pop(name, None)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


HOSTILE = st.sampled_from(["run-a", "", "\x1b[2J", "a\r\nb", "\x9b31m", "\u202e", "x" * 300])
TIMES = st.sampled_from(["2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00", "2026-01-01T00:00:00+02:00",
                         "9999-12-31T23:59:59.999999Z", "0001-01-01T00:00:00.000000Z", "", "now"])
NUMBERS = st.one_of(st.integers(min_value=-10, max_value=10), st.sampled_from([2 ** 31, 10 ** 30, True]),
                    st.text(max_size=4), st.floats())
LEASE_NAMES = st.one_of(st.sampled_from([cl.LOCK_NAME, cl.TICKETS_NAME, cl.waiter_name(0), cl.waiter_name(3),
                                         "perfscale-queue-abc", "perfscale-queue-", "perfscale-queue--1",
                                         "perfscale-queue-" + "9" * 20, "perfscale-queue-٣", "other"]),
                        st.text(max_size=20).map(lambda text: cl.WAITER_PREFIX + text))
ANNOTATIONS = st.dictionaries(
    st.one_of(st.sampled_from([cl.NEXT_TICKET, cl.ANNOTATION + "ticket", cl.ANNOTATION + "artifacts",
                               cl.ANNOTATION + "host", cl.ANNOTATION + "controller-pid"]), st.text(max_size=6)),
    st.one_of(st.sampled_from(["0", "7", "-5", "abc", "", "1/2", "99999999999/1", "\x1b[0m"]), HOSTILE, JSON),
    max_size=4)
SPECS = st.one_of(
    st.fixed_dictionaries({}, optional={"holderIdentity": st.one_of(HOSTILE, JSON), "renewTime": st.one_of(TIMES, JSON),
                                        "acquireTime": st.one_of(TIMES, JSON), "leaseDurationSeconds": NUMBERS,
                                        "leaseTransitions": NUMBERS}),
    JSON)
LEASE_OBJECTS = st.one_of(
    st.fixed_dictionaries({"metadata": st.fixed_dictionaries(
        {"name": LEASE_NAMES, "resourceVersion": st.sampled_from(["1", "2", "x"])},
        optional={"annotations": st.one_of(ANNOTATIONS, JSON), "uid": st.text(max_size=4)})},
        optional={"spec": SPECS}),
    JSON)


@given(st.lists(LEASE_OBJECTS, max_size=5), st.booleans())
def test_the_queue_answers_whatever_leases_lie_in_its_namespace(items, holds_pid):
    store = Store(items)
    clock = Clock()
    lines, warnings = [], []
    holder = cl.Holder("run-z", artifacts="s3://b/run-z", host="host-a", pid=os.getpid() if holds_pid else None)
    lease = cl.ClusterLease(store, holder, duration_s=5, poll_s=1.0, clock=clock, sleep=clock.sleep,
                            warn=warnings.append)
    try:
        outcome = lease.acquire(notify=lines.append, timeout_s=20)
    except cl.ClusterLeaseError as exc:
        printable_line(str(exc))
    else:
        assert outcome.state in ("taken", "already_held")
        printable_line(outcome.message())
        for line in outcome.dropped + outcome.ignored:
            printable_line(line)
    for line in lines + warnings:
        printable_line(line)
    for item in items:
        printable_line(cl.describe(item))


# --------------------------------------------------------------------------
# kubesim's request bodies


class Handler:
    """What ``Request`` reads of ``BaseHTTPRequestHandler``: path, command, headers, rfile."""

    def __init__(self, body, content_type, length=None):
        self.path = "/api/v1/namespaces/default/configmaps"
        self.command = "POST"
        self.headers = http.client.HTTPMessage()
        self.headers["Content-Type"] = content_type
        self.headers["Content-Length"] = str(len(body) if length is None else length)
        self.rfile = io.BytesIO(body)


CONTENT_TYPES = st.sampled_from(["application/json", "application/yaml", "application/apply-patch+yaml",
                                 "application/merge-patch+json", "application/vnd.kubernetes.protobuf",
                                 "text/plain"])


def nested(opening, closing, middle=b"1"):
    return st.integers(min_value=1, max_value=5000).map(lambda depth: opening * depth + middle + closing * depth)


BODIES = st.one_of(
    st.binary(max_size=200),
    JSON.map(lambda value: __import__("json").dumps(value).encode()),
    nested(b"[", b"]"), nested(b'{"a":', b"}"), nested(b"- ", b"", b"x"),
    st.integers(min_value=1, max_value=400).map(lambda depth: "".join(" " * i + "a:\n" for i in range(depth)).encode()),
    st.integers(min_value=1, max_value=12).map(lambda n: b"a: &a [x,x,x,x,x,x,x,x,x,x]\n" + b"".join(
        b"%c: &%c [%s]\n" % (98 + i, 98 + i, b",".join([b"*%c" % (97 + i)] * 10)) for i in range(n))),
    st.sampled_from([b"a: &a [*a]", b"&a [*a, *a]", b'"' + b'\\"' * 1000, b"\xff\xfe\x00", b"\x00" * 10]),
)


@given(BODIES, CONTENT_TYPES, st.booleans())
def test_kubesim_reads_any_body_into_a_document_or_a_4xx(body, content_type, duplicates):
    request = Request(Handler(body, content_type))
    try:
        document = request.json_body([] if duplicates else None)
    except ApiError as exc:
        assert 400 <= exc.code < 500, exc.code
        assert "\n" not in exc.message and exc.message
    else:
        assert bodies.json_depth(__import__("json").dumps(document, default=str).encode()) <= bodies.MAX_DEPTH + 1


@given(st.integers(min_value=bodies.MAX_REQUEST_BODY_BYTES + 1, max_value=2 ** 63 - 1), CONTENT_TYPES)
def test_kubesim_refuses_an_announced_body_over_the_limit_without_reading_it(length, content_type):
    handler = Handler(b"{}", content_type, length=length)
    request = Request(handler)
    try:
        request.json_body()
    except ApiError as exc:
        assert (exc.code, exc.reason) == (413, "RequestEntityTooLarge")
    assert handler.rfile.tell() == 0 and request.body_unread


@given(st.one_of(st.text(max_size=30), st.integers(max_value=-1).map(str)))
def test_kubesim_answers_any_content_length_with_a_length_or_a_400(value):
    headers = http.client.HTTPMessage()
    headers["Content-Length"] = value
    try:
        length = bodies.content_length(headers)
    except ApiError as exc:
        assert exc.code == 400 and "\n" not in exc.message
    else:
        assert isinstance(length, int) and length >= 0
