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
  description: One C({node, cpu_millicores, memory_bytes}) per node, in the nodes' order.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import node_resources


def node_free_resources(nodes, pods):
    try:
        return node_resources.free_resources(list(nodes or []), list(pods or []))
    except ClusterError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"node_free_resources": node_free_resources}
