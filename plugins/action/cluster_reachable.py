# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.cluster_reachable (documented in plugins/modules)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import clusters
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import reachability

ARGUMENT_SPEC = dict(
    clusters=dict(type="list", elements="str", required=True),
    timeout=dict(type="float", default=5.0),
)


class ActionModule(PerfscaleAction):
    NAME = "cluster_reachable"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    NEEDS_CONFIG = False

    def execute(self, result, args, task_vars, config):
        servers = {}
        for cluster in dict.fromkeys(args["clusters"]):
            if cluster not in clusters.CLUSTER_ROLES:
                raise ClusterError("cluster_reachable: unknown cluster role %r; expected one of %s"
                                   % (cluster, ", ".join(clusters.CLUSTER_ROLES)))
            options = clusters.inventory_connection_options(task_vars.get("groups"), task_vars.get("hostvars"),
                                                            cluster, template=self._templar.template)
            servers[cluster] = reachability.require_reachable(cluster, options, timeout=args["timeout"]).url
        result.update(changed=False, servers=servers,
                      msg="; ".join("cluster %s: %s answers" % item for item in servers.items()))
        return result
