# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The clusters a run talks to, as in the reference: ``sutest`` and ``driver``.

``sutest`` is the system under test (the AI platform, the model servers);
``driver`` is where load generators and user pods run (often the same cluster).
Each is an inventory group whose first host's variables say how to reach it:
``perfscale_kubeconfig`` and ``perfscale_kube_context``. With neither, the
``kubernetes.core`` modules use the standard ``KUBECONFIG`` / ``K8S_AUTH_*``
environment: nothing is hard-coded.
"""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError

CLUSTER_ROLES = ("sutest", "driver")
# inventory variable -> kubernetes.core option
HOST_VARIABLES = {"perfscale_kubeconfig": "kubeconfig", "perfscale_kube_context": "context"}


def connection_options(host_vars, cluster="sutest", host=None):
    """The kubernetes.core options for a cluster from its inventory variables (only those set);
    a kubeconfig that does not exist is a ClusterError naming the cluster and where it was set."""
    options = {option: host_vars[variable] for variable, option in HOST_VARIABLES.items() if host_vars.get(variable)}
    if "kubeconfig" in options:
        options["kubeconfig"] = os.path.expanduser(str(options["kubeconfig"]))
        if not os.path.isfile(options["kubeconfig"]):
            raise ClusterError("cluster %s: kubeconfig %s does not exist (perfscale_kubeconfig of the inventory host %s)"
                               % (cluster, options["kubeconfig"], host or "?"))
    return options


def inventory_connection_options(groups, hostvars, cluster, template=None):
    """The connection options of ``cluster`` from an inventory: its group's first host's
    variables (``template`` renders each value, e.g. Ansible's templar); ``{}`` when the
    inventory has no such group."""
    hosts = (groups or {}).get(cluster) or []
    host_vars = (hostvars or {}).get(hosts[0], {}) if hosts else {}
    render = template or (lambda value: value)
    return connection_options({name: render(host_vars.get(name)) for name in HOST_VARIABLES},
                              cluster=cluster, host=hosts[0] if hosts else None)
