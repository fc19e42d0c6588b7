# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.dashboard (documented in plugins/modules)."""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils import stores
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import dashboard
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib

ARGUMENT_SPEC = dict(
    dest_dir=dict(type="path", required=True),
    workloads=dict(type="list", elements="str", default=[]),
)


class ActionModule(PerfscaleAction):
    NAME = "dashboard"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    _supports_check_mode = False

    def execute(self, result, args, task_vars, config):
        export = export_lib.read_export(config)
        store = stores.open_store(export, config)
        try:
            # the workloads the configuration and the playbook name are trusted; the store's are not
            trusted = [config_lib.get_dotted(config, "postprocess.workload", None)] + list(args["workloads"])
            built = dashboard.build(store, os.path.join(args["dest_dir"], "dashboard"),
                                    regression_section=config_lib.get_dotted(config, "regression", None),
                                    workloads=args["workloads"] or None, trusted_workloads=trusted)
        finally:
            store.close()
        result.update(changed=True, index=built["index"], pages=built["pages"], skipped=built["skipped"],
                      msg="dashboard of %d test(s) (%d value(s)) from %s: %s%s" % (
                          built["tests"], built["values"], store.describe(), built["index"],
                          "".join("; " + note for note in built["notes"])))
        return result
