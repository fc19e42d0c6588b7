# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: log_tail
short_description: The last lines of a log, on one line
version_added: 0.3.0
description:
  - The last O(lines) non-blank lines of a log, each stripped, joined with O(separator); an empty string for
    an empty or missing log, so that a failure message adds nothing rather than an empty tail.
author:
  - perfscale.topsail developers (@perfscale)
positional: lines
options:
  _input:
    description: The log text.
    type: str
    required: true
  lines:
    description: How many lines.
    type: int
    default: 2
  separator:
    description: What joins them.
    type: str
    default: " / "
"""

EXAMPLES = r"""
- name: Fail with the end of the pod's log
  ansible.builtin.fail:
    msg: "the job failed{{ (': ' ~ tail) if tail else '' }}"
  vars:
    tail: "{{ pod_log.log | default('') | perfscale.topsail.log_tail(3) }}"
"""

RETURN = r"""
_value:
  description: The lines joined, or an empty string.
  type: str
"""

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.state import log_tail


class FilterModule:
    def filters(self):
        return {"log_tail": log_tail}
