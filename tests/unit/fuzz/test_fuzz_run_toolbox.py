"""run_toolbox.py's command line and the help's markup, whatever is typed: a plan (help lines, or the
playbook's extra-vars as JSON) or a one-line error, never a traceback."""

import functools
import json
import os
from unittest import mock

from hypothesis import given, strategies as st

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import cli
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import commands as toolbox
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import markup

ROLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))),
                     "roles")

TOKENS = st.sampled_from([
    "cluster", "capture_state", "deploy_operator", "nfd", "llm_load", "run", "list", "from_config", "busy_cluster",
    "gpu_operator", "deploy_from_operatorhub", "--installPlan=Manual", "--", "-h", "--help", "-e", "x=1", "-i", "inv",
    "--namespaces", "--namespaces=a,b", "--namespace=x", "--noevents", "--no-events", "--no_events", "--events",
    "--nonamespaces", "true", "false", "--tail-lines", "--tail_lines=-1", "5", "--kinds=[Pod", "--kinds=[Pod, Job]",
    "--kinds={a: [}", "--extra={channel: stable}", "--extra=[1]", "--extra={a", "--prefix", "--suffix=s", "--=",
    "---", "--catalog=c", "--manifest_name=m", "--model=m", "--url=http://h", "--stream", "--nostream", "é", "",
    "--x=\x00", "--" + "a" * 300,
]) | st.text(max_size=12)

_cached_commands = functools.lru_cache(maxsize=None)(toolbox.commands)


@given(st.lists(TOKENS, max_size=8))
def test_any_command_line_is_a_plan_or_one_line(argv):
    with mock.patch.object(toolbox, "commands", _cached_commands):
        try:
            found = cli.plan(argv, ROLES, host_variables=lambda passthrough: set())
        except PerfscaleError as exc:
            message = str(exc)
            assert message and "Traceback" not in message
            assert len(" ".join(message.split())) <= 2000
            return
    if found.lines is not None:
        assert all(isinstance(line, str) for line in found.lines)
        return
    # what ansible-playbook is given is JSON of the command and its parameters
    command_line = found.playbook_argv("ansible-playbook")
    extra_vars = json.loads(command_line[3])
    assert extra_vars["command"] in _cached_commands(ROLES, describe=False)
    assert isinstance(extra_vars["params"], dict)


PIECES = ["C(", "O(", "L(", ")", "(", ",", "\\", "x_y", "=", "#", ":", "RV(", "HORIZONTALLINE", " ", "AC("]


@given(st.text(max_size=60) | st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_any_description_renders_as_one_line_of_text(text):
    rendered = markup.plain(text, "x_")
    assert isinstance(rendered, str) and "\n" not in rendered
