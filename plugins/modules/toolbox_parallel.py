#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: toolbox_parallel
short_description: Run independent toolbox commands side by side, each in its own numbered directory
version_added: 0.2.0
description:
  - The reference's C(run.Parallel) with C(run_and_catch) - for a prepare step whose commands do
    not depend on each other (deploy two operators, download a model while the GPU operator installs).
  - Makes each command's C(NNN__group__command[_suffix]) directory in the current artifact
    directory, in the order given, then runs every command as its own
    C(ansible-playbook perfscale.topsail.toolbox) with this run's resolved configuration, its
    inventory and its cluster (the children work inside this run's lock). A child's output goes
    to C(_toolbox_run.log) in its directory.
  - Waits for B(all) the commands, then fails when any failed, naming each failed command with
    the first line of its C(FAILURE) - nothing is left running and every failure is reported.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  commands:
    description:
      - The commands - each an entry key of C(command_args.yml.j2) (C([prefix/]group command[/suffix]),
        its arguments taken from the configuration) or a mapping with C(command), C(args) (added to,
        or with C(from_config=false) instead of, the configuration's) and C(from_config).
    type: list
    elements: raw
    required: true
  max_parallel:
    description:
      - At most this many commands at once (0 - all of them).
    type: int
    default: 0
  timeout:
    description:
      - Seconds after which commands still running are stopped and counted as failed (0 - no limit).
    type: int
    default: 0
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: none
    details: In check mode no command is started.
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Prepare the cluster, independent commands side by side
  perfscale.topsail.toolbox_parallel:
    commands:
      - cluster capture_environment
      - cluster deploy_operator/nfd
      - command: storage download_to_pvc
        args: {name: llama-3-8b}
"""

RETURN = r"""
results:
  description: One per command, in the order given - command, artifact_dir, rc, ok, failure (first line of its
    FAILURE, or why it did not finish), duration_s.
  returned: always
  type: list
  elements: dict
lines:
  description: One line per command with its outcome.
  returned: always
  type: list
  elements: str
"""
