# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: nfd_nodes
short_description: The nodes Node Feature Discovery labelled, or those with an NVIDIA GPU
version_added: 0.3.0
description:
  - From Node objects, the sorted names of those with any C(feature.node.kubernetes.io/) label or, with
    O(gpu), those with an NVIDIA GPU as the NVIDIA GPU operator recognises one (NFD's
    C(pci-10de.present), C(pci-0302_10de.present) or C(pci-0300_10de.present) set to C(true)).
  - The same rule as the C(gpu_nodes) wait of M(perfscale.topsail.k8s_wait).
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, gpu
options:
  _input:
    description: The nodes (C(resources) of M(kubernetes.core.k8s_info)).
    type: list
    elements: dict
    required: true
  gpu:
    description: Only the nodes with an NVIDIA GPU.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: The GPU nodes
  ansible.builtin.debug:
    msg: "{{ nodes.resources | perfscale.topsail.nfd_nodes(true) }}"
"""

RETURN = r"""
_value:
  description: The node names, sorted.
  type: list
  elements: str
"""

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import gpu as gpu_waits


def nfd_nodes(nodes, gpu=False):
    select = gpu_waits.has_gpu if gpu else gpu_waits.has_nfd_labels
    return sorted(gpu_waits.node_name(node) for node in nodes or () if isinstance(node, dict) and select(node))


class FilterModule:
    def filters(self):
        return {"nfd_nodes": nfd_nodes}
