import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.config import launch_args
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError

COMMENT = """Please test this with the smoke preset.

/test llm_serving cpu_smoke cpt
/var tests.benchmark.timeout_s: 1200
/var tests.benchmark.matrix.factors: {size: [256, 512]}
/only prepare,test
/skip cleanup_before
thanks!
"""


def test_a_comment_gives_job_presets_overrides_and_steps():
    parsed = launch_args.parse(COMMENT, "comment")
    assert parsed.as_dict() == {"source": "comment", "job": "llm_serving", "presets": ["cpu_smoke", "cpt"],
                                "overrides": {"tests.benchmark.timeout_s": 1200,
                                              "tests.benchmark.matrix.factors": {"size": [256, 512]}},
                                "steps": ["prepare", "test"], "skip": ["cleanup_before"]}
    assert launch_args.parse("just prose\n").empty()


def test_the_pull_request_the_verdict_goes_to():
    assert launch_args.parse("/pr 123").overrides == {"notifications.github.pr_number": 123}
    assert launch_args.parse("/pr #7").overrides == {"notifications.github.pr_number": 7}
    assert launch_args.parse("/pr team/project#45").overrides == {"notifications.github.pr_number": 45,
                                                                  "notifications.github.repo": "team/project"}


@pytest.mark.parametrize("text, message", [
    ("/tset job", "comment line 1: unknown directive /tset (expected one of /test, /var, /only, /skip, /pr)"),
    ("/pr twelve", "comment line 1: expected /pr <number> or /pr owner/name#<number>, got '/pr twelve'"),
    ("/pr team/project#0", "comment line 1: expected /pr <number> or /pr owner/name#<number>"),
    ("/test a\n/test b", "comment line 2: a second /test line (one job per launch)"),
    ("/test", "comment line 1: /test needs a job name, then presets: /test <job> [preset ...]"),
    ("/var tests.x 3", "comment line 1: expected /var dotted.key: value, got '/var tests.x 3'"),
    ("/var tests.x: [1, 2", "comment line 1: /var tests.x: the value is not valid YAML"),
    ("\n\n/only", "comment line 3: /only needs step names"),
])
def test_a_wrong_line_is_one_error_naming_it(text, message):
    with pytest.raises(ConfigError) as raised:
        launch_args.parse(text, "comment")
    assert str(raised.value).startswith(message)
