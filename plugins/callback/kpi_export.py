# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: kpi_export
type: notification
short_description: Export the KPIs and regression results of a play to the results store
version_added: 0.1.0
description:
  - Collects, while the play runs, the KPI records that M(perfscale.topsail.visualize) and
    the regression results that M(perfscale.topsail.analyze_regressions) produced, and
    exports them once, when the playbook ends (C(v2_playbook_on_stats)), to the store
    configured in the C(export) section of the configuration - SQLite (default) or
    OpenSearch. The options below override that section.
  - Nothing is lost and nothing hangs. Documents are written to a spool file in
    C(<run root>/kpi_export_spool/) before delivery and removed from it once delivered;
    every store call has a timeout and retries are bounded. When the store is unreachable,
    slow, or rejects a document, the play is not failed - one warning gives the count and
    the spool, which C(ansible-playbook playbooks/export.yml -e spool_dir=PATH) replays
    (exactly once, thanks to deterministic document ids).
  - Enable it with C(callbacks_enabled = perfscale.topsail.kpi_export) in C(ansible.cfg) or
    C(ANSIBLE_CALLBACKS_ENABLED). It is not a stdout callback, so it works under AWX/AAP,
    where the stdout callback is replaced.
author:
  - perfscale.topsail developers (@perfscale)
requirements:
  - enable in configuration
options:
  backend:
    description: Store to export to, instead of C(export.backend).
    type: str
    choices: [sqlite, opensearch]
    env:
      - name: PERFSCALE_EXPORT_BACKEND
    ini:
      - section: callback_perfscale_kpi_export
        key: backend
  sqlite_path:
    description: SQLite file, instead of C(export.sqlite.path).
    type: path
    env:
      - name: PERFSCALE_EXPORT_SQLITE_PATH
    ini:
      - section: callback_perfscale_kpi_export
        key: sqlite_path
  opensearch_hosts:
    description: OpenSearch URLs, instead of C(export.opensearch.hosts).
    type: list
    elements: str
    env:
      - name: PERFSCALE_EXPORT_OPENSEARCH_HOSTS
    ini:
      - section: callback_perfscale_kpi_export
        key: opensearch_hosts
  timeout:
    description: Seconds allowed to each store call, instead of C(export.timeout_s).
    type: float
    env:
      - name: PERFSCALE_EXPORT_TIMEOUT
    ini:
      - section: callback_perfscale_kpi_export
        key: timeout
  spool_dir:
    description: Where undelivered documents are kept, instead of C(<run root>/kpi_export_spool).
    type: path
    env:
      - name: PERFSCALE_EXPORT_SPOOL_DIR
    ini:
      - section: callback_perfscale_kpi_export
        key: spool_dir
"""

import copy

from ansible.plugins.callback import CallbackBase

from ansible_collections.perfscale.topsail.plugins.module_utils import export as export_lib


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "notification"
    CALLBACK_NAME = "perfscale.topsail.kpi_export"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None):
        super().__init__(display=display)
        self._bundles = []

    def v2_runner_on_ok(self, result):
        bundle = result._result.get("perfscale_export")
        if isinstance(bundle, dict) and bundle.get("file"):
            self._bundles.append(bundle)

    def _export_settings(self, bundle):
        export = copy.deepcopy(bundle["export"])
        if self.get_option("backend"):
            export["backend"] = self.get_option("backend")
        if self.get_option("sqlite_path"):
            export["sqlite"]["path"] = self.get_option("sqlite_path")
        if self.get_option("opensearch_hosts"):
            export["opensearch"]["hosts"] = list(self.get_option("opensearch_hosts"))
        if self.get_option("timeout"):
            export["timeout_s"] = float(self.get_option("timeout"))
        return export

    def v2_playbook_on_stats(self, stats):
        if not self._bundles:
            return
        totals = {"kpi": 0, "regression": 0}
        undelivered, spools, reasons, store = 0, set(), [], None
        for bundle in self._bundles:
            export = self._export_settings(bundle)
            spool_dir = self.get_option("spool_dir") or bundle["spool_dir"]
            try:
                documents = export_lib.load_bundle_documents(bundle)
            except export_lib.ExportError as exc:
                self._display.warning("kpi_export: %s" % exc)
                continue
            outcome = export_lib.export_documents(documents, export, spool_dir, bundle.get("secrets"),
                                                  bundle.get("label_fields") or ())
            totals[bundle.get("kind", "kpi")] += outcome["delivered"]
            store = outcome["store"] or store
            if outcome["undelivered"]:
                undelivered += outcome["undelivered"]
                spools.add(spool_dir)
                if outcome["reason"] and outcome["reason"] not in reasons:
                    reasons.append(outcome["reason"])
        self._bundles = []
        if undelivered:
            self._display.warning(
                "kpi_export: %d document(s) not delivered to %s (%s); kept in %s; replay with: ansible-playbook "
                "playbooks/export.yml -e spool_dir=%s" % (undelivered, store or "the results store",
                                                          "; ".join(reasons) or "unknown reason",
                                                          ", ".join(sorted(spools)), sorted(spools)[0]))
        if totals["kpi"] or totals["regression"]:
            self._display.display("kpi_export: %d KPI and %d regression document(s) exported to %s"
                                  % (totals["kpi"], totals["regression"], store))
