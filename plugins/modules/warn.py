#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: warn
short_description: Show a warning and go on
version_added: 0.2.0
description:
  - Shows O(msg) as an Ansible warning (C([WARNING])) and succeeds - for a toolbox role to say that a
    parameter it was given has no effect here (a parameter of the reference that only makes sense on
    OpenShift, or that is obsolete).
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  msg:
    description: The warning.
    type: str
    required: true
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
- name: Say that spot instances are not supported here
  perfscale.topsail.warn:
    msg: "cluster set_scale: spot=true has no effect on this platform (ignored)"
  when: cluster_set_scale_spot | bool
"""

RETURN = r"""
msg:
  description: The warning.
  returned: always
  type: str
"""
