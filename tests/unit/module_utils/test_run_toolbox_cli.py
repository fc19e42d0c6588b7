"""run_toolbox.py's command line (plugins/module_utils/toolbox/cli.py): the reference's
``group command --name=value`` translated into the toolbox playbook's one extra-var, its help, and
a mistake as one line before Ansible starts."""

import io
import json
import os
import re
import stat

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CommandArgsError
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import cli
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args as command_args_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import commands as toolbox
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import markup

ROLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))),
                     "roles")
MARKUP = re.compile(r"(?<![A-Za-z0-9_])(RV|[CIBMUVOELP])\(")


def no_inventory(passthrough):
    raise AssertionError("the inventory is asked only when a required parameter is missing")


def plan(*argv, host_variables=no_inventory):
    return cli.plan(list(argv), ROLES, host_variables=host_variables)


def refused(*argv, host_variables=no_inventory):
    with pytest.raises(CommandArgsError) as caught:
        plan(*argv, host_variables=host_variables)
    return str(caught.value)


def test_the_reference_command_line_is_the_playbook_s_one_extra_var():
    found = plan("cluster", "capture_state", "--namespaces=my-ns")
    assert found.lines is None and found.passthrough == []
    assert found.extra_vars == {"command": "cluster capture_state", "params": {"namespaces": "my-ns"}}
    assert found.playbook_argv("/venv/bin/ansible-playbook") == [
        "/venv/bin/ansible-playbook", "perfscale.topsail.toolbox", "-e",
        '{"command": "cluster capture_state", "params": {"namespaces": "my-ns"}}']


def test_values_flags_and_names_as_python_fire_takes_them():
    found = plan("cluster", "capture_state", "--namespaces", "a,b", "--tail-lines", "5", "--noevents",
                 "--logs", "false", "--kinds=[Pod, Job]", "--label_selectors=[]", "--", "-e", "cluster=driver", "-v")
    # values stay the text typed (the role's type converts them), [..] and {..} are JSON/YAML
    assert found.extra_vars["params"] == {"namespaces": "a,b", "tail_lines": "5", "events": False, "logs": "false",
                                          "kinds": ["Pod", "Job"], "label_selectors": []}
    assert found.passthrough == ["-e", "cluster=driver", "-v"]
    assert plan("cluster", "capture_state", "--events").extra_vars["params"] == {"events": True}
    # --flag followed by a word that is not a boolean: the flag alone, the word is refused
    assert refused("cluster", "capture_state", "--events", "my-ns") == (
        "toolbox command 'cluster capture_state': unexpected argument 'my-ns' (a parameter is --name=value; "
        "options for ansible-playbook go after --)")
    # the role's declared types convert them as they do for -e name=value
    options = command_args_lib.role_argument_options(ROLES, "cluster_capture_state")
    checked = command_args_lib.check_parameters("cluster capture_state", "cluster_capture_state",
                                                found.extra_vars["params"], options)
    assert checked == {"namespaces": ["a", "b"], "tail_lines": 5, "events": False, "logs": False,
                       "kinds": ["Pod", "Job"], "label_selectors": []}


def test_parameters_named_like_ansible_keywords_never_become_extra_vars_of_their_own():
    found = plan("cluster", "deploy_operator", "--catalog=redhat-operators", "--manifest_name=nfd", "--namespace=nfd",
                 "--timeout=60", "--delay", "2")
    command_line = found.playbook_argv("ansible-playbook")
    assert command_line.count("-e") == 1
    assert json.loads(command_line[3]) == {"command": "cluster deploy_operator", "params": {
        "catalog": "redhat-operators", "manifest_name": "nfd", "namespace": "nfd", "timeout": "60", "delay": "2"}}


def test_the_reference_s_mixed_case_name_is_taken():
    found = plan("gpu_operator", "deploy_from_operatorhub", "--installPlan=Automatic")
    assert found.extra_vars["params"] == {"installPlan": "Automatic"}


def test_help_at_each_level():
    top = plan("--help")
    assert top.lines[0].startswith("usage: run_toolbox.py GROUP COMMAND [--PARAMETER=VALUE ...]")
    assert plan().lines == top.lines and plan("-h").lines == top.lines
    start = top.lines.index("groups (run_toolbox.py GROUP --help for their commands):")
    end = [index for index, line in enumerate(top.lines) if line.startswith("not provided here")][0]
    assert "busy_cluster" in " ".join(top.lines[end:])
    groups = [line.split()[0] for line in top.lines[start + 1:end] if not line.startswith("   ")]
    assert groups == toolbox.groups(toolbox.commands(ROLES, describe=False))
    assert any(line.startswith("  nfd            has_gpu_nodes, has_labels, wait_gpu_nodes, wait_labels")
               for line in top.lines), top.lines
    # a group: its commands, one line each
    assert plan("nfd", "--help").lines == plan("nfd").lines == [
        "nfd has_gpu_nodes   Check that NFD labelled nodes with an NVIDIA GPU",
        "nfd has_labels      Check that NFD labelled the nodes",
        "nfd wait_gpu_nodes  Wait until NFD has labelled nodes with an NVIDIA GPU",
        "nfd wait_labels     Wait until NFD has labelled the nodes"]
    # a command: its parameters as they are typed
    lines = plan("cluster", "capture_state", "--help").lines
    assert plan("cluster", "capture_state", "--", "--help").lines == lines
    assert lines[0] == "usage: run_toolbox.py cluster capture_state [--PARAMETER=VALUE ...]"
    assert lines[1].startswith("cluster capture_state: Capture objects, events and pod logs")
    assert "  --namespaces (list of str, default []): Namespaces to capture; empty captures every namespace." in lines
    assert "  --events / --noevents (bool, default true): Capture the events of the namespaces." in lines
    assert "  --tail_lines (int, default 2000): The last lines of each log (0 captures all)." in lines
    required = plan("cluster", "deploy_operator", "--help").lines[0]
    assert required == ("usage: run_toolbox.py cluster deploy_operator --catalog=... --manifest_name=... "
                        "--namespace=... [--PARAMETER=VALUE ...]")


def test_help_names_parameters_as_the_user_types_them_without_markup():
    lines = toolbox.help_lines(ROLES, "llm_load run")
    text = "\n".join(lines)
    assert ("  inference_service_kind (str, one of InferenceService|LLMInferenceService, default InferenceService): "
            "(new) The kind of `inference_service_name`.") in lines
    assert "  model (str, required): Model name sent in every request." in lines
    assert "  concurrency (int, optional): Requests in flight (concurrency; the probe of a sweep)." in lines
    assert "llm_load_run_" not in text and not MARKUP.search(text), text
    cli_lines = toolbox.help_lines(ROLES, "llm_load run", cli=True)
    assert "  --stream / --nostream (bool, default true): Stream the responses (TTFT and ITL need it)." in cli_lines
    assert any("The kind of `--inference_service_name`." in line for line in cli_lines)


def test_every_command_s_help_renders_in_the_user_s_words():
    known = toolbox.commands(ROLES)
    assert len(known) > 60
    for command, info in known.items():
        role = info["role"]
        options = (toolbox.specs(os.path.join(ROLES, role)).get("options") or {})
        for cli_style in (False, True):
            lines = toolbox.help_lines(ROLES, command, cli=cli_style, known=known)
            text = "\n".join(lines)
            assert not MARKUP.search(text), (command, MARKUP.search(text).group(0), text)
            # no role-prefixed variable (an option's own name, another option's in a description)
            assert not [name for name in options if name in text], (command, text)
            at = [index for index, line in enumerate(lines) if line.startswith("parameters:")]
            assert len(at) == 1, (command, text)
            shown = [line.split()[0] for line in lines[at[0] + 1:]]
            expected = sorted(("--" if cli_style else "") + name[len(role) + 1:] for name in options)
            assert shown == expected, (command, shown, expected)
    listing = "\n".join(toolbox.listing(ROLES))
    assert not MARKUP.search(listing)


def test_markup_renders_as_plain_text_and_backticks():
    text = ("C(a b) O(llm_load_run_url) O(llm_load_run_rate=3) O(other_x) V(mark) I(it) B(bold) M(perfscale.topsail.x) "
            "U(https://u.example) L(the doc, https://d.example) E(HOME) RV(result) P(perfscale.topsail.t#role) "
            "HORIZONTALLINE C(http(s)://host:port) C((i // n) * s) AC(not) C(unclosed")
    assert markup.plain(text, "llm_load_run_") == (
        "`a b` `url` `rate=3` `other_x` `mark` it bold `perfscale.topsail.x` https://u.example "
        "the doc (https://d.example) `HOME` `result` `perfscale.topsail.t` `http(s)://host:port` `(i // n) * s` "
        "AC(not) C(unclosed")
    assert markup.plain("O(x_url) and O(x_rate=2)", "x_", lambda name, value: "--" + name + (
        "" if value is None else "=" + value)) == "`--url` and `--rate=2`"


def test_a_mistake_is_one_line_before_anything_runs():
    assert refused("cluster", "capture_state", "--namespace=x") == (
        "toolbox command 'cluster capture_state': unknown parameter 'namespace' (did you mean 'namespaces'?); its "
        "parameters: artifact_dir_suffix, events, kinds, label_selectors, logs, namespaces, tail_lines")
    assert refused("cluster", "capture_state", "--namespace", "x").startswith(
        "toolbox command 'cluster capture_state': unknown parameter 'namespace' (did you mean 'namespaces'?)")
    assert refused("cluster", "capture_state", "--tail-lines=many") == (
        "toolbox command 'cluster capture_state': parameter 'tail_lines': expected int, got 'many'")
    assert refused("cluster", "capture_stat") == (
        "unknown toolbox command 'cluster capture_stat' (did you mean 'cluster capture_state'?); 'run_toolbox.py "
        "--help' lists the %d commands" % len(toolbox.commands(ROLES, describe=False)))
    assert refused("clustr", "--help").startswith("unknown toolbox command 'clustr' (did you mean 'cluster'?)")
    assert refused("busy_cluster").startswith("toolbox group 'busy_cluster' is not provided: a deprecated project")
    assert refused("cluster", "capture_state", "x") == (
        "run_toolbox.py: unexpected argument 'x' after the command 'cluster capture_state' (a parameter is "
        "--name=value)")
    assert refused("cluster", "capture_state", "--namespaces") == (
        "toolbox command 'cluster capture_state': parameter 'namespaces' needs a value (--namespaces=VALUE)")
    assert refused("host", "capture_environment", "--gpu", "--gpu=false") == (
        "toolbox command 'host capture_environment': parameter 'gpu' given twice")
    assert refused("cluster", "capture_state", "--kinds=[Pod") == (
        "toolbox command 'cluster capture_state': --kinds: expected JSON/YAML text, got '[Pod' (while parsing a flow "
        "sequence)")
    assert refused("--namespaces=x") == (
        "run_toolbox.py: expected GROUP COMMAND before '--namespaces=x'; 'run_toolbox.py --help' lists the groups")
    assert refused("nfd", "--x=1") == (
        "run_toolbox.py: expected a command of the group 'nfd' before '--x=1'; run_toolbox.py nfd --help lists them")


def test_a_required_parameter_counts_as_given_when_the_inventory_sets_it():
    asked = []

    def inventory(defined):
        def variables(passthrough):
            asked.append(passthrough)
            return defined
        return variables

    argv = ("cluster", "deploy_operator", "--catalog=redhat-operators")
    assert refused(*argv, host_variables=inventory(set())) == (
        "toolbox command 'cluster deploy_operator': missing required parameter(s) manifest_name, namespace "
        "(--manifest_name=...)")
    found = plan(*argv, "--", "-i", "inv.yml", host_variables=inventory(
        {"cluster_deploy_operator_manifest_name", "cluster_deploy_operator_namespace"}))
    assert found.extra_vars["params"] == {"catalog": "redhat-operators"}
    assert asked == [[], ["-i", "inv.yml"]]
    # the inventory cannot say (ansible-inventory failed), or extra-vars may set them: the playbook decides
    assert plan(*argv, host_variables=inventory(None)).extra_vars is not None
    for extra in (["-e", "@vars.yml"], ["-e", '{"a": 1}'], ["--extra-vars=cluster_deploy_operator_namespace=x"],
                  ["-ecluster_deploy_operator_manifest_name=m"]):
        assert plan(*argv, "--", *extra).extra_vars is not None
    # other extra-vars set no role variable: the inventory is asked
    asked.clear()
    assert refused(*argv, "--", "-e", "artifact_dir=/tmp/x", host_variables=inventory(set())).startswith(
        "toolbox command 'cluster deploy_operator': missing required parameter(s) manifest_name, namespace")
    assert asked == [["-e", "artifact_dir=/tmp/x"]]


def test_from_config_takes_its_prefix_suffix_and_extra():
    found = plan("from_config", "cluster", "deploy_operator", "--suffix=cluster_demo", "--extra={channel: stable}")
    assert found.extra_vars == {"command": "cluster deploy_operator", "params": {"channel": "stable"},
                                "from_config": True, "suffix": "cluster_demo"}
    assert refused("from_config", "cluster", "deploy_operator", "--channel=stable") == (
        "run_toolbox.py from_config cluster deploy_operator: unknown option '--channel'; its options: --prefix, "
        "--suffix, --extra (the command's parameters go in --extra='{name: value}')")
    assert refused("from_config", "cluster", "deploy_operator", "--extra={chanel: stable}").startswith(
        "toolbox command 'cluster deploy_operator': unknown parameter 'chanel' (did you mean 'channel'?)")
    assert refused("from_config", "cluster", "deploy_operator", "--extra=[1]") == (
        "--extra: expected a mapping of dotted keys to values, got list")


def test_main_shows_help_refuses_in_one_line_or_runs_the_playbook_with_its_exit_code():
    ran = []

    def execute(found):
        ran.append(found.extra_vars)
        return 4

    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["cluster", "capture_state", "--namespace=x"], ROLES, execute, no_inventory, out, err) == 2
    assert err.getvalue().count("\n") == 1 and "did you mean 'namespaces'" in err.getvalue()
    assert out.getvalue() == "" and ran == []
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["nfd"], ROLES, execute, no_inventory, out, err) == 0
    assert out.getvalue().splitlines()[0].startswith("nfd has_gpu_nodes") and err.getvalue() == "" and ran == []
    assert cli.main(["cluster", "capture_state", "--namespaces=a"], ROLES, execute, no_inventory, out, err) == 4
    assert ran == [{"command": "cluster capture_state", "params": {"namespaces": "a"}}]


def test_inventory_variables_asks_ansible_inventory_and_says_when_it_cannot(tmp_path):
    program = tmp_path / "ansible-inventory"
    # the variables' names it prints are its arguments, and one of the inventory's
    program.write_text("#!/bin/sh\nprintf '{\"%s\": 1, \"cluster_x_y\": 2}' \"$*\"\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    assert cli.inventory_variables(str(program), ["-v", "-i", "a.yml", "--inventory=b.yml", "-ic.yml"]) == {
        "-i a.yml --inventory=b.yml -i c.yml --host localhost", "cluster_x_y"}
    bad = tmp_path / "bad"
    bad.write_text("#!/bin/sh\necho not json\n")
    bad.chmod(0o755)
    assert cli.inventory_variables(str(bad), []) is None
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    assert cli.inventory_variables(str(failing), []) is None
    assert cli.inventory_variables(str(tmp_path / "missing"), []) is None
