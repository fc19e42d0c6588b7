# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTP/1.1 (+TLS) and server-sent events on asyncio, built for timing accuracy.

One ``HTTPConnection`` (an ``asyncio.Protocol``) per TCP connection; a
``ConnectionPool`` keeps idle keep-alive connections (last in, first out) and
opens new ones on demand. Nothing on the hot path is a coroutine: a request is
written from the scheduler's callback, bytes are parsed in ``data_received`` and
stamped with ``time.monotonic()`` taken once per read, so a token's time is the
moment the event loop received its bytes.

Response bodies: ``Content-Length``, ``chunked`` or read-until-close. Streamed
bodies are server-sent events; each ``data:`` JSON chunk with text is a content
chunk (one token unless the server says otherwise). Errors are classified
(``ERROR_CLASSES``) and never stop the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import ssl
import time
import urllib.parse

from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import SecretError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import preflight as preflight_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError

ERROR_CLASSES = {
    "http_<status>": "the server answered with a status other than 200 (http_429, http_500...)",
    "connect_error": "the TCP connection could not be opened (refused, unreachable, reset, too many files)",
    "tls_error": "the TLS handshake failed (certificate not trusted, wrong host name...)",
    "disconnect": "the connection closed before the response was complete (mid-stream included)",
    "timeout": "no complete response within --request-timeout of the request's start",
    "malformed_sse": "a data: line of the event stream was not a JSON object",
    "stream_error": "the event stream carried an error object",
    "malformed_response": "a non-streamed 200 response body was not the expected JSON",
    "protocol_error": "the HTTP framing was invalid (status line, headers, chunk sizes)",
    "cancelled": "still in flight when the run stopped early (stop_after_failures)",
}

MAX_HEADER_BYTES = 65536
MAX_ERROR_BODY = 512        # bytes of an error answer kept during the run (the preflight keeps more)
# one server-sent event, and a whole non-streamed body: past these, the response is a protocol error
MAX_EVENT_BYTES = 4 * 1024 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
USER_AGENT = "perfscale-llm-load"


class Target:
    """Where requests go: parsed from ``--url``, with its TLS context."""

    def __init__(self, url, ca_file=None, insecure=False):
        parsed = urllib.parse.urlsplit(url or "")
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ConfigError("--url %r: expected http://HOST[:PORT][/PATH] or https://..." % (url,))
        try:
            port = parsed.port
        except ValueError:
            raise ConfigError("--url %r: the port is not a number in 1-65535" % (url,)) from None
        if parsed.username or parsed.password:
            raise ConfigError("--url: credentials in the URL are not accepted; use --token-file")
        self.url = url
        self.scheme = parsed.scheme
        self.host = parsed.hostname
        self.port = port or (443 if parsed.scheme == "https" else 80)
        self.base_path = parsed.path or ""
        default_port = (parsed.scheme == "https" and self.port == 443) or (parsed.scheme == "http" and self.port == 80)
        host = "[%s]" % self.host if ":" in self.host else self.host
        self.host_header = host if default_port else "%s:%d" % (host, self.port)
        self.ssl_context = None
        self.server_hostname = None
        if parsed.scheme == "https":
            self.ssl_context = tls_context(ca_file, insecure)
            self.server_hostname = self.host
        elif ca_file:
            raise ConfigError("--ca-file is given but --url %s is not https" % url)

    def display(self):
        return urllib.parse.urlunsplit((self.scheme, self.host_header, self.base_path, "", ""))


def tls_context(ca_file=None, insecure=False):
    """Verified by default (system trust store, or ``ca_file``); ``insecure`` skips verification."""
    if ca_file and not os.path.isfile(ca_file):
        raise ConfigError("--ca-file %s does not exist" % ca_file)
    try:
        context = ssl.create_default_context(cafile=ca_file or None)
    except ssl.SSLError as exc:
        raise ConfigError("--ca-file %s: not a PEM certificate bundle (%s)" % (ca_file, exc.reason or exc)) from None
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def read_token_file(path):
    """The bearer token in ``path``: the file's one value (whitespace around it and a final newline
    are fine; a second non-empty line or a control character is refused, as for every secret file,
    without any of the file's content; never logged)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ConfigError("--token-file %s: %s" % (path, exc.strerror or exc)) from None
    except ValueError:
        raise ConfigError("--token-file %s: is not UTF-8 text; expected the token alone" % path) from None
    try:
        token = secret_refs.one_value(text, "--token-file %s" % path)
    except SecretError as exc:
        raise ConfigError(str(exc)) from None
    if not token:
        raise ConfigError("--token-file %s is empty" % path)
    if any(char.isspace() for char in token):
        raise ConfigError("--token-file %s: the token must be one word on the first line" % path)
    return token


def check_token_target(target, token):
    """A bearer token goes only to an https:// URL or a loopback host (one line naming --url)."""
    if token:
        problem = secret_refs.cleartext_problem(target.display(), "--url", "credentials (the token of --token-file)")
        if problem:
            raise ConfigError(problem)


class RequestEncoder:
    """Pre-built request bytes: everything but the request id, length and body."""

    def __init__(self, target, path, token=None, stream=True, extra_headers=None):
        lines = ["POST %s HTTP/1.1" % path, "Host: %s" % target.host_header, "User-Agent: %s" % USER_AGENT,
                 "Content-Type: application/json", "Accept: %s" % ("text/event-stream" if stream else "application/json")]
        if token:
            lines.append("Authorization: Bearer %s" % token)
        for name, value in (extra_headers or {}).items():
            lines.append("%s: %s" % (name, value))
        self.prefix = ("\r\n".join(lines) + "\r\nX-Request-Id: ").encode("latin-1")

    def encode(self, request_id, body):
        return b"".join((self.prefix, request_id.encode("ascii"), b"\r\nContent-Length: ",
                         str(len(body)).encode("ascii"), b"\r\n\r\n", body))


def get_request_bytes(target, path, token=None):
    lines = ["GET %s HTTP/1.1" % path, "Host: %s" % target.host_header, "User-Agent: %s" % USER_AGENT,
             "Accept: application/json"]
    if token:
        lines.append("Authorization: Bearer %s" % token)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


# parse states
HEAD, CHUNK_SIZE, CHUNK_DATA, CHUNK_CRLF, CHUNK_TRAILER, LENGTH, UNTIL_CLOSE, DONE = range(8)

_monotonic = time.monotonic
# the C scanner behind json.loads, called directly: one call per event, no wrapper frames
_scan_json = json.JSONDecoder().scan_once


HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")


def _chunk_size(line):
    """Size of a chunk-size line (hexadecimal digits, optional ``;extensions``)."""
    text = line.split(b";", 1)[0].strip()
    if not text or len(text) > 16 or not set(text) <= HEX_DIGITS:
        raise ValueError("bad chunk size %r" % text[:20])
    return int(text, 16)


class HTTPConnection(asyncio.Protocol):
    """One keep-alive connection, one request at a time.

    The parser works on each read as it comes (``bytes`` and a position): only an
    incomplete line is kept for the next read. Streamed chunks that hold exactly
    one event (the usual case) skip the event buffer.
    """

    def __init__(self, pool):
        self.pool = pool
        self.chunk_text = pool.endpoint.chunk_text
        self.transport = None
        self.record = None
        self.closed = False
        self.idle_since = 0.0
        self.requests_served = 0
        self._reset()

    def _reset(self):
        self.pending = b""        # unparsed bytes: an incomplete header block or line
        self.state = HEAD
        self.remaining = 0
        self.keep_alive = True
        self.body = None          # bytearray: a non-streamed or error body
        self.sse = b""            # an incomplete event of the stream
        self.received = 0
        self.streaming = False

    # -- asyncio callbacks

    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass

    def send(self, record, data, stream):
        self._reset()
        self.record = record
        self.streaming = stream
        record.sent = _monotonic()
        self.transport.write(data)

    def data_received(self, data):
        now = _monotonic()
        record = self.record
        if record is None:
            # bytes on an idle connection: the server is not speaking HTTP/1.1 as expected
            self.abort()
            return
        if record.first_byte is None:
            record.first_byte = now
        self.received += len(data)
        if self.pending:
            data = self.pending + data
            self.pending = b""
        try:
            self._parse(record, data, now)
        except ValueError as exc:
            record.fail("protocol_error", str(exc))
            self._complete(record, now, reusable=False)

    def connection_lost(self, exc):
        self.closed = True
        self.pool.forget(self)
        record = self.record
        if record is None or record.end is not None:
            return
        now = _monotonic()
        if self.state == UNTIL_CLOSE:
            self._body_end(record, now)
            self._complete(record, now, reusable=False)
            return
        if self.received == 0 and self.requests_served > 0 and not record.retried:
            # a reused keep-alive connection closed by the server before it answered: send again
            self.record = None
            record.retried = True
            self.pool.retry(record)
            return
        record.fail("disconnect", "connection closed after %d response bytes%s"
                    % (self.received, " (%s)" % exc if exc else ""))
        self._complete(record, now, reusable=False)

    # -- parsing

    def _parse(self, record, data, now):
        pos, size = 0, len(data)
        while True:
            state = self.state
            if state == CHUNK_SIZE:
                end = data.find(b"\r\n", pos)
                if end < 0:
                    if size - pos > 1024:
                        raise ValueError("chunk size line too long")
                    break
                length = _chunk_size(data[pos:end])
                pos = end + 2
                if length == 0:
                    self.state = CHUNK_TRAILER
                    continue
                stop = pos + length
                if stop + 2 <= size:                  # the whole chunk is here (the usual case)
                    if data[stop:stop + 2] != b"\r\n":
                        raise ValueError("chunk not followed by CRLF")
                    if self.body is None and not self.sse and data.startswith(b"data: ", pos) \
                            and data.find(b"\n", pos, stop) == stop - 2 and data[stop - 1] == 10:
                        self._event(record, data[pos + 6:stop - 2], now)     # one whole single-line event
                    else:
                        self._body_part(record, data[pos:stop], now)
                    pos = stop + 2
                else:
                    self.remaining = length
                    self.state = CHUNK_DATA
            elif state == CHUNK_DATA:
                if pos >= size:
                    break
                take = min(size - pos, self.remaining)
                self._body_part(record, data[pos:pos + take], now)
                pos += take
                self.remaining -= take
                if self.remaining == 0:
                    self.state = CHUNK_CRLF
            elif state == CHUNK_CRLF:
                if size - pos < 2:
                    break
                if data[pos:pos + 2] != b"\r\n":
                    raise ValueError("chunk not followed by CRLF")
                pos += 2
                self.state = CHUNK_SIZE
            elif state == HEAD:
                end = data.find(b"\r\n\r\n", pos)
                if end < 0:
                    if size - pos > MAX_HEADER_BYTES:
                        raise ValueError("response headers longer than %d bytes" % MAX_HEADER_BYTES)
                    break
                self._head(record, data[pos:end])
                pos = end + 4
            elif state == CHUNK_TRAILER:
                if data[pos:pos + 2] == b"\r\n":
                    pos += 2
                else:
                    end = data.find(b"\r\n\r\n", pos)
                    if end < 0:
                        break
                    pos = end + 4
                self._body_end(record, now)
                self._complete(record, now, reusable=self.keep_alive and pos == size)
                return
            elif state == LENGTH:
                if self.remaining == 0:
                    self._body_end(record, now)
                    self._complete(record, now, reusable=self.keep_alive and pos == size)
                    return
                if pos >= size:
                    break
                take = min(size - pos, self.remaining)
                self._body_part(record, data[pos:pos + take], now)
                pos += take
                self.remaining -= take
            elif state == UNTIL_CLOSE:
                if pos < size:
                    self._body_part(record, data[pos:], now)
                return
            else:
                return
        if pos < size:
            self.pending = data[pos:]

    def _head(self, record, head):
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise ValueError("bad status line %r" % lines[0][:60])
        status = int(parts[1])
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if 100 <= status < 200:
            return   # interim response; the real one follows
        record.status = status
        connection = headers.get(b"connection", b"").lower()
        self.keep_alive = parts[0] == b"HTTP/1.1" and b"close" not in connection
        if status != 200:
            record.fail("http_%d" % status)
        if self.pool.server_header is None and b"server" in headers:
            self.pool.server_header = headers[b"server"].decode("latin-1")
        if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
            self.state = CHUNK_SIZE
        elif b"content-length" in headers:
            length = headers[b"content-length"]
            if not length.isdigit() or len(length) > 18:
                raise ValueError("bad Content-Length %r" % length[:20])
            self.remaining = int(length)
            self.state = LENGTH
        else:
            self.state = UNTIL_CLOSE
            self.keep_alive = False
        if status != 200 or not self.streaming:
            self.body = bytearray()

    def _body_part(self, record, payload, now):
        body = self.body
        if body is not None:
            if record.status != 200:
                limit = self.pool.error_body_limit
                if len(body) < limit:
                    body += payload[:limit - len(body)]
            else:
                if len(body) + len(payload) > MAX_BODY_BYTES:
                    raise ValueError("a body longer than %d bytes" % MAX_BODY_BYTES)
                body += payload
            return
        if not self.sse and payload.startswith(b"data: ") and payload.endswith(b"\n\n") \
                and payload.find(b"\n") == len(payload) - 2:
            self._event(record, payload[6:-2], now)     # one whole single-line event
            return
        if b"\r" in payload:
            payload = payload.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        sse = self.sse + payload if self.sse else payload
        start = 0
        while True:
            end = sse.find(b"\n\n", start)
            if end < 0:
                break
            data = None
            for line in sse[start:end].split(b"\n"):
                if line.startswith(b"data:"):
                    value = line[5:]
                    if value[:1] == b" ":
                        value = value[1:]
                    data = value if data is None else data + b"\n" + value
            start = end + 2
            if data is not None:
                self._event(record, data, now)
        self.sse = sse[start:]
        if len(self.sse) > MAX_EVENT_BYTES:
            raise ValueError("an event longer than %d bytes" % MAX_EVENT_BYTES)

    def _event(self, record, data, now):
        if data == b"[DONE]":
            record.done_marker = True
            return
        try:
            text = data.decode("utf-8")
            chunk, end = _scan_json(text, 0)
        except (ValueError, StopIteration):
            chunk, end = None, 0
            stripped = data.strip()
            if stripped and stripped != data:
                return self._event(record, stripped, now)
        if type(chunk) is not dict or (end != len(text) and text[end:].strip()):  # noqa: E721 pylint: disable=unidiomatic-typecheck
            record.fail("malformed_sse", "data: %s" % self._server_text(data, 80))
            return None
        if "error" in chunk:
            error = chunk["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            record.fail("stream_error", self._server_text(str(message), 200))
            return None
        choices = chunk.get("choices")
        usage = chunk.get("usage")
        content = ""
        if choices:
            try:
                content = self.chunk_text(choices[0]) if isinstance(choices, list) else None
            except (AttributeError, TypeError, KeyError):
                content = None
            if not isinstance(content, str):
                record.fail("malformed_sse", "unexpected choices: %s" % self._server_text(data, 80))
                return None
        if usage is not None and not isinstance(usage, dict):
            record.fail("malformed_sse", "unexpected usage: %s" % self._server_text(data, 80))
            return None
        completion_tokens = None
        if usage:
            prompt_tokens, completion_tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
            if type(prompt_tokens) is int:  # noqa: E721 pylint: disable=unidiomatic-typecheck
                record.usage_prompt = prompt_tokens
            if type(completion_tokens) is int:  # noqa: E721 pylint: disable=unidiomatic-typecheck
                record.usage_completion = completion_tokens
            else:
                completion_tokens = None
        if content:
            record.token_times.append(now)
            record.chars += len(content)
            if completion_tokens is not None:
                # continuous usage statistics: the tokens of this chunk are the counter's increase
                if record.chunk_tokens is None:
                    record.chunk_tokens = [1] * (len(record.token_times) - 1)
                record.chunk_tokens.append(max(0, completion_tokens - record.last_usage_completion))
                record.last_usage_completion = completion_tokens
            elif record.chunk_tokens is not None:
                record.chunk_tokens.append(1)
        return None

    def _body_end(self, record, now):
        """The body is complete: a non-streamed response is read here."""
        if self.body is None or record.status != 200:
            if record.status != 200 and self.body:
                # the server's own words (FastAPI's detail, OpenAI's error.message...), one line, masked
                text = self._error_text()
                record.error_detail = (preflight_lib.server_message(text) or "")[:200] or None
                self.pool.last_error_body = text
            if self.sse:
                # an event without the blank line that ends it: read what it holds
                leftover = self.sse.strip()
                self.sse = b""
                if leftover:
                    self._body_part(record, leftover + b"\n\n", now)
            return
        try:
            document = json.loads(bytes(self.body))
        except (ValueError, RecursionError):
            if record.max_tokens is not None:
                record.fail("malformed_response", "body: %s" % self._server_text(self.body, 80))
            return
        if record.max_tokens is None:   # a GET (preflight, /version): keep the document
            record.error_detail = None
            self.pool.last_document = document
            return
        if not isinstance(document, dict):
            record.fail("malformed_response", "expected a JSON object")
            return
        choices = document.get("choices") or []
        try:
            text = self.pool.endpoint.message_text(choices[0]) if choices else ""
        except (AttributeError, TypeError, KeyError):
            text = None
        if not isinstance(text, str):
            record.fail("malformed_response", "unexpected choices")
            return
        record.chars = len(text)
        usage = document.get("usage")
        if isinstance(usage, dict):
            if isinstance(usage.get("prompt_tokens"), int):
                record.usage_prompt = usage["prompt_tokens"]
            if isinstance(usage.get("completion_tokens"), int):
                record.usage_completion = usage["completion_tokens"]

    def _error_text(self):
        """The error answer kept (at most the pool's ``error_body_limit`` bytes) as text masked of the
        token; when the answer was cut at that bound, its last characters go too (a token cut there
        would otherwise leave its beginning)."""
        text = bytes(self.body).decode("utf-8", "replace")
        mask = self.pool.mask
        if not mask:
            return text
        text = mask.mask(text)
        if len(self.body) >= self.pool.error_body_limit:
            text = text[:max(0, len(text) - mask.longest)]
        return text

    def _server_text(self, raw, limit):
        """At most ``limit`` characters of the server's words (bytes or text), masked of the token
        before they are cut: a token the server echoes leaves nothing of itself, even across the cut."""
        mask = self.pool.mask
        margin = mask.longest if mask else 0
        text = raw[:limit + margin]
        if not isinstance(text, str):
            text = bytes(text).decode("utf-8", "replace")
        return mask.mask(text)[:limit] if mask else text[:limit]

    def _complete(self, record, now, reusable):
        if record.end is not None:
            return
        self.state = DONE
        self.record = None
        self.requests_served += 1
        record.end = now
        if reusable and not self.closed:
            self.pool.release(self)
        else:
            self.abort()
        self.pool.finished(record)

    def abort(self):
        if not self.closed and self.transport is not None:
            self.closed = True
            self.transport.abort()


class ConnectionPool:
    """Keep-alive connections to one target; ``launch`` sends, ``on_done(record)`` is called once per request."""

    def __init__(self, target, endpoint, on_done, request_timeout=600.0, keepalive_idle=4.0, stream=True, secrets=()):
        self.target = target
        # the token (``secrets``) never reaches a record's detail: the server's words are masked
        self.mask = secret_refs.SecretMask(secrets)
        self.endpoint = endpoint
        self.on_done = on_done
        self.request_timeout = request_timeout
        self.keepalive_idle = keepalive_idle
        self.stream = stream
        self.idle = []
        self.open = set()
        self.tasks = set()
        self.server_header = None
        self.last_document = None
        self.last_error_body = None
        self.error_body_limit = MAX_ERROR_BODY
        self.connections_opened = 0
        self._data = {}

    # -- requests

    def launch(self, record, data, stream=None):
        """Send ``data`` for ``record`` now (on an idle connection, or a new one)."""
        loop = asyncio.get_running_loop()
        stream = self.stream if stream is None else stream
        self._data[id(record)] = (data, stream)
        record.timer = loop.call_at(max(record.scheduled, loop.time()) + self.request_timeout, self._timeout, record)
        connection = self._take_idle(loop.time())
        if connection is not None:
            record.reused = True
            connection.send(record, data, stream)
        else:
            task = loop.create_task(self._connect_and_send(record))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    def retry(self, record):
        """Send a request again after its reused connection closed before any response byte."""
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._connect_and_send(record))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _take_idle(self, now):
        while self.idle:
            connection = self.idle.pop()
            if connection.closed or connection.transport.is_closing():
                continue
            if now - connection.idle_since > self.keepalive_idle:
                connection.abort()
                continue
            return connection
        return None

    async def _connect_and_send(self, record):
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        try:
            _transport, connection = await asyncio.wait_for(loop.create_connection(
                lambda: HTTPConnection(self), self.target.host, self.target.port,
                ssl=self.target.ssl_context, server_hostname=self.target.server_hostname), self.request_timeout)
        except (ssl.SSLError, ssl.CertificateError) as exc:
            self._failed_before_send(record, "tls_error", str(getattr(exc, "reason", None) or exc))
            return
        except asyncio.TimeoutError:
            self._failed_before_send(record, "timeout", "connect did not complete")
            return
        except OSError as exc:
            # asyncio's refusals say "Connect call failed (address)": name the errno instead;
            # a name that does not resolve (gaierror, negative errno) has its own text
            if isinstance(exc, socket.gaierror) or not exc.errno or exc.errno < 0:
                reason = exc.strerror or str(exc)
            else:
                reason = os.strerror(exc.errno)
            self._failed_before_send(record, "connect_error", "%s:%s: %s" % (self.target.host, self.target.port, reason))
            return
        self.connections_opened += 1
        self.open.add(connection)
        if record.end is not None:     # timed out while connecting: keep the connection for the next one
            self.release(connection)
            return
        record.connect_s = time.monotonic() - started
        data, stream = self._data.get(id(record), (None, None))
        connection.send(record, data, stream)

    def _failed_before_send(self, record, error, detail):
        if record.end is not None:
            return
        record.fail(error, detail)
        record.end = _monotonic()
        self.finished(record)

    def _timeout(self, record):
        if record.end is not None:
            return
        record.fail("timeout", "no complete response after %g s" % self.request_timeout)
        self._abandon(record)

    def cancel(self, record, detail):
        """End a request still in flight (the run stopped early): error class ``cancelled``."""
        if record.end is not None:
            return
        record.fail("cancelled", detail)
        self._abandon(record)

    def _abandon(self, record):
        for connection in list(self.open):
            if connection.record is record:
                connection.record = None
                connection.abort()
        record.end = _monotonic()
        self.finished(record)

    # -- bookkeeping

    def release(self, connection):
        connection.idle_since = time.monotonic()
        self.idle.append(connection)

    def forget(self, connection):
        self.open.discard(connection)

    def finished(self, record):
        self._data.pop(id(record), None)
        if self.mask and record.error_detail:
            record.error_detail = self.mask.mask(record.error_detail)
        if record.timer is not None:
            record.timer.cancel()
            record.timer = None
        self.on_done(record)

    def close(self):
        for connection in list(self.open):
            connection.abort()
        self.idle = []
        for task in list(self.tasks):
            task.cancel()
