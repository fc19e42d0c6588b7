# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""JSON over HTTPS for the notifiers: bearer token, timeouts, one wait on a rate limit (standard library).

A rate limit (429, or 403 with ``Retry-After`` / ``x-ratelimit-remaining: 0`` as GitHub answers its
secondary and primary limits) is waited for once when it asks for at most ``max_retry_after_s``
seconds; otherwise, and for every other error, a ``NotifyError`` in one line (the server's message,
never the token).

The token and the ``secret_headers`` (Horreum's API key) are checked before anything is sent: one line
each (no line break: ``http.client`` would refuse the header with the value in its message), and only
over https:// or to a loopback host. Every request runs under the ``SecretMask`` of those values: an
error leaving here (a server echoing a key, a connection error, a bug's exception) carries none of
them, in any encoding.
"""

from __future__ import annotations

import http.client
import json
import ssl
import time
import urllib.parse

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

MAX_ANSWER_BYTES = 8 * 1024 * 1024


class NotifyError(PerfscaleError):
    """A request that failed (one line): refused by the server, or the server not reached."""


class Unreachable(NotifyError):
    """The server was not reached (connection refused or reset, a timeout, a name that does not resolve)."""


def retry_after_s(status, headers, now=time.time):
    """Seconds a rate-limited answer asks to wait, or None when it is not a rate limit."""
    value = headers.get("Retry-After")
    if value is not None and status in (403, 429):
        try:
            return max(0.0, float(value))
        except ValueError:
            return None
    if status in (403, 429) and headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset"):
        try:
            return max(0.0, float(headers["x-ratelimit-reset"]) - now())
        except ValueError:
            return None
    return 60.0 if status == 429 else None


class JsonHttp:
    """``request(method, path, body=None, params=None)`` -> ``(status, headers, document)``.

    ``token``: sent as ``Authorization: Bearer``; ``secret_headers``: other headers holding a secret.
    ``setting`` names the URL's setting and ``secret_name`` the secret in messages."""

    def __init__(self, base_url, token, timeout_s=20.0, max_retry_after_s=60.0, sleep=time.sleep,
                 extra_headers=None, context=None, secret_headers=None, setting="api_url", secret_name="the token"):
        parts = urllib.parse.urlsplit(base_url or "")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise NotifyError("%s %r: expected http(s)://host[:port][/path]" % (setting, base_url))
        secret_headers = dict(secret_headers or {})
        secrets = ([token] if token else []) + [value for value in secret_headers.values() if value]
        for value in secrets:
            problem = secret_refs.header_problem(value, secret_name)
            if problem:
                raise NotifyError(problem)
        if secrets:
            problem = secret_refs.cleartext_problem(base_url, setting, "credentials (%s)" % secret_name)
            if problem:
                raise NotifyError(problem)
        self._mask = secret_refs.SecretMask(secrets)
        self.scheme, self.host, self.base_path = parts.scheme, parts.netloc, parts.path.rstrip("/")
        self.url = "%s://%s%s" % (parts.scheme, parts.netloc, self.base_path)
        self._token = token
        self.timeout_s = timeout_s
        self.max_retry_after_s = max_retry_after_s
        self.sleep = sleep
        self.extra_headers = dict(extra_headers or {}, **secret_headers)
        self.context = context

    def _once(self, method, target, payload):
        headers = {"Accept": "application/json", "User-Agent": "perfscale.topsail"}
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        headers.update(self.extra_headers)
        if payload is not None:
            headers["Content-Type"] = "application/json; charset=utf-8"
        if self.scheme == "https":
            connection = http.client.HTTPSConnection(self.host, timeout=self.timeout_s,
                                                     context=self.context or ssl.create_default_context())
        else:
            connection = http.client.HTTPConnection(self.host, timeout=self.timeout_s)
        try:
            connection.request(method, target, body=payload, headers=headers)
            answer = connection.getresponse()
            raw = answer.read(MAX_ANSWER_BYTES + 1)
            return answer.status, dict(answer.getheaders()), raw
        except (OSError, http.client.HTTPException) as exc:
            raise Unreachable("%s %s%s: %s" % (method, self.url, target[len(self.base_path):].split("?")[0],
                                               exc)) from None
        finally:
            connection.close()

    def request(self, method, path, body=None, params=None):
        """One request (and one wait on a short rate limit); every error leaves masked of the secrets."""
        with self._mask.guard(NotifyError, keep=(NotifyError,)):
            return self._request(method, path, body, params)

    def _request(self, method, path, body, params):
        target = self.base_path + path + ("?" + urllib.parse.urlencode(params) if params else "")
        payload = json.dumps(body).encode() if body is not None else None
        for attempt in (1, 2):
            status, headers, raw = self._once(method, target, payload)
            wait = retry_after_s(status, headers)
            if wait is None or attempt == 2:
                break
            if wait > self.max_retry_after_s:
                raise NotifyError("%s %s%s: %d rate limited, retry after %.0f s (more than max_retry_after_s %.0f)"
                                  % (method, self.url, path, status, wait, self.max_retry_after_s))
            self.sleep(wait)
        try:
            document = bounded_input.load_json(raw or b"null", "%s %s%s: the answer" % (method, self.url, path),
                                               max_bytes=MAX_ANSWER_BYTES)
        except bounded_input.InputError:
            document = None
        if status >= 300:
            reason = document.get("message") or document.get("error") if isinstance(document, dict) else None
            reason = reason or raw[:200].decode("utf-8", "replace")
            if retry_after_s(status, headers) is not None:
                reason = "rate limited (%s)" % " ".join(str(reason).split())
            raise NotifyError("%s %s%s: %d %s" % (method, self.url, path, status, " ".join(str(reason).split())))
        return status, headers, document
