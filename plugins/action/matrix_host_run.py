# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.matrix_host_run (documented in plugins/modules).

The controller's side of the ``inventory_hosts`` executor (``module_utils/executors/inventory_hosts.py``):
the executor plans the host's share and its payload, and unpacks what comes back; this adapter does
what needs the host's connection - capture its environment, run the module ``matrix_host_run`` there,
fetch its archive of point directories.
"""

from __future__ import annotations

import os
import tempfile

from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.inventory_hosts import InventoryHostsExecutor

ARGUMENT_SPEC = dict(
    config_key=dict(type="str", default="tests.benchmark"),
    dest=dict(type="path"),
    capture_environment=dict(type="bool", default=True),
    gpu=dict(type="bool", default=True),
    keep_remote=dict(type="bool", default=False),
    payload=dict(type="dict"),
    work_dir=dict(type="path"),
)
MODULE = "perfscale.topsail.matrix_host_run"
CAPTURE_DIR = "host__capture_environment"


class ActionModule(PerfscaleAction):
    NAME = "matrix_host_run"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    TRANSFERS_FILES = True
    _requires_connection = True
    _supports_check_mode = False

    def _run_module(self, name, module_args, task_vars):
        outcome = self._execute_module(module_name=name, module_args=module_args, task_vars=task_vars)
        if outcome.get("failed") or outcome.get("unreachable"):
            detail = outcome.get("msg") or outcome.get("module_stderr") or outcome.get("module_stdout") or "no detail"
            raise HostError("%s on %s: %s" % (name, task_vars.get("inventory_hostname"), " ".join(str(detail).split())))
        return outcome

    def _capture_environment(self, parent, args, task_vars):
        """The host's fingerprint, written beside its matrix as the toolbox's host capture_environment does."""
        captured = self._run_module("perfscale.topsail.capture_environment", {"gpu": args["gpu"]}, task_vars)
        environment = dict(captured["environment"], collection=task_vars.get("perfscale_collection") or {})
        directory = artifacts.allocate_artifact_dir(parent, CAPTURE_DIR)
        for key in ("cpu", "memory", "os", "python", "packages", "gpus", "threads", "collection"):
            artifacts.write_json_atomic(os.path.join(directory, key + ".json"), environment.get(key))
        artifacts.write_json_atomic(os.path.join(directory, "environment.json"), environment)
        return directory

    def execute(self, result, args, task_vars, config):
        if args.get("payload") is not None or args.get("work_dir") is not None:
            result.update(failed=True, msg="matrix_host_run: payload and work_dir are internal (the action sets them); "
                                           "remove them from the task")
            return result
        display = Display()
        host = task_vars.get("inventory_hostname")
        dest = args.get("dest") or task_vars.get("perfscale_artifact_dir") or task_vars.get("perfscale_run_root")
        if not dest:
            result.update(failed=True, msg="matrix_host_run: no dest and no artifact directory open (run "
                                           "resolve_config first and pass perfscale_artifact_dir to the host's play)")
            return result
        plan = benchmark.plan_benchmark(config, args["config_key"], python=InventoryHostsExecutor.python_token)
        executor = InventoryHostsExecutor.for_plan(plan)
        matrix_dir, resumed, payload = executor.plan_host(plan.points, dest, host)
        total, pending = len(plan.points), payload["points"]
        result.update(matrix_dir=os.path.abspath(matrix_dir), total=total, resumed=resumed, host=host)
        if not pending:
            result.update(changed=False, failed_points=[], fail_on_point_failure=plan.section["fail_on_point_failure"],
                          summary=dict(total=total, succeeded=0, failed=0, skipped=total, not_run=0),
                          msg="%s: all %d point(s) already finished in %s" % (host, total, matrix_dir))
            return result
        try:
            if args["capture_environment"]:
                self._capture_environment(os.path.dirname(matrix_dir), args, task_vars)
            if self._connection._shell.tmpdir is None:
                self._make_tmp_path()
            work_dir = self._connection._shell.join_path(self._connection._shell.tmpdir, "perfscale-matrix")
            display.display("%s: running %d of %d point(s)" % (host, len(pending), total))
            outcome = self._run_module(MODULE, {"payload": payload, "work_dir": work_dir}, task_vars)
            summary = outcome["summary"]
            handle, local = tempfile.mkstemp(prefix=".%s-points-" % host, suffix=".tar.gz", dir=matrix_dir)
            os.close(handle)
            try:
                self._connection.fetch_file(summary["archive"], local)
                finished = executor.unpack(local, matrix_dir, [p["directory"] for p in pending])
            finally:
                os.unlink(local)
        except HostError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        finally:
            if not args["keep_remote"] and self._connection._shell.tmpdir:
                self._remove_tmp_path(self._connection._shell.tmpdir)
        failed_points, counts = executor.finish_host(matrix_dir, host, total, pending, summary)
        result.update(changed=bool(finished), failed_points=failed_points, host_python=outcome.get("host_python"),
                      unpacked=len(finished), host_seconds=summary.get("host_seconds"), summary=counts,
                      fail_on_point_failure=plan.section["fail_on_point_failure"])
        result["msg"] = ("%s: matrix %s: %d point(s), %d succeeded, %d failed, %d skipped (already done), %d not run"
                         % (host, matrix_dir, total, counts["succeeded"], counts["failed"], counts["skipped"],
                            counts["not_run"]))
        return result


class HostError(Exception):
    """The host could not run a module (its message is the task's)."""
