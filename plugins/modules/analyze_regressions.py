#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: analyze_regressions
short_description: Compare the KPIs of a run with their history and flag regressions
version_added: 0.1.0
description:
  - Reads the payloads that M(perfscale.topsail.visualize) wrote in O(plots_dir) and, for
    every KPI not ignored for regression and not a view of another KPI, queries the results
    store (C(export) section) for its history - records of the same workload and KPI whose
    labels equal the entry's except the comparison keys and the ignored keys, on a machine
    with the same fingerprint unless C(regression.compare_across_machines) - ordered by
    timestamp. Forgotten runs (M(perfscale.topsail.mark_run)) stay out of the baseline; noisy
    runs enter it as C(regression.noise.baseline) decides (C(prefer_quiet), C(all), C(quiet_only)).
  - Runs the configured method (C(regression.method)) on history plus current value. Verdicts -
    C(regression) (a change at this run), C(persisting_regression) (still below the baseline an
    earlier run left; that run is named), C(improvement), C(drift) (no step, but the latest runs
    slope - method C(linear_segments), the default - with the run it starts at, how far it moved
    and whether for the worse), C(no_change) (with the p-value and the
    effect size), C(inconclusive) (a change the evidence cannot tell from noise yet - why, and how
    many more runs would decide it), C(not_enough_history) (with the reason - none stored, only
    noisy or forgotten runs, only other machines). Direction decides regression or improvement.
    With a history shorter than the method needs, the current value is compared with the history
    mean - a change beyond C(regression.short_history_threshold) that the history's spread tells
    apart at C(regression.short_history_max_pvalue) (prediction t-test), else inconclusive.
  - Writes C(regression_summary.yaml), C(regression_records.json) and
    C(regression_report.html) (linked from C(reports_index.html)) into O(plots_dir).
  - Never fails because of a regression; RV(fail_test) says whether the configuration
    (C(regression.fail_test_on_regression), C(regression.fail_on_persisting),
    C(regression.fail_on_drift), C(regression.require_history)) wants the test failed. When the store cannot be
    reached, every entry is reported as not analysed, with the reason.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  plots_dir:
    description:
      - The plots directory of the run. Defaults to the one the last M(perfscale.topsail.visualize) wrote.
    type: path
  export:
    description:
      - Hand the regression results to the P(perfscale.topsail.kpi_export#callback) callback,
        which exports them to the results store at the end of the play.
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
- name: Compare this run with its history
  perfscale.topsail.analyze_regressions:
  register: regressions

- name: Fail on regressions
  ansible.builtin.fail:
    msg: "{{ regressions.msg }}"
  when: regressions.fail_test
"""

RETURN = r"""
summary:
  description: >-
    Method, entries and KPIs analysed; new regressions, persisting regressions (with the run
    that introduced each), improvements, inconclusive verdicts, KPIs without history (and why),
    noisy entries, the baseline policy and how many baselines held noisy runs, entries not
    analysed (and why), how many history points were kept out of the baselines, the gate's
    decision and a one-line message.
  returned: success
  type: dict
report:
  description: Path of C(regression_report.html).
  returned: success
  type: str
regression_found:
  description: Whether at least one KPI regressed (at this run, or persistently).
  returned: success
  type: bool
fail_test:
  description: >-
    Whether the test fails - a new regression (of a noisy run only against a baseline holding
    noisy runs too) with C(regression.fail_test_on_regression), a persisting one with C(regression.fail_on_persisting)
    too, a drift for the worse with C(regression.fail_on_drift) too, or no history at all with
    C(regression.require_history).
  returned: success
  type: bool
fail_reasons:
  description: Why the test fails, one line each (empty when it does not).
  returned: success
  type: list
  elements: str
"""
