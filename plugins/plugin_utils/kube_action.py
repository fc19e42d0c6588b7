# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugins of the collection's cluster modules (``k8s_read``, ``k8s_wait``, ``k8s_capture``, and ``k8s``,
which does kubernetes.core.k8s's work with kubernetes.core's own code).

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
import shutil
import tempfile

from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator
from ansible.module_utils.errors import UnsupportedError
from ansible.module_utils.common.parameters import remove_values
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


def runs_in_worker(action, task_vars):
    """Whether ``action`` (an action plugin running its task) can do the task's work in its worker process:
    the target is the controller itself (the ``local`` connection, no ``become``), the task is not ``async``
    (an async task runs a module, in the background) and ``perfscale_kube_tasks_in_controller`` is not false."""
    wanted = boolean(action._templar.template(task_vars.get(IN_CONTROLLER_VARIABLE, True)), strict=False)
    return (wanted and action._connection.transport == "local" and not action._play_context.become
            and not action._task.async_val)


class ModuleExit(Exception):
    """A ``WorkerModule`` ended the task: ``result`` is what the module would have returned."""

    def __init__(self, result):
        super().__init__(result.get("msg", ""))
        self.result = result


class WorkerModule:
    """The part of Ansible's ``AnsibleModule`` that kubernetes.core's modules use (their ``AnsibleK8SModule``
    takes the class to wrap: ``module_class``), for a task done in the worker process: the task's arguments
    validated against the module's argument spec as AnsibleModule validates them, check and diff mode, warnings,
    temporary files, and ``exit_json``/``fail_json``, which raise ``ModuleExit`` with the result instead of
    printing it and ending a process. As AnsibleModule does, the values of ``no_log`` options are masked in the
    result and a failure to validate names the unsupported parameters."""

    def __init__(self, argument_spec, mutually_exclusive=None, supports_check_mode=False, *, args, name, check_mode,
                 diff):
        self._name = name
        self.check_mode = check_mode
        self._diff = diff
        self.warnings = []
        self.cleanup_files = []
        self._tmpdir = None
        validation = ModuleArgumentSpecValidator(argument_spec, mutually_exclusive).validate(args)
        self.params = validation.validated_parameters
        self.no_log_values = validation._no_log_values
        self.warnings.extend(warning["warning"] for warning in validation._warnings)
        if validation.errors.errors:
            msg = validation.errors.msg
            if isinstance(validation.errors.errors[0], UnsupportedError):
                msg = "Unsupported parameters for (%s) module: %s" % (name, msg)
            self.fail_json(msg=msg)
        if check_mode and not supports_check_mode:
            self.exit_json(skipped=True, msg="remote module (%s) does not support check mode" % name)

    @property
    def tmpdir(self):
        if self._tmpdir is None:
            self._tmpdir = tempfile.mkdtemp(prefix="perfscale-k8s-")
        return self._tmpdir

    def warn(self, warning, **_ignored):
        self.warnings.append(warning)

    def deprecate(self, msg, **_ignored):
        self.warnings.append("deprecated: %s" % msg)

    def debug(self, _msg):
        pass

    def add_cleanup_file(self, path):
        if path not in self.cleanup_files:
            self.cleanup_files.append(path)

    def _end(self, result):
        for path in self.cleanup_files:
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.exists(path):
                os.remove(path)
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
        warnings = self.warnings + [w for w in result.pop("warnings", None) or [] if w not in self.warnings]
        if warnings:
            result["warnings"] = warnings
        preserved = {key: value for key, value in result.items() if value is None or isinstance(value, bool)}
        result = remove_values(result, self.no_log_values)
        result.update(preserved)
        raise ModuleExit(result)

    def exit_json(self, **result):
        self._end(result)

    def fail_json(self, msg, **result):
        result.pop("exception", None)
        self._end(dict(result, failed=True, msg=str(msg)))


def kube_core_runner():
    """kubernetes.core's pieces for doing kubernetes.core.k8s's work (ModuleNotFoundError where the controller
    lacks the kubernetes library): its AnsibleModule wrapper, its ``run_module`` and its CoreException."""
    import kubernetes  # noqa: F401  pylint: disable=unused-import,import-outside-toplevel
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.runner import run_module  # pylint: disable=import-outside-toplevel
    return AnsibleK8SModule, run_module, CoreException


def run_in_worker(action, core, name, module_args, argument_spec, mutually_exclusive):
    """What the module ``name`` (kubernetes.core's ``run_module`` behind ``AnsibleK8SModule``) returns for
    ``module_args``, done in this worker process with the task's environment applied."""
    k8s_module, run_module, core_exception = core
    environment = {}
    action._compute_environment_string(environment)
    with _TaskEnvironment(environment):
        try:
            module = k8s_module(module_class=WorkerModule, argument_spec=argument_spec,
                                mutually_exclusive=mutually_exclusive, supports_check_mode=True,
                                args=dict(module_args), name=name,
                                check_mode=bool(action._task.check_mode), diff=bool(action._task.diff))
            try:
                run_module(module)
            except core_exception as exc:
                module.fail_from_exception(exc)
        except ModuleExit as done:
            return done.result
    raise AssertionError("%s: kubernetes.core's run_module returned without exit_json or fail_json" % name)


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

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        core = None
        if runs_in_worker(self, task_vars):
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
