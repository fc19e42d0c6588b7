"""Where the cluster tasks run (plugins/plugin_utils/kube_action.py): in the controller's worker only
when the module's process would have run on the controller as the same user, in its foreground; the
task's environment is the worker's for the task only; perfscale.topsail.k8s's stand-in for AnsibleModule
validates, masks and ends as AnsibleModule does. tests/cluster/test_kube_tasks_in_controller.py and
test_k8s_in_controller.py run the tasks both ways on kubesim (the latter against kubernetes.core.k8s)."""

import os
import types

import pytest

from ansible_collections.kubernetes.core.plugins.module_utils import args_common
from ansible_collections.kubernetes.core.plugins.modules import k8s as kubernetes_core_k8s
from ansible_collections.perfscale.topsail.plugins.action import k8s_read
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import objects
from ansible_collections.perfscale.topsail.plugins.plugin_utils import kube_action


class Templar:
    @staticmethod
    def template(value):
        return value


def action(transport="local", become=False, async_val=0):
    made = object.__new__(k8s_read.ActionModule)
    made._connection = types.SimpleNamespace(transport=transport)
    made._play_context = types.SimpleNamespace(become=become, check_mode=False)
    made._task = types.SimpleNamespace(async_val=async_val)
    made._templar = Templar()
    return made


@pytest.mark.parametrize("made, task_vars, here", [
    (action(), {}, True),
    (action(), {"perfscale_kube_tasks_in_controller": "false"}, False),
    (action(), {"perfscale_kube_tasks_in_controller": True}, True),
    (action(transport="ssh"), {}, False),
    (action(become=True), {}, False),
    (action(async_val=60), {}, False),
], ids=["local", "variable false", "variable true", "ssh", "become", "async"])
def test_the_task_runs_in_the_worker_only_where_its_module_would_run_on_the_controller(made, task_vars, here):
    assert kube_action.runs_in_worker(made, task_vars) is here


def test_the_task_environment_is_the_worker_s_while_the_task_runs(monkeypatch):
    monkeypatch.setenv("PERFSCALE_TEST_KEPT", "before")
    monkeypatch.delenv("PERFSCALE_TEST_ADDED", raising=False)
    with kube_action._TaskEnvironment({"PERFSCALE_TEST_KEPT": "during", "PERFSCALE_TEST_ADDED": 3}):
        assert os.environ["PERFSCALE_TEST_KEPT"] == "during" and os.environ["PERFSCALE_TEST_ADDED"] == "3"
    assert os.environ["PERFSCALE_TEST_KEPT"] == "before" and "PERFSCALE_TEST_ADDED" not in os.environ


def test_k8s_takes_the_options_of_the_installed_kubernetes_core_k8s(monkeypatch):
    """perfscale.topsail.k8s builds kubernetes.core.k8s's argument spec from kubernetes.core's module_utils (its
    module file cannot be imported by another collection's module): it must stay the installed one's, and so
    must the options that exclude each other (what kubernetes.core.k8s's main() gives its module)."""
    given = {}

    class Stop(Exception):
        pass

    def module(**kwargs):
        given.update(kwargs)
        raise Stop

    monkeypatch.setattr(kubernetes_core_k8s, "AnsibleK8SModule", module)
    with pytest.raises(Stop):
        kubernetes_core_k8s.main()
    ours, theirs = objects.argument_spec(), given["argument_spec"]
    assert theirs == kubernetes_core_k8s.argspec()
    # the one difference: resource_definition's type, a function there (list_dict_str), raw here and checked
    # the same way by objects.definition_type_error
    assert theirs["resource_definition"]["type"] is args_common.list_dict_str
    assert ours.pop("resource_definition") == dict(theirs.pop("resource_definition"), type="raw")
    assert ours == theirs
    assert objects.MUTUALLY_EXCLUSIVE == given["mutually_exclusive"]
    assert given["supports_check_mode"] is True


def worker_module(args, check_mode=False):
    return kube_action.WorkerModule(objects.argument_spec(), objects.MUTUALLY_EXCLUSIVE, True, args=args,
                                    name="perfscale.topsail.k8s", check_mode=check_mode, diff=False)


def ended(call):
    with pytest.raises(kube_action.ModuleExit) as done:
        call()
    return done.value.result


def test_the_worker_module_validates_as_ansible_module_does():
    module = worker_module({"kind": "ConfigMap", "name": "x", "wait": "yes", "all": False})
    assert module.params["wait"] is True and module.params["state"] == "present" and module.params["delete_all"] is False
    bad = ended(lambda: worker_module({"kind": "ConfigMap", "bogus": 1}))
    assert bad["failed"] and bad["msg"].startswith("Unsupported parameters for (perfscale.topsail.k8s) module: bogus.")
    wrong = ended(lambda: worker_module({"kind": "ConfigMap", "state": "gone"}))
    assert wrong["failed"] and "value of state must be one of: present, absent, patched, got: gone" in wrong["msg"]
    both = ended(lambda: worker_module({"name": "x", "generate_name": "x-"}))
    assert both["msg"] == "parameters are mutually exclusive: name|generate_name"


def test_the_worker_module_masks_no_log_values_and_keeps_warnings(tmp_path):
    secret = "s3cr3t-t0ken-value"
    module = worker_module({"kind": "ConfigMap", "api_key": secret, "persist_config": False})
    module.warn("first")
    path = tmp_path / "left"
    path.write_text("x")
    module.add_cleanup_file(str(path))
    result = ended(lambda: module.exit_json(changed=True, result={"echo": "token %s here" % secret}, warnings=["second"]))
    assert secret not in repr(result) and result["changed"] is True
    assert result["warnings"] == ["first", "second"] and not path.exists()
    failed = ended(lambda: worker_module({"kind": "ConfigMap"}).fail_json(msg="no", exception="Traceback..."))
    assert failed == {"failed": True, "msg": "no"}


def test_the_worker_module_in_check_mode_says_so():
    assert worker_module({"kind": "ConfigMap"}, check_mode=True).check_mode is True


def test_each_module_gets_an_argument_spec_of_its_own():
    """AnsibleModule fills in the spec it is given: objects.argument_spec() is a new one each call."""
    filled = objects.argument_spec()
    filled["state"]["default"] = "absent"
    filled["validate"]["options"]["strict"]["default"] = False
    fresh = objects.argument_spec()
    assert fresh["state"]["default"] == "present" and fresh["validate"]["options"]["strict"]["default"] is True


def test_the_worker_module_checks_the_conditions_a_module_declares():
    spec = {"operation": {"type": "str", "choices": ["dump", "query"], "default": "dump"}, "promquery_file": {"type": "path"}}
    required = ended(lambda: kube_action.WorkerModule(spec, required_if=[("operation", "query", ("promquery_file",))],
                                                      args={"operation": "query"}, name="m", check_mode=False, diff=False))
    assert required["failed"] and required["msg"] == "operation is query but all of the following are missing: promquery_file"
    skipped = ended(lambda: kube_action.WorkerModule(spec, supports_check_mode=False, args={}, name="m", check_mode=True,
                                                     diff=False))
    assert skipped == {"skipped": True, "msg": "remote module (m) does not support check mode"}


def test_the_worker_module_says_when_an_option_and_its_alias_are_both_set():
    module = worker_module({"kind": "ConfigMap", "name": "x", "definition": {"a": 1}, "resource_definition": {"a": 1}})
    assert module.warnings == ["Both option resource_definition and its alias definition are set."]


@pytest.mark.parametrize("value", [3, 2.5, True, None, "kind: ConfigMap", [{}], {"kind": "ConfigMap"}],
                         ids=["int", "float", "bool", "none", "str", "list", "dict"])
def test_a_definition_is_refused_as_kubernetes_core_refuses_it(value):
    """resource_definition is raw here: definition_type_error says what AnsibleModule says of kubernetes.core's
    list_dict_str type, for what that type refuses, and nothing for what it takes."""
    spec = {"resource_definition": {"type": args_common.list_dict_str, "aliases": ["definition"]}}
    try:
        kube_action.WorkerModule(spec, args={"definition": value}, name="m", check_mode=False, diff=False)
        upstream = None
    except kube_action.ModuleExit as done:
        upstream = done.result["msg"]
    assert objects.definition_type_error({"resource_definition": value}) == upstream


def test_the_module_gets_its_arguments_and_gives_its_result_as_through_a_process():
    """Arguments reach the module's run() as a module's process gets them, without Ansible's data tags (a
    string trusted as a template, echoed in the result, would be templated again where the result is used),
    and the result has JSON's types only."""
    from ansible._internal._datatag._tags import TrustedAsTemplate

    trusted = TrustedAsTemplate().tag("{{ not_to_template }}")
    assert trusted.__class__ is not str
    seen = {}

    def run(module_class):
        module = module_class({"text": {"type": "str"}, "count": {"type": "int"}})
        seen.update(text=module.params["text"].__class__, count=module.params["count"].__class__)
        module.exit_json(echo=module.params["text"], pair=(1, 2))

    made = types.SimpleNamespace(_task=types.SimpleNamespace(check_mode=False, diff=False),
                                 _compute_environment_string=lambda environment: None)
    result = kube_action.run_in_worker(made, "perfscale.topsail.x", {"text": trusted, "count": 3}, run)
    assert seen == {"text": str, "count": int}
    assert result["echo"].__class__ is str and result["echo"] == "{{ not_to_template }}" and result["pair"] == [1, 2]
