"""Where the cluster-reading tasks run (plugins/plugin_utils/kube_action.py): in the controller's worker only
when the module's process would have run on the controller as the same user, in its foreground; and the
task's environment is the worker's for the task only. tests/cluster/test_kube_tasks_in_controller.py runs
the tasks both ways on kubesim."""

import os
import types

import pytest

from ansible_collections.perfscale.topsail.plugins.action import k8s_read
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
    assert made._runs_here(task_vars) is here


def test_the_task_environment_is_the_worker_s_while_the_task_runs(monkeypatch):
    monkeypatch.setenv("PERFSCALE_TEST_KEPT", "before")
    monkeypatch.delenv("PERFSCALE_TEST_ADDED", raising=False)
    with kube_action._TaskEnvironment({"PERFSCALE_TEST_KEPT": "during", "PERFSCALE_TEST_ADDED": 3}):
        assert os.environ["PERFSCALE_TEST_KEPT"] == "during" and os.environ["PERFSCALE_TEST_ADDED"] == "3"
    assert os.environ["PERFSCALE_TEST_KEPT"] == "before" and "PERFSCALE_TEST_ADDED" not in os.environ
