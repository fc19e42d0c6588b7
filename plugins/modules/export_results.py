#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: export_results
short_description: Export KPIs and regression results to the results store, or replay an export spool
version_added: 0.1.0
description:
  - With O(bundles), exports what M(perfscale.topsail.visualize) and
    M(perfscale.topsail.analyze_regressions) returned as C(perfscale_export) - the play-end
    export of the collection's playbooks. It never fails for store problems; undelivered
    documents stay in the run's spool and a warning gives the command that replays them.
    The C(perfscale.topsail.kpi_export) callback, when enabled, does not export these bundles
    a second time.
  - With O(results_dir), parses the tree (fresh parse caches are used, none is written),
    computes its KPIs and exports them to the results store configured in the C(export)
    section - to re-process old runs. Nothing is written into the tree but the spool of
    what the store did not take.
  - With O(spool_dir), delivers the documents that an earlier export could not deliver
    (the C(kpi_export_spool/) of a run) to the store they were going to (see
    O(spool_target)). Delivered spool files move to C(replayed/). Two replays of one spool
    at once - the second fails at once, saying so.
  - Documents have deterministic ids, so exporting twice, or replaying after a partial
    delivery, stores each document exactly once.
  - Undelivered documents stay in the spool and the task fails with their count, the
    reason and where they are.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  results_dir:
    description:
      - An artifact tree whose KPIs are exported.
    type: path
  spool_dir:
    description:
      - A spool directory to replay.
    type: path
  spool_target:
    description:
      - With O(spool_dir), where the spooled documents go. V(spool) - the store each spool
        file recorded when it was written (backend, hosts, index prefix or SQLite file;
        never credentials; the configuration's credentials are used when it names the same
        store). V(config) - the store the configuration (and C(PERFSCALE_EXPORT_*)) names.
    type: str
    choices: [spool, config]
    default: spool
  bundles:
    description:
      - Export bundles, as returned by M(perfscale.topsail.visualize) and
        M(perfscale.topsail.analyze_regressions) in C(perfscale_export).
    type: list
    elements: dict
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Export an old run
  perfscale.topsail.export_results:
    results_dir: /data/runs/20261101-101500

- name: Export what the post-processing produced
  perfscale.topsail.export_results:
    bundles: "{{ [visualize_result.perfscale_export] }}"

- name: Replay what could not be delivered
  perfscale.topsail.export_results:
    spool_dir: /data/runs/20261101-101500/kpi_export_spool
"""

RETURN = r"""
perfscale_exported:
  description: The files of the bundles exported (delivered or spooled), with O(bundles).
  returned: with O(bundles)
  type: list
  elements: str
outcome:
  description: >-
    Counts of documents, delivered and undelivered, the store written to, and the spool
    files left (replay) or the spool file written (results_dir).
  returned: always
  type: dict
"""
