# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: gpu_inventory
short_description: The GPUs of each node, as the NVIDIA GPU operator labels and advertises them
version_added: 0.3.0
description:
  - From Node objects, one line per node labelled C(nvidia.com/gpu.present=true) by the GPU operator, sorted
    by node name - C(<node> <allocatable GPUs> <nvidia.com/gpu.product>). Time-sliced GPUs count, whether
    advertised as C(nvidia.com/gpu) or renamed C(nvidia.com/gpu.shared).
author:
  - perfscale.topsail developers (@perfscale)
options:
  _input:
    description: The nodes (C(resources) of M(kubernetes.core.k8s_info) or M(perfscale.topsail.k8s_wait)).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Write the GPUs of each node
  ansible.builtin.copy:
    content: "{{ nodes.resources | perfscale.topsail.gpu_inventory }}"
    dest: gpus.txt
    mode: "0644"
"""

RETURN = r"""
_value:
  description: The lines, each ending with a newline; empty without GPU node.
  type: str
"""

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import gpu as gpu_waits


class FilterModule:
    def filters(self):
        return {"gpu_inventory": gpu_waits.gpu_inventory}
