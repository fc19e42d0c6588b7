# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: gpu_burn_results
short_description: Each GPU's verdict and GFLOP/s from gpu-burn logs
version_added: 0.2.0
description:
  - Parses the log of each node's gpu-burn run - the final C(Tested N GPUs) verdicts (C(OK) or C(FAULTY)) and the last
    progress line's GFLOP/s and error count per GPU - and sums them over the nodes.
  - A log without the final verdict (gpu-burn did not finish) fails in one line naming the node.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input
options:
  _input:
    description: The logs, by node name.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Parse the gpu-burn logs
  ansible.builtin.set_fact:
    results: "{{ {'worker-gpu-0': log_text} | perfscale.topsail.gpu_burn_results }}"
"""

RETURN = r"""
_value:
  description:
    - C(nodes) (per node C(tested), C(gpus) with C(gpu), C(status), C(gflops), C(errors), C(total_gflops), C(ok)),
      C(gpus_tested), C(total_gflops), C(faulty) (C(<node> GPU <i>)) and C(ok).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import gpu_burn
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError


def gpu_burn_results(logs):
    if not isinstance(logs, dict):
        raise AnsibleFilterError("gpu_burn_results: expected the logs by node name, got %s" % type(logs).__name__)
    try:
        return gpu_burn.summarize(logs)
    except HarnessOutputError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"gpu_burn_results": gpu_burn_results}
