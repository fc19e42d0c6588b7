#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: write_artifacts
short_description: Write several files into the current artifact directory in one task
version_added: 0.1.0
description:
  - Serializes each entry of O(files) and writes it into O(dest). Names ending in
    C(.json) are written as JSON, C(.yaml)/C(.yml) as YAML, anything else as text.
  - Every file is serialized and every name checked before the first is written;
    each file is written to a temporary name and renamed, so no file is ever
    half-written.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  files:
    description:
      - Mapping of relative file names to their content.
    type: dict
    required: true
  dest:
    description:
      - Directory to write into. Defaults to the artifact directory currently open.
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
- name: Save what was captured
  perfscale.topsail.write_artifacts:
    files:
      cpu.json: "{{ env.environment.cpu }}"
      notes.txt: captured on {{ inventory_hostname }}
"""

RETURN = r"""
dest:
  description: Directory the files were written to.
  returned: success
  type: str
files:
  description: Absolute paths of the files written.
  returned: success
  type: list
  elements: str
"""
