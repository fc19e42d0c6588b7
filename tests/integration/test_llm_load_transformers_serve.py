"""The LLM load harness against a third-party OpenAI-compatible server: ``transformers serve``
(FastAPI, continuous batching, CPU) on a tiny random-weight Llama built in the test.

The reported case: transformers serve answers HTTP 422 to vLLM's ``ignore_eos`` - the preflight
drops it (ignore_eos: auto) and the load runs; with ``ignore_eos: true`` the run fails at once.
The harness's numbers are checked against what went over the wire: a recording proxy between the
harness and the server timestamps every byte the server sent (the same CLOCK_MONOTONIC as the
harness), so the token counts (the stream's ``usage``), the content chunks, the first token's time
(TTFT) and every gap between chunks (ITL) are compared request by request.
"""

import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from helpers import REPO

PACKAGE = "ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load"
SERVER_SCRIPT = os.path.join(REPO, "tests", "transformers_server.py")
NEEDED = ("transformers", "torch", "fastapi", "uvicorn", "openai", "accelerate")
# the harness reads a chunk after the proxy forwarded it: by this much at most on a loaded 2-core machine
CLOCK_SLACK_S = 0.1

pytestmark = pytest.mark.skipif(any(importlib.util.find_spec(name) is None for name in NEEDED),
                                reason="transformers serve is not installed (make setup-test installs "
                                       "requirements-test-server.txt and requirements-torch.txt)")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``(base URL, model name, model directory)`` of a running transformers serve."""
    model_dir = str(tmp_path_factory.mktemp("tiny-llama"))
    log_path = os.path.join(str(tmp_path_factory.mktemp("serve-log")), "serve.log")
    port = free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen([sys.executable, SERVER_SCRIPT, model_dir, "--port", str(port)], stdout=log,
                                   stderr=subprocess.STDOUT, env=env)
    url = "http://127.0.0.1:%d" % port
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                with open(log_path, encoding="utf-8") as log:
                    tail = log.read()[-3000:]
                pytest.fail("transformers serve did not start (exit %s):\n%s" % (process.poll(), tail))
            time.sleep(0.5)
        yield url, model_dir, model_dir
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class RecordingProxy:
    """TCP proxy that keeps, per connection, the bytes sent upstream and every read from the server
    with the ``time.monotonic()`` at which it was read (just before it is forwarded)."""

    def __init__(self, target_port):
        self.target = ("127.0.0.1", target_port)
        self.connections = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = "http://127.0.0.1:%d" % self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                downstream, _address = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            for sock in (downstream, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            record = {"sent": bytearray(), "received": []}
            self.connections.append(record)
            threading.Thread(target=self._pipe, args=(downstream, upstream, None, record), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, downstream, record, None), daemon=True).start()

    @staticmethod
    def _pipe(source, destination, reads, sends):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if reads is not None:
                    reads["received"].append((time.monotonic(), data))
                else:
                    sends["sent"] += data
                destination.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, destination):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.listener.close()


def parse_responses(reads):
    """The HTTP responses in a connection's reads: ``[{"status", "events": [(time, json)]}]``; an
    event's time is that of the read holding its last byte."""
    data = b"".join(chunk for _when, chunk in reads)
    ends, total = [], 0
    for when, chunk in reads:
        total += len(chunk)
        ends.append((total, when))

    def time_of(position):
        return next(when for end, when in ends if end > position)

    responses, pos = [], 0
    while pos < len(data):
        head_end = data.index(b"\r\n\r\n", pos)
        head = data[pos:head_end].decode("latin-1").split("\r\n")
        headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in head[1:]}
        pos = head_end + 4
        body, body_times = bytearray(), []
        if "content-length" in headers:
            length = int(headers["content-length"])
            body += data[pos:pos + length]
            body_times += [time_of(pos + i) for i in range(length)]
            pos += length
        else:
            while True:
                line_end = data.index(b"\r\n", pos)
                size = int(data[pos:line_end].split(b";", maxsplit=1)[0], 16)
                pos = line_end + 2
                body += data[pos:pos + size]
                body_times += [time_of(pos + i) for i in range(size)]
                pos += size + 2
                if size == 0:
                    break
        events, start = [], 0
        text = bytes(body)
        while True:
            end = text.find(b"\n\n", start)
            if end < 0:
                break
            block = text[start:end]
            if block.startswith(b"data: ") and block[6:] != b"[DONE]":
                events.append((body_times[end - 1], json.loads(block[6:])))
            start = end + 2
        responses.append({"status": int(head[0].split()[1]), "events": events, "body": text})
    return responses


def request_ids(sent):
    """The X-Request-Id of each request sent on a connection, in order (the request line for one without)."""
    ids, pos = [], 0
    while pos < len(sent):
        head_end = sent.index(b"\r\n\r\n", pos)
        lines = sent[pos:head_end].decode("latin-1").split("\r\n")
        headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}
        ids.append(headers.get("x-request-id", lines[0]))
        pos = head_end + 4 + int(headers.get("content-length", "0"))
    return ids


def wire_by_request(proxy):
    """``{request id: [responses]}`` from every connection (requests and responses in order on each)."""
    found = {}
    for connection in proxy.connections:
        responses = parse_responses(connection["received"])
        for request_id, response in zip(request_ids(bytes(connection["sent"])), responses):
            found.setdefault(request_id, []).append(response)
    return found


def content_events(response, endpoint):
    """The events with text, as the harness counts them, and the stream's usage."""
    contents, usage = [], None
    for when, event in response["events"]:
        choices = event.get("choices") or []
        if choices:
            choice = choices[0]
            text = choice.get("text") if endpoint == "completions" else (choice.get("delta") or {}).get("content")
            if text:
                contents.append(when)
        if event.get("usage"):
            usage = event["usage"]
    return contents, usage


def run_harness(url, model, out, *args):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, ".venv", "collections"))
    return subprocess.run([sys.executable, "-m", PACKAGE, "--url", url, "--model", model, "--output", str(out)]
                          + [str(a) for a in args], capture_output=True, text=True, timeout=120, env=env, check=False)


def read_run(out):
    with open(os.path.join(str(out), "result.json"), encoding="utf-8") as handle:
        document = json.load(handle)
    with open(os.path.join(str(out), "requests.jsonl"), encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    return document, records


REFUSAL = "HTTP 422: Unexpected fields in the request: {'ignore_eos'}"


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_streamed_with_usage_against_the_wire(served, tmp_path, endpoint):
    url, model, model_dir = served
    proxy = RecordingProxy(int(url.rsplit(":", 1)[1]))
    try:
        done = run_harness(proxy.url, model, tmp_path / "out", "--endpoint", endpoint, "--load", "concurrency",
                           "--concurrency", "1", "--max-requests", "5", "--prompt-tokens", "12",
                           "--output-tokens", "12",
                           "--tokenizer", os.path.join(model_dir, "tokenizer.json"), "--seed", "3")
    finally:
        proxy.close()
    assert done.returncode == 0, done.stderr
    assert ("llm_load: preflight: the server does not accept ignore_eos (%s): the requests go without it "
            "(ignore_eos: auto)" % REFUSAL) in done.stderr.splitlines()
    document, records = read_run(tmp_path / "out")
    result = document["@result"]
    assert result["request_fields_dropped"] == ["ignore_eos"] and result["ignore_eos_sent"] is False
    assert result["preflight_server_said"] == [REFUSAL] and result["stopped"] is None
    assert result["completed_requests"] == 5 and result["errors_by_class"] == {}

    wire = wire_by_request(proxy)
    assert [r["status"] for r in wire["preflight"]] == [422, 200]     # refused, then without ignore_eos
    origin = result["requests_file_origin_monotonic"]
    for record in records:
        response, = wire[record["request_id"]]
        assert response["status"] == 200 and b"ignore_eos" not in response["body"]
        contents, usage = content_events(response, endpoint)
        # token counts: the stream's usage; the harness's content chunks are the stream's
        assert record["output_tokens_source"] == "usage" and record["output_tokens"] == usage["completion_tokens"]
        assert record["input_tokens"] == usage["prompt_tokens"] and record["chunks"] == len(contents)
        assert record["short_output"] is (usage["completion_tokens"] < 12)
        # TTFT and ITL: each chunk read by the harness just after the proxy forwarded it
        first = origin + record["first_token_s"]
        assert 0 <= first - contents[0] < CLOCK_SLACK_S, (first, contents[0])
        harness_times = [first]
        for gap in record["chunk_gaps_ms"]:
            harness_times.append(harness_times[-1] + gap / 1e3)
        for mine, wired in zip(harness_times, contents):
            assert -1e-6 <= mine - wired < CLOCK_SLACK_S
        assert record["ttft_from_send_ms"] > 0 and record["e2e_ms"] >= record["ttft_ms"]
    stage = result["stages"][0]
    short = [r for r in records if r["short_output"]]
    assert stage["short_outputs"] == len(short) and stage["short_output_basis"] == {"usage": 5}
    # TPOT per request: its first to its last chunk over its usage tokens - 1
    tpots = [sum(r["chunk_gaps_ms"]) / (r["output_tokens"] - 1) for r in records if r["output_tokens"] > 1]
    assert result["tpot_max_ms"] == pytest.approx(max(tpots), rel=1e-3)


def test_continuous_batching_under_concurrent_load(served, tmp_path):
    url, model, _model_dir = served
    done = run_harness(url, model, tmp_path / "out", "--endpoint", "completions", "--load", "concurrency",
                       "--concurrency", "4", "--max-requests", "12", "--prompt-tokens", "16", "--output-tokens", "16")
    assert done.returncode == 0, done.stderr
    document, records = read_run(tmp_path / "out")
    result = document["@result"]
    assert result["completed_requests"] == 12 and result["request_fields_dropped"] == ["ignore_eos"]
    assert all(r["output_tokens_source"] == "usage" and 1 <= r["output_tokens"] <= 16 for r in records)
    assert result["short_outputs"] == sum(1 for r in records if r["output_tokens"] < 16)
    assert result["ttft_p50_ms"] > 0 and result["e2e_p50_ms"] >= result["ttft_p50_ms"]


def test_ignore_eos_true_fails_at_once(served, tmp_path):
    url, model, _model_dir = served
    done = run_harness(url, model, tmp_path / "out", "--ignore-eos", "true", "--rate", "5", "--duration", "30")
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "llm_load: %s (/v1/completions): HTTP 422: the server does not accept the field ignore_eos, which ignore_eos: "
        "true (--ignore-eos true) sends; use ignore_eos: auto (drop it when refused) or false: Unexpected fields in "
        "the request: {'ignore_eos'}" % url]
