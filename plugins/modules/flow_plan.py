#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: flow_plan
short_description: Check a test flow's steps in the configuration and decide which ones run
version_added: 0.2.0
description:
  - Reads C(tests.<flow>.steps) of the effective configuration - the C(cleanup_before),
    C(prepare), C(test) and C(cleanup_after) lists of toolbox commands (entry keys of
    C(command_args.yml.j2), mappings with C(command) and C(args), C(parallel) groups,
    or C(tasks) items naming a tasks file of the playbook) - and checks every item; a mistake is one line
    naming the key.
  - Decides which steps run - O(steps) only those, O(skip) not those, O(keep) not
    C(cleanup_after) - and returns one summary line per step (with O(outcomes), their outcomes).
  - The planner of the M(perfscale.topsail.test_flow) role; runs on the controller.
author:
  - perfscale.topsail developers (@perfscale)
options:
  flow:
    description: The flow's name - its steps are C(tests.<flow>.steps).
    type: str
    required: true
  steps:
    description: Only these steps (a comma-separated string or a list), as C(-e steps=prepare,test).
    type: raw
  skip:
    description: Not these steps, as C(-e skip=cleanup_before).
    type: raw
  keep:
    description: Leave what the test made - C(cleanup_after) does not run. Defaults to C(clusters.keep).
    type: bool
  outcomes:
    description: The outcome of each step run so far, for the summary lines.
    type: dict
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Plan the flow's steps
  perfscale.topsail.flow_plan:
    flow: cluster_demo
    steps: "{{ steps | default(omit) }}"
  register: plan
"""

RETURN = r"""
steps:
  description: One per step in order - step, items (checked), run (bool), reason (why it does not run).
  returned: always
  type: list
  elements: dict
keep:
  description: Whether cleanup_after is left out.
  returned: always
  type: bool
lines:
  description: One line per step with its outcome (or why it does not run).
  returned: always
  type: list
  elements: str
"""
