# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The regression step of a run: payloads of a plots directory against the store.

Writes ``regression_summary.yaml``, ``regression_records.json`` and
``regression_report.html`` into the plots directory. When the store cannot be
reached, the history is unavailable: every entry is reported as not analysed,
with the reason, and the step does not fail.

It is post-processing's last step, so it lives with it: it reads what ``postprocess`` wrote and
writes a report (``reports``); ``regression/`` below holds the methods and the verdicts it calls.
"""

from __future__ import annotations

import glob
import json
import os

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import section as postprocess_section
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import section as regression_section
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports
from ansible_collections.perfscale.topsail.plugins.module_utils import stores
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import RegressionError, StoreError
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import verdicts

SUMMARY_FILE = "regression_summary.yaml"
RECORDS_FILE = "regression_records.json"


def load_payloads(plots_dir):
    payloads = []
    for path in sorted(glob.glob(os.path.join(plots_dir, "tests", "**", postprocess.PAYLOAD), recursive=True)):
        with open(path, encoding="utf-8") as handle:
            payloads.append(json.load(handle))
    return payloads


def _notes(plots_dir):
    """The header notes of the run's other reports (host load, noisy tests)."""
    try:
        with open(os.path.join(plots_dir, postprocess.SUMMARY), encoding="utf-8") as handle:
            return json.load(handle).get("notes") or []
    except (OSError, ValueError):
        return []


def run_regression_analysis(plots_dir, config, run_root, environ=None):
    if not os.path.isdir(plots_dir):
        raise RegressionError("plots_dir %s: not a directory" % plots_dir)
    section = regression_section.read(config)
    if not section["enabled"]:
        return {"skipped": True, "summary": None}
    export = export_lib.read_export(config)
    workload = workload_lib.load_workload(postprocess_section.read(config)["workload"])
    settings = verdicts.effective_settings(section, workload.regression)
    label_fields = list(workload.labels_model().model_fields)
    payloads = load_payloads(plots_dir)
    store = None
    try:
        store = stores.open_store(export, config, environ)
        store.ensure_schema(label_fields)
        summary, records, details = verdicts.analyse(payloads, store, settings, workload.name)
    except StoreError as exc:
        # graceful degradation, explicit: no verdict without history, the reason is reported
        summary, records, details = verdicts.history_unavailable(payloads, settings, exc), [], []
    finally:
        if store is not None:
            store.close()
    artifacts.write_yaml_atomic(os.path.join(plots_dir, SUMMARY_FILE), summary)
    records_path = artifacts.write_json_atomic(os.path.join(plots_dir, RECORDS_FILE), records)
    report = reports.write_regression_report(plots_dir, summary, details, notes=_notes(plots_dir))
    bundle = export_lib.make_bundle("regression", records_path, config, run_root,
                                    label_fields) if export["enabled"] and records else None
    return {"summary": summary, "report": report, "bundle": bundle}
