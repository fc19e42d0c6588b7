# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.awx_job_templates (documented in plugins/modules)."""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import awx
from ansible_collections.perfscale.topsail.plugins.module_utils.run import collection_info
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib

COLLECTION_ROOT = collection_info.collection_root_from(__file__, 3)

ARGUMENT_SPEC = dict(
    project=dict(type="str", required=True),
    inventory=dict(type="str", required=True),
    execution_environment=dict(type="str"),
    organization=dict(type="str"),
    name_prefix=dict(type="str", default="perfscale"),
    playbooks=dict(type="list", elements="str"),
    config_file=dict(type="path"),
    dest=dict(type="path"),
)


class ActionModule(PerfscaleAction):
    NAME = "awx_job_templates"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    NEEDS_CONFIG = False

    def execute(self, result, args, task_vars, config):
        config_file = args.get("config_file") or config_lib.default_config_path(COLLECTION_ROOT)
        document = config_lib.load_config_document(config_file)
        templates = awx.job_templates(document, args["project"], args["inventory"],
                                      execution_environment=args.get("execution_environment"),
                                      organization=args.get("organization"), name_prefix=args["name_prefix"],
                                      playbooks=args.get("playbooks"))
        changed = False
        if args.get("dest") and not self._task.check_mode:
            dest = os.path.abspath(os.path.expanduser(args["dest"]))
            before = open(dest, encoding="utf-8").read() if os.path.isfile(dest) else None
            text = artifacts.dump_yaml({"job_templates": templates})
            if text != before:
                artifacts.write_text_atomic(dest, text)
                changed = True
            result["dest"] = dest
        result.update(changed=changed, job_templates=templates, config_file=config_file,
                      msg="%d job template(s): %s" % (len(templates), ", ".join(t["name"] for t in templates)))
        return result
