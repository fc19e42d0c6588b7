# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.matrix_run (documented in plugins/modules)."""

from __future__ import annotations

import os

from ansible import constants as C
from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils import executors
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.inventory_hosts import InventoryHostsExecutor
from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import clusters
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import reachability
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.run import lock as run_lock

ARGUMENT_SPEC = dict(
    config_key=dict(type="str", default="tests.benchmark"),
    rehearsal=dict(type="bool"),
    dest=dict(type="path"),
    status_only=dict(type="bool", default=False),
    capacity_nodes=dict(type="list", elements="dict"),
)


class ActionModule(PerfscaleAction):
    NAME = "matrix_run"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    @staticmethod
    def _child_environment(task_vars):
        """The points' environment: this controller's, plus what a point's own ansible-playbook (the
        toolbox_flow harness runs one in the point's directory) needs to find what this one found: the
        Ansible configuration file, the collections and the inventories."""
        env = dict(os.environ)
        if C.CONFIG_FILE and "ANSIBLE_CONFIG" not in env:
            env["ANSIBLE_CONFIG"] = C.CONFIG_FILE
        paths = [p for p in (C.COLLECTIONS_PATHS or ()) if isinstance(p, str)]
        if paths:
            env["ANSIBLE_COLLECTIONS_PATH"] = os.pathsep.join(paths)
        inventories = [s for s in task_vars.get("ansible_inventory_sources") or () if isinstance(s, str)
                       and os.path.exists(s)]
        if inventories:
            env["ANSIBLE_INVENTORY"] = ",".join(os.path.abspath(s) for s in inventories)
        return env

    def _cluster_connections(self, task_vars):
        """Cluster role -> connection options from the inventory (an executor running points on a
        cluster reaches it this way, as the toolbox roles do)."""
        return {role: clusters.inventory_connection_options(task_vars.get("groups"), task_vars.get("hostvars"), role,
                                                            template=self._templar.template)
                for role in clusters.CLUSTER_ROLES}

    def execute(self, result, args, task_vars, config):
        display = Display()
        plan = benchmark.plan_benchmark(config, args["config_key"])
        # which executor runs it: tests.benchmark.executor and the inventory group benchmark_hosts
        # (one line, before anything runs, when they do not go together)
        executor = executors.select_executor(plan.section["executor"], task_vars.get("groups"))
        on_hosts = executor == InventoryHostsExecutor.name
        hosts = InventoryHostsExecutor.group_hosts(task_vars.get("groups")) if on_hosts else []
        if on_hosts:
            InventoryHostsExecutor.for_plan(plan)  # a harness that needs the controller: one line now
        result["executor"] = executor
        # an executor that runs points on a cluster: it answers, before any point runs, or one line
        role = executors.executor_class(executor).cluster_role(plan.section)
        # the cluster it runs points on (None: none), whose lease the benchmark playbook takes
        result["cluster_role"] = role
        if role and not plan.section.get("rehearsal"):
            reachability.require_reachable(role, self._cluster_connections(task_vars)[role])
        if args["status_only"]:
            dest = args.get("dest") or task_vars.get("perfscale_artifact_dir") or task_vars.get("perfscale_run_root")
            state = benchmark.status(plan, dest if dest and os.path.isdir(dest) else None)
            state["nothing_to_do"] = state["pending"] == 0 and state["postprocessed"] and not on_hosts
            result.update(changed=False, hosts=hosts, **state)
            if state["nothing_to_do"]:
                result["msg"] = "nothing left to do: every point finished and was post-processed (%s)" % state["index"]
            elif on_hosts:
                result["msg"] = "%d point(s) for each of the %d host(s) of the inventory group %s (executor %s)" \
                    % (state["total"], len(hosts), InventoryHostsExecutor.group, executor)
            else:
                result["msg"] = "%d of %d point(s) to run" % (state["pending"], state["total"])
            return result

        rehearsal = plan.section["rehearsal"] if args.get("rehearsal") is None else args["rehearsal"]
        # every point planned before anything is deployed: what it asks, whether it fits and can be placed,
        # and what the matrix will cost from the history of earlier points
        capacity = benchmark.plan_capacity(plan, config, args.get("capacity_nodes"))
        estimate = None
        if capacity is not None:
            estimate = benchmark.estimate_cost_from_store(plan, capacity, config)
            result.update(capacity_estimate=estimate["totals"], capacity_line=estimate["line"])
        if rehearsal or self._task.check_mode:
            listing = benchmark.rehearse(plan, capacity, estimate)
            for entry in listing:
                display.display(benchmark.rehearsal_line(entry))
            if estimate is not None:
                display.display("rehearsal: %s" % estimate["line"])
            result.update(changed=False, rehearsal=True, total=len(listing), points=listing,
                          msg="rehearsal: %d point(s) would run; nothing was run%s" % (
                              len(listing), "; %s" % estimate["line"] if estimate else ""))
            return result
        if estimate is not None:
            display.display("matrix %s: %s" % (plan.section["name"], estimate["line"]))

        dest = args.get("dest") or task_vars.get("perfscale_artifact_dir") or task_vars.get("perfscale_run_root")
        if not dest:
            result.update(failed=True, msg="matrix_run: no dest and no artifact directory open (run resolve_config first)")
            return result

        if on_hosts:
            # the play's next task, perfscale.topsail.matrix_host_run on each host, runs it
            result.update(changed=False, rehearsal=False, hosts=hosts, hosts_run=True, failed_points=[],
                          fail_on_point_failure=plan.section["fail_on_point_failure"],
                          msg="matrix %s: %d point(s) on each of the %d host(s) of the inventory group %s (%s): the "
                              "hosts run it (perfscale.topsail.matrix_host_run), their points come back under %s; "
                              "nothing runs here"
                              % (plan.section["name"], len(plan.points), len(hosts), InventoryHostsExecutor.group,
                                 ", ".join(hosts), os.path.join(dest, InventoryHostsExecutor.hosts_dir, "<host>")))
            display.display(result["msg"])
            return result

        def show(progress):
            display.display(matrix_lib.format_progress(progress))

        # the ansible-playbook process is this worker's parent: when it dies (kill -9), the
        # worker is re-parented, and the matrix stops instead of running on unseen
        controller = os.getppid()
        started = run_lock.process_start_time(controller)

        def controller_alive():
            return os.getppid() == controller and run_lock.is_alive(controller, started)

        summary = benchmark.run_benchmark(plan, dest, on_progress=show, controller_alive=controller_alive,
                                          env=self._child_environment(task_vars),
                                          connections=self._cluster_connections(task_vars),
                                          capacity=capacity, estimate=estimate)
        for entry in summary.get("infeasible_points") or ():
            display.display("skipped before deploy: %s: %s" % (entry["name"], entry["reason"]))
        if summary.get("rendered_only"):
            rendered = summary["rendered"]
            result.update(changed=True, rehearsal=False, rendered_only=True, summary=summary,
                          matrix_dir=summary["matrix_dir"], failed_points=[], rendered=rendered,
                          fail_on_point_failure=plan.section["fail_on_point_failure"],
                          msg="matrix %s: %d point(s) rendered for %s as %s (%d pipeline task(s)); nothing ran here"
                              % (summary["matrix_dir"], summary["total"], plan.section["executor"],
                                 rendered["pipelinerun"], rendered["pipeline_tasks"]))
            return result
        ran = summary["succeeded"] + summary["failed"]
        result.update(
            changed=ran > 0,
            rehearsal=False,
            summary=summary,
            matrix_dir=summary["matrix_dir"],
            failed_points=summary["failed_points"],
            fail_on_point_failure=plan.section["fail_on_point_failure"],
            infeasible_points=summary.get("infeasible_points") or [],
            msg="matrix %s: %d point(s), %d succeeded, %d failed, %d skipped (already done), %d skipped before deploy "
                "(cannot fit or be placed), %d not run%s"
                % (summary["matrix_dir"], summary["total"], summary["succeeded"], summary["failed"],
                   summary["skipped"], summary.get("infeasible", 0), summary["not_run"],
                   " (PipelineRun %s: %s)" % (summary["pipelinerun"], summary.get("pipelinerun_reason"))
                   if summary.get("pipelinerun") else ""),
        )
        return result
