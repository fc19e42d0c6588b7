# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: dsp_run_result
short_description: The KPIs of Data Science Pipelines runs, from the runs and their Argo Workflows
version_added: 0.4.0
description:
  - Matches each KFP run to its Argo Workflow (label C(pipeline/runid)) and derives, as the reference's
    rhods-pipelines post-processing, C(latency_s) (the workflow's C(root) node start - the run's C(created_at))
    and C(duration_s) (the workflow's C(finishedAt) - that start), then C(dsp_run_latency_s_*) and
    C(dsp_run_duration_s_*) (min, max, median, p99, and the degrade speed in seconds per run).
  - No run fails in one line.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, workflows
options:
  _input:
    description: The runs as the KFP API returned them (M(perfscale.topsail.kfp_runs)' RV(perfscale.topsail.kfp_runs#module:runs)).
    type: list
    elements: dict
    required: true
  workflows:
    description: The Argo Workflows of the namespace (those of other runs are ignored).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: The runs' KPIs
  ansible.builtin.set_fact:
    result: "{{ submitted.runs | perfscale.topsail.dsp_run_result(found.resources.workflows) }}"
"""

RETURN = r"""
_value:
  description: C(runs) (one record per run, with C(latency_s) and C(duration_s)) and C(result) (the KPIs).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError
from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import dsp_runs


def dsp_run_result(runs, workflows):
    try:
        return dsp_runs.dsp_run_result(list(runs or ()), list(workflows or ()))
    except HarnessOutputError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"dsp_run_result": dsp_run_result}
