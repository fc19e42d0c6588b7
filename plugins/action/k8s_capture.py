# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.k8s_capture (documented in plugins/modules): on the controller, the
task runs in the worker process, elsewhere the module runs (plugins/plugin_utils/kube_action.py)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import capture
from ansible_collections.perfscale.topsail.plugins.plugin_utils.kube_action import KubeTaskAction

# the task's own options, which the module documents (kubernetes.core's come from its doc fragment)
ARGUMENT_SPEC = capture.CAPTURE_ARGS


class ActionModule(KubeTaskAction):
    MODULE = "perfscale.topsail.k8s_capture"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    TASK = staticmethod(capture.capture_task)
