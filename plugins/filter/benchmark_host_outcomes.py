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
    description: The hosts of the group (C(groups['benchmark_hosts'])).
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
    outcome: "{{ groups['benchmark_hosts'] | perfscale.topsail.benchmark_host_outcomes(hostvars) }}"
"""

RETURN = r"""
_value:
  description: C(hosts), C(failed_hosts) (C({host, msg})), C(failed_points) (with C(host) and C(label), C(host:name)) and C(lines).
  type: dict
"""

from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import hosts as host_matrix


def benchmark_host_outcomes(hosts, hostvars, variable="benchmark_host_matrix"):
    results = {}
    for host in hosts or ():
        facts = hostvars.get(host) if hasattr(hostvars, "get") else None
        results[host] = facts.get(variable) if facts is not None else None
    return host_matrix.host_outcomes(results)


class FilterModule:
    def filters(self):
        return {"benchmark_host_outcomes": benchmark_host_outcomes}
