"""Notifications of the verdict: GitHub's one comment per pull request and test, Slack's thread per pull
request, and every failure a warning with the message spooled - against local stand-ins of both APIs."""

import json
import os
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import notify
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.notify import message as message_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.notify import verdict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from notify_servers import GitHub, Slack, dead_url, serving  # noqa: E402

GH_TOKEN = "ghp_UnitTestTokenValue0123456789"
SLACK_TOKEN = "xoxb-unit-test-token-9876543210"

SUMMARY = {
    "kpis_analysed": 6, "message": "6 KPI(s) of 2 entries compared: 1 regression(s), ...",
    "regressions": [{"test": "size=256", "kpi": "throughput", "unit": "tokens/s", "current": 900.0,
                     "baseline_mean": 1000.0, "relative_change": -0.10, "pvalue": 0.003, "verdict": "regression"}],
    "persisting_regressions": [],
    "improvements": [{"test": "size=512", "kpi": "ttft_p99", "unit": "ms", "current": 80.0, "baseline_mean": 100.0,
                      "relative_change": -0.2, "pvalue": 0.01, "verdict": "improvement"}],
    "inconclusive": [{"test": "size=512", "kpi": "itl", "unit": "ms", "current": 10.5, "history_mean": 10.0,
                      "relative_change": 0.05, "verdict": "inconclusive", "why": "short history"}],
}


def section(github_url=None, slack_url=None, **extra):
    config = {"notifications": {
        "github": {"enabled": github_url is not None, "api_url": github_url or "https://api.github.com",
                   "repo": "team/project", "pr_number": 42, "token_file": "github-token"},
        "slack": {"enabled": slack_url is not None, "api_url": (slack_url or "https://slack.com") + "/api",
                  "channel": "C0PERF", "token_file": "slack-token"}}}
    config["notifications"].update(extra)
    return config_schema.read_section(config, "notifications")


@pytest.fixture
def secrets(tmp_path):
    directory = tmp_path / "secrets"
    directory.mkdir()
    (directory / "github-token").write_text(GH_TOKEN + "\n")
    (directory / "slack-token").write_text(SLACK_TOKEN)
    return {"PERFSCALE_SECRETS_DIR": str(directory)}


@pytest.fixture
def run_root(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    (root / "run.json").write_text(json.dumps({"run_id": "0123abcd-run", "created": "2026-11-26T10:00:00+00:00"}))
    (root / "presets_applied").write_text("llm_serving\ncpu_smoke\n")
    return str(root)


def message_for(run_root, failed=(), settings=None):
    return verdict.run_message(settings or section(), run_root, SUMMARY, failed, points=4,
                               reports=os.path.join(run_root, "plots", "reports_index.html"),
                               artifacts_url="https://minio.example/perf/run-0123", now=lambda: 1795687323.0)


def test_the_message_says_the_verdict_the_top_changes_and_where_to_look(run_root):
    message = message_for(run_root)
    assert message["test_name"] == "llm_serving+cpu_smoke" and message["headline"] == "REGRESSION"
    assert message["counts"] == {"regressions": 1, "persisting_regressions": 0, "drifts": 0, "improvements": 1,
                                 "inconclusive": 1}
    # regressions first, then by the size of the change
    assert [c["kpi"] for c in message["changes"]] == ["throughput", "ttft_p99", "itl"]
    text = message_lib.markdown(message)
    assert text.startswith("<!-- perfscale.topsail verdict: llm_serving+cpu_smoke -->\n")
    assert "| `throughput` | size=256 | regression | 1000 | 900 tokens/s | -10.0% | 0.003 |" in text
    assert "[Reports](https://minio.example/perf/run-0123/plots/reports_index.html)" in text
    assert "Run `0123abcd-run`" in text and "point(s)" in text
    slack_text = message_lib.slack_text(message)
    assert "*REGRESSION*" in slack_text and "`throughput` (regression): 1000 -> 900 tokens/s (-10.0%, p=0.003)" in slack_text
    assert message_lib.headline({"regressions": 0, "persisting_regressions": 0, "improvements": 0,
                                 "inconclusive": 0}, ["p1"], True) == "FAILED POINTS"
    assert verdict.run_message(section(), run_root, None)["headline"] == "NOT ANALYSED"
    assert message_lib.verdict_message("t", {"duration_s": 3725}, SUMMARY)["duration"] == "1h 02m 05s"
    assert "| 1 | 0 | 0 | 1 | 1 | 0 |" in text and "1 regression(s), 0 persisting, 0 drift(s), 1 improvement(s)" in \
        slack_text


def test_a_drift_is_counted_and_shown_by_how_far_it_moved_since_its_start():
    drift = {"start": 3, "slope_per_run": -2.0, "level_start": 1000.0, "level_end": 940.0, "relative_change": -0.06,
             "pvalue": 0.0002, "points": 31, "direction": "worse", "since": {"run_id": "r3"}}
    summary = {"kpis_analysed": 2, "message": "2 KPI(s)", "drifts": [
        {"test": "size=256", "kpi": "throughput", "unit": "tokens/s", "current": 941.0, "verdict": "drift",
         "relative_change": -0.001, "drift": drift}]}
    message = message_lib.verdict_message("t", {"run_id": "r", "points": 1}, summary)
    assert message["headline"] == "DRIFT" and message["counts"]["drifts"] == 1
    assert message["changes"] == [{"kpi": "throughput", "test": "size=256", "verdict": "drift (worse)",
                                   "current": 941.0, "before": 1000.0, "unit": "tokens/s", "relative_change": -0.06,
                                   "pvalue": 0.0002, "why": None}]
    assert "| `throughput` | size=256 | drift (worse) | 1000 | 941 tokens/s | -6.0% | 0.0002 |" in \
        message_lib.markdown(message)
    # a message spooled before drifts were counted is still rendered
    old = dict(message, counts={"regressions": 0, "persisting_regressions": 0, "improvements": 0, "inconclusive": 0})
    assert "| 0 | 0 | 0 | 0 | 0 | 0 |" in message_lib.markdown(old)


def test_one_github_comment_per_pull_request_and_test_updated_by_later_runs(run_root, secrets):
    with serving(GitHub(GH_TOKEN)) as github:
        github.filler("team/project", 42, 130)   # two pages of other people's comments first
        settings = section(github.url)
        first = notify.notify(settings, {}, message_for(run_root), run_root, environ=secrets)
        assert [d["action"] for d in first["delivered"]] == ["created"] and not first["warnings"]
        second = notify.notify(settings, {}, message_for(run_root, failed=["size=1024"]), run_root, environ=secrets)
        assert [d["action"] for d in second["delivered"]] == ["updated"]
        ours = [c for c in github.comments[("team/project", 42)] if "perfscale.topsail verdict" in c["body"]]
        assert len(ours) == 1 and "FAILED POINTS" in ours[0]["body"] and "`size=1024`" in ours[0]["body"]
        # another test on the same pull request: a comment of its own
        other_settings = section(github.url, test_name="fine_tuning")
        other = notify.notify(other_settings, {}, message_for(run_root, settings=other_settings), run_root,
                              environ=secrets)
        assert [d["action"] for d in other["delivered"]] == ["created"]
        # the pages were followed, the token sent as a bearer token
        pages = [r["query"] for r in github.requests if r["method"] == "GET"]
        assert any("page=2" in q for q in pages)
        assert {r["headers"]["Authorization"] for r in github.requests} == {"Bearer " + GH_TOKEN}
    record = json.loads(open(os.path.join(run_root, "notifications.json")).read())
    assert record["notifiers"] == ["github"] and GH_TOKEN not in json.dumps(record)


def test_slack_one_message_per_run_in_a_thread_per_pull_request(run_root, secrets):
    with serving(Slack(SLACK_TOKEN)) as slack:
        settings = section(slack_url=slack.url)
        first = notify.notify(settings, {}, message_for(run_root), run_root, environ=secrets)
        second = notify.notify(settings, {}, message_for(run_root), run_root, environ=secrets)
        assert [d["action"] for d in first["delivered"] + second["delivered"]] == ["posted", "replied"]
        parent, reply = slack.messages["C0PERF"]
        assert parent["metadata"]["event_payload"]["pull_request"] == "team/project#42"
        assert reply["thread_ts"] == parent["ts"] and "*REGRESSION*" in reply["text"]


def test_a_bad_token_a_long_rate_limit_and_a_dead_endpoint_are_warnings_with_the_message_spooled(run_root, secrets):
    with serving(GitHub("another-token")) as github, serving(Slack(SLACK_TOKEN)) as slack:
        slack.faults.append((429, {"Retry-After": "600"}, {"ok": False, "error": "ratelimited"}))
        outcome = notify.notify(section(github.url, slack.url), {}, message_for(run_root), run_root, environ=secrets)
    assert outcome["delivered"] == []
    assert outcome["warnings"][0].startswith("notifications.github: GET %s/repos/team/project/issues/42/comments: "
                                             "401 Bad credentials" % github.url)
    assert "429 rate limited, retry after 600 s (more than max_retry_after_s 60)" in outcome["warnings"][1]
    assert sorted(os.listdir(os.path.join(run_root, "notify_spool"))) == ["github.json", "slack.json"]
    dead = notify.notify(section(dead_url()), {}, message_for(run_root), run_root, environ=secrets)
    assert "Connection refused" in dead["warnings"][0] or "refused" in dead["warnings"][0]
    spooled = open(os.path.join(run_root, "notify_spool", "github.json")).read()
    assert GH_TOKEN not in spooled and SLACK_TOKEN not in spooled
    # replay: both delivered once the services answer, the spool emptied
    with serving(GitHub(GH_TOKEN)) as github, serving(Slack(SLACK_TOKEN)) as slack:
        replayed = notify.replay(section(github.url, slack.url), {}, os.path.join(run_root, "notify_spool"),
                                 environ=secrets)
        assert sorted(d["notifier"] for d in replayed["delivered"]) == ["github", "slack"], replayed
        assert len(github.comments[("team/project", 42)]) == 1
    assert os.listdir(os.path.join(run_root, "notify_spool")) == []


def test_a_short_rate_limit_is_waited_for_once(run_root, secrets):
    waited = []
    with serving(GitHub(GH_TOKEN)) as github:
        github.faults.append((403, {"Retry-After": "3"}, {"message": "You have exceeded a secondary rate limit"}))
        outcome = notify.notify(section(github.url), {}, message_for(run_root), run_root, environ=secrets,
                                sleep=waited.append)
    assert waited == [3.0] and [d["action"] for d in outcome["delivered"]] == ["created"]


def test_a_missing_token_file_or_an_incomplete_section_is_said_in_one_line(run_root, secrets, tmp_path):
    os.remove(os.path.join(secrets["PERFSCALE_SECRETS_DIR"], "github-token"))
    outcome = notify.notify(section("http://127.0.0.1:9"), {}, message_for(run_root), run_root, environ=secrets)
    assert outcome["warnings"][0].startswith("notifications.github: secret 'github-token': cannot be read")
    with pytest.raises(Exception, match="'notifications.github': enabled: true needs repo, pr_number, token_file"):
        config_schema.read_section({"notifications": {"github": {"enabled": True}}}, "notifications")
    with pytest.raises(Exception, match="api_url 'ftp://x': expected http"):
        config_schema.read_section({"notifications": {"slack": {"api_url": "ftp://x"}}}, "notifications")


# --------------------------------------------------------------------------
# Odd answers: one line and the message spooled, never an exception out of notify (issue 41)

def spooled_reason(run_root, name):
    return json.loads(open(os.path.join(run_root, "notify_spool", "%s.json" % name)).read())["reason"]


def test_a_link_header_whose_next_page_is_not_a_number_is_a_warning_and_nothing_is_posted(run_root, secrets):
    with serving(GitHub(GH_TOKEN)) as github:
        github.faults.append((200, {"Link": '<%s/repos/team/project/issues/42/comments?page=abc>; rel="next"'
                                            % github.url}, []))
        outcome = notify.notify(section(github.url), {}, message_for(run_root), run_root, environ=secrets)
        assert github.comments.get(("team/project", 42), []) == []
    reason = ("GET %s/repos/team/project/issues/42/comments: the Link header's next page is 'abc'; "
              "expected a whole number after page 1" % github.url)
    assert outcome["warnings"] == ["notifications.github: %s (spooled: the verdict stands)" % reason]
    assert outcome["delivered"] == [] and spooled_reason(run_root, "github") == reason


def test_a_link_header_that_goes_back_is_refused_instead_of_read_forever(run_root, secrets):
    with serving(GitHub(GH_TOKEN)) as github:
        github.faults.append((200, {"Link": '<%s/x?page=1&per_page=100>; rel="next"' % github.url}, []))
        outcome = notify.notify(section(github.url), {}, message_for(run_root), run_root, environ=secrets)
    assert outcome["warnings"] == ["notifications.github: GET %s/repos/team/project/issues/42/comments: the Link "
                                   "header's next page is '1'; expected a whole number after page 1 "
                                   "(spooled: the verdict stands)" % github.url]


def test_a_marker_comment_without_an_author_or_an_id_is_not_ours_and_a_new_comment_is_posted(run_root, secrets):
    marker = message_lib.marker("llm_serving+cpu_smoke")
    with serving(GitHub(GH_TOKEN)) as github:
        github.faults.append((200, {}, [{"body": marker + "\nplanted"}]))
        outcome = notify.notify(section(github.url), {}, message_for(run_root), run_root, environ=secrets)
        assert [d["action"] for d in outcome["delivered"]] == ["created"] and outcome["warnings"] == []
        assert len(github.comments[("team/project", 42)]) == 1


def test_our_marker_comment_without_a_numeric_id_is_a_warning_and_the_message_spooled(run_root, secrets):
    marker = message_lib.marker("llm_serving+cpu_smoke")
    with serving(GitHub(GH_TOKEN)) as github:
        github.faults.append((200, {}, [{"body": marker, "user": {"login": "perfscale-bot"}, "id": "7"}]))
        outcome = notify.notify(section(github.url), {}, message_for(run_root), run_root, environ=secrets)
        assert github.comments.get(("team/project", 42), []) == []
    assert outcome["warnings"] == [
        "notifications.github: GET %s/repos/team/project/issues/42/comments: page 1, comment 1 (ours, with the "
        "marker): its id is a string; expected a whole number (spooled: the verdict stands)" % github.url]
    assert os.listdir(os.path.join(run_root, "notify_spool")) == ["github.json"]


@pytest.mark.parametrize("page, words", [
    ([None], "page 1, comment 1 is null; expected comment objects"),
    ({"message": "x"}, "page 1 is an object; expected a list of comments"),
    ([{"body": ["<!-- perfscale.topsail verdict: llm_serving+cpu_smoke -->"], "user": {"login": "perfscale-bot"},
       "id": 3}], None),
])
def test_a_comments_page_of_another_shape_is_one_line(run_root, secrets, page, words):
    with serving(GitHub(GH_TOKEN)) as github:
        github.faults.append((200, {}, page))
        outcome = notify.notify(section(github.url), {}, message_for(run_root), run_root, environ=secrets)
    if words is None:   # a body that is not text holds no marker: a comment of our own is created
        assert [d["action"] for d in outcome["delivered"]] == ["created"]
    else:
        assert outcome["warnings"] == ["notifications.github: GET %s/repos/team/project/issues/42/comments: %s "
                                       "(spooled: the verdict stands)" % (github.url, words)]


OUR_THREAD_METADATA = {"event_type": "perfscale_pull_request", "event_payload": "team/project#42"}


@pytest.mark.parametrize("history", [[{"metadata": "x"}], [{"metadata": OUR_THREAD_METADATA}]])
def test_a_slack_history_message_with_odd_metadata_is_not_our_thread(run_root, secrets, history):
    with serving(Slack(SLACK_TOKEN)) as slack:
        slack.faults.append((200, {}, {"ok": True, "messages": history}))
        outcome = notify.notify(section(slack_url=slack.url), {}, message_for(run_root), run_root, environ=secrets)
        assert [d["action"] for d in outcome["delivered"]] == ["posted"] and outcome["warnings"] == []
        assert slack.messages["C0PERF"][0]["metadata"]["event_payload"] == {"pull_request": "team/project#42"}


@pytest.mark.parametrize("answer, words", [
    ({"ok": True, "messages": [None]}, "messages[0] is null; expected message objects"),
    ({"ok": True, "messages": {"a": 1}}, "messages is an object; expected a list of messages"),
    ({"ok": False, "error": {"deep": ["x"]}}, "error (an object)"),
    ({"ok": False, "error": "invalid_auth\nsecond line"}, "invalid_auth second line"),
    ([], "the answer is a list; expected a Slack answer object"),
])
def test_a_slack_history_of_another_shape_is_one_line_and_the_message_spooled(run_root, secrets, answer, words):
    with serving(Slack(SLACK_TOKEN)) as slack:
        slack.faults.append((200, {}, answer))
        outcome = notify.notify(section(slack_url=slack.url), {}, message_for(run_root), run_root, environ=secrets)
        assert "C0PERF" not in slack.messages
    assert outcome["warnings"] == ["notifications.slack: %s/api/conversations.history: %s (spooled: the verdict "
                                   "stands)" % (slack.url, words)]
    assert outcome["delivered"] == [] and os.listdir(os.path.join(run_root, "notify_spool")) == ["slack.json"]


def test_githubs_record_survives_a_slack_failure(run_root, secrets):
    with serving(GitHub(GH_TOKEN)) as github, serving(Slack(SLACK_TOKEN)) as slack:
        slack.faults.append((200, {}, {"ok": True, "messages": [None]}))
        outcome = notify.notify(section(github.url, slack.url), {}, message_for(run_root), run_root, environ=secrets)
        comment = github.comments[("team/project", 42)][0]
    record = json.loads(open(os.path.join(run_root, "notifications.json")).read())
    assert record["delivered"] == outcome["delivered"] == [{
        "notifier": "github", "action": "created", "comment_id": comment["id"], "url": comment["html_url"],
        "target": "team/project#42"}]
    assert record["spooled"] == [os.path.join(run_root, "notify_spool", "slack.json")]
    assert os.listdir(os.path.join(run_root, "notify_spool")) == ["slack.json"]
    assert record["warnings"][0].startswith("notifications.slack: %s/api/conversations.history: " % slack.url)


def test_an_unexpected_exception_of_a_notifier_is_one_line_and_the_others_still_deliver(
        run_root, secrets, monkeypatch):
    class Broken:
        name, extra_headers = "github", {}

        def __init__(self, *_args, **_kwargs):
            pass

        def deliver(self, _message):
            raise RuntimeError("boom\n  in the middle of " + GH_TOKEN)

    monkeypatch.setitem(notify.NOTIFIERS, "github", Broken)
    with serving(Slack(SLACK_TOKEN)) as slack:
        outcome = notify.notify(section("http://127.0.0.1:9", slack.url), {}, message_for(run_root), run_root,
                                environ=secrets)
    assert outcome["warnings"] == ["notifications.github: unexpected RuntimeError: boom in the middle of ******** "
                                   "(spooled: the verdict stands)"]
    assert [d["notifier"] for d in outcome["delivered"]] == ["slack"]
    assert GH_TOKEN not in open(os.path.join(run_root, "notify_spool", "github.json")).read()


def test_a_spool_that_cannot_be_written_is_said_in_the_same_warning(run_root, secrets):
    open(os.path.join(run_root, "notify_spool"), "w").close()   # a file where the spool directory goes
    outcome = notify.notify(section(dead_url()), {}, message_for(run_root), run_root, environ=secrets)
    assert len(outcome["warnings"]) == 1 and outcome["spooled"] == []
    assert outcome["warnings"][0].endswith("(not spooled: artifact directory %s: cannot be created: File exists)"
                                           % os.path.join(run_root, "notify_spool"))
    assert "\n" not in outcome["warnings"][0]


# --------------------------------------------------------------------------
# Only our own comment or thread is edited (issue 41)

def test_someone_elses_marker_comment_is_left_alone_and_ours_is_created_then_updated(run_root, secrets):
    marker = message_lib.marker("llm_serving+cpu_smoke")
    with serving(GitHub(GH_TOKEN)) as github:
        planted = github.plant("team/project", 42, marker + "\nfake verdict: NO REGRESSION", "mallory")
        github.filler("team/project", 42, 3)
        github.plant("team/project", 42, marker + " again", "Mallory2")
        settings = section(github.url)
        first = notify.notify(settings, {}, message_for(run_root), run_root, environ=secrets)
        second = notify.notify(settings, {}, message_for(run_root, failed=["p"]), run_root, environ=secrets)
        assert [d["action"] for d in first["delivered"] + second["delivered"]] == ["created", "updated"]
        assert first["delivered"][0]["comment_id"] == second["delivered"][0]["comment_id"] != planted["id"]
        comments = github.comments[("team/project", 42)]
        assert planted["body"] == marker + "\nfake verdict: NO REGRESSION"
        ours = [c for c in comments if c["user"]["login"] == "perfscale-bot"]
        assert len(ours) == 1 and "FAILED POINTS" in ours[0]["body"]
        # who the token is: asked once per run, only when a marker comment was seen
        assert [r["path"] for r in github.requests].count("/user") == 2
        assert not [r for r in github.requests if r["method"] == "PATCH" and r["path"].endswith(str(planted["id"]))]


def test_a_login_is_compared_without_case(run_root, secrets):
    marker = message_lib.marker("llm_serving+cpu_smoke")
    with serving(GitHub(GH_TOKEN, login="PerfScale-Bot")) as github:
        github.plant("team/project", 42, marker, "perfscale-bot-2")
        ours = github.plant("team/project", 42, marker, "perfscale-bot")
        outcome = notify.notify(section(github.url), {}, message_for(run_root), run_root, environ=secrets)
    assert outcome["delivered"][0]["action"] == "updated" and outcome["delivered"][0]["comment_id"] == ours["id"]


def test_an_app_installation_token_is_told_by_its_bot_login(run_root, secrets):
    marker = message_lib.marker("llm_serving+cpu_smoke")
    with serving(GitHub(GH_TOKEN, login="perfscale-ci[bot]", app=True)) as github:
        github.plant("team/project", 42, marker, "perfscale-ci")    # the app's name without [bot]: a user's
        settings = section(github.url)
        first = notify.notify(settings, {}, message_for(run_root), run_root, environ=secrets)
        second = notify.notify(settings, {}, message_for(run_root), run_root, environ=secrets)
        assert [d["action"] for d in first["delivered"] + second["delivered"]] == ["created", "updated"]
        assert [(r["method"], r["path"]) for r in github.requests if r["path"] in ("/user", "/graphql")] == [
            ("GET", "/user"), ("POST", "/graphql")] * 2
        graphql = [r for r in github.requests if r["path"] == "/graphql"][0]
        assert graphql["body"] == {"query": "query { viewer { login } }"}


def test_github_enterprise_asks_graphql_at_api_graphql():
    from ansible_collections.perfscale.topsail.plugins.module_utils.notify import github as github_lib

    assert github_lib.graphql_url("https://ghe.example/api/v3") == "https://ghe.example/api/graphql"
    assert github_lib.graphql_url("https://ghe.example/api/v3/") == "https://ghe.example/api/graphql"
    assert github_lib.graphql_url("https://api.github.com") == "https://api.github.com/graphql"


def test_a_token_whose_account_cannot_be_told_does_not_edit_and_says_why(run_root, secrets):
    marker = message_lib.marker("llm_serving+cpu_smoke")
    with serving(GitHub(GH_TOKEN)) as github:
        github.plant("team/project", 42, marker, "perfscale-bot")
        github.faults += [(200, {}, [{"body": marker, "user": {"login": "perfscale-bot"}, "id": 5}]),
                          (200, {}, {"login": 12}),
                          (200, {}, {"errors": [{"message": "Something went wrong"}]})]
        outcome = notify.notify(section(github.url), {}, message_for(run_root), run_root, environ=secrets)
        assert not [r for r in github.requests if r["method"] in ("PATCH", "POST") and r["path"] != "/graphql"]
    assert outcome["warnings"] == [
        "notifications.github: cannot tell which account the token is: GET %s/user: the answer has no login; "
        "POST %s/graphql: the answer has no data.viewer.login (Something went wrong) (spooled: the verdict stands)"
        % (github.url, github.url)]


def test_slack_replies_only_in_a_thread_its_own_bot_started(run_root, secrets):
    metadata = {"event_type": "perfscale_pull_request", "event_payload": {"pull_request": "team/project#42"}}
    with serving(Slack(SLACK_TOKEN)) as slack:
        slack.plant("C0PERF", "a trap", metadata, user="U0MALLORY")
        slack.plant("C0PERF", "another app's trap", metadata, user="U0OTHERBOT", bot_id="B0OTHER")
        settings = section(slack_url=slack.url)
        first = notify.notify(settings, {}, message_for(run_root), run_root, environ=secrets)
        second = notify.notify(settings, {}, message_for(run_root), run_root, environ=secrets)
        assert [d["action"] for d in first["delivered"] + second["delivered"]] == ["posted", "replied"]
        ours = [m for m in slack.messages["C0PERF"] if m.get("bot_id") == "B0PERF"]
        assert len(ours) == 2 and ours[1]["thread_ts"] == ours[0]["ts"] == first["delivered"][0]["ts"]
        assert not [m for m in slack.messages["C0PERF"] if m.get("thread_ts") in
                    {m["ts"] for m in slack.messages["C0PERF"] if m["text"].endswith("trap")}]
        assert [r["path"] for r in slack.requests].count("/api/auth.test") == 2


def test_a_slack_user_token_is_told_by_its_user_id(run_root, secrets):
    metadata = {"event_type": "perfscale_pull_request", "event_payload": {"pull_request": "team/project#42"}}
    with serving(Slack(SLACK_TOKEN, user_id="U0ME", bot_id=None)) as slack:
        mine = slack.plant("C0PERF", "mine", metadata, user="U0ME")
        slack.plant("C0PERF", "someone else, newer", metadata, user="U0MALLORY")
        outcome = notify.notify(section(slack_url=slack.url), {}, message_for(run_root), run_root, environ=secrets)
    assert outcome["delivered"][0]["action"] == "replied" and outcome["delivered"][0]["thread_ts"] == mine["ts"]


def test_an_auth_test_without_a_user_id_is_one_line(run_root, secrets):
    metadata = {"event_type": "perfscale_pull_request", "event_payload": {"pull_request": "team/project#42"}}
    with serving(Slack(SLACK_TOKEN)) as slack:
        slack.plant("C0PERF", "x", metadata, user="U0PERFBOT", bot_id="B0PERF")
        slack.faults += [(200, {}, {"ok": True, "messages": list(reversed(slack.messages["C0PERF"]))}),
                         (200, {}, {"ok": True, "user_id": ["U0PERFBOT"]})]
        outcome = notify.notify(section(slack_url=slack.url), {}, message_for(run_root), run_root, environ=secrets)
    assert outcome["warnings"] == ["notifications.slack: %s/api/auth.test: user_id is a list; expected the token's "
                                   "user id (spooled: the verdict stands)" % slack.url]


def test_replay_says_in_one_line_what_is_not_a_spooled_notification(tmp_path, secrets):
    spool = tmp_path / "notify_spool"
    spool.mkdir()
    (spool / "a.json").write_text(json.dumps({"notifier": ["github"], "message": {}}))
    (spool / "b.json").write_text(json.dumps({"notifier": "teams", "message": {}}))
    (spool / "c.json").write_text("[1, 2]")
    outcome = notify.replay(section(), {}, str(spool), environ=secrets)
    assert outcome["warnings"] == [
        "%s: notifier ['github'] is not one of github, slack" % (spool / "a.json"),
        "%s: notifier 'teams' is not one of github, slack" % (spool / "b.json"),
        "%s: not a spooled notification (list indices must be integers or slices, not str)" % (spool / "c.json")]
    assert sorted(os.listdir(spool)) == ["a.json", "b.json", "c.json"]


def test_link_headers_and_answer_values_are_read_by_hand():
    from ansible_collections.perfscale.topsail.plugins.module_utils.notify import answers

    assert answers.next_link('<https://x/a?page=1>; rel="prev", <https://x/a?page=3>; rel="next"') == \
        "https://x/a?page=3"
    assert answers.next_link('<https://x/a?page=2>;rel=next') == "https://x/a?page=2"
    assert answers.next_link('<https://x/a?page=2>; rel="last"') is None
    assert answers.next_link('https://x/a?page=2; rel="next"') is None   # no angle brackets: not a link
    assert answers.next_link("<" * 200000) is None                        # linear, whatever its length
    assert answers.page_of("https://x/a?per_page=100&page=7") == "7" and answers.page_of("https://x/a") is None
    assert answers.header({"link": "a", "Other": "b"}, "Link") == "a" and answers.header({}, "Link") == ""
    assert [answers.kind(v) for v in (None, True, 3, 1.5, "s", [], {})] == [
        "null", "a boolean", "a whole number", "a number", "a string", "a list", "an object"]
    assert answers.whole_number(True) is None and answers.whole_number(12) == 12
    assert answers.one_line("a\n  b\tc") == "a b c" and answers.one_line("x" * 400) == "x" * 297 + "..."
    assert answers.link_url("https://github.com/a#1") == "https://github.com/a#1"
    assert answers.link_url("javascript:alert(1)") is None and answers.link_url("https://a\nb") is None
