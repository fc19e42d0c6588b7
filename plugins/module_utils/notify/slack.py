# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict as one Slack message per run, in a thread per pull request (Slack's Web API).

``chat.postMessage`` (JSON, bearer token). A run of a pull request (``notifications.github.repo`` and
``pr_number``) goes into that pull request's thread: its parent is the first message posted for it,
found again in ``conversations.history`` by the message metadata it carries (``event_type``
``perfscale_pull_request``, ``event_payload.pull_request`` ``owner/name#N``); the first run of a
pull request posts the parent itself. Slack answers errors as HTTP 200 ``{"ok": false, "error": ...}``:
each is a ``NotifyError`` naming it.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.notify import message as message_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.json_http import NotifyError

EVENT_TYPE = "perfscale_pull_request"
HISTORY_LIMIT = 200


class SlackNotifier:
    name = "slack"
    extra_headers = {}

    def __init__(self, section, http):
        self.channel = section["slack"]["channel"]
        github = section["github"]
        self.pull_request = "%s#%d" % (github["repo"], int(github["pr_number"])) \
            if github.get("repo") and github.get("pr_number") else None
        self.http = http

    def _call(self, method, body=None, params=None):
        _status, _headers, answer = self.http.request("POST" if body is not None else "GET", "/" + method,
                                                      body=body, params=params)
        if not isinstance(answer, dict) or not answer.get("ok"):
            error = answer.get("error") if isinstance(answer, dict) else "not a Slack answer"
            raise NotifyError("%s/%s: %s" % (self.http.url, method, error))
        return answer

    def _thread(self):
        answer = self._call("conversations.history", params={"channel": self.channel, "limit": HISTORY_LIMIT,
                                                             "include_all_metadata": "true"})
        for item in answer.get("messages") or ():
            metadata = item.get("metadata") or {}
            if metadata.get("event_type") == EVENT_TYPE and \
                    (metadata.get("event_payload") or {}).get("pull_request") == self.pull_request:
                return item.get("thread_ts") or item.get("ts")
        return None

    def deliver(self, message):
        body = {"channel": self.channel, "text": message_lib.slack_text(message), "unfurl_links": False}
        thread = self._thread() if self.pull_request else None
        if thread:
            body["thread_ts"] = thread
        elif self.pull_request:
            body["metadata"] = {"event_type": EVENT_TYPE, "event_payload": {"pull_request": self.pull_request}}
        answer = self._call("chat.postMessage", body=body)
        return {"notifier": self.name, "action": "replied" if thread else "posted", "ts": answer.get("ts"),
                "channel": answer.get("channel"), "thread_ts": thread, "target": self.channel}
