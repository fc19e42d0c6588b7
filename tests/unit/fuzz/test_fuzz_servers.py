"""Fuzz: what servers answer (Prometheus, OpenSearch, a model server's event stream). Whatever
they send, the answer is a result or one line; nothing escapes as an exception."""

import json
import os
import sys
import tempfile

from hypothesis import given, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_strategies import JSON  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import prometheus  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import StoreError  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import api, client  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.metrics import RequestRecord  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.opensearch import OpenSearchStore  # noqa: E402


def one_line(exc):
    assert "\n" not in str(exc) and str(exc), repr(exc)


# --------------------------------------------------------------------------
# Prometheus


def series_like():
    sample = st.one_of(st.tuples(st.floats(allow_nan=False), st.text(max_size=5)).map(list), JSON)
    series = st.one_of(st.fixed_dictionaries({"metric": st.dictionaries(st.text(max_size=5), st.text(max_size=5)),
                                              "values": st.lists(sample, max_size=3)}), JSON)
    data = st.one_of(st.fixed_dictionaries({"resultType": st.just("matrix"), "result": st.lists(series, max_size=3)}),
                     JSON)
    return st.one_of(st.fixed_dictionaries({"status": st.sampled_from(["success", "error"]), "data": data}), JSON)


class Transport:
    url = "http://prometheus.invalid"

    def __init__(self, status, body):
        self.status, self.body = status, body

    def request(self, method, path, params):
        return self.status, self.body


ANSWERS = st.one_of(series_like().map(lambda doc: json.dumps(doc).encode()), st.binary(max_size=100),
                    st.just(b"[" * 5000 + b"]" * 5000), st.just(b'{"status": "success", "data": NaN}'))


@given(status=st.sampled_from([200, 200, 204, 400, 401, 404, 503]), body=ANSWERS)
def test_prometheus_answers(status, body):
    prom = prometheus.PrometheusClient(transport=Transport(status, body))
    with tempfile.TemporaryDirectory() as dest:
        index = prometheus.query(prom, {"q1": "up", "q2": {"query": "rate(x[1m])"}}, 0.0, 60.0, 15, dest)
        for entry in index["queries"].values():
            if "error" in entry:
                one_line(entry["error"])
            else:
                assert isinstance(entry["series"], int) and isinstance(entry["samples"], int)
        try:
            name = prom.snapshot()
        except prometheus.PrometheusError as exc:
            one_line(exc)
        else:
            assert name is None or (isinstance(name, str) and "/" not in name and name not in (".", ".."))


# --------------------------------------------------------------------------
# OpenSearch


def hit_like():
    source = st.one_of(st.fixed_dictionaries({"value": st.one_of(st.floats(), st.integers(), st.text(max_size=4)),
                                              "run_id": st.one_of(st.text(max_size=4), JSON)}), JSON)
    sort = st.one_of(st.lists(st.integers(), max_size=2), JSON)
    return st.one_of(st.fixed_dictionaries({"_source": source, "sort": sort}), JSON)


def answer_like():
    outcome = st.one_of(st.fixed_dictionaries({"hits": st.one_of(st.fixed_dictionaries(
        {"hits": st.lists(hit_like(), max_size=3)}), JSON)}), st.fixed_dictionaries({"error": JSON}), JSON)
    return st.one_of(st.fixed_dictionaries({"responses": st.lists(outcome, max_size=3)}), JSON)


class FakeOpenSearch:
    def __init__(self, answer):
        self.answer = answer

    def msearch(self, body, request_timeout):
        return self.answer

    def search(self, index, body, request_timeout):
        return self.answer


@given(answer=answer_like())
def test_opensearch_answers(answer):
    store = OpenSearchStore(["http://opensearch.invalid"], client=FakeOpenSearch(answer))
    queries = [stores_base.HistoryQuery("w", "rate", {"size": 1}, "uuid")] * 2
    try:
        histories = store.history_batch(queries)
    except StoreError as exc:
        one_line(exc)
    else:
        assert len(histories) == 2 and all(isinstance(doc, dict) for history in histories for doc in history)
    try:
        marks = store.marks()
    except StoreError as exc:
        one_line(exc)
    else:
        assert all(isinstance(run_id, str) for run_id in marks)


# --------------------------------------------------------------------------
# a model server's event stream


# the bearer token the client was given: whatever the server sends (echoes included), no detail holds it
TOKEN = "sk-fuzz-token-0123456789"


class Pool:
    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.mask = secret_refs.SecretMask([TOKEN])
        self.server_header = None
        self.last_document = None
        self.last_error_body = None
        self.error_body_limit = client.MAX_ERROR_BODY
        self.done = []

    def release(self, connection):
        pass

    def forget(self, connection):
        pass

    def retry(self, record):
        self.done.append(record)

    def finished(self, record):
        self.done.append(record)


class Transport2:
    def write(self, data):
        pass

    def abort(self):
        pass

    def get_extra_info(self, name):
        return None


EVENTS = st.one_of(JSON.map(json.dumps), st.just("[DONE]"), st.text(max_size=30),
                   st.just(json.dumps({"error": {"message": "token %s refused" % TOKEN}})), st.just("Bearer " + TOKEN),
                   st.fixed_dictionaries({"choices": st.one_of(st.lists(JSON, max_size=2), JSON),
                                          "usage": JSON}).map(json.dumps))


def chunked(body, sizes):
    out, pos = b"", 0
    for size in sizes + [len(body)]:
        piece = body[pos:pos + size]
        if piece:
            out += b"%x\r\n%s\r\n" % (len(piece), piece)
        pos += size
    return out + b"0\r\n\r\n"


@given(events=st.lists(EVENTS, max_size=5), sizes=st.lists(st.integers(min_value=1, max_value=40), max_size=5),
       splits=st.lists(st.integers(min_value=1, max_value=60), max_size=6), garbage=st.binary(max_size=40),
       framing=st.sampled_from(["chunked", "length", "close", "garbage"]), stream=st.booleans(),
       endpoint=st.sampled_from(sorted(api.ENDPOINTS)), status=st.sampled_from([b"200", b"200", b"500", b"x"]))
def test_event_streams(events, sizes, splits, garbage, framing, stream, endpoint, status):
    body = "".join("data: %s\n\n" % event for event in events).encode()
    if framing == "chunked":
        response = b"HTTP/1.1 " + status + b" OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(body, sizes)
    elif framing == "length":
        response = b"HTTP/1.1 " + status + b" OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    elif framing == "close":
        response = b"HTTP/1.1 " + status + b" OK\r\n\r\n" + body
    else:
        response = garbage + body
    pool = Pool(api.ENDPOINTS[endpoint])
    connection = client.HTTPConnection(pool)
    connection.transport = Transport2()
    record = RequestRecord(0, 0, 0, False, 0.0, 16, 8)
    connection.send(record, b"", stream)
    pos = 0
    for size in splits + [len(response)]:
        if record.end is not None:
            break
        connection.data_received(response[pos:pos + size])
        pos += size
    if record.end is None:
        connection.connection_lost(None)
    assert record.end is not None
    if record.error is not None:
        one_line(record.error_detail or record.error)
        assert TOKEN not in (record.error_detail or "")
