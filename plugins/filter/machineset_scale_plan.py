# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: machineset_scale_plan
short_description: Plan the MachineSet changes that give a cluster exactly N nodes of an instance type
version_added: 0.2.0
description:
  - The rule of the reference's C(cluster set_scale) on OpenShift's Machine API. The MachineSets of the
    instance type (or the one named O(name)) are kept when their replicas already add up to O(scale); when
    there is none, one is created from O(base_machineset) (default the first worker MachineSet); the first
    one gets O(scale) replicas and the others must be at 0, unless O(force) sets them to 0.
  - Fails in one line when the rule forbids the change (other MachineSets with replicas and no O(force), a
    malformed O(taint), an unknown O(base_machineset)).
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, instance_type, scale
options:
  _input:
    description: The cluster's MachineSets (C(kubernetes.core.k8s_info) resources).
    type: list
    elements: dict
    required: true
  instance_type:
    description: The instance type wanted.
    type: str
    required: true
  scale:
    description: The number of nodes wanted.
    type: int
    required: true
  name:
    description: The MachineSet to use or create, instead of every MachineSet of the instance type.
    type: str
    default: ""
  base_machineset:
    description: The MachineSet copied when one must be created.
    type: str
    default: ""
  force:
    description: Set the other MachineSets of the instance type to 0 replicas.
    type: bool
    default: false
  taint:
    description: C(key=value:Effect) given to the nodes of a created MachineSet.
    type: str
    default: ""
  spot:
    description: A created MachineSet asks for spot instances.
    type: bool
    default: false
  disk_size:
    description: Root volume size (GiB) of a created MachineSet.
    type: int
"""

EXAMPLES = r"""
- name: Plan three g5.2xlarge nodes
  ansible.builtin.set_fact:
    plan: "{{ machinesets.resources | perfscale.topsail.machineset_scale_plan('g5.2xlarge', 3, force=true) }}"
"""

RETURN = r"""
_value:
  description:
    - C(create) (a MachineSet body, or null), C(replicas) (MachineSet name to replicas), C(machinesets) (the
      names of the MachineSets of the instance type after the change) and C(unchanged).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import machinesets


def machineset_scale_plan(items, instance_type, scale, name="", base_machineset="", force=False, taint="", spot=False,
                          disk_size=None):
    try:
        return machinesets.plan_scale(list(items or []), instance_type, scale, name=name or "",
                                      base_machineset=base_machineset or "", force=bool(force), taint=taint or "",
                                      spot=bool(spot), disk_size=disk_size)
    except ClusterError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"machineset_scale_plan": machineset_scale_plan}
