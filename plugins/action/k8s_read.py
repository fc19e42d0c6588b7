# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.k8s_read (documented in plugins/modules): on the controller, the module's
``run`` is done in the worker process, elsewhere the module runs (plugins/plugin_utils/kube_action.py)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.plugin_utils.kube_action import WorkerModuleAction


class ActionModule(WorkerModuleAction):
    MODULE = "perfscale.topsail.k8s_read"

    @staticmethod
    def RUNNER():  # pylint: disable=invalid-name
        from ansible_collections.perfscale.topsail.plugins.modules import k8s_read  # pylint: disable=import-outside-toplevel
        return k8s_read.run
