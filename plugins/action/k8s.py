# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.k8s (documented in plugins/modules): kubernetes.core.k8s's own action
plugin (which finds ``src`` and ``template`` files on the controller and reads a ``kubeconfig`` given as a
mapping), whose last step - running the module - is done in the worker process when the target is the
controller (plugins/plugin_utils/kube_action.py): the module's ``run`` - kubernetes.core's ``run_module`` -
with a ``WorkerModule`` in place of AnsibleModule. Elsewhere the module runs, as kubernetes.core.k8s's would."""

from __future__ import annotations

from ansible_collections.kubernetes.core.plugins.action.k8s import ActionModule as KubernetesCoreAction

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import objects
from ansible_collections.perfscale.topsail.plugins.plugin_utils import kube_action

MODULE = "perfscale.topsail.k8s"
# the options the module documents itself (the others come from kubernetes.core's documentation fragments)
ARGUMENT_SPEC = objects.own_options()


class ActionModule(KubernetesCoreAction):
    _supports_check_mode = True

    def _execute_module(self, module_name=None, module_args=None, task_vars=None, **kwargs):
        task_vars = task_vars or {}
        if module_name == MODULE and module_args is not None and kube_action.runs_in_worker(self, task_vars):
            try:
                from ansible_collections.perfscale.topsail.plugins.modules import k8s  # pylint: disable=import-outside-toplevel
            except ImportError:
                pass     # the module says what is missing, in its own process
            else:
                return kube_action.run_in_worker(self, MODULE, module_args, k8s.run)
        return super()._execute_module(module_name=module_name, module_args=module_args, task_vars=task_vars, **kwargs)
