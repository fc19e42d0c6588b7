#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: cluster_reachable
short_description: Check, before any work, that the clusters a play needs answer
version_added: 0.3.0
description:
  - For each cluster role (C(sutest), C(driver)), finds the API server the C(kubernetes.core)
    modules would reach - the inventory's C(perfscale_kubeconfig) / C(perfscale_kube_context) of
    that group (see the C(perfscale.topsail.cluster) lookup), else C(K8S_AUTH_HOST),
    C(K8S_AUTH_KUBECONFIG), C(KUBECONFIG) (a list of files, merged as kubectl does) and
    C(K8S_AUTH_CONTEXT), else C(~/.kube/config) - and opens a TCP connection to it (or to the
    cluster's C(proxy-url)) within O(timeout).
  - A cluster that cannot be reached fails in one line naming the cluster role, its server URL,
    where that came from and the reason (the name does not resolve, connection refused, no
    answer). Nothing is sent to the server; credentials are checked by the modules themselves.
  - The toolbox playbook runs it before a command that reaches a cluster.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  clusters:
    description: The cluster roles to check, C(sutest) and/or C(driver).
    type: list
    elements: str
    required: true
  timeout:
    description: Seconds to wait for each connection.
    type: float
    default: 5.0
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Check that both clusters answer before the flow starts
  perfscale.topsail.cluster_reachable:
    clusters: [sutest, driver]
"""

RETURN = r"""
servers:
  description: The server URL of each cluster role checked.
  returned: success
  type: dict
"""
