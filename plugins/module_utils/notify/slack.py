# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict as one Slack message per run, in a thread per pull request (Slack's Web API).

``chat.postMessage`` (JSON, bearer token). A run of a pull request (``notifications.github.repo`` and
``pr_number``) goes into that pull request's thread: its parent is the first message posted for it,
found again in ``conversations.history`` by the message metadata it carries (``event_type``
``perfscale_pull_request``, ``event_payload.pull_request`` ``owner/name#N``); the first run of a
pull request posts the parent itself. Any app can post that metadata: only a parent the token's own
account posted is replied to - its ``bot_id`` (a bot token) or ``user`` (a user token) as
``auth.test`` tells them, asked once per run and only when a parent with the metadata was seen.
Slack answers errors as HTTP 200 ``{"ok": false, "error": ...}``: each is a ``NotifyError`` naming it;
an answer of another shape than documented is one too.
"""

from __future__ import annotations

import re

from ansible_collections.perfscale.topsail.plugins.module_utils.notify import answers
from ansible_collections.perfscale.topsail.plugins.module_utils.notify import message as message_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.json_http import NotifyError

EVENT_TYPE = "perfscale_pull_request"
HISTORY_LIMIT = 200
TIMESTAMP = re.compile(r"[0-9]{1,12}\.[0-9]{1,9}")


class SlackNotifier:
    name = "slack"
    extra_headers = {}

    def __init__(self, section, http, connect=None, cache=None):
        """``cache``: a mapping kept for the run (who the token is); ``connect`` is not used."""
        del connect
        self.channel = section["slack"]["channel"]
        github = section["github"]
        self.pull_request = "%s#%d" % (github["repo"], int(github["pr_number"])) \
            if github.get("repo") and github.get("pr_number") else None
        self.http = http
        self.cache = cache if cache is not None else {}

    def _call(self, method, body=None, params=None):
        _status, _headers, answer = self.http.request("POST" if body is not None else "GET", "/" + method,
                                                      body=body, params=params)
        where = "%s/%s" % (self.http.url, method)
        if not isinstance(answer, dict):
            raise NotifyError("%s: the answer is %s; expected a Slack answer object" % (where, answers.kind(answer)))
        if answer.get("ok") is not True:
            error = answer.get("error")
            said = answers.one_line(error, 200) if isinstance(error, str) and error.strip() else \
                "error (%s)" % answers.kind(error)
            raise NotifyError("%s: %s" % (where, said))
        return answer

    def own_ids(self):
        """``(user_id, bot_id or None)`` of the token's account, asked once per run (``cache``)."""
        key = ("slack", self.http.url)
        if key not in self.cache:
            answer = self._call("auth.test", body={})
            user_id, bot_id = answer.get("user_id"), answer.get("bot_id")
            if not isinstance(user_id, str) or not user_id:
                raise NotifyError("%s/auth.test: user_id is %s; expected the token's user id"
                                  % (self.http.url, answers.kind(user_id)))
            self.cache[key] = (user_id, bot_id if isinstance(bot_id, str) and bot_id else None)
        return self.cache[key]

    def _ours(self, item):
        user_id, bot_id = self.own_ids()
        if bot_id is not None:
            return item.get("bot_id") == bot_id
        return item.get("bot_id") is None and item.get("user") == user_id

    def _thread(self):
        answer = self._call("conversations.history", params={"channel": self.channel, "limit": HISTORY_LIMIT,
                                                             "include_all_metadata": "true"})
        where = "%s/conversations.history" % self.http.url
        messages = answer.get("messages")
        if messages is None:
            return None
        if not isinstance(messages, list):
            raise NotifyError("%s: messages is %s; expected a list of messages" % (where, answers.kind(messages)))
        for index, item in enumerate(messages):
            if not isinstance(item, dict):
                raise NotifyError("%s: messages[%d] is %s; expected message objects"
                                  % (where, index, answers.kind(item)))
            metadata = item.get("metadata")
            payload = metadata.get("event_payload") if isinstance(metadata, dict) else None
            if not isinstance(payload, dict) or metadata.get("event_type") != EVENT_TYPE or \
                    payload.get("pull_request") != self.pull_request:
                continue
            thread = item.get("thread_ts") or item.get("ts")
            if isinstance(thread, str) and TIMESTAMP.fullmatch(thread) and self._ours(item):
                return thread
        return None

    def deliver(self, message):
        body = {"channel": self.channel, "text": message_lib.slack_text(message), "unfurl_links": False}
        thread = self._thread() if self.pull_request else None
        if thread:
            body["thread_ts"] = thread
        elif self.pull_request:
            body["metadata"] = {"event_type": EVENT_TYPE, "event_payload": {"pull_request": self.pull_request}}
        answer = self._call("chat.postMessage", body=body)
        ts, channel = answers.text(answer.get("ts")), answers.text(answer.get("channel"))
        return {"notifier": self.name, "action": "replied" if thread else "posted",
                "ts": ts if ts and TIMESTAMP.fullmatch(ts) else None,
                "channel": answers.one_line(channel, 80) if channel else None, "thread_ts": thread,
                "target": self.channel}
