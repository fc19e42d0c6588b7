"""Stand-ins of GitHub's REST API (issue comments) and Slack's Web API (chat.postMessage,
conversations.history) on 127.0.0.1, built from their documented requests and answers.

GitHub (docs.github.com/rest/issues/comments): ``GET /repos/{owner}/{repo}/issues/{n}/comments``
(``per_page``, ``page``, a ``Link: <...>; rel="next"`` header while more pages follow), ``POST`` there
(201), ``PATCH /repos/{owner}/{repo}/issues/comments/{id}`` (200); a bad token is 401 ``{"message":
"Bad credentials"}``; a secondary rate limit is 403 with ``Retry-After``; an unknown repository 404.

Slack (api.slack.com/methods): ``POST /api/chat.postMessage`` (JSON, ``channel``, ``text``,
``thread_ts``, ``metadata``) -> ``{"ok": true, "channel", "ts", "message"}``; ``GET
/api/conversations.history`` (``channel``, ``limit``, ``include_all_metadata``) -> ``{"ok": true,
"messages": [newest first]}``; errors are HTTP 200 ``{"ok": false, "error": "invalid_auth"}``; a rate
limit is 429 with ``Retry-After``.

``faults``: a list of ``(status, headers, body)`` answered, one per request, before the normal answers.
"""

import contextlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class StandIn:
    def __init__(self, token):
        self.token = token
        self.requests = []
        self.faults = []
        self.lock = threading.Lock()
        self.server = None

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def answer(self, method, path, query, headers, body):
        raise NotImplementedError


class GitHub(StandIn):
    def __init__(self, token, page_size_limit=100):
        super().__init__(token)
        self.comments = {}   # (repo, n) -> [comment]
        self.next_id = 1000
        self.repos = {"team/project"}
        self.page_size_limit = page_size_limit

    def answer(self, method, path, query, headers, body):
        if headers.get("Authorization") not in ("Bearer " + self.token, "token " + self.token):
            return 401, {}, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}
        match = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", path)
        if match:
            repo, number = match.group(1), int(match.group(2))
            if repo not in self.repos:
                return 404, {}, {"message": "Not Found"}
            comments = self.comments.setdefault((repo, number), [])
            if method == "GET":
                per_page = min(int((query.get("per_page") or ["30"])[0]), self.page_size_limit)
                page = int((query.get("page") or ["1"])[0])
                chunk = comments[(page - 1) * per_page:page * per_page]
                links = {}
                if page * per_page < len(comments):
                    links["Link"] = '<%s%s?per_page=%d&page=%d>; rel="next"' % (self.url, path, per_page, page + 1)
                return 200, links, chunk
            if method == "POST":
                if not isinstance(body, dict) or not body.get("body"):
                    return 422, {}, {"message": "Validation Failed"}
                self.next_id += 1
                comment = {"id": self.next_id, "body": body["body"], "user": {"login": "perfscale-bot"},
                           "html_url": "https://github.com/%s/pull/%d#issuecomment-%d" % (repo, number, self.next_id)}
                comments.append(comment)
                return 201, {}, comment
        match = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)", path)
        if match and method == "PATCH":
            for comment in (c for (repo, _n), items in self.comments.items() if repo == match.group(1) for c in items):
                if comment["id"] == int(match.group(2)):
                    comment["body"] = body["body"]
                    return 200, {}, comment
            return 404, {}, {"message": "Not Found"}
        return 404, {}, {"message": "Not Found"}

    def filler(self, repo, number, count):
        """``count`` comments of other people before ours (pages to go through)."""
        for index in range(count):
            self.next_id += 1
            self.comments.setdefault((repo, number), []).append(
                {"id": self.next_id, "body": "looks good %d" % index, "user": {"login": "someone"}})


class Slack(StandIn):
    def __init__(self, token):
        super().__init__(token)
        self.messages = {}   # channel -> [message], oldest first
        self.channels = {"C0PERF"}
        self.clock = 1700000000

    def answer(self, method, path, query, headers, body):
        if headers.get("Authorization") != "Bearer " + self.token:
            return 200, {}, {"ok": False, "error": "invalid_auth"}
        if path == "/api/chat.postMessage" and method == "POST":
            channel = (body or {}).get("channel")
            if channel not in self.channels:
                return 200, {}, {"ok": False, "error": "channel_not_found"}
            self.clock += 1
            message = {"type": "message", "text": body.get("text"), "ts": "%d.000100" % self.clock}
            if body.get("thread_ts"):
                message["thread_ts"] = body["thread_ts"]
            if body.get("metadata"):
                message["metadata"] = body["metadata"]
            self.messages.setdefault(channel, []).append(message)
            return 200, {}, {"ok": True, "channel": channel, "ts": message["ts"], "message": message}
        if path == "/api/conversations.history" and method == "GET":
            channel = (query.get("channel") or [None])[0]
            if channel not in self.channels:
                return 200, {}, {"ok": False, "error": "channel_not_found"}
            with_metadata = (query.get("include_all_metadata") or ["false"])[0] == "true"
            limit = int((query.get("limit") or ["100"])[0])
            # the channel's top-level messages (replies live in conversations.replies), newest first
            top = [m for m in self.messages.get(channel, []) if not m.get("thread_ts") or m["thread_ts"] == m["ts"]]
            items = [dict(m) if with_metadata else {k: v for k, v in m.items() if k != "metadata"}
                     for m in reversed(top)][:limit]
            return 200, {}, {"ok": True, "messages": items, "has_more": False}
        return 404, {}, {"ok": False, "error": "unknown_method"}


def _handler(stand_in):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _serve(self):
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            with stand_in.lock:
                stand_in.requests.append({"method": self.command, "path": parts.path, "query": parts.query,
                                          "headers": dict(self.headers), "body": body})
                if stand_in.faults:
                    status, headers, document = stand_in.faults.pop(0)
                else:
                    status, headers, document = stand_in.answer(self.command, parts.path, parse_qs(parts.query),
                                                                self.headers, body)
            data = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _serve

    return Handler


@contextlib.contextmanager
def serving(stand_in):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stand_in))
    stand_in.server = server
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stand_in
    finally:
        server.shutdown()
        server.server_close()


def dead_url():
    """A URL nothing listens on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return "http://127.0.0.1:%d" % port
