# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A local OpenAI-compatible server for tests and benchmarks (standard library, asyncio).

It answers ``POST /v1/completions`` and ``/v1/chat/completions`` (streamed or not),
``GET /health``, ``GET /version`` and ``GET /v1/models``, with a configurable time to first token,
inter-token latency and token count, and faults chosen per request:

=================== ============================================================
fault               what the server does
=================== ============================================================
http_<status>       answers that status (4xx, 5xx) with a JSON error body (keep-alive);
                    ``http_<status>@<seconds>`` answers it that many seconds later
disconnect          sends two tokens, then closes the connection mid-stream
malformed_sse       sends one token, then ``data: {not json``, then the rest
stream_error        sends one token, then ``data: {"error": ...}`` and ``[DONE]``
stall               sends the response headers, then nothing (until the client gives up)
close               closes the connection as soon as the request is read
=================== ============================================================

A strict server (``accepted_fields``) refuses a request with a field it does not know, before
anything else, with HTTP 422 worded as ``reject_style`` says: ``transformers`` (``transformers
serve``: ``{"detail": "Unexpected fields in the request: {'ignore_eos'}"}``), ``pydantic``
(FastAPI's validation list) or ``openai`` (``{"error": {"message": ..., "param": ...}}``, the
first field only). ``natural_tokens`` makes outputs end at an end-of-sequence token after that
many tokens unless the request says ``ignore_eos: true``.

It measures itself: for every request it records, with ``time.monotonic()``
(the clock the client uses), when the request was fully received and when the
first and last tokens were written, so the client's error is measured, never
assumed. Run it in a thread (``FakeServerThread``) or as a process::

    python tests/fake_openai.py --port 0 --ttft-ms 20 --itl-ms 2 --timings FILE [--cpu 0]

which prints ``PORT <n>`` once listening and writes the timings (JSON lines) to
FILE when it receives SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import select
import selectors
import signal
import sys
import threading
import time

WORD = re.compile(r"\w+|[^\w\s]")


def _headers(status, reason, content_type, length=None, keep_alive=True):
    lines = ["HTTP/1.1 %d %s" % (status, reason), "Content-Type: %s" % content_type, "Server: fake-openai/1.0"]
    if length is None:
        lines.append("Transfer-Encoding: chunked")
    else:
        lines.append("Content-Length: %d" % length)
    if not keep_alive:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


REASONS = {400: "Bad Request", 413: "Payload Too Large", 422: "Unprocessable Entity", 429: "Too Many Requests",
           500: "Internal Server Error", 503: "Service Unavailable"}


def _refusal(style, unknown):
    """The body of a 422 for the request fields ``unknown``, as each kind of server words it."""
    if style == "pydantic":
        return {"detail": [{"type": "extra_forbidden", "loc": ["body", name], "msg": "Extra inputs are not permitted",
                            "input": True} for name in unknown]}
    if style == "openai":
        return {"error": {"message": "Unrecognized request argument supplied: %s" % unknown[0],
                          "type": "invalid_request_error", "param": unknown[0], "code": None}}
    return {"detail": "Unexpected fields in the request: {%s}" % ", ".join(repr(name) for name in unknown)}


def _chunk(payload):
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _event(document):
    return b"data: " + json.dumps(document, separators=(",", ":")).encode() + b"\n\n"


class Timing:
    __slots__ = ("number", "request_id", "path", "received", "first_token_sent", "last_token_sent", "tokens",
                 "fault", "stream", "fields")

    def __init__(self, number, request_id, path, received, fault, stream, fields=()):
        self.number = number
        self.request_id = request_id
        self.path = path
        self.received = received
        self.first_token_sent = None
        self.last_token_sent = None
        self.tokens = 0
        self.fault = fault
        self.stream = stream
        self.fields = sorted(fields)    # the request body's top-level fields

    def as_dict(self):
        return {name: getattr(self, name) for name in self.__slots__}


class FakeOpenAIServer:
    """Configure, ``await start()``, use ``port``, ``await stop()``; ``timings`` after."""

    def __init__(self, ttft=0.02, itl=0.005, output_tokens=None, fault=None, host="127.0.0.1", port=0,
                 token=None, chunk_tokens=1, ssl_context=None, model="fake-model", version="0.0.0-fake",
                 accepted_fields=None, reject_style="transformers", natural_tokens=None):
        self.ttft = ttft
        self.itl = itl
        self.output_tokens = output_tokens
        self.fault = fault or (lambda number, request: None)
        self.host = host
        self.port = port
        self.token = token
        self.chunk_tokens = chunk_tokens
        self.ssl_context = ssl_context
        self.model = model
        self.version = version
        self.accepted_fields = None if accepted_fields is None else set(accepted_fields)
        self.reject_style = reject_style
        self.natural_tokens = natural_tokens
        self.rejected = []          # the refused requests' unknown fields, in order
        self.timings = []
        self.token_events = {}
        self.requests = 0
        self.connections = 0
        self._server = None
        self._transports = set()

    async def start(self):
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _ServerProtocol(self), self.host, self.port,
                                                ssl=self.ssl_context, backlog=4096)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self):
        if self._server is not None:
            self._server.close()
            for transport in list(self._transports):
                transport.abort()
            await self._server.wait_closed()
            self._server = None

    def timing_by_id(self):
        return {t.request_id: t for t in self.timings}


class _ServerProtocol(asyncio.Protocol):

    def __init__(self, server):
        self.server = server
        self.transport = None
        self.buffer = bytearray()
        self.busy = False
        self.closed = False

    def connection_made(self, transport):
        self.transport = transport
        self.server.connections += 1
        self.server._transports.add(transport)

    def connection_lost(self, exc):
        self.closed = True
        self.server._transports.discard(self.transport)

    def data_received(self, data):
        self.buffer += data
        self._next()

    def _next(self):
        if self.busy or self.closed:
            return
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        headers = {}
        for line in head[1:]:
            name, _sep, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        if len(self.buffer) < end + 4 + length:
            return
        body = bytes(self.buffer[end + 4:end + 4 + length])
        del self.buffer[:end + 4 + length]
        received = time.monotonic()
        method, path = (head[0].split(" ") + ["", ""])[:2]
        self.busy = True
        self._handle(method, path, headers, body, received)

    def _finish(self):
        self.busy = False
        if not self.closed:
            asyncio.get_running_loop().call_soon(self._next)

    def _write(self, data):
        if not self.closed:
            self.transport.write(data)

    def _json(self, status, reason, document, keep_alive=True):
        payload = json.dumps(document).encode()
        self._write(_headers(status, reason, "application/json", len(payload), keep_alive) + payload)
        self._finish()

    def _handle(self, method, path, headers, body, received):
        server = self.server
        if server.token is not None and headers.get("authorization") != "Bearer %s" % server.token:
            self._json(401, "Unauthorized", {"error": {"message": "bad token", "code": 401}})
            return
        if method == "GET" and path == "/health":
            self._write(_headers(200, "OK", "application/json", 0))
            self._finish()
            return
        if method == "GET" and path == "/version":
            self._json(200, "OK", {"version": server.version})
            return
        if method == "GET" and path == "/v1/models":
            self._json(200, "OK", {"object": "list", "data": [{"id": server.model, "object": "model", "root": server.model}]})
            return
        if method != "POST" or path not in ("/v1/completions", "/v1/chat/completions"):
            self._json(404, "Not Found", {"error": {"message": "no route %s %s" % (method, path), "code": 404}})
            return
        try:
            request = json.loads(body)
        except ValueError:
            self._json(400, "Bad Request", {"error": {"message": "body is not JSON", "code": 400}})
            return
        unknown = sorted(set(request) - server.accepted_fields) if server.accepted_fields is not None \
            and isinstance(request, dict) else []
        if unknown:
            server.rejected.append(unknown)
            self._json(422, "Unprocessable Entity", _refusal(server.reject_style, unknown))
            return
        if request.get("model") != server.model:
            self._json(404, "Not Found", {"error": {"message": "model %r does not exist" % request.get("model"), "code": 404}})
            return
        number = server.requests
        server.requests += 1
        chat = path.endswith("chat/completions")
        fault = server.fault(number, request)
        stream = bool(request.get("stream"))
        timing = Timing(number, headers.get("x-request-id"), path, received, fault, stream, request)
        server.timings.append(timing)
        if fault and fault.startswith("http_"):
            code, _at, delay = fault[5:].partition("@")
            status = int(code)
            answer = (status, REASONS.get(status, "Error"),
                      {"error": {"message": "injected http_%s" % code, "code": status}})
            if delay:
                asyncio.get_running_loop().call_later(float(delay), self._json, *answer)
            else:
                self._json(*answer)
            return
        if fault == "close":
            self.closed = True
            self.transport.close()
            return
        tokens = server.output_tokens or int(request.get("max_tokens") or request.get("max_completion_tokens") or 16)
        if server.natural_tokens is not None and request.get("ignore_eos") is not True:
            tokens = min(tokens, server.natural_tokens)     # the model "reached" its end-of-sequence token
        if chat:
            prompt_text = "\n".join(str(m.get("content", "")) for m in request.get("messages") or [])
        else:
            prompt_text = str(request.get("prompt", ""))
        prompt_tokens = len(WORD.findall(prompt_text))
        options = request.get("stream_options") or {}
        response = _Response(self, timing, request.get("model"), chat, stream, tokens, prompt_tokens,
                             bool(options.get("include_usage")), bool(options.get("continuous_usage_stats")), fault)
        response.begin()


class _Response:
    """One response, written on the loop's timers at absolute due times."""

    def __init__(self, protocol, timing, model, chat, stream, tokens, prompt_tokens, usage, continuous, fault):
        self.protocol = protocol
        self.server = protocol.server
        self.timing = timing
        self.model = model
        self.chat = chat
        self.stream = stream
        self.tokens = tokens
        self.prompt_tokens = prompt_tokens
        self.usage = usage
        self.continuous = continuous
        self.fault = fault
        self.sent_tokens = 0
        self.loop = asyncio.get_running_loop()

    def begin(self):
        if self.fault == "stall":
            self.protocol._write(_headers(200, "OK", "text/event-stream"))
            return
        if not self.stream:
            self.loop.call_at(self.timing.received + self.server.ttft + max(0, self.tokens - 1) * self.server.itl,
                              self._whole)
            return
        self.loop.call_at(self.timing.received + self.server.ttft, self._tick, 0)

    def _text(self, count):
        return " tok" * count

    def _token_event(self, count):
        key = (self.chat, count, self.model, self.continuous)
        cached = self.server.token_events.get(key)
        if cached is None:
            cached = self.server.token_events[key] = self._render_token_event(count)
        if not self.continuous:
            return cached
        # the usage numbers change per chunk: fill them into the cached rendering
        done = self.sent_tokens + count
        return cached % (self.prompt_tokens, done, self.prompt_tokens + done)

    def _render_token_event(self, count):
        if self.chat:
            choice = {"index": 0, "delta": {"content": self._text(count)}, "logprobs": None, "finish_reason": None}
            document = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": self.model,
                        "choices": [choice]}
        else:
            choice = {"index": 0, "text": self._text(count), "logprobs": None, "finish_reason": None}
            document = {"id": "cmpl-fake", "object": "text_completion", "created": 0, "model": self.model,
                        "choices": [choice]}
        if self.continuous:
            document["usage"] = {"prompt_tokens": 1111111, "completion_tokens": 2222222, "total_tokens": 3333333}
            return _event(document).replace(b"%", b"%%").replace(b"1111111", b"%d").replace(
                b"2222222", b"%d").replace(b"3333333", b"%d")
        return _event(document)

    def _usage_event(self):
        return _event({"id": "cmpl-fake", "object": "chat.completion.chunk" if self.chat else "text_completion",
                       "created": 0, "model": self.model, "choices": [],
                       "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.sent_tokens,
                                 "total_tokens": self.prompt_tokens + self.sent_tokens}})

    def _tick(self, step):
        protocol, timing = self.protocol, self.timing
        if protocol.closed:
            return
        parts = []
        if step == 0:
            parts.append(_headers(200, "OK", "text/event-stream"))
            if self.chat:
                parts.append(_chunk(_event({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                                            "model": self.model, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                                              "logprobs": None, "finish_reason": None}]})))
        count = min(self.server.chunk_tokens, self.tokens - self.sent_tokens)
        parts.append(_chunk(self._token_event(count)))
        self.sent_tokens += count
        if self.fault == "malformed_sse" and step == 0:
            parts.append(_chunk(b"data: {not json\n\n"))
        last = self.sent_tokens >= self.tokens
        if self.fault == "stream_error" and step == 0:
            parts.append(_chunk(_event({"error": {"message": "injected stream error", "code": 500}})))
            last = True
        if last:
            if self.usage and self.fault != "stream_error":
                parts.append(_chunk(self._usage_event()))
            parts.append(_chunk(b"data: [DONE]\n\n"))
            parts.append(b"0\r\n\r\n")
        now = time.monotonic()
        if timing.first_token_sent is None:
            timing.first_token_sent = now
        timing.last_token_sent = now
        timing.tokens = self.sent_tokens
        protocol._write(b"".join(parts))
        if self.fault == "disconnect" and step == 1:
            protocol.closed = True
            protocol.transport.close()
            return
        if last:
            protocol._finish()
            return
        self.loop.call_at(timing.received + self.server.ttft + (step + 1) * self.server.itl, self._tick, step + 1)

    def _whole(self):
        if self.protocol.closed:
            return
        text = self._text(self.tokens)
        self.sent_tokens = self.tokens
        if self.chat:
            choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
        else:
            choice = {"index": 0, "text": text, "finish_reason": "length"}
        document = {"id": "cmpl-fake", "object": "chat.completion" if self.chat else "text_completion", "created": 0,
                    "model": self.model, "choices": [choice],
                    "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.tokens,
                              "total_tokens": self.prompt_tokens + self.tokens}}
        now = time.monotonic()
        self.timing.first_token_sent = self.timing.last_token_sent = now
        self.timing.tokens = self.tokens
        self.protocol._json(200, "OK", document)


class PreciseEpollSelector(selectors.EpollSelector):
    """Sub-millisecond timers (epoll waits in whole milliseconds; select() in microseconds)."""

    def select(self, timeout=None):
        if timeout is not None and timeout > 0 and self.fileno() < 1024:
            select.select([self.fileno()], [], [], timeout)
            timeout = 0
        return super().select(timeout)


def new_event_loop():
    if hasattr(selectors, "EpollSelector"):
        return asyncio.SelectorEventLoop(PreciseEpollSelector())
    return asyncio.new_event_loop()


class FakeServerThread:
    """The server on its own event loop in a daemon thread (for tests)."""

    def __init__(self, **options):
        self.server = FakeOpenAIServer(**options)
        self.loop = new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        return self

    def __exit__(self, *exc):
        if self.loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    @property
    def port(self):
        return self.server.port

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % ("https" if self.server.ssl_context else "http", self.server.port)


def fault_plan(spec):
    """``"http_500:7,disconnect:11"``: fault F on every N-th request (1-based: requests N, 2N...)."""
    rules = []
    for item in (spec or "").split(","):
        if item.strip():
            name, _sep, every = item.partition(":")
            rules.append((name.strip(), int(every)))

    def choose(number, _request):
        for name, every in rules:
            if (number + 1) % every == 0:
                return name
        return None
    return choose


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ttft-ms", type=float, default=20.0)
    parser.add_argument("--itl-ms", type=float, default=5.0)
    parser.add_argument("--output-tokens", type=int, default=None, help="default: the request's max_tokens")
    parser.add_argument("--faults", default="", help="e.g. http_500:7,disconnect:11")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--timings", help="write per-request timings (JSON lines) here on exit")
    parser.add_argument("--cpu", type=int, help="pin this process to one CPU")
    options = parser.parse_args(argv)
    if options.cpu is not None:
        os.sched_setaffinity(0, {options.cpu})
    server = FakeOpenAIServer(ttft=options.ttft_ms / 1e3, itl=options.itl_ms / 1e3, output_tokens=options.output_tokens,
                              fault=fault_plan(options.faults), host=options.host, port=options.port, model=options.model)

    async def serve():
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await server.start()
        sys.stdout.write("PORT %d\n" % server.port)
        sys.stdout.flush()
        await stop.wait()
        await server.stop()

    loop = new_event_loop()
    try:
        loop.run_until_complete(serve())
    finally:
        loop.close()
    if options.timings:
        with open(options.timings, "w", encoding="utf-8") as handle:
            for timing in server.timings:
                handle.write(json.dumps(timing.as_dict()) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
