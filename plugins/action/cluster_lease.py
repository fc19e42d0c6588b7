# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.cluster_lease (documented in plugins/modules)."""

from __future__ import annotations

import os
import socket
import sys
import uuid

from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import cluster_lease
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import clusters
from ansible_collections.perfscale.topsail.plugins.module_utils.run import context as run_context
from ansible_collections.perfscale.topsail.plugins.module_utils.run import lock as run_lock

ARGUMENT_SPEC = dict(
    state=dict(type="str", choices=["held", "released"], default="held"),
    cluster=dict(type="str", default="sutest"),
    enabled=dict(type="bool", default=True),
)
LOG_FILE = "cluster-lease.log"


class ActionModule(PerfscaleAction):
    NAME = "cluster_lease"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def execute(self, result, args, task_vars, config):
        if args["cluster"] not in clusters.CLUSTER_ROLES:
            raise ClusterError("cluster_lease: unknown cluster role %r; expected one of %s"
                               % (args["cluster"], ", ".join(clusters.CLUSTER_ROLES)))
        if args["state"] == "released":
            return self._release(result, task_vars.get("perfscale_cluster_lease") or {})
        if not args["enabled"] or self._task.check_mode:
            result.update(changed=False, skipped=True, msg="cluster lease: not taken (%s)" % (
                "check mode" if self._task.check_mode else "cluster_lock is false"))
            return result
        settings = config_schema.read_section(config, "clusters")["lease"]
        options = clusters.inventory_connection_options(task_vars.get("groups"), task_vars.get("hostvars"),
                                                        args["cluster"], template=self._templar.template)
        run_root = task_vars.get("perfscale_run_root") or ""
        run_id = task_vars.get("perfscale_run_id") or uuid.uuid4().hex
        info = (run_context.read_run_info(os.path.join(run_root, run_context.RUN_INFO_FILE)) or {}) if run_root else {}
        controller = os.getppid()
        controller_start = run_lock.process_start_time(controller)
        holder = cluster_lease.Holder(run_id, artifacts=info.get("artifacts_url") or "%s:%s" % (
            socket.gethostname(), run_root), pid=controller, pid_start=controller_start)
        store = cluster_lease.KubeLeases(cluster_lease.api_client(options.get("kubeconfig"), options.get("context")),
                                         settings["namespace"])
        store.ensure_namespace()
        display = Display()
        # leases the queue did not write are named in one warning each (control characters escaped)
        lease = cluster_lease.ClusterLease(store, holder, duration_s=settings["duration_s"], poll_s=settings["poll_s"],
                                           warn=display.warning)
        outcome = lease.acquire(notify=display.display, timeout_s=settings["wait_timeout_s"])
        fact = {"run_id": run_id, "cluster": args["cluster"], "namespace": settings["namespace"],
                "kubeconfig": options.get("kubeconfig") or "", "context": options.get("context") or "",
                "duration_s": settings["duration_s"], "state": outcome.state}
        if outcome.state == "taken":
            log_path = os.path.join(run_root, LOG_FILE) if run_root and os.path.isdir(run_root) else ""
            fact["renewer_pid"] = cluster_lease.start_renewer(cluster_lease.renewer_argv(
                sys.executable, settings["namespace"], run_id, settings["duration_s"], controller, controller_start,
                kubeconfig=options.get("kubeconfig"), context=options.get("context"), log_path=log_path))
            fact["renewer_start"] = run_lock.process_start_time(fact["renewer_pid"])
        display.display(outcome.message())
        result.update(changed=outcome.state == "taken", msg=outcome.message(), state=outcome.state,
                      waited_s=round(outcome.waited_s, 1), taken_over=outcome.taken_over, dropped=outcome.dropped,
                      ignored=outcome.ignored,
                      lease=fact, ansible_facts={"perfscale_cluster_lease": fact})
        return result

    def _release(self, result, fact):
        if fact.get("state") != "taken":
            # not taken by this play (disabled, or held by the run that started it): nothing to give back
            result.update(changed=False, msg="cluster lease: nothing to release")
            return result
        store = cluster_lease.KubeLeases(cluster_lease.api_client(fact.get("kubeconfig") or None,
                                                                  fact.get("context") or None), fact["namespace"])
        lease = cluster_lease.ClusterLease(store, cluster_lease.Holder(fact["run_id"]), duration_s=fact["duration_s"])
        released = lease.release()
        cluster_lease.stop_renewer(fact.get("renewer_pid"), fact.get("renewer_start"))
        message = "cluster lease: %s by run %s" % (
            "released" if released else "no longer held (taken over after a silence)", fact["run_id"])
        Display().display(message)
        result.update(changed=released, msg=message,
                      ansible_facts={"perfscale_cluster_lease": dict(fact, state="released" if released else "lost")})
        return result
