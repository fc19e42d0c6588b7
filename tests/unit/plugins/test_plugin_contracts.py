"""Plugins are documented adapters: docs, argument specs and role specs agree."""

import ast
import glob
import importlib
import os

import pytest
import yaml

from ansible_collections.perfscale.topsail.plugins.plugin_utils import kube_action

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PREFIX = "ansible_collections.perfscale.topsail.plugins"


def doc_strings(path):
    tree = ast.parse(open(path).read())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in ("DOCUMENTATION", "EXAMPLES", "RETURN"):
                found[node.targets[0].id] = ast.literal_eval(node.value)
    return found


def plugin_files(kind):
    return sorted(p for p in glob.glob(os.path.join(REPO, "plugins", kind, "*.py")) if not p.endswith("__init__.py"))


@pytest.mark.parametrize("path", plugin_files("modules") + plugin_files("lookup") + plugin_files("filter"),
                         ids=os.path.basename)
def test_modules_and_lookups_have_documentation_examples_and_return(path):
    docs = doc_strings(path)
    assert set(docs) == {"DOCUMENTATION", "EXAMPLES", "RETURN"}, path
    documentation = yaml.safe_load(docs["DOCUMENTATION"])
    assert documentation.get("short_description")
    yaml.safe_load(docs["EXAMPLES"])
    yaml.safe_load(docs["RETURN"])


@pytest.mark.parametrize("path", plugin_files("callback"), ids=os.path.basename)
def test_callbacks_are_documented(path):
    documentation = yaml.safe_load(doc_strings(path)["DOCUMENTATION"])
    assert documentation["type"] in ("notification", "aggregate", "stdout")


def _normalise_doc_option(option):
    spec = {"type": option.get("type", "str")}
    for key in ("default", "choices", "elements", "required"):
        if key in option and not (key == "required" and option[key] is False):
            spec[key] = option[key]
    return spec


def _normalise_spec_option(option):
    # a default of None is no default, as Ansible's argument spec validation reads it
    spec = {"type": option.get("type", "str")}
    for key in ("default", "choices", "elements", "required"):
        if key in option and not (key == "required" and option[key] is False) and not (key == "default" and option[key] is None):
            spec[key] = option[key]
    return spec


@pytest.mark.parametrize("path", plugin_files("action"), ids=os.path.basename)
def test_action_argument_spec_matches_module_documentation(path):
    name = os.path.splitext(os.path.basename(path))[0]
    module_doc = os.path.join(REPO, "plugins", "modules", name + ".py")
    assert os.path.exists(module_doc), "action %s has no documentation stub in plugins/modules" % name
    options = yaml.safe_load(doc_strings(module_doc)["DOCUMENTATION"]).get("options") or {}
    action = importlib.import_module("%s.action.%s" % (PREFIX, name))
    if issubclass(action.ActionModule, kube_action.WorkerModuleAction):
        # it runs the module's own run(), validated with the module's own spec (validate-modules holds it
        # to the documentation)
        assert not hasattr(action, "ARGUMENT_SPEC"), name
        return
    spec = action.ARGUMENT_SPEC
    assert sorted(spec) == sorted(options)
    for option in spec:
        assert _normalise_spec_option(spec[option]) == _normalise_doc_option(options[option]), option


ROLES = sorted(d for d in glob.glob(os.path.join(REPO, "roles", "*")) if os.path.isdir(d))


@pytest.mark.parametrize("role_dir", ROLES, ids=os.path.basename)
def test_role_variables_are_prefixed_documented_and_defaults_agree(role_dir):
    role = os.path.basename(role_dir)
    specs = yaml.safe_load(open(os.path.join(role_dir, "meta", "argument_specs.yml")))
    options = specs["argument_specs"]["main"]["options"]
    defaults_path = os.path.join(role_dir, "defaults", "main.yml")
    defaults = yaml.safe_load(open(defaults_path)) if os.path.exists(defaults_path) else {}
    for name, option in options.items():
        assert name.startswith(role + "_"), name
        assert option.get("description"), name
        if not option.get("required"):
            assert name in defaults, "%s: optional parameter without a default" % name
            assert option.get("default") == defaults[name], name
    for name in defaults:
        assert name in options, "%s: default without documentation in argument_specs" % name


# roles that are machinery, not toolbox commands
INFRASTRUCTURE_ROLES = {"toolbox_command", "toolbox_from_config", "test_flow"}
TOOLBOX_ROLES = [d for d in ROLES if os.path.basename(d) not in INFRASTRUCTURE_ROLES]


def _rendered_command_args():
    from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config

    resolved = config.resolve_config(os.path.join(REPO, "config", "config.yaml"))
    return command_args.load_command_args(os.path.join(REPO, "config", "command_args.yml.j2"), resolved.config)


def toolbox_command_name(role_dir):
    """The 'group command' a toolbox role's tasks/main.yml hands to the skeleton."""
    tasks = yaml.safe_load(open(os.path.join(role_dir, "tasks", "main.yml")))
    assert isinstance(tasks, list) and len(tasks) == 1, "tasks/main.yml must only include the skeleton"
    include = tasks[0].get("ansible.builtin.include_role") or {}
    assert include.get("name") == "perfscale.topsail.toolbox_command", "tasks/main.yml must include the skeleton"
    return tasks[0]["vars"]["toolbox_command_name"]


@pytest.mark.parametrize("role_dir", TOOLBOX_ROLES, ids=os.path.basename)
def test_toolbox_role_is_specs_steps_and_a_command_args_entry(role_dir):
    role = os.path.basename(role_dir)
    assert os.path.exists(os.path.join(role_dir, "meta", "argument_specs.yml")), "%s lacks argument specs" % role
    name = toolbox_command_name(role_dir)
    assert name.replace(" ", "_") == role and len(name.split()) == 2, "%s runs as '%s'" % (role, name)
    assert os.path.exists(os.path.join(role_dir, "tasks", "steps.yml")), "%s lacks tasks/steps.yml" % role
    assert name in _rendered_command_args(), "config/command_args.yml.j2 has no entry '%s'" % name
