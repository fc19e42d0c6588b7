"""Notifications of the verdict: GitHub's one comment per pull request and test, Slack's thread per pull
request, and every failure a warning with the message spooled - against local stand-ins of both APIs."""

import json
import os
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import notify
from ansible_collections.perfscale.topsail.plugins.module_utils.config import schema as config_schema
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
    assert message["counts"] == {"regressions": 1, "persisting_regressions": 0, "improvements": 1, "inconclusive": 1}
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
