import os

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args as ca
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg

REPO = os.path.join(os.path.dirname(__file__), "..", "..", "..")
ROLES = os.path.join(REPO, "roles")

TEMPLATE = """
host capture_environment:
  gpu: {{ tests.gpu | to_json }}
  packages: {{ tests.packages | to_json }}

sutest/cluster set_scale:
  name: {{ clusters.sutest.name }}
  scale: SET_AT_RUNTIME

driver/cluster set_scale:
  name: {{ clusters.driver.name }}
  scale: SET_AT_RUNTIME

cluster set_scale/big:
  name: big-{{ clusters.sutest.name }}
  scale: 10
"""

CONFIG = {
    "tests": {"gpu": False, "packages": ["numpy"]},
    "clusters": {"sutest": {"name": "workers"}, "driver": {"name": "drivers"}},
}


@pytest.fixture
def rendered():
    return ca.render_command_args(TEMPLATE, CONFIG)


def test_renders_entries_from_configuration(rendered):
    assert ca.command_args(rendered, "host", "capture_environment") == {"gpu": False, "packages": ["numpy"]}


def test_prefix_and_suffix_select_the_entry(rendered):
    assert ca.command_args(rendered, "cluster", "set_scale", prefix="driver", extra={"scale": 1}) == {"name": "drivers", "scale": 1}
    assert ca.command_args(rendered, "cluster", "set_scale", suffix="big") == {"name": "big-workers", "scale": 10}


def test_extra_wins(rendered):
    params = ca.command_args(rendered, "host", "capture_environment", extra={"gpu": True})
    assert params["gpu"] is True


def test_placeholder_left_is_an_error(rendered):
    with pytest.raises(errors.CommandArgsError, match=r"'sutest/cluster set_scale': parameter\(s\) scale still set to SET_AT_RUNTIME"):
        ca.command_args(rendered, "cluster", "set_scale", prefix="sutest")


def test_unknown_entry_lists_known_ones(rendered):
    with pytest.raises(errors.CommandArgsError) as error:
        ca.command_args(rendered, "cluster", "set_scale", prefix="sutset")
    message = str(error.value)
    assert "no entry 'sutset/cluster set_scale' (did you mean 'sutest/cluster set_scale'?)" in message
    assert "known entries: cluster set_scale/big, driver/cluster set_scale, host capture_environment, sutest/cluster set_scale" in message


def test_unknown_parameter_for_the_role(rendered):
    with pytest.raises(errors.CommandArgsError, match=r"unknown parameter\(s\) colour for role host_capture_environment; known parameters: gpu, packages"):
        ca.command_args(rendered, "host", "capture_environment", extra={"colour": 1}, known_params=["gpu", "packages"])


def test_missing_config_key_in_template_is_named():
    with pytest.raises(errors.CommandArgsError, match=r"'dict object' has no attribute 'sutest'"):
        ca.render_command_args(TEMPLATE, {"tests": CONFIG["tests"], "clusters": {}})


def test_malformed_entry_key_is_refused():
    with pytest.raises(errors.CommandArgsError, match=r"expected '\[prefix/\]group command\[/suffix\]'"):
        ca.render_command_args("just_one_word:\n  a: 1\n", {})


def test_template_syntax_error_has_line():
    with pytest.raises(errors.CommandArgsError, match=r"line 2"):
        ca.render_command_args("a b:\n  x: {{ oops\n", {})


def test_shipped_template_renders_for_shipped_config_and_matches_role_specs():
    config = cfg.resolve_config(os.path.join(REPO, "config", "config.yaml")).config
    rendered = ca.load_command_args(os.path.join(REPO, "config", "command_args.yml.j2"), config)
    assert rendered
    for key in rendered:
        _prefix, group, command, _suffix = ca.parse_entry_key(key)
        role = "%s_%s" % (group, command)
        options = ca.role_argument_options(ROLES, role)
        known = ca.known_parameters(role, options)
        params = dict(rendered[key] or {})
        params = {k: (1 if v == ca.PLACEHOLDER else v) for k, v in params.items()}
        rendered[key] = params
        ca.command_args(rendered, group, command, *ca.parse_entry_key(key)[::3], known_params=known)
        assert set(ca.role_variables(role, params, options)) <= set(options)


def test_unknown_role_lists_available_roles():
    with pytest.raises(errors.CommandArgsError, match=r"toolbox role 'host_nothing' does not exist; available roles: .*host_capture_environment"):
        ca.role_argument_options(ROLES, "host_nothing")


def test_role_defaults_come_from_argument_specs():
    options = ca.role_argument_options(ROLES, "host_capture_environment")
    defaults = ca.role_defaults(options)
    assert defaults["host_capture_environment_gpu"] is True
    assert defaults["host_capture_environment_artifact_dir_suffix"] == ""


# --------------------------------------------------------------------------
# the parameters a user typed, checked in the command's words


def capture_state_options():
    return ca.role_argument_options(ROLES, "cluster_capture_state")


@pytest.mark.parametrize("params, message", [
    ({"namespacez": ["a"]}, "toolbox command 'cluster capture_state': unknown parameter 'namespacez' (did you mean "
                            "'namespaces'?); its parameters: artifact_dir_suffix, events, kinds, label_selectors, logs, "
                            "namespaces, tail_lines"),
    ({"tail_lines": "many"}, "toolbox command 'cluster capture_state': parameter 'tail_lines': expected int, got 'many'"),
    ({"events": "maybe"}, "toolbox command 'cluster capture_state': parameter 'events': expected bool, got 'maybe'"),
])
def test_a_wrong_parameter_is_one_line_in_the_commands_words(params, message):
    with pytest.raises(errors.CommandArgsError) as raised:
        ca.check_parameters("cluster capture_state", "cluster_capture_state", params, capture_state_options())
    assert str(raised.value) == message
    assert "cluster_capture_state_" not in str(raised.value)


def test_parameters_are_converted_to_their_declared_types():
    checked = ca.check_parameters("cluster capture_state", "cluster_capture_state",
                                  {"namespaces": "a,b", "tail_lines": "12", "events": "no"}, capture_state_options())
    assert checked == {"namespaces": ["a", "b"], "tail_lines": 12, "events": False}


def test_required_parameters_and_choices_are_named():
    options = ca.role_argument_options(ROLES, "cluster_deploy_operator")
    with pytest.raises(errors.CommandArgsError, match=r"missing required parameter\(s\) manifest_name, namespace "
                                                      r"\(-e manifest_name=...\)"):
        ca.check_parameters("cluster deploy_operator", "cluster_deploy_operator", {"catalog": "c"}, options)
    # a required parameter the inventory already set, or one the configuration supplies, is not asked for
    ca.check_parameters("cluster deploy_operator", "cluster_deploy_operator", {"catalog": "c", "namespace": "n"},
                        options, defined={"cluster_deploy_operator_manifest_name": "m"})
    ca.check_parameters("cluster deploy_operator", "cluster_deploy_operator", {}, options, check_required=False)
    with pytest.raises(errors.CommandArgsError, match="parameter 'installplan_approval' must be one of: Manual, "
                                                      "Automatic, got: sometimes"):
        ca.check_parameters("cluster deploy_operator", "cluster_deploy_operator", {"installplan_approval": "sometimes"},
                            options, check_required=False)


def test_extra_vars_named_like_parameters_are_taken_and_near_misses_refused():
    options = capture_state_options()
    taken = ca.parameters_from_extra_vars("cluster capture_state", "cluster_capture_state", options,
                                          {"namespaces": "[a, b]", "tail_lines": "5", "my_inventory_var": "x"})
    assert taken == {"namespaces": ["a", "b"], "tail_lines": "5"}
    with pytest.raises(errors.CommandArgsError, match=r"-e namespace=...: unknown parameter 'namespace' \(did you "
                                                      r"mean 'namespaces'\?\)"):
        ca.parameters_from_extra_vars("cluster capture_state", "cluster_capture_state", options, {"namespace": "a"})
    with pytest.raises(errors.CommandArgsError, match="-e namespaces: expected JSON/YAML text"):
        ca.parameters_from_extra_vars("cluster capture_state", "cluster_capture_state", options, {"namespaces": "[a, "})


def test_a_reference_parameter_name_is_taken_under_its_option():
    options = ca.role_argument_options(ROLES, "gpu_operator_deploy_from_operatorhub")
    checked = ca.check_parameters("gpu_operator deploy_from_operatorhub", "gpu_operator_deploy_from_operatorhub",
                                  {"installPlan": "Automatic"}, options)
    assert checked == {"installplan": "Automatic"}
    assert ca.role_variables("gpu_operator_deploy_from_operatorhub", checked, options) == {
        "gpu_operator_deploy_from_operatorhub_installplan": "Automatic"}
