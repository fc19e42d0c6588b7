# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: cluster
short_description: How to reach a cluster of the inventory (sutest, driver)
version_added: 0.2.0
description:
  - Returns, for each cluster role (C(sutest) - the system under test, C(driver) - where load
    generators and user pods run), the connection options of the C(kubernetes.core) modules -
    C(kubeconfig) and C(context) - from the inventory group of that name, first host, variables
    C(perfscale_kubeconfig) and C(perfscale_kube_context).
  - A C(perfscale_kubeconfig) that does not exist is an error naming the cluster and the host.
  - With no such group or variables, an empty mapping - the modules then use the standard
    C(KUBECONFIG) / C(K8S_AUTH_*) environment, as C(kubernetes.core) does. Nothing is
    hard-coded.
  - The toolbox skeleton (C(perfscale.topsail.toolbox_command)) sets what this returns as
    module defaults of the C(perfscale.topsail.k8s) action group, for the cluster named by
    the variable C(perfscale_cluster) (default C(sutest)).
author:
  - perfscale.topsail developers (@perfscale)
options:
  _terms:
    description: Cluster roles, C(sutest) or C(driver).
    required: true
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Reach the driver cluster in a task of your own
  kubernetes.core.k8s_info:
    kind: Node
  module_defaults:
    group/perfscale.topsail.k8s: "{{ lookup('perfscale.topsail.cluster', 'driver') }}"
"""

RETURN = r"""
_raw:
  description: For each cluster role, C(kubeconfig) and C(context) when the inventory sets them.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import clusters
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        variables = variables or {}
        self.set_options(var_options=variables, direct=kwargs)
        results = []
        for term in terms:
            if term not in clusters.CLUSTER_ROLES:
                raise AnsibleLookupError("perfscale.topsail.cluster: unknown cluster role %r; expected one of %s"
                                         % (term, ", ".join(clusters.CLUSTER_ROLES)))
            try:
                results.append(clusters.inventory_connection_options(
                    variables.get("groups"), variables.get("hostvars"), term, template=self._templar.template))
            except PerfscaleError as exc:
                raise AnsibleLookupError(str(exc)) from None
        return results
