#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: mark_run
short_description: Keep a run out of the baselines of regression analysis, or bring it back
version_added: 0.2.0
description:
  - Writes a mark for a run into the results store configured in the C(export) section.
    M(perfscale.topsail.analyze_regressions) leaves the KPIs of a run marked forgotten out of
    every baseline - a run measured on a broken node, during an incident, with a wrong
    setting.
  - Nothing is deleted - the run's KPIs stay in the store, and marking it again with
    O(forgotten=false) brings it back. The mark records when, the reason and who.
  - The run is named by its id (printed at the end of C(benchmark.yml), stored with every KPI
    as the label C(run_id), in C(run.json) of the run's directory), or by its directory.
  - Runs on the controller (action plugin). C(playbooks/forget.yml) wraps it.
author:
  - perfscale.topsail developers (@perfscale)
options:
  run_id:
    description:
      - The run's id.
    type: str
  results_dir:
    description:
      - The run's artifact directory; its id is read from its C(run.json).
    type: path
  forgotten:
    description:
      - V(true) keeps the run out of the baselines; V(false) brings it back.
    type: bool
    default: true
  reason:
    description:
      - Why, for the people who read the mark later.
    type: str
    default: ""
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
- name: Keep a run measured on a broken node out of the baselines
  perfscale.topsail.mark_run:
    run_id: 5f0e8d2c6b9a4e1f8a3b7c2d1e0f9a8b
    reason: node gpu-3 was throttling

- name: Bring it back
  perfscale.topsail.mark_run:
    run_id: 5f0e8d2c6b9a4e1f8a3b7c2d1e0f9a8b
    forgotten: false
"""

RETURN = r"""
run_id:
  description: The run marked.
  returned: success
  type: str
mark:
  description: The mark written (run id, forgotten, reason, by, timestamp).
  returned: success
  type: dict
previous:
  description: The run's mark before this one, or null.
  returned: success
  type: dict
store:
  description: The store written to.
  returned: success
  type: str
"""
