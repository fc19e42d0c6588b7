#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: toolbox_commands
short_description: List the toolbox commands, describe one, or check a command and its arguments
version_added: 0.2.0
description:
  - With O(command=list), every toolbox command (C(group command), as in the reference toolbox)
    with its one-line description, then the aliases and the commands that are not provided
    (with the reason).
  - With a command and O(help=true), its description and options from its
    C(meta/argument_specs.yml), in the user's words - names without the role prefix, type,
    default, description, with Ansible's markup shown as plain text and backticks (the same
    lines as C(run_toolbox.py group command --help)).
  - Otherwise, resolves the command (an alias to its command; an unknown one is one line with
    the closest match) and gathers its parameters for C(playbooks/toolbox.yml) to run it -
    O(params) (or the older O(args)), and the extra-vars typed as C(-e name=value) whose names
    are parameters of the command (the reference's C(run_toolbox.py --name=value)). An extra-var
    close to a parameter's name (C(-e namespace=) for C(namespaces)) fails with the closest name.
  - Checks them before any work, in one line naming the command and the parameter - an unknown
    name, a value of the wrong type or outside its choices, and (without O(from_config)) a
    required parameter missing.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  command:
    description:
      - C(list), or a toolbox command as C(group command), for example C(cluster capture_state).
    type: str
    required: true
  help:
    description:
      - Describe the command's options instead of preparing it.
    type: bool
    default: false
  params:
    description:
      - The command's parameters (names without the role prefix), a mapping or its JSON/YAML text.
    type: raw
  args:
    description:
      - The older name of O(params) (Ansible warns about an extra-var named C(args)).
    type: raw
  from_config:
    description:
      - The configuration supplies the parameters (C(-e from_config=true)); required ones are not
        asked for here.
    type: bool
    default: false
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
- name: List the toolbox commands
  perfscale.topsail.toolbox_commands:
    command: list
  register: commands

- name: Describe one
  perfscale.topsail.toolbox_commands:
    command: cluster capture_state
    help: true
"""

RETURN = r"""
action:
  description: C(list), C(help) or C(run).
  returned: success
  type: str
lines:
  description: With C(list) or C(help), the text, one line per item.
  returned: when listing or describing
  type: list
  elements: str
command:
  description: The command resolved (aliases followed).
  returned: when a command was named
  type: str
role:
  description: The role of the command.
  returned: when preparing a run
  type: str
args:
  description: The parameters given (from O(params) and C(-e name=value)), converted to their declared types.
  returned: when preparing a run
  type: dict
needs_cluster:
  description: Whether the command reaches a cluster (the playbook then checks that it answers first).
  returned: when preparing a run
  type: bool
"""
