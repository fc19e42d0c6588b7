"""The client against the fake server: streaming, faults, connections, TLS, auth, and its measured error."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import client, prompts, runner
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import Stage
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.distributions import parse_length
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.metrics import StageSummary

from conftest import TESTS_DIR


def make_client(url, endpoint="completions", stream=True, timeout=5.0, token=None, extra=None, ca_file=None,
                insecure=False, output_tokens="8"):
    settings = runner.Settings(client.Target(url, ca_file, insecure), "fake-model", endpoint, stream, token, extra, timeout)
    data = prompts.SyntheticPrompts(parse_length("16"), parse_length(output_tokens), prompts.WordEstimate())
    return runner.LoadClient(settings, data)


def run(load_client, coroutine_factory):
    async def go():
        try:
            return await coroutine_factory(load_client)
        finally:
            load_client.close()
    return runner.run_on_new_loop(go())


def run_stage(url, stage, **options):
    return run(make_client(url, **options), lambda c: c.run_stage(stage)).records


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_streamed_requests_are_timed_per_chunk(fake_server, endpoint):
    server = fake_server(ttft=0.02, itl=0.002)
    records = run_stage(server.url, Stage("constant", rate=20, max_requests=10), endpoint=endpoint)
    assert len(records) == 10 and all(r.ok for r in records)
    for r in records:
        assert r.status == 200 and r.output_tokens == 8 and r.output_tokens_source == "usage" and len(r.token_times) == 8
        assert r.usage_prompt == 16 and r.done_marker
        assert 0.019 < r.token_times[0] - r.sent < 1.0     # at least the server's TTFT (accuracy: its own test)
    timings = server.server.timing_by_id()
    assert set(timings) == {r.request_id for r in records}


def test_one_worker_reuses_its_keep_alive_connection(fake_server):
    # one request at a time: every request after the first finds the first one's connection idle in the pool
    # (open-loop rates overlap requests by chance on a loaded machine, so they open new connections by chance)
    server = fake_server(ttft=0.005, itl=0.001)
    records = run_stage(server.url, Stage("concurrency", concurrency=1, max_requests=6))
    assert len(records) == 6 and all(r.ok for r in records)
    assert [r.reused for r in records] == [False] + [True] * 5


def test_non_streamed_requests(fake_server):
    server = fake_server(ttft=0.01, itl=0.001)
    records = run_stage(server.url, Stage("constant", rate=50, max_requests=5), stream=False, endpoint="chat")
    assert all(r.ok and not r.token_times and r.output_tokens == 8 and r.chars == 32 for r in records)


def test_every_fault_is_classified_and_the_run_goes_on(fake_server):
    plan = {1: "http_500", 2: "http_429", 3: "disconnect", 4: "malformed_sse", 5: "stream_error", 6: "stall"}
    server = fake_server(ttft=0.005, itl=0.001, fault=lambda number, request: plan.get(number))
    records = run_stage(server.url, Stage("constant", rate=40, max_requests=12), timeout=0.5)
    by_index = {r.index: r for r in records}
    expected = ["http_500", "http_429", "disconnect", "malformed_sse", "stream_error", "timeout"]
    assert [by_index[i].error for i in range(1, 7)] == expected
    assert by_index[1].status == 500 and "injected http_500" in by_index[1].error_detail
    assert "after" in by_index[3].error_detail
    assert all(by_index[i].ok for i in (0, 7, 8, 9, 10, 11))
    summary = StageSummary(Stage("constant", rate=40, max_requests=12), records, 40.0, origin=records[0].scheduled)
    assert summary.errors == {"disconnect": 1, "http_429": 1, "http_500": 1, "malformed_sse": 1, "stream_error": 1, "timeout": 1}


def test_refused_connections_during_a_run_are_counted(fake_server):
    server = fake_server()
    url = server.url
    server.__exit__(None, None, None)
    records = run_stage(url, Stage("constant", rate=100, max_requests=5))
    assert [r.error for r in records] == ["connect_error"] * 5
    assert "Connection refused" in records[0].error_detail


def test_a_reused_connection_closed_before_answering_is_retried(fake_server):
    server = fake_server(ttft=0.002, itl=0.0005, fault=lambda number, request: "close" if number == 3 else None)
    # 200 ms apart: each request finds the previous one's connection idle and reuses it, even on
    # a loaded machine (closer together, request 3 may open a new connection, whose close is no retry)
    records = run_stage(server.url, Stage("constant", rate=5, max_requests=6))
    assert all(r.ok for r in records)
    assert [r.index for r in records if r.retried] == [3]


def test_chunks_of_several_tokens_with_continuous_usage(fake_server):
    server = fake_server(ttft=0.005, itl=0.004, chunk_tokens=2)
    extra = {"stream_options": {"include_usage": True, "continuous_usage_stats": True}}
    records = run_stage(server.url, Stage("constant", rate=20, max_requests=3), extra=extra)
    for r in records:
        assert r.ok and r.chunk_tokens == [2, 2, 2, 2] and r.output_tokens == 8
        chunk_gaps = [r.token_times[j] - r.token_times[j - 1] for j in range(1, 4)]
        assert r.per_token_gaps() == pytest.approx([gap / 2 for gap in chunk_gaps])   # each gap spread over 2 tokens


def test_preflight_and_server_version(fake_server):
    server = fake_server(version="9.9.9")
    assert run(make_client(server.url), lambda c: c.preflight()) == []
    assert run(make_client(server.url), lambda c: c.server_version()) == "9.9.9"
    assert run(make_client(server.url + "/v1"), lambda c: c.server_version()) == "9.9.9"
    bad_model = make_client(server.url)
    bad_model.settings.model = "other"
    bad_model.encoder = client.RequestEncoder(bad_model.settings.target, bad_model.settings.path)
    with pytest.raises(runner.StartError, match="HTTP 404: no such endpoint or model 'other'"):
        run(bad_model, lambda c: c.preflight())
    with pytest.raises(runner.StartError, match="connect error: 127.0.0.1:9: Connection refused"):
        run(make_client("http://127.0.0.1:9"), lambda c: c.preflight())


def test_bearer_token(fake_server, tmp_path):
    server = fake_server(token="s3cret")
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    token = client.read_token_file(str(token_file))
    assert run(make_client(server.url, token=token), lambda c: c.preflight()) == []
    with pytest.raises(runner.StartError, match="HTTP 401"):
        run(make_client(server.url, token="wrong"), lambda c: c.preflight())


@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl is needed to make a test certificate")
def test_tls_is_verified_by_default(fake_server, tmp_path):
    import ssl

    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server = fake_server(ssl_context=context)
    assert server.url.startswith("https://")
    with pytest.raises(runner.StartError, match="tls error"):
        run(make_client(server.url), lambda c: c.preflight())
    assert run(make_client(server.url, ca_file=str(cert)), lambda c: c.preflight()) == []
    assert run(make_client(server.url, insecure=True), lambda c: c.preflight()) == []
    records = run_stage(server.url, Stage("constant", rate=50, max_requests=5), ca_file=str(cert))
    assert all(r.ok and r.output_tokens == 8 for r in records)


def test_closed_loop_keeps_its_concurrency(fake_server):
    server = fake_server(ttft=0.01, itl=0.002)
    records = run_stage(server.url, Stage("concurrency", concurrency=3, duration=1.0))
    # each of the 3 slots sends again as soon as its request ends: more requests than slots, however loaded
    # the machine (a count of rounds would measure the machine's speed, not the loop)
    assert len(records) > 3 and all(r.ok for r in records)
    events = sorted([(r.sent, 1) for r in records] + [(r.end, -1) for r in records])
    in_flight, peak = 0, 0
    for _moment, step in events:
        in_flight += step
        peak = max(peak, in_flight)
    assert peak == 3


@pytest.mark.parametrize("url,message", [
    ("localhost:8000", "expected http://HOST"), ("ftp://x", "expected http://HOST"), ("http://h:99999", "port is not a number"),
    ("http://user:pw@h", "credentials in the URL are not accepted"),
])
def test_bad_urls(url, message):
    with pytest.raises(Exception, match=message):
        client.Target(url)


def test_client_error_against_the_servers_own_timings(tmp_path):
    """The server runs in its own process and times itself: the client's TTFT error is measured."""
    timings_path = tmp_path / "timings.jsonl"
    server = subprocess.Popen([sys.executable, os.path.join(TESTS_DIR, "fake_openai.py"), "--port", "0", "--ttft-ms", "20",
                               "--itl-ms", "2", "--timings", str(timings_path)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline().split()[1])
        records = run_stage("http://127.0.0.1:%d" % port, Stage("constant", rate=50, max_requests=100))
    finally:
        server.terminate()
        server.wait(10)
    timings = {t["request_id"]: t for t in map(json.loads, timings_path.read_text().splitlines())}
    errors, lags = [], []
    for r in records:
        assert r.ok
        t = timings[r.request_id]
        errors.append((r.token_times[0] - r.sent) - (t["first_token_sent"] - t["received"]))
        lags.append(r.sent - r.scheduled)
        assert r.sent < t["received"] < t["first_token_sent"] < r.token_times[0]   # one clock, causality holds
    errors.sort()
    lags.sort()
    p50, p90 = errors[len(errors) // 2] * 1e3, errors[int(len(errors) * 0.9)] * 1e3
    print("client TTFT error vs server: p50 %.3f ms, p90 %.3f ms; send lag p50 %.3f ms" % (p50, p90, lags[50] * 1e3))
    # typically 0.5 ms and 1-3 ms; with every core of the machine saturated by other processes,
    # 0.6 ms and 9 ms were seen (the benchmark measures the tight numbers, on pinned cores)
    assert 0 < p50 < 2.0 and p90 < 15.0
    assert lags[50] < 1e-3
