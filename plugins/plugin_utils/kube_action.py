# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the action plugins of the collection's cluster modules (``k8s``, ``k8s_read``, ``k8s_wait``,
``k8s_capture``, ``k8s_environment``, ``k8s_metrics_capture``, ``k8s_prometheus_db``, ``multi_user_collect``,
``kfp_runs``) do the module's work in Ansible's worker process.

A module runs on its target host, in a process of its own that starts Python and imports the Kubernetes
client at every call (~1 CPU-s a task against ~0.1-0.2 here; benchmarks/kube_task_in_controller.py,
benchmarks/k8s_in_controller.py). When the target is the controller itself - the ``local`` connection, no
``become``, no ``async`` - that process would run there anyway, as the same user, with the controller's
environment plus the task's. The action plugin then calls the module's own ``run(module_class)`` - its
``main()`` is ``run(AnsibleModule)``; for ``k8s``, kubernetes.core.k8s's ``run_module`` - in its worker,
with ``WorkerModule`` in place of AnsibleModule and the task's ``environment`` applied, and returns what
the module would have. Anywhere else, where the module cannot be imported here, or with the variable
``perfscale_kube_tasks_in_controller`` false, the module runs as usual.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.json import Direction, get_module_decoder, get_module_encoder
from ansible.module_utils.errors import UnsupportedError
from ansible.module_utils.common.parameters import remove_values
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

# false: the tasks run their modules on the controller too (the way of before, to compare or to rule it out)
IN_CONTROLLER_VARIABLE = "perfscale_kube_tasks_in_controller"
# the serialization profile of the collection's modules and of kubernetes.core's (none declares another)
_PROFILE = "legacy"


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
    """The part of Ansible's ``AnsibleModule`` that kubernetes.core's modules and this collection's cluster modules
    use (kubernetes.core's ``AnsibleK8SModule`` takes the class to wrap: ``module_class``), for a task done in the
    worker process: the task's arguments
    validated against the module's argument spec as AnsibleModule validates them, check and diff mode, warnings,
    temporary files, and ``exit_json``/``fail_json``, which raise ``ModuleExit`` with the result instead of
    printing it and ending a process. As AnsibleModule does, the values of ``no_log`` options are masked in the
    result and a failure to validate names the unsupported parameters."""

    def __init__(self, argument_spec, mutually_exclusive=None, supports_check_mode=False, required_together=None,
                 required_one_of=None, required_if=None, required_by=None, *, args, name, check_mode, diff):
        self._name = name
        self.check_mode = check_mode
        self._diff = diff
        self.warnings = []
        self.cleanup_files = []
        self._tmpdir = None
        # ArgumentSpecValidator, which AnsibleModule's validator extends with warnings to the module's process-wide
        # lists: here they go to this task's result
        validation = ArgumentSpecValidator(argument_spec, mutually_exclusive, required_together, required_one_of,
                                           required_if, required_by).validate(args)
        self.params = validation.validated_parameters
        self.no_log_values = validation._no_log_values
        self.warnings.extend("Both option %s and its alias %s are set." % (warning["option"], warning["alias"])
                             for warning in validation._warnings)
        self.warnings.extend("deprecated: %s" % deprecation["msg"] for deprecation in validation._deprecations)
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


def run_in_worker(action, name, module_args, run):
    """What the module ``name`` returns for ``module_args``, done in this worker process with the task's
    environment applied: ``run(module_class)`` is the module's own work, given the class it builds its
    module from (``AnsibleModule`` in its process; kubernetes.core's ``AnsibleK8SModule`` takes it as
    ``module_class``), here a ``WorkerModule``."""
    module_class = functools.partial(WorkerModule, args=_as_sent(module_args, Direction.CONTROLLER_TO_MODULE), name=name,
                                     check_mode=bool(action._task.check_mode), diff=bool(action._task.diff))
    environment = {}
    action._compute_environment_string(environment)
    with _TaskEnvironment(environment):
        try:
            run(module_class)
        except ModuleExit as done:
            return _as_sent(done.result, Direction.MODULE_TO_CONTROLLER)
    raise AssertionError("%s: the module's work returned without exit_json or fail_json" % name)


def _as_sent(value, direction):
    """``value`` as it would reach the other side between the controller and a module's process: encoded and
    decoded as Ansible does it (its ``legacy`` serialization profile, that of modules without metadata). The
    arguments lose Ansible's data tags - a string of the playbook trusted as a template would stay one in
    what the module echoes back, and be templated again where the result is used - and the result has JSON's
    types only, as a module's has."""
    return json.loads(json.dumps(value, cls=get_module_encoder(_PROFILE, direction)),
                      cls=get_module_decoder(_PROFILE, direction))


class WorkerModuleAction(ActionBase):
    """The action plugin of a module whose ``main()`` is ``run(AnsibleModule)``: on the controller its ``run``
    (what ``RUNNER()`` imports) is done here with a ``WorkerModule`` (``run_in_worker``), elsewhere the module
    ``MODULE`` runs - and where ``RUNNER()`` cannot import what the module needs, the module runs and says
    what is missing."""

    _supports_check_mode = True
    _supports_async = True      # an async task runs the module
    MODULE = ""

    @staticmethod
    def RUNNER():  # pylint: disable=invalid-name
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        runner = None
        if runs_in_worker(self, task_vars):
            try:
                runner = self.RUNNER()
            except ImportError:
                pass
        if runner is None:
            wrap_async = self._task.async_val and not self._connection.has_native_async
            result = merge_hash(result, self._execute_module(module_name=self.MODULE, module_args=self._task.args,
                                                             task_vars=task_vars, wrap_async=wrap_async))
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)
            return result
        result.update(run_in_worker(self, self.MODULE, self._task.args, runner))
        return result


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
