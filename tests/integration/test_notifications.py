"""The verdict where the team looks: a benchmark run posts it to the pull request (one comment, updated by
the next run) and to Slack (the next run in the pull request's thread); a refused token is a warning, the
message spooled and sent by notify.yml; the tokens are nowhere in the tree or the output."""

import json
import os
import sys

from helpers import REPO, grep_tree, run_playbook

sys.path.insert(0, os.path.join(REPO, "tests"))
from notify_servers import GitHub, Slack, serving  # noqa: E402  pylint: disable=wrong-import-position

GH_TOKEN = "ghp_IntegrationToken5f3e2d1c0b9a"
SLACK_TOKEN = "xoxb-integration-token-41d8cd98f00b"
MATRIX = {"factors": {"indicator": "matmul", "size": [64], "dtype": "float32"},
          "common_settings": {"backend": "numpy", "reps": 3, "warmup": 1}}


def overrides(github, slack, base, **extra):
    values = {"notifications.github.enabled": True, "notifications.github.api_url": github.url,
              "notifications.github.repo": "team/project", "notifications.github.pr_number": 7,
              "notifications.github.token_file": "github-token",
              "notifications.slack.enabled": True, "notifications.slack.api_url": slack.url + "/api",
              "notifications.slack.channel": "C0PERF", "notifications.slack.token_file": "slack-token",
              "tests.benchmark.matrix": MATRIX, "export.sqlite.path": str(base / "results.sqlite")}
    values.update(extra)
    return "overrides=%s" % json.dumps(values)


def secrets(base, github_token=GH_TOKEN):
    directory = base / "secrets"
    directory.mkdir(exist_ok=True)
    (directory / "github-token").write_text(github_token)
    (directory / "slack-token").write_text(SLACK_TOKEN)
    return {"PERFSCALE_SECRETS_DIR": str(directory), "XDG_DATA_HOME": str(base / "data")}


def test_two_runs_one_comment_updated_and_a_slack_thread(tmp_path):
    with serving(GitHub(GH_TOKEN)) as github, serving(Slack(SLACK_TOKEN)) as slack:
        env = secrets(tmp_path)
        for index in (1, 2):
            run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e",
                               "artifact_dir=%s" % (tmp_path / ("run%d" % index)), "-e", overrides(github, slack, tmp_path),
                               env=env)
            assert run.returncode == 0, run.output[-3000:]
            record = json.loads((tmp_path / ("run%d" % index) / "notifications.json").read_text())
            expected = ["created", "posted"] if index == 1 else ["updated", "replied"]
            assert [d["action"] for d in record["delivered"]] == expected, record
        comments = github.comments[("team/project", 7)]
        assert len(comments) == 1
        body = comments[0]["body"]
        assert body.startswith("<!-- perfscale.topsail verdict: cpu_smoke -->")
        assert "Reports: `plots/reports_index.html`" in body or "reports_index.html" in body
        parent, reply = slack.messages["C0PERF"]
        assert reply["thread_ts"] == parent["ts"]
    record = json.loads((tmp_path / "run2" / "notifications.json").read_text())
    assert [d["action"] for d in record["delivered"]] == ["updated", "replied"]
    for tree_root in ("run1", "run2", "data"):
        assert grep_tree(str(tmp_path / tree_root), GH_TOKEN) == [] and grep_tree(str(tmp_path / tree_root), SLACK_TOKEN) == []
    assert GH_TOKEN not in run.output and SLACK_TOKEN not in run.output


def test_a_refused_token_is_a_warning_and_notify_yml_sends_the_spooled_message(tmp_path):
    with serving(GitHub(GH_TOKEN)) as github, serving(Slack(SLACK_TOKEN)) as slack:
        env = secrets(tmp_path, github_token="ghp_WrongTokenForThisTest000")
        root = tmp_path / "run"
        run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root,
                           "-e", overrides(github, slack, tmp_path), env=env)
        # the verdict stands: a failure to notify is a warning
        assert run.returncode == 0, run.output[-3000:]
        assert "notifications.github: GET %s/repos/team/project/issues/7/comments: 401 Bad credentials" % github.url \
            in run.flat
        assert os.listdir(root / "notify_spool") == ["github.json"]
        env = secrets(tmp_path)
        again = run_playbook("playbooks/notify.yml", "-e", "spool_dir=%s" % (root / "notify_spool"), "-e",
                             overrides(github, slack, tmp_path), env=env)
        assert again.returncode == 0, again.output[-3000:]
        assert "Send the spooled notifications again" in again.flat
        assert len(github.comments[("team/project", 7)]) == 1
    assert os.listdir(root / "notify_spool") == []
    assert grep_tree(str(tmp_path / "run"), "ghp_WrongTokenForThisTest000") == []


def test_an_odd_slack_answer_is_a_warning_githubs_comment_is_kept_and_the_verdict_still_fails_the_run(tmp_path):
    scripted = os.path.join(REPO, "tests", "fixtures", "indicators", "scripted.py")
    with serving(GitHub(GH_TOKEN)) as github, serving(Slack(SLACK_TOKEN)) as slack:
        slack.faults.append((200, {}, {"ok": True, "messages": [None]}))
        root = tmp_path / "run"
        run = run_playbook("playbooks/benchmark.yml", "-e", "artifact_dir=%s" % root,
                           "-e", overrides(github, slack, tmp_path, **{
                               "tests.capture_environment.enabled": False,
                               "tests.benchmark.fail_on_point_failure": True,
                               "tests.benchmark.indicators": {"scripted": {"command": [sys.executable, scripted]}},
                               "tests.benchmark.matrix": {"factors": {"indicator": "scripted", "mode": ["ok", "fail"]},
                                                          "common_settings": {}, "include": [], "exclude": []}}),
                           env=secrets(tmp_path))
        comments = github.comments[("team/project", 7)]
    # the run fails for its own verdict (a failed point), not for the notification
    assert run.returncode != 0 and "1 benchmark point(s) failed: mode=fail" in run.flat, run.output[-3000:]
    assert "Traceback" not in run.output
    assert "notifications.slack: %s/api/conversations.history: messages[0] is null; expected message objects " \
           "(spooled: the verdict stands)" % slack.url in run.flat
    record = json.loads((root / "notifications.json").read_text())
    assert [(d["notifier"], d["action"], d["comment_id"]) for d in record["delivered"]] == [
        ("github", "created", comments[0]["id"])]
    assert "FAILED POINTS" in comments[0]["body"]
    assert os.listdir(root / "notify_spool") == ["slack.json"]
    assert grep_tree(str(root), GH_TOKEN) == [] and grep_tree(str(root), SLACK_TOKEN) == []
