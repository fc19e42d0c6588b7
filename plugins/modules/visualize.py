#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: visualize
short_description: Parse a results tree into KPIs and HTML reports
version_added: 0.1.0
description:
  - Walks O(results_dir) for test roots (directories with C(settings.yaml) and
    C(exit_code)), parses each one with the workload named by C(postprocess.workload)
    (reusing the parse cache kept in each test directory while the files it read and
    the parser are unchanged), builds each test's payload (metadata, results,
    labels, KPIs), and draws the reports listed in C(postprocess.reports).
  - Writes everything into a new C(NNN__plots/) directory inside O(results_dir)
    (earlier plots directories are left alone) - C(parse.log), C(kpis.json),
    C(kpis.openmetrics), C(kpi_records.json), per-test C(tests/<path>/payload.json),
    C(kpis.json) and C(kpis.openmetrics), the reports with C(plotly.min.js) beside
    them (they work offline), and C(reports_index.html).
  - Missing or malformed files make fields empty, with warnings in C(parse.log) and
    in the error report; they never abort the parse.
  - In strict mode (C(postprocess.strict) or O(strict)) a successful test without all its
    labels and KPI values fails the task with the list of what is missing.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  results_dir:
    description:
      - The artifact tree to post-process. Defaults to the run root of this play.
    type: path
  strict:
    description:
      - Fail when a successful test lacks a label or a KPI value. Defaults to C(postprocess.strict).
    type: bool
  plots_name:
    description:
      - Name of the output directory, as C(NNN__<plots_name>).
    type: str
    default: plots
  export:
    description:
      - Hand the KPI records to the P(perfscale.topsail.kpi_export#callback) callback, which
        exports them to the results store at the end of the play (when C(export.enabled)).
    type: bool
    default: true
  replot:
    description:
      - Post-processing a tree again outside its test (C(visualize.yml) on its own) - when the tree already has a
        finished plots directory, nothing is handed over for export unless C(export.enabled_on_replot).
      - V(false) within a test (C(benchmark.yml), C(flow.yml)), whose new points are always exported.
    type: bool
    default: true
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
- name: Post-process the current run
  perfscale.topsail.visualize:

- name: Re-process a tree downloaded from CI, strictly
  perfscale.topsail.visualize:
    results_dir: /data/ci-run-1234
    strict: true
"""

RETURN = r"""
plots_dir:
  description: The new plots directory.
  returned: success
  type: str
index:
  description: Path of C(reports_index.html).
  returned: success
  type: str
summary:
  description: Tests, failed tests, tests read from cache, warnings, KPI records, report paths.
  returned: success
  type: dict
"""
