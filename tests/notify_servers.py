"""Stand-ins of GitHub's REST API (issue comments), Slack's Web API (chat.postMessage,
conversations.history) and Horreum's upload API on 127.0.0.1, built from their documented requests and
answers.

Horreum (Hyperfoil/Horreum docs/site/content/en/openapi/openapi.yaml): ``GET /api/test/byName/{name}``
-> ``Test`` (``id``, ``name``...; 404 for an unknown test), ``GET /api/run/list/{testId}`` (``limit``,
``page`` from 1, ``trashed``) -> ``{"runs": [RunSummary], "total"}``, ``POST /api/run/data`` (query
``test``, ``start``, ``stop`` required; ``owner``, ``access``, ``schema``, ``description``; the body the
run's JSON) -> 202 ``text/plain`` ids; ``X-Horreum-API-Key`` checked (401 otherwise).

GitHub (docs.github.com/rest/issues/comments): ``GET /repos/{owner}/{repo}/issues/{n}/comments``
(``per_page``, ``page``, a ``Link: <...>; rel="next"`` header while more pages follow), ``POST`` there
(201), ``PATCH /repos/{owner}/{repo}/issues/comments/{id}`` (200); a bad token is 401 ``{"message":
"Bad credentials"}``; a secondary rate limit is 403 with ``Retry-After``; an unknown repository 404.
Who the token is: ``GET /user`` -> ``{"login", "id", "type"}`` for a user's token; a GitHub App
installation token (``app=True``) is refused there (403 ``Resource not accessible by integration``)
and answered by GraphQL (``POST /graphql`` ``{"query": "query { viewer { login } }"}`` -> ``{"data":
{"viewer": {"login": "<app slug>[bot]"}}}``). Comments are written by the token's account.

Slack (api.slack.com/methods): ``POST /api/chat.postMessage`` (JSON, ``channel``, ``text``,
``thread_ts``, ``metadata``) -> ``{"ok": true, "channel", "ts", "message"}``; ``GET
/api/conversations.history`` (``channel``, ``limit``, ``include_all_metadata``) -> ``{"ok": true,
"messages": [newest first]}``; errors are HTTP 200 ``{"ok": false, "error": "invalid_auth"}``; a rate
limit is 429 with ``Retry-After``. ``auth.test`` -> ``{"ok": true, "user_id", "bot_id", ...}``; a message
posted with the bot token carries the bot's ``user`` and ``bot_id``.

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
    def __init__(self, token, page_size_limit=100, login="perfscale-bot", app=False):
        super().__init__(token)
        self.comments = {}   # (repo, n) -> [comment]
        self.next_id = 1000
        self.repos = {"team/project"}
        self.page_size_limit = page_size_limit
        self.login = login
        self.app = app

    def answer(self, method, path, query, headers, body):
        if headers.get("Authorization") not in ("Bearer " + self.token, "token " + self.token):
            return 401, {}, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}
        if path == "/user" and method == "GET":
            if self.app:
                return 403, {}, {"message": "Resource not accessible by integration",
                                 "documentation_url": "https://docs.github.com/rest/users/users"}
            return 200, {}, {"login": self.login, "id": 4242, "type": "User"}
        if path == "/graphql" and method == "POST":
            if "viewer" not in str((body or {}).get("query")):
                return 200, {}, {"errors": [{"message": "unknown query"}]}
            return 200, {}, {"data": {"viewer": {"login": self.login}}}
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
                comment = {"id": self.next_id, "body": body["body"],
                           "user": {"login": self.login, "type": "Bot" if self.app else "User"},
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

    def plant(self, repo, number, body, login):
        """A comment of ``login`` (another account: someone who copied our marker)."""
        self.next_id += 1
        comment = {"id": self.next_id, "body": body, "user": {"login": login, "type": "User"},
                   "html_url": "https://github.com/%s/pull/%d#issuecomment-%d" % (repo, number, self.next_id)}
        self.comments.setdefault((repo, number), []).append(comment)
        return comment


class Slack(StandIn):
    def __init__(self, token, user_id="U0PERFBOT", bot_id="B0PERF"):
        super().__init__(token)
        self.messages = {}   # channel -> [message], oldest first
        self.channels = {"C0PERF"}
        self.clock = 1700000000
        self.user_id = user_id
        self.bot_id = bot_id

    def answer(self, method, path, query, headers, body):
        if headers.get("Authorization") != "Bearer " + self.token:
            return 200, {}, {"ok": False, "error": "invalid_auth"}
        if path == "/api/auth.test":
            answer = {"ok": True, "url": "https://perfscale.slack.com/", "team": "perfscale", "user": "perfscale",
                      "team_id": "T0PERF", "user_id": self.user_id}
            if self.bot_id:
                answer["bot_id"] = self.bot_id
            return 200, {}, answer
        if path == "/api/chat.postMessage" and method == "POST":
            channel = (body or {}).get("channel")
            if channel not in self.channels:
                return 200, {}, {"ok": False, "error": "channel_not_found"}
            self.clock += 1
            message = {"type": "message", "text": body.get("text"), "ts": "%d.000100" % self.clock,
                       "user": self.user_id}
            if self.bot_id:
                message["bot_id"] = self.bot_id
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

    def plant(self, channel, text, metadata, user, bot_id=None):
        """A top-level message of another member or app (one that copied our metadata)."""
        self.clock += 1
        message = {"type": "message", "text": text, "ts": "%d.000100" % self.clock, "user": user,
                   "metadata": metadata}
        if bot_id:
            message["bot_id"] = bot_id
        self.messages.setdefault(channel, []).append(message)
        return message


class Horreum(StandIn):
    ACCESS = ("PUBLIC", "PROTECTED", "PRIVATE")

    def __init__(self, token, tests=("perfscale-demo",)):
        super().__init__(token)
        self.tests = {name: index + 10 for index, name in enumerate(tests)}
        self.runs = []   # {"id", "testid", "description", "start", "stop", "owner", "access", "data", "schema"}

    def answer(self, method, path, query, headers, body):
        if headers.get("X-Horreum-API-Key") != self.token:
            return 401, {}, b"Unauthorized"
        match = re.fullmatch(r"/api/test/byName/([^/]+)", path)
        if match and method == "GET":
            from urllib.parse import unquote
            name = unquote(match.group(1))
            if name not in self.tests:
                return 404, {}, {"error": "Test %s not found" % name}
            return 200, {}, {"id": self.tests[name], "name": name, "datastoreId": 1, "notificationsEnabled": True,
                             "access": "PUBLIC", "owner": "dev-team"}
        match = re.fullmatch(r"/api/run/list/(\d+)", path)
        if match and method == "GET":
            limit = int((query.get("limit") or ["25"])[0])
            page = int((query.get("page") or ["1"])[0])
            runs = [r for r in self.runs if r["testid"] == int(match.group(1))]
            chunk = runs[(page - 1) * limit:page * limit]
            return 200, {}, {"total": len(runs), "runs": [
                {"id": r["id"], "testid": r["testid"], "testname": "x", "trashed": False, "hasMetadata": False,
                 "datasets": [], "access": r["access"], "owner": r["owner"], "start": r["start"], "stop": r["stop"],
                 "description": r["description"]} for r in chunk]}
        if path == "/api/run/data" and method == "POST":
            missing = [k for k in ("test", "start", "stop") if not query.get(k)]
            if missing or not isinstance(body, dict):
                return 400, {}, b"Missing or invalid: " + ",".join(missing or ["body"]).encode()
            test = query["test"][0]
            if test not in self.tests:
                return 400, {}, b"Cannot identify test name or ID"
            access = (query.get("access") or ["PUBLIC"])[0]
            if access not in self.ACCESS:
                return 400, {}, b"Invalid access"
            run = {"id": 100 + len(self.runs), "testid": self.tests[test], "description": (query.get("description") or [""])[0],
                   "start": query["start"][0], "stop": query["stop"][0], "owner": (query.get("owner") or ["dev-team"])[0],
                   "access": access, "schema": (query.get("schema") or [None])[0], "data": body}
            self.runs.append(run)
            return 202, {}, str(run["id"]).encode()
        return 404, {}, {"error": "not found"}


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
            plain = isinstance(document, bytes)
            data = document if plain else json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain" if plain else "application/json; charset=utf-8")
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
