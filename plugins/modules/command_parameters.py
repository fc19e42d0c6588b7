#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: command_parameters
short_description: The checked parameters of a toolbox command, ready to run its role
version_added: 0.3.0
description:
  - Renders the command-arguments template (C(config/command_args.yml.j2) of the collection, the
    variable C(perfscale_command_args_file), or O(template)) against the effective configuration,
    takes the entry C([prefix/]group command[/suffix]) and applies O(extra) on top (extra wins);
    with O(args_only=true), takes O(extra) alone.
  - Checks the parameters against the role's C(meta/argument_specs.yml) as a user of the
    reference's C(run_toolbox.py) expects, before anything runs - an unknown parameter (with the
    closest name), a value of the wrong type or outside its choices, a required parameter missing
    (unless its role variable is already set, for example by the inventory) fail in one line
    naming the command and the parameter, never the role's internal variables.
  - Returns the role-prefixed variables and the role's declared defaults (to reset the variables
    when the command ends). C(perfscale.topsail.toolbox_from_config) runs it first.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  command:
    description: The toolbox command, as C(group command), for example C(cluster capture_state).
    type: str
    required: true
  prefix:
    description: Entry prefix in the template, as in C(sutest/cluster set_scale).
    type: str
    default: ""
  suffix:
    description: Entry suffix in the template, as in C(cluster set_scale/big).
    type: str
    default: ""
  extra:
    description: Parameters (names without the role prefix) applied on top of the template's.
    type: dict
    default: {}
  args_only:
    description: Take the parameters from O(extra) only, without rendering the template.
    type: bool
    default: false
  template:
    description: The command-arguments template, instead of the collection's.
    type: path
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
- name: The parameters 'cluster capture_state' would run with
  perfscale.topsail.command_parameters:
    command: cluster capture_state
    extra:
      namespaces: [default]
    args_only: true
  register: prepared
"""

RETURN = r"""
role:
  description: The role of the command (C(group_command)).
  returned: success
  type: str
variables:
  description: The role-prefixed variables and their values, converted to the declared types.
  returned: success
  type: dict
defaults:
  description: The role's variables that declare a default, with that default.
  returned: success
  type: dict
"""
