#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: export_results
short_description: Export the KPIs of a results tree, or replay an export spool
version_added: 0.1.0
description:
  - With O(results_dir), post-processes the tree (as M(perfscale.topsail.visualize), the
    parse cache makes it cheap) and exports its KPI records to the results store configured
    in the C(export) section - to re-process old runs.
  - With O(spool_dir), delivers the documents that an earlier export could not deliver
    (the C(kpi_export_spool/) of a run). Delivered spool files move to C(replayed/).
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

- name: Replay what could not be delivered
  perfscale.topsail.export_results:
    spool_dir: /data/runs/20261101-101500/kpi_export_spool
"""

RETURN = r"""
outcome:
  description: >-
    Counts of documents, delivered and undelivered, the store written to, and the spool
    files left (replay) or the spool file written (results_dir).
  returned: always
  type: dict
"""
