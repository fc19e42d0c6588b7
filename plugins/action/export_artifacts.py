# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.export_artifacts (documented in plugins/modules)."""

from __future__ import annotations

from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import artifact_transfer
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.run import context as run_context
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

ARGUMENT_SPEC = dict(
    run_root=dict(type="path"),
)


class ActionModule(PerfscaleAction):
    NAME = "export_artifacts"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    _supports_check_mode = False

    def execute(self, result, args, task_vars, config):
        section = config_schema.read_section(config, "export_artifacts")
        run_root = args.get("run_root") or task_vars.get("perfscale_run_root")
        if not section["enabled"]:
            result.update(skipped=True, msg="export_artifacts.enabled is false: the artifacts stay local")
            return result
        if not run_root:
            result.update(failed=True, msg="export_artifacts: no run root; expected run_root or perfscale_run_root")
            return result
        info, _changed = run_context.run_info(run_root, artifact_transfer.artifacts_destination(run_root, config))
        url = info["artifacts_url"]
        try:
            client = artifact_transfer.make_client(section, config)
            summary = artifact_transfer.upload_tree(client, run_root, url, info["run_id"], section["parallel"],
                                                    section["part_size_mib"] * artifact_transfer.MIB)
        except PerfscaleError as exc:
            summary = {"url": url, "complete": False, "failed": [str(exc)]}
        record = artifact_transfer.write_export_record(run_root, summary)
        if summary["complete"]:
            message = "artifacts at %s: %d file(s) uploaded (%d bytes), %d already there" % (
                url, summary["uploaded"], summary["bytes_uploaded"], summary["already_there"])
            result.update(changed=summary["uploaded"] > 0, msg=message, url=url, summary=summary, record=record)
            return result
        failures = summary["failed"]
        message = "artifacts not (fully) exported to %s: %s%s (re-run to upload what is missing)" % (
            url, failures[0], " and %d more" % (len(failures) - 1) if len(failures) > 1 else "")
        result.update(url=url, summary=summary, record=record, msg=message)
        if section["fail_test_on_fail"]:
            result["failed"] = True
        else:
            Display().warning(message + "; export_artifacts.fail_test_on_fail is false: the test's verdict stands")
        return result
