# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: guidellm_job_reports
short_description: The guidellm report in a guidellm Job's log, and its llm-d benchmark reports
version_added: 0.2.0
description:
  - Takes the guidellm report the Job of C(llmd run_guidellm_benchmark) prints after its marker line, and converts it
    with the LLM load harness's guidellm converter into llm-d benchmark reports v0.2.1 (one per benchmark).
  - A log without the report (guidellm did not finish) or with a report the converter cannot read fails in one line.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input
options:
  _input:
    description: The Job pod's log.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Convert the report
  ansible.builtin.set_fact:
    reports: "{{ job_log.log | perfscale.topsail.guidellm_job_reports }}"
"""

RETURN = r"""
_value:
  description: C(guidellm) (the report as guidellm wrote it) and C(llmd) (the llm-d benchmark reports).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import guidellm_job
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError


def guidellm_job_reports(log):
    try:
        return guidellm_job.llmd_reports(str(log or ""))
    except HarnessOutputError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"guidellm_job_reports": guidellm_job_reports}
