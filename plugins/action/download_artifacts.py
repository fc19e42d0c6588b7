# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.download_artifacts (documented in plugins/modules)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import artifact_transfer
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib

ARGUMENT_SPEC = dict(
    url=dict(type="str"),
    url_file=dict(type="path"),
    artifact_dir=dict(type="path", required=True),
    mode=dict(type="str", default="prefer_cache", choices=artifact_transfer.mode_names()),
)


class ActionModule(PerfscaleAction):
    NAME = "download_artifacts"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION = dict(mutually_exclusive=[("url", "url_file")], required_one_of=[("url", "url_file")])
    _supports_check_mode = False

    def execute(self, result, args, task_vars, config):
        section = config_schema.read_section(config, "export_artifacts")
        postprocess = config_schema.read_section(config, "postprocess")
        workload = workload_lib.load_workload(postprocess["workload"])
        prom_workload = workload_lib.load_prom_workload(postprocess["prom_workload"])
        url = args["url"] if args.get("url") else artifact_transfer.read_url_file(args["url_file"])
        artifact_transfer.parse_url(url)
        client = artifact_transfer.make_client(section, config)
        summary = artifact_transfer.download_tree(client, url, args["artifact_dir"], args["mode"], workload,
                                                  section["parallel"], prom_workload=prom_workload)
        message = "%s (%s): %d of %d file(s) downloaded (%d of %d bytes), %d already there, %d left in the bucket" % (
            summary["url"], summary["mode"], summary["downloaded"], summary["files"], summary["bytes_downloaded"],
            summary["bytes_total"], summary["already_there"], summary["left_remote"])
        if summary["notes"]:
            message += "; " + "; ".join(summary["notes"])
        result.update(changed=summary["downloaded"] > 0, msg=message, summary=summary,
                      artifact_dir=summary["artifact_dir"])
        return result
