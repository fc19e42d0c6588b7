# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.write_artifacts (documented in plugins/modules)."""

from __future__ import annotations


from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts

ARGUMENT_SPEC = dict(
    files=dict(type="dict", required=True),
    dest=dict(type="path"),
)


class ActionModule(PerfscaleAction):
    NAME = "write_artifacts"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    NEEDS_CONFIG = False

    def execute(self, result, args, task_vars, config):
        dest = args.get("dest") or task_vars.get("perfscale_artifact_dir") or task_vars.get("perfscale_run_root")
        if not dest:
            result.update(failed=True, msg="write_artifacts: no dest given and no artifact directory is open "
                                           "(run perfscale.topsail.resolve_config first)")
            return result
        planned = artifacts.plan_files(dest, args["files"])
        if not self._task.check_mode:
            artifacts.write_planned(planned)
        result.update(changed=not self._task.check_mode, dest=dest, files=[path for path, _text in planned])
        return result
