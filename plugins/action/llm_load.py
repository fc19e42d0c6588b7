# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.llm_load (documented in plugins/modules)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import SecretError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import harness

ARGUMENT_SPEC = dict(
    options=dict(type="dict", required=True),
    token_secret=dict(type="str", default=""),
    dest=dict(type="path"),
    timeout=dict(type="float", default=3600),
)


class ActionModule(PerfscaleAction):
    NAME = "llm_load"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    NEEDS_CONFIG = False

    def execute(self, result, args, task_vars, config):
        dest = args.get("dest") or task_vars.get("perfscale_artifact_dir")
        if not dest:
            result.update(failed=True, msg="llm_load: no dest given and no artifact directory is open")
            return result
        options = {key: value for key, value in args["options"].items() if value is not None and value != ""}
        if args["token_secret"]:
            try:
                options["token_file"] = secret_refs.secret_path(task_vars.get("perfscale_config") or {},
                                                                args["token_secret"])
            except SecretError as exc:
                result.update(failed=True, msg="llm_load: token_secret: %s" % exc)
                return result
        if self._task.check_mode:
            result.update(changed=False, msg="llm_load: would run with %s" % ", ".join(sorted(options)))
            return result
        try:
            document = harness.run_in_directory(options, dest, args["timeout"])
        except harness.LoadRunError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        summary = document["@result"]
        keep = ("completed_requests", "failed_requests", "requested_rate", "achieved_rate", "ttft_p50_ms",
                "ttft_p99_ms", "itl_p50_ms", "output_token_throughput", "error_rate", "client_bound")
        result.update(changed=True, dest=dest, result={key: summary.get(key) for key in keep})
        return result
