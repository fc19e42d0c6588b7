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
    every KPI not ignored for regression, queries the results store (C(export) section) for
    its history - records of the same workload and KPI whose labels equal the entry's
    except the comparison keys and the ignored keys - ordered by timestamp.
  - Runs the configured method (C(regression.method) - C(edivisive), C(zscore) or
    C(relative)) on history plus current value; the current value is flagged when it starts
    a new segment. Direction decides regression or improvement. With a history shorter than
    the method needs, the current value is compared with the history mean
    (C(regression.short_history_threshold)).
  - Writes C(regression_summary.yaml), C(regression_records.json) and
    C(regression_report.html) (linked from C(reports_index.html)) into O(plots_dir).
  - Never fails because of a regression; RV(fail_test) says whether the configuration
    (C(regression.fail_test_on_regression)) wants the test failed. When the store cannot be
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
    Method, entries and KPIs analysed, regressions, improvements, KPIs without history, entries
    not analysed (and why), and a one-line message.
  returned: success
  type: dict
report:
  description: Path of C(regression_report.html).
  returned: success
  type: str
regression_found:
  description: Whether at least one KPI regressed.
  returned: success
  type: bool
fail_test:
  description: Whether a regression was found and C(regression.fail_test_on_regression) is set.
  returned: success
  type: bool
"""
