"""The toolbox's command table: roles, aliases and what is not provided."""

import os

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import commands as toolbox
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CommandArgsError

ROLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "roles")


def test_a_command_is_either_provided_or_said_not_to_be():
    provided = set(toolbox.commands(ROLES))
    assert {"cluster deploy_operator", "llm_load run", "llm_load_test run"} <= provided
    assert provided & set(toolbox.NOT_PROVIDED) == set()


def test_unprovided_commands_and_aliases_to_them_fail_in_one_line_with_the_reason():
    with pytest.raises(CommandArgsError, match="toolbox command 'rhods deploy_addon' is not provided: .*cloud account"):
        toolbox.resolve(ROLES, "rhods deploy_addon")
    # an alias is followed, then the target is checked like any name
    assert toolbox.resolve(ROLES, "cluster   download_to_pvc") == "storage download_to_pvc"
    with pytest.raises(CommandArgsError, match="'server deploy_opensearch' is not provided: not provided yet"):
        toolbox.resolve(ROLES, "server deploy_opensearch")
    with pytest.raises(CommandArgsError, match=r"unknown toolbox command 'cluster deploy_operatr' \(did you mean 'cluster deploy_operator'\?\)"):
        toolbox.resolve(ROLES, "cluster deploy_operatr")
    assert toolbox.resolve(ROLES, "llm_load_test run") == "llm_load_test run"
