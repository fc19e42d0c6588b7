# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict as one comment per pull request and test, updated by later runs (GitHub's REST API).

The comment is found again by its hidden marker (``<!-- perfscale.topsail verdict: TEST -->``) among
the pull request's issue comments (``GET /repos/{repo}/issues/{n}/comments``, 100 a page, following
the ``Link: rel="next"`` pages); found, it is edited (``PATCH /repos/{repo}/issues/comments/{id}``),
else created (``POST /repos/{repo}/issues/{n}/comments``). GitHub Enterprise: the same paths under
``https://<host>/api/v3``.
"""

from __future__ import annotations

import re
import urllib.parse

from ansible_collections.perfscale.topsail.plugins.module_utils.notify import message as message_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.json_http import NotifyError

NEXT_LINK = re.compile(r'<([^>]+)>;\s*rel="next"')
MAX_PAGES = 50
API_VERSION = {"X-GitHub-Api-Version": "2022-11-28", "Accept": "application/vnd.github+json"}


class GitHubNotifier:
    name = "github"
    extra_headers = API_VERSION

    def __init__(self, section, http):
        self.repo = section["github"]["repo"]
        self.pr_number = int(section["github"]["pr_number"])
        self.http = http

    def _find(self, mark):
        path = "/repos/%s/issues/%d/comments" % (self.repo, self.pr_number)
        params = {"per_page": 100, "page": 1}
        for _page in range(MAX_PAGES):
            _status, headers, comments = self.http.request("GET", path, params=params)
            if not isinstance(comments, list):
                raise NotifyError("GET %s%s: expected a list of comments" % (self.http.url, path))
            for comment in comments:
                if isinstance(comment, dict) and mark in str(comment.get("body") or ""):
                    return comment
            found = NEXT_LINK.search(headers.get("Link") or headers.get("link") or "")
            if not found:
                return None
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(found.group(1)).query)
            params = {"per_page": 100, "page": int((query.get("page") or ["0"])[0])}
        return None

    def deliver(self, message):
        body = message_lib.markdown(message)
        existing = self._find(message_lib.marker(message["test_name"]))
        if existing is not None:
            _status, _headers, comment = self.http.request(
                "PATCH", "/repos/%s/issues/comments/%s" % (self.repo, existing["id"]), body={"body": body})
            action = "updated"
        else:
            _status, _headers, comment = self.http.request(
                "POST", "/repos/%s/issues/%d/comments" % (self.repo, self.pr_number), body={"body": body})
            action = "created"
        comment = comment if isinstance(comment, dict) else {}
        return {"notifier": self.name, "action": action, "comment_id": comment.get("id"),
                "url": comment.get("html_url"), "target": "%s#%d" % (self.repo, self.pr_number)}
