# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugins of the collection's cluster-reading modules (``k8s_read``, ``k8s_wait``, ``k8s_capture``).

A module runs on its target host, in a process of its own that imports the Kubernetes client at every
call (~1 CPU-s a task against ~0.1 here; benchmarks/kube_task_in_controller.py). When the target is the
controller itself - the ``local`` connection, no ``become``, no ``async`` - the module's process would
run there anyway, as the same user, with the controller's environment plus the task's: the action
plugin then does the task's work in its own worker process (module_utils/kube/tasks.py, the function the
module calls too), with the task's ``environment`` applied, and returns what the module would. Anywhere
else, where the controller's Python lacks the Kubernetes client, or with the variable
``perfscale_kube_tasks_in_controller`` false, the module runs as usual.
"""

from __future__ import annotations

import copy
import os

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import tasks


# false: the tasks run their modules on the controller too (the way of before, to compare or to rule it out)
IN_CONTROLLER_VARIABLE = "perfscale_kube_tasks_in_controller"


def _kube_core():
    """kubernetes.core's client pieces (ModuleNotFoundError where the controller lacks the kubernetes library)."""
    import kubernetes  # noqa: F401  pylint: disable=unused-import,import-outside-toplevel
    from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService  # pylint: disable=import-outside-toplevel
    return AUTH_ARG_SPEC, get_api_client, CoreException, K8sService


class _ModuleView:
    """What kubernetes.core's K8sService reads of its module: the parameters and check mode."""

    def __init__(self, params, check_mode):
        self.params = params
        self.check_mode = check_mode


class _TaskEnvironment:
    """The task's ``environment`` in os.environ while the task runs (a worker process runs one task)."""

    def __init__(self, values):
        self.values = {key: str(value) for key, value in values.items()}
        self.saved = {}

    def __enter__(self):
        self.saved = {key: os.environ.get(key) for key in self.values}
        os.environ.update(self.values)
        return self

    def __exit__(self, *exc_info):
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class KubeTaskAction(ActionBase):
    """Runs ``TASK`` (a function of module_utils/kube/tasks.py) here when the target is the controller,
    else the module ``MODULE``."""

    _supports_check_mode = True
    _supports_async = True      # an async task runs the module
    MODULE = ""
    ARGUMENT_SPEC = {}

    @staticmethod
    def TASK(params, make_service):  # pylint: disable=invalid-name
        raise NotImplementedError

    def _runs_here(self, task_vars):
        wanted = boolean(self._templar.template(task_vars.get(IN_CONTROLLER_VARIABLE, True)), strict=False)
        return (wanted and self._connection.transport == "local" and not self._play_context.become
                and not self._task.async_val)

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        core = None
        if self._runs_here(task_vars):
            try:
                core = _kube_core()
            except ModuleNotFoundError:
                pass     # the module reports what is missing, in its own process
        if core is None:
            # as Ansible's own action for modules (plugins/action/normal.py) runs one
            wrap_async = self._task.async_val and not self._connection.has_native_async
            result = merge_hash(result, self._execute_module(module_name=self.MODULE, module_args=self._task.args,
                                                             task_vars=task_vars, wrap_async=wrap_async))
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)
            return result
        auth_arg_spec, get_api_client, core_exception, k8s_service = core
        spec = copy.deepcopy(auth_arg_spec)
        spec.update(copy.deepcopy(self.ARGUMENT_SPEC))
        environment = {}
        self._compute_environment_string(environment)
        with _TaskEnvironment(environment):
            _validation, params = self.validate_argument_spec(spec)
            view = _ModuleView(params, self._play_context.check_mode)
            try:
                result.update(self.TASK(params, lambda: k8s_service(get_api_client(**params), view)))
            except tasks.TaskFailed as exc:
                result.update(exc.result, failed=True, changed=False)
            except core_exception as exc:
                result.update(failed=True, changed=False, msg=str(exc))
        return result
