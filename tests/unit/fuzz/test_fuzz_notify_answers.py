"""Fuzz: what GitHub and Slack answer the notifiers (status, headers - ``Link`` and ``Retry-After``
among them -, bodies of any JSON shape or bytes). Whatever they answer, each notifier delivers or is
one warning line with its message spooled; nothing escapes ``notify.notify`` as an exception, no
token reaches a warning, the spool or the record, and the defensive reading of the answers - not the
last-resort catch - is what says no. And whatever the comment pages and the channel's history hold,
only a comment or a thread of the token's own account is edited or replied to."""

import json
import os
import sys
import tempfile

import pytest
from hypothesis import event, given, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from fuzz_strategies import JSON  # noqa: E402  pylint: disable=wrong-import-position
from notify_servers import GitHub, Slack, serving  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils import notify  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import (  # noqa: E402
    schema as config_schema,
)
from ansible_collections.perfscale.topsail.plugins.module_utils.notify import message as message_lib  # noqa: E402

GH_TOKEN = "ghp_FuzzTokenValue0123456789abcdef"
SLACK_TOKEN = "xoxb-fuzz-token-0123456789abcdef"
MARKER = message_lib.marker("fuzz")
MESSAGE = message_lib.verdict_message("fuzz", {"run_id": "r1", "duration_s": 3.0, "points": 1}, None)
PULL_REQUEST = "team/project#42"

PAGES = st.one_of(st.sampled_from(["2", "3", "1", "0", "-2", "abc", "", "2.5", "%EF%BC%91", "99999999999", "9" * 5000]),
                  st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=10))
LINKS = st.one_of(
    PAGES.map(lambda page: '<https://api.github.com/x?per_page=100&page=%s>; rel="next"' % page),
    PAGES.map(lambda page: '<https://x/y?page=1>; rel="prev", <https://x/y?page=%s>; rel="next"' % page),
    st.just("<" * 3000), st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40))
STATUSES = st.sampled_from([200, 200, 200, 201, 204, 301, 304, 400, 401, 403, 404, 422, 429, 500, 502])


# GitHub comments and Slack messages close to the real ones, with every field possibly odd
LOGINS = st.sampled_from(["perfscale-bot", "PerfScale-Bot", "mallory", "perfscale-bot[bot]", "", None])
OUR_COMMENT = st.fixed_dictionaries({"body": st.sampled_from([MARKER, "x\n" + MARKER]),
                                     "id": st.integers(min_value=1, max_value=3000),
                                     "user": st.fixed_dictionaries({"login": st.sampled_from(["perfscale-bot",
                                                                                              "PerfScale-Bot"])})})
COMMENTS = st.one_of(OUR_COMMENT, st.fixed_dictionaries(
    {"body": st.one_of(st.sampled_from([MARKER, "<!-- x -->" + MARKER, "looks good"]), JSON)},
    optional={"id": st.one_of(st.integers(min_value=-2, max_value=3000), st.sampled_from(["7", True, None, 1.0])),
              "user": st.one_of(st.fixed_dictionaries({}, optional={"login": st.one_of(LOGINS, JSON)}), JSON)}),
    JSON)
PAGE_LISTS = st.lists(st.tuples(st.one_of(st.lists(COMMENTS, max_size=4), JSON),
                                st.one_of(st.just({}), st.dictionaries(st.just("Link"), LINKS, max_size=1))),
                      min_size=1, max_size=3)
METADATA = st.one_of(
    st.just({"event_type": "perfscale_pull_request", "event_payload": {"pull_request": PULL_REQUEST}}),
    st.just({"event_type": "perfscale_pull_request", "event_payload": {"pull_request": PULL_REQUEST}}),
    st.fixed_dictionaries({"event_type": st.one_of(st.just("perfscale_pull_request"), JSON),
                           "event_payload": st.one_of(st.fixed_dictionaries({"pull_request": st.one_of(
                               st.just(PULL_REQUEST), JSON)}), JSON)}),
    JSON)
TIMESTAMPS = st.one_of(st.sampled_from(["1700000001.000100", "1700000002.000200", "x", "", "1.2.3"]),
                       st.sampled_from(["1700000003.000300", "1700000004.000400"]), JSON)
OUR_MESSAGE = st.fixed_dictionaries({"metadata": METADATA, "ts": TIMESTAMPS, "bot_id": st.just("B0PERF"),
                                     "user": st.just("U0PERFBOT")})
SLACK_MESSAGES = st.one_of(OUR_MESSAGE, st.fixed_dictionaries(
    {"metadata": METADATA, "ts": TIMESTAMPS},
    optional={"thread_ts": TIMESTAMPS, "bot_id": st.one_of(st.sampled_from(["B0PERF", "B0OTHER"]), JSON),
              "user": st.one_of(st.sampled_from(["U0PERFBOT", "U0MALLORY"]), JSON)}), JSON)
HISTORIES = st.one_of(st.fixed_dictionaries({"ok": st.just(True), "messages": st.lists(SLACK_MESSAGES, max_size=4)}),
                      st.fixed_dictionaries({"ok": st.just(True), "messages": JSON}))

WELL_FORMED = st.one_of(
    st.just([]), st.just({"id": 5, "html_url": "https://github.com/team/project/pull/42#issuecomment-5"}),
    st.just({"login": "perfscale-bot"}), st.just({"data": {"viewer": {"login": "perfscale-bot"}}}),
    st.just({"ok": True, "messages": []}), st.just({"ok": True, "ts": "1700000001.000100", "channel": "C0PERF"}),
    st.just({"ok": True, "user_id": "U0PERFBOT", "bot_id": "B0PERF"}))


def answers(token):
    """Answers of a server that knows ``token`` (and may echo it)."""
    # header values as a server may write them (printable ASCII, no line breaks)
    header_text = st.one_of(st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
                            st.sampled_from([token, "0", "1", "-1", "1e9", "nan", "inf", ""]))
    headers = st.dictionaries(st.sampled_from(["Link", "link", "Retry-After", "x-ratelimit-remaining",
                                               "x-ratelimit-reset", "X-Other"]), st.one_of(LINKS, header_text),
                              max_size=3)
    texts = st.one_of(st.text(max_size=20), st.sampled_from([MARKER, MARKER + "\nold verdict", token,
                                                             "line one\nline two"]))
    # half of them close to what the API documents, half anything
    close = st.one_of(WELL_FORMED, st.lists(COMMENTS, min_size=1, max_size=3), HISTORIES, COMMENTS)
    anything = st.one_of(JSON, texts, st.binary(max_size=60), st.just(b"\xff\xfe not utf-8"), st.just(b"[" * 3000),
                         st.just(b'{"ok": true, "messages": NaN}'),
                         st.fixed_dictionaries({"message": texts, "error": texts,
                                                "ok": st.sampled_from([False, "true"])}))
    return st.tuples(st.one_of(st.just(200), STATUSES), headers, st.one_of(close, anything))


@pytest.fixture(scope="module")
def stand_ins():
    with serving(GitHub(GH_TOKEN)) as github, serving(Slack(SLACK_TOKEN)) as slack:
        yield github, slack


def reset(github, slack, github_faults=(), slack_faults=()):
    with github.lock, slack.lock:
        github.requests, github.comments, github.faults = [], {}, list(github_faults)
        slack.requests, slack.messages, slack.faults = [], {}, list(slack_faults)


def settings(github, slack):
    return config_schema.read_section({"notifications": {
        "timeout_s": 5,
        "github": {"enabled": True, "api_url": github.url, "repo": "team/project", "pr_number": 42,
                   "token_file": "github-token"},
        "slack": {"enabled": True, "api_url": slack.url + "/api", "channel": "C0PERF", "token_file": "slack-token"}}},
        "notifications")


def run_notify(github, slack):
    """``notify.notify`` in a fresh run directory: ``(outcome, every text it left)``."""
    with tempfile.TemporaryDirectory() as base:
        secrets = os.path.join(base, "secrets")
        os.mkdir(secrets)
        for name, value in (("github-token", GH_TOKEN), ("slack-token", SLACK_TOKEN)):
            with open(os.path.join(secrets, name), "w", encoding="utf-8") as handle:
                handle.write(value)
        run_root = os.path.join(base, "run")
        os.mkdir(run_root)
        outcome = notify.notify(settings(github, slack), {}, MESSAGE, run_root,
                                environ={"PERFSCALE_SECRETS_DIR": secrets}, sleep=lambda _s: None)
        left = []
        for directory, _dirs, files in os.walk(run_root):
            for name in files:
                with open(os.path.join(directory, name), encoding="utf-8") as handle:
                    left.append(handle.read())
    return outcome, left


def check_contract(outcome, left):
    # each notifier delivered, or is one warning line with its message spooled
    delivered = [d["notifier"] for d in outcome["delivered"]]
    failed = [w.split(":", 1)[0][len("notifications."):] for w in outcome["warnings"]]
    assert sorted(delivered + failed) == ["github", "slack"], outcome
    for record in outcome["delivered"]:
        event("%s %s" % (record["notifier"], record["action"]))
    for name in failed:
        event("%s spooled" % name)
    assert len(outcome["spooled"]) == len(failed)
    for warning in outcome["warnings"]:
        assert "\n" not in warning and warning.endswith("(spooled: the verdict stands)"), warning
        # the notifiers' own checks said no: the last-resort catch was not needed
        assert ": unexpected " not in warning, warning
    json.dumps(outcome, allow_nan=False)
    for text in [json.dumps(outcome)] + left:
        assert GH_TOKEN not in text and SLACK_TOKEN not in text


@given(github_answers=st.lists(answers(GH_TOKEN), min_size=1, max_size=4),
       slack_answers=st.lists(answers(SLACK_TOKEN), min_size=1, max_size=4))
def test_any_answer_is_delivered_or_one_line_and_spooled(stand_ins, github_answers, slack_answers):
    github, slack = stand_ins
    reset(github, slack, github_answers, slack_answers)
    check_contract(*run_notify(github, slack))


@given(pages=PAGE_LISTS, history=HISTORIES)
def test_only_our_own_comment_and_thread_are_edited(stand_ins, pages, history):
    github, slack = stand_ins
    served = [comment for page, _headers in pages if isinstance(page, list) for comment in page]
    reset(github, slack, [(200, headers, page) for page, headers in pages], [(200, {}, history)])
    # the comments served can be edited (the stand-in finds them by id)
    github.comments[("team/project", 42)] = [dict(c) for c in served if isinstance(c, dict)
                                             and isinstance(c.get("id"), int) and not isinstance(c.get("id"), bool)
                                             and isinstance(c.get("body"), str)]
    outcome, left = run_notify(github, slack)
    check_contract(outcome, left)
    ours = {c.get("id") for c in served if isinstance(c, dict) and isinstance(c.get("body"), str)
            and MARKER in c["body"] and isinstance(c.get("user"), dict)
            and isinstance(c["user"].get("login"), str) and c["user"]["login"].casefold() == "perfscale-bot"}
    for request in github.requests:
        if request["method"] == "PATCH":
            assert int(request["path"].rsplit("/", 1)[1]) in ours, (request["path"], ours)
            event("github edited a comment")
    messages = history["messages"] if isinstance(history["messages"], list) else []
    starts = [m.get("thread_ts") or m.get("ts") for m in messages
              if isinstance(m, dict) and m.get("bot_id") == "B0PERF"]
    threads = {start for start in starts if isinstance(start, str)}
    for request in slack.requests:
        if request["path"] == "/api/chat.postMessage" and "thread_ts" in (request["body"] or {}):
            assert request["body"]["thread_ts"] in threads
            event("slack replied in a thread")
