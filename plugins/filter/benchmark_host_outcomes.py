# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: benchmark_host_outcomes
short_description: The verdict of the benchmark matrix over the inventory's benchmark hosts
version_added: 0.2.0
description:
  - Gathers what M(perfscale.topsail.matrix_host_run) registered on each host of a group
    (as C(benchmark_host_matrix)) into the hosts that could not run their matrix (unreachable,
    a module error, never reached), the failed points with their host, and one line per host.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, hostvars
options:
  _input:
    description:
      - The hosts that ran the matrix - C(hosts) of the M(perfscale.topsail.matrix_run) result when
        the C(inventory_hosts) executor runs it (the C(benchmark_hosts) group).
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars).
    type: dict
    required: true
  variable:
    description: The name each host registered its result under.
    type: str
    default: benchmark_host_matrix
"""

EXAMPLES = r"""
- name: Gather the hosts' outcomes
  ansible.builtin.set_fact:
    outcome: "{{ benchmark_matrix.hosts | default([]) | perfscale.topsail.benchmark_host_outcomes(hostvars) }}"
"""

RETURN = r"""
_value:
  description: C(hosts), C(failed_hosts) (C({host, msg})), C(failed_points) (with C(host) and C(label), C(host:name)) and C(lines).
  type: dict
"""

from ansible_collections.perfscale.topsail.plugins.module_utils.executors.inventory_hosts import InventoryHostsExecutor


def benchmark_host_outcomes(hosts, hostvars, variable="benchmark_host_matrix"):
    results = {}
    for host in hosts or ():
        facts = hostvars.get(host) if hasattr(hostvars, "get") else None
        results[host] = facts.get(variable) if facts is not None else None
    return InventoryHostsExecutor.outcomes(results)


class FilterModule:
    def filters(self):
        return {"benchmark_host_outcomes": benchmark_host_outcomes}
