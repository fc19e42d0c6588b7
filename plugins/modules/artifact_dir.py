#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: artifact_dir
short_description: Open, fail or close a numbered artifact directory
version_added: 0.1.0
description:
  - With O(state=open), creates C(NNN__<name>[_<suffix>]) inside the artifact
    directory currently open (the fact C(perfscale_artifact_dir)) and makes it the
    current one. The index C(NNN) is allocated under a lock, so steps started at the
    same time, in threads or processes, never get the same index.
  - With O(params), writes them to C(_params.yaml) in the new directory, masking
    the values of O(no_log_params) and of parameters whose names look sensitive
    (password, token, secret, credential, key).
  - With O(state=failed), writes O(message) to a C(FAILURE) file in the current
    directory and fails the task. Nothing is ever deleted.
  - With O(state=closed), makes the enclosing directory current again.
  - Toolbox roles call it at their start and end; orchestration uses it to group
    the commands of a step into a named directory.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  state:
    description:
      - What to do with the current artifact directory.
    type: str
    choices: [open, failed, closed]
    default: open
  name:
    description:
      - Name of the directory to open, without the index, for example
        C(host__capture_environment). Unsafe characters become C(_).
      - Required with O(state=open).
    type: str
  suffix:
    description:
      - Appended to the name as C(_<suffix>) to tell two invocations apart.
    type: str
    default: ""
  params:
    description:
      - Resolved parameters of the command, written to C(_params.yaml).
    type: dict
  role_path:
    description:
      - Path of a toolbox role; its parameters (the options of its
        C(meta/argument_specs.yml), with their current values, role prefix removed) are
        written to C(_params.yaml), options declared C(no_log) masked. The
        C(perfscale.topsail.toolbox_command) skeleton passes it.
      - Mutually exclusive with O(params).
    type: path
  role_name:
    description:
      - The name Ansible knows that role by (returned as RV(role), for the skeleton to run
        the role's steps).
    type: str
  no_log_params:
    description:
      - Names of parameters whose values are masked in C(_params.yaml).
    type: list
    elements: str
    default: []
  message:
    description:
      - With O(state=failed), the error written to C(FAILURE).
    type: str
    default: ""
  reserved:
    description:
      - With O(state=open), a directory already made for this command in the current directory
        (M(perfscale.topsail.toolbox_parallel) numbers its commands' directories, in their order,
        before starting them). Used when it exists and holds no C(_params.yaml) yet; otherwise
        the next numbered directory is made as usual.
    type: path
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: partial
    details: In check mode no directory is created and no FAILURE file written.
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Group the next commands in a named directory
  perfscale.topsail.artifact_dir:
    name: prepare_namespace

- name: Run commands inside it
  ansible.builtin.include_role:
    name: perfscale.topsail.host_capture_environment

- name: Close it
  perfscale.topsail.artifact_dir:
    state: closed
"""

RETURN = r"""
artifact_dir:
  description: The artifact directory current after the operation.
  returned: always
  type: str
  sample: /work/artifacts/20261122-101500/001__host__capture_environment
parent:
  description: With O(state=open), the directory the new one was created in.
  returned: when state is open
  type: str
closed:
  description: With O(state=closed), the directory that was closed.
  returned: when state is closed and a directory was open
  type: str
role:
  description: With O(state=open), the value of O(role_name).
  returned: when state is open
  type: str
failed_step:
  description: With O(state=closed), whether the closed directory holds a C(FAILURE) file.
  returned: when state is closed and a directory was open
  type: bool
"""
