# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict as one comment per pull request and test, updated by later runs (GitHub's REST API).

The comment is found again by its hidden marker (``<!-- perfscale.topsail verdict: TEST -->``) among
the pull request's issue comments (``GET /repos/{repo}/issues/{n}/comments``, 100 a page, following
the ``Link: rel="next"`` pages, at most ``MAX_PAGES``); found, it is edited (``PATCH
/repos/{repo}/issues/comments/{id}``), else created (``POST /repos/{repo}/issues/{n}/comments``).
GitHub Enterprise: the same paths under ``https://<host>/api/v3``.

Anyone who can comment on the pull request can copy the marker: only a marker comment written by the
token's own account (``user.login``, compared without case) is edited. Who the token is, is asked
once per run and only when a marker comment was seen: ``GET /user`` for a user's token; an app
installation token is refused there, and GraphQL's ``viewer { login }`` answers the app's bot login
(``<app slug>[bot]``, at ``/graphql``, or ``/api/graphql`` on GitHub Enterprise). An answer of another
shape than documented is a ``NotifyError`` in one line.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.notify import answers
from ansible_collections.perfscale.topsail.plugins.module_utils.notify import message as message_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.json_http import NotifyError, Unreachable

MAX_PAGES = 50
PER_PAGE = 100
API_VERSION = {"X-GitHub-Api-Version": "2022-11-28", "Accept": "application/vnd.github+json"}
VIEWER_QUERY = "query { viewer { login } }"


def graphql_url(api_url):
    """GitHub's GraphQL endpoint next to the REST ``api_url`` (GitHub Enterprise: ``/api/v3`` -> ``/api/graphql``)."""
    base = api_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base[:-len("/v3")] + "/graphql"
    return base + "/graphql"


class GitHubNotifier:
    name = "github"
    extra_headers = API_VERSION

    def __init__(self, section, http, connect=None, cache=None):
        """``connect(base_url)``: a client of another base URL with the same token (GraphQL);
        ``cache``: a mapping kept for the run (who the token is)."""
        self.repo = section["github"]["repo"]
        self.pr_number = int(section["github"]["pr_number"])
        self.http = http
        self.connect = connect
        self.cache = cache if cache is not None else {}

    # -- who the token is

    def _login_from_rest(self):
        _status, _headers, user = self.http.request("GET", "/user")
        login = answers.text(user.get("login")) if isinstance(user, dict) else None
        if not login:
            raise NotifyError("GET %s/user: the answer has no login" % self.http.url)
        return login

    def _login_from_graphql(self):
        if self.connect is None:
            raise NotifyError("GraphQL: no client to ask")
        client = self.connect(graphql_url(self.http.url))
        _status, _headers, document = client.request("POST", "", body={"query": VIEWER_QUERY})
        data = document.get("data") if isinstance(document, dict) else None
        viewer = data.get("viewer") if isinstance(data, dict) else None
        login = answers.text(viewer.get("login")) if isinstance(viewer, dict) else None
        if not login:
            errors = document.get("errors") if isinstance(document, dict) else None
            first = errors[0] if isinstance(errors, list) and errors else None
            said = answers.text(first.get("message")) if isinstance(first, dict) else None
            raise NotifyError("POST %s: the answer has no data.viewer.login%s"
                              % (client.url, " (%s)" % answers.one_line(said, 200) if said else ""))
        return login

    def own_login(self):
        """The login of the token's account, asked once per run (``cache``)."""
        key = ("github", self.http.url)
        if key not in self.cache:
            try:
                login = self._login_from_rest()
            except Unreachable:
                raise
            except NotifyError as rest_error:
                # an app installation token: GET /user is "Resource not accessible by integration"
                try:
                    login = self._login_from_graphql()
                except NotifyError as graphql_error:
                    raise NotifyError("cannot tell which account the token is: %s; %s"
                                      % (rest_error, graphql_error)) from None
            self.cache[key] = login
        return self.cache[key]

    def _ours(self, comment):
        user = comment.get("user")
        login = answers.text(user.get("login")) if isinstance(user, dict) else None
        return login is not None and login.casefold() == self.own_login().casefold()

    # -- the comment

    def _find(self, mark):
        """The id of the first comment with ``mark`` written by the token's account, or None."""
        path = "/repos/%s/issues/%d/comments" % (self.repo, self.pr_number)
        where = "GET %s%s" % (self.http.url, path)
        page = 1
        while page <= MAX_PAGES:
            _status, headers, comments = self.http.request("GET", path, params={"per_page": PER_PAGE, "page": page})
            if not isinstance(comments, list):
                raise NotifyError("%s: page %d is %s; expected a list of comments"
                                  % (where, page, answers.kind(comments)))
            for index, comment in enumerate(comments, 1):
                if not isinstance(comment, dict):
                    raise NotifyError("%s: page %d, comment %d is %s; expected comment objects"
                                      % (where, page, index, answers.kind(comment)))
                body = answers.text(comment.get("body"))
                if body is None or mark not in body or not self._ours(comment):
                    continue
                comment_id = answers.whole_number(comment.get("id"))
                if comment_id is None or comment_id < 1:
                    raise NotifyError("%s: page %d, comment %d (ours, with the marker): its id is %s; expected a "
                                      "whole number" % (where, page, index, answers.kind(comment.get("id"))
                                                        if comment_id is None else comment_id))
                return comment_id
            link = answers.next_link(answers.header(headers, "Link"))
            if link is None:
                return None
            written = answers.page_of(link)
            following = int(written) if written is not None and written.isascii() and written.isdigit() \
                and len(written) <= 9 else None
            if following is None or following <= page:
                raise NotifyError("%s: the Link header's next page is %s; expected a whole number after page %d"
                                  % (where, "missing" if written is None else repr(answers.one_line(written, 40)),
                                     page))
            page = following
        return None

    def deliver(self, message):
        body = message_lib.markdown(message)
        existing = self._find(message_lib.marker(message["test_name"]))
        if existing is not None:
            _status, _headers, comment = self.http.request(
                "PATCH", "/repos/%s/issues/comments/%d" % (self.repo, existing), body={"body": body})
            action = "updated"
        else:
            _status, _headers, comment = self.http.request(
                "POST", "/repos/%s/issues/%d/comments" % (self.repo, self.pr_number), body={"body": body})
            action = "created"
        comment = comment if isinstance(comment, dict) else {}
        comment_id = answers.whole_number(comment.get("id"))
        return {"notifier": self.name, "action": action, "comment_id": existing if comment_id is None else comment_id,
                "url": answers.link_url(comment.get("html_url")), "target": "%s#%d" % (self.repo, self.pr_number)}
