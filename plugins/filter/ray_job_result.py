# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: ray_job_result
short_description: The result of a Ray benchmark job, from its submitter's log
version_added: 0.4.0
description:
  - Reads the log of a RayJob's submitter pod (C(ray job logs --follow), the entrypoint's output) as the reference's
    ray_benchmark post-processing does - the end marker (C(SCRIPT SUCCEEDED), C(--- PASSED:), C(--- FAILED:),
    C(iperf Done)), C(network_overhead)'s seconds after C(:::), C(iperf)'s receiver bitrate - and any
    C(PERFSCALE_RESULT {json}) line a workload prints.
  - A log without an end marker fails in one line.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, flavor
options:
  _input:
    description: The submitter pod's log.
    type: str
    required: true
  flavor:
    description: The benchmark's flavor (C(network_overhead), C(iperf)); none reads both forms.
    type: str
"""

EXAMPLES = r"""
- name: Parse the Ray job's result
  ansible.builtin.set_fact:
    result: "{{ submitter_log | perfscale.topsail.ray_job_result('network_overhead') }}"
"""

RETURN = r"""
_value:
  description: C(succeeded) (no failure marker), C(result) (numbers, e.g. C(time_s), C(bitrate_gbps)) and C(marker).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError
from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import ray_job


def ray_job_result(log, flavor=None):
    try:
        return ray_job.parse(str(log or ""), flavor or None)
    except HarnessOutputError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"ray_job_result": ray_job_result}
