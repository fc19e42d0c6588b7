# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.mark_run (documented in plugins/modules)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.run import context as run_context
from ansible_collections.perfscale.topsail.plugins.module_utils import stores
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ExportError
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base

ARGUMENT_SPEC = dict(
    run_id=dict(type="str"),
    results_dir=dict(type="path"),
    forgotten=dict(type="bool", default=True),
    reason=dict(type="str", default=""),
)


class ActionModule(PerfscaleAction):
    NAME = "mark_run"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION = dict(mutually_exclusive=[("run_id", "results_dir")], required_one_of=[("run_id", "results_dir")])
    _supports_check_mode = False

    def execute(self, result, args, task_vars, config):
        run_id = args.get("run_id")
        if args.get("results_dir"):
            run_id = run_context.read_run_id(args["results_dir"])
            if not run_id:
                raise ExportError("results_dir %s: no run.json with a run id (a run of this release writes one)"
                                  % args["results_dir"])
        export = export_lib.read_export(config)
        store = stores.open_store(export, config)
        try:
            store.ensure_schema()
            previous = store.marks().get(run_id)
            mark = stores_base.mark_document(run_id, args["forgotten"], args["reason"],
                                             by=task_vars.get("ansible_user_id") or "")
            written = store.write([mark])
            if written.rejected:
                raise ExportError("mark of run %s not stored: %s" % (run_id, written.rejected[0][1]))
            description = store.describe()
        finally:
            store.close()
        changed = not previous or bool(previous.get("forgotten")) != args["forgotten"]
        result.update(changed=changed, run_id=run_id, mark=mark, previous=previous, store=description,
                      msg="run %s %s the baselines of %s%s" % (
                          run_id, "kept out of" if args["forgotten"] else "back in", description,
                          " (%s)" % args["reason"] if args["reason"] else ""))
        return result
