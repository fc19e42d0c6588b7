# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: node_free_resources
short_description: What is free on each node - allocatable minus the requests of its running pods
version_added: 0.2.0
description:
  - For each node, its allocatable CPU and memory minus what the pods bound to it request (pods that
    have not Succeeded or Failed; a limit stands for a missing request, init containers and overhead
    counted as the scheduler counts them). Never below 0.
  - Its NVIDIA GPU resources as well, whatever the GPU operator's MIG strategy (C(gpus)) - C(nvidia.com/gpu)
    (full GPUs, or MIG slices under the C(single) strategy), C(nvidia.com/gpu.shared) (time-slicing renamed) and
    C(nvidia.com/mig-<profile>) (the C(mixed) strategy), each minus what the pods request of it.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, pods
options:
  _input:
    description: Nodes (C(kubernetes.core.k8s_info) resources).
    type: list
    elements: dict
    required: true
  pods:
    description: The cluster's pods (every namespace).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Compute what each worker has free
  ansible.builtin.set_fact:
    free: "{{ nodes.resources | perfscale.topsail.node_free_resources(pods.resources) }}"
"""

RETURN = r"""
_value:
  description: >-
    One C({node, cpu_millicores, memory_bytes, gpus}) per node, in the nodes' order; C(gpus) maps each GPU
    resource the node advertises to how many are free (C({}) on a node without GPUs).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import node_resources
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import gpu as gpu_waits


def node_free_resources(nodes, pods):
    nodes = list(nodes or [])
    advertised = [gpu_waits.gpu_resources(node) if isinstance(node, dict) else {} for node in nodes]
    names = tuple(sorted({name for own in advertised for name in own}))
    try:
        free = node_resources.free_resources(nodes, list(pods or []), ("cpu", "memory") + names)
    except ClusterError as exc:
        raise AnsibleFilterError(str(exc)) from None
    for entry, own in zip(free, advertised):
        counts = {name: entry.pop(name) for name in names}
        entry["gpus"] = {name: counts[name] for name in names if name in own}
    return free


class FilterModule:
    def filters(self):
        return {"node_free_resources": node_free_resources}
