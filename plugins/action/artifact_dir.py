# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.artifact_dir (documented in plugins/modules)."""

from __future__ import annotations

import os


from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secrets_lib

ARGUMENT_SPEC = dict(
    state=dict(type="str", default="open", choices=["open", "failed", "closed"]),
    name=dict(type="str"),
    suffix=dict(type="str", default=""),
    params=dict(type="dict"),
    role_path=dict(type="path"),
    role_name=dict(type="str"),
    no_log_params=dict(type="list", elements="str", default=[]),
    message=dict(type="str", default=""),
    reserved=dict(type="path"),
)


class ActionModule(PerfscaleAction):
    NAME = "artifact_dir"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION = dict(required_if=[("state", "open", ["name"])], mutually_exclusive=[("params", "role_path")])
    NEEDS_CONFIG = False

    def execute(self, result, args, task_vars, config):
        self._task_vars = task_vars
        current = task_vars.get("perfscale_artifact_dir") or task_vars.get("perfscale_run_root")
        stack = list(task_vars.get("perfscale_artifact_dir_stack") or [])
        if not current:
            current = artifacts.resolve_run_root()
        handler = getattr(self, "_%s" % args["state"])
        return handler(result, args, current, stack)

    def _open(self, result, args, current, stack):
        name = args["name"] + ("_" + args["suffix"] if args["suffix"] else "")
        if self._task.check_mode:
            # the command's steps still run in check mode (they write nothing either)
            result.update(changed=False, skipped_reason="check mode: no artifact directory created", artifact_dir=current,
                          role=args.get("role_name"))
            return result
        params, sensitive = args.get("params"), list(args["no_log_params"])
        if args.get("role_path"):
            params, no_log = self._role_params(args["role_path"])
            sensitive.extend(no_log)
        path = self._reserved(args.get("reserved"), current) or artifacts.allocate_artifact_dir(current, name)
        if params is not None:
            masked = secrets_lib.mask_params(params, sensitive_names=sensitive)
            artifacts.write_yaml_atomic(os.path.join(path, artifacts.PARAMS_FILE), masked)
        result.update(
            changed=True,
            artifact_dir=path,
            parent=current,
            role=args.get("role_name"),
            ansible_facts=dict(perfscale_artifact_dir=path, perfscale_artifact_dir_stack=stack + [current]),
        )
        return result

    @staticmethod
    def _reserved(reserved, current):
        """The directory a parent run reserved for this command (toolbox_parallel numbers its
        commands' directories in their order before starting them), when it is a fresh one in
        the current directory; a command nested in it allocates its own as usual."""
        if not reserved or os.path.dirname(os.path.abspath(reserved)) != os.path.abspath(current):
            return None
        if not os.path.isdir(reserved) or os.path.exists(os.path.join(reserved, artifacts.PARAMS_FILE)):
            return None
        return os.path.abspath(reserved)

    def _role_params(self, role_path):
        """The role's parameters (unprefixed names) from its argument specs and the current
        variables, and the names of those declared ``no_log``."""
        options = command_args.role_argument_options(os.path.dirname(role_path), os.path.basename(role_path))
        role = os.path.basename(role_path.rstrip("/"))
        params, no_log = {}, []
        for variable, spec in options.items():
            name = variable[len(role) + 1:] if variable.startswith(role + "_") else variable
            params[name] = self._templar.template(self._task_vars.get(variable))
            if isinstance(spec, dict) and spec.get("no_log"):
                no_log.append(name)
        return params, no_log

    def _failed(self, result, args, current, stack):
        del stack
        message = args["message"] or "failed"
        if not self._task.check_mode:
            artifacts.write_failure(current, message)
        result.update(failed=True, changed=True, artifact_dir=current, msg="%s (recorded in %s)" % (
            message, os.path.join(current, artifacts.FAILURE_FILE)))
        return result

    def _closed(self, result, args, current, stack):
        del args
        if not stack:
            result.update(changed=False, artifact_dir=current, msg="no artifact directory open below the run root")
            return result
        parent = stack.pop()
        result.update(
            changed=False,
            artifact_dir=parent,
            closed=current,
            failed_step=os.path.exists(os.path.join(current, artifacts.FAILURE_FILE)),
            ansible_facts=dict(perfscale_artifact_dir=parent, perfscale_artifact_dir_stack=stack),
        )
        return result
