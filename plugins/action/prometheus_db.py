# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.prometheus_db (documented in plugins/modules)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import prometheus
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import SecretError

ARGUMENT_SPEC = dict(
    prometheus.operation_argument_spec(),
    prometheus_url=dict(type="str", required=True),
    prometheus_token_secret=dict(type="str", default=""),
    prometheus_data_dir=dict(type="path"),
    dest_dir=dict(type="path"),
)


class ActionModule(PerfscaleAction):
    NAME = "prometheus_db"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION = dict(required_if=[("operation", "query", ("promquery_file",))])
    NEEDS_CONFIG = False
    _supports_check_mode = False

    def execute(self, result, args, task_vars, config):
        dest_dir = args.get("dest_dir") or task_vars.get("perfscale_artifact_dir")
        if not dest_dir:
            result.update(failed=True, msg="prometheus_db: no dest_dir and no open artifact directory")
            return result
        token = None
        if args["prometheus_token_secret"]:
            try:
                token = secret_refs.read_secret(task_vars.get("perfscale_config") or {}, args["prometheus_token_secret"])
            except SecretError as exc:
                result.update(failed=True, msg="prometheus_token_secret: %s" % exc)
                return result
        client = prometheus.PrometheusClient(args["prometheus_url"], timeout=args["timeout_s"], token=token)
        result.update(prometheus.run_operation(client, args["operation"], args, dest_dir,
                                               task_vars.get("perfscale_run_root")))
        return result
