# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: kpi_export
type: notification
short_description: Export at the end of the playbook what the play did not export itself
version_added: 0.1.0
description:
  - The collection's playbooks export their KPIs and regression results themselves, at the
    end of the play that produced them (M(perfscale.topsail.export_results) with
    O(perfscale.topsail.export_results#module:bundles)), whether or not this callback is
    enabled - with the collection installed in a project without its C(ansible.cfg), or
    under AWX/AAP.
  - This callback is the safety net for plays that end before their export task (a failure
    between the post-processing and the export) and for your own playbooks that call
    M(perfscale.topsail.visualize) or M(perfscale.topsail.analyze_regressions) without
    exporting - it collects the export bundles those tasks return and exports, once, when
    the playbook ends (C(v2_playbook_on_stats)), every bundle that no task exported. A
    bundle is never exported twice.
  - Nothing is lost and nothing hangs. Documents are written to a spool file in
    C(<run root>/kpi_export_spool/) before delivery and removed from it once delivered;
    every store call has a timeout and retries are bounded. When the store is unreachable,
    slow, or rejects a document, the play is not failed - one warning gives the count and
    the command that replays the spool (exactly once, thanks to deterministic document ids).
  - The store comes from the C(export) section of the configuration; the environment
    variables C(PERFSCALE_EXPORT_BACKEND), C(PERFSCALE_EXPORT_SQLITE_PATH),
    C(PERFSCALE_EXPORT_OPENSEARCH_HOSTS) (comma-separated), C(PERFSCALE_EXPORT_TIMEOUT) and
    C(PERFSCALE_EXPORT_SPOOL_DIR) override it for every reader of that section (the history
    of the regression analysis and the export alike).
  - At the end of a playbook whose tasks handed it a bundle, one line names the results store of
    the run (its KPIs were compared with the history found there, and exported to it), and says
    when it is the SQLite file at its default place, which every checkout of the account shares
    (C(export.sqlite.path) gives a project a store of its own).
  - Enable it with C(callbacks_enabled = perfscale.topsail.kpi_export) in C(ansible.cfg) or
    C(ANSIBLE_CALLBACKS_ENABLED). It is not a stdout callback, so it works under AWX/AAP.
author:
  - perfscale.topsail developers (@perfscale)
requirements:
  - enable in configuration
"""

from ansible.plugins.callback import CallbackBase

from ansible_collections.perfscale.topsail.plugins.module_utils.stores import location as store_location
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "notification"
    CALLBACK_NAME = "perfscale.topsail.kpi_export"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None):
        super().__init__(display=display)
        self._bundles = {}
        self._exported = set()
        # the export section of the first bundle: the store the run read its history from and exported to
        self._store = None

    def v2_runner_on_ok(self, result):
        data = result._result
        bundle = data.get("perfscale_export")
        if isinstance(bundle, dict) and bundle.get("file"):
            self._bundles.setdefault(bundle["file"], bundle)
            if self._store is None:
                self._store = bundle.get("export")
        self._exported.update(data.get("perfscale_exported") or ())

    def v2_playbook_on_stats(self, stats):
        pending = [bundle for path, bundle in self._bundles.items() if path not in self._exported]
        self._bundles = {}
        if pending:
            outcome = export_lib.export_bundles(pending)
            self._exported.update(outcome["exported"])
            for warning in outcome["warnings"]:
                self._display.warning(warning)
            if outcome["delivered"]:
                self._display.display(outcome["message"])
        line = store_location.store_line(self._store)
        self._store = None
        if line:
            self._display.display(line)
