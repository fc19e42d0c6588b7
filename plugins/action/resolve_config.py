# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.resolve_config (documented in plugins/modules)."""

from __future__ import annotations

import json
import os

from ansible import constants as C
from ansible.utils.display import Display

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction, raw_extra_var
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.run import collection_info
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import checks as config_checks
from ansible_collections.perfscale.topsail.plugins.module_utils.config import launch_args as launch_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError
from ansible_collections.perfscale.topsail.plugins.module_utils.run import context as run_context
from ansible_collections.perfscale.topsail.plugins.module_utils.run import lock as run_lock
from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import artifact_transfer

ARGUMENT_SPEC = dict(
    config_file=dict(type="path"),
    presets=dict(type="raw"),
    overrides=dict(type="raw"),
    overrides_file=dict(type="path"),
    artifact_dir=dict(type="path"),
    write=dict(type="bool", default=True),
    launch_text=dict(type="str"),
    launch_file=dict(type="path"),
    launch_env=dict(type="str"),
    config_env=dict(type="str"),
    more_presets=dict(type="raw"),
)

# extra-vars a user passes on the command line (or an AWX survey sets) and
# that the action reads when the task does not set the option itself
TASK_VAR_FALLBACKS = dict(
    config_file="config_file",
    presets="preset",
    more_presets="more_presets",
    overrides="overrides",
    overrides_file="overrides_file",
    artifact_dir="artifact_dir",
    launch_text="launch_text",
    launch_file="launch_file",
    launch_env="launch_env",
)

# inventory variables (group_vars / host_vars) applied before -e preset / -e overrides
INVENTORY_VARS = dict(presets="perfscale_presets", overrides="perfscale_overrides")
TOOLBOX_LOG_CALLBACK = "perfscale.topsail.toolbox_log"

COLLECTION_ROOT = collection_info.collection_root_from(__file__, 3)


class ActionModule(PerfscaleAction):
    NAME = "resolve_config"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    NEEDS_CONFIG = False

    @staticmethod
    def _launch(args):
        """The launch arguments of a CI comment (text, file or environment variable), and the record of them."""
        given = [name for name in ("launch_text", "launch_file", "launch_env") if args.get(name) not in (None, "")]
        if not given:
            return None, None
        if len(given) > 1:
            raise ConfigError("launch arguments: give one of launch_text, launch_file, launch_env (got %s)"
                              % ", ".join(given))
        if given[0] == "launch_file":
            try:
                with open(args["launch_file"], encoding="utf-8") as handle:
                    text, source = handle.read(), "launch_file %s" % args["launch_file"]
            except OSError as exc:
                raise ConfigError("launch_file %s: cannot be read: %s" % (args["launch_file"], exc.strerror or exc)) \
                    from None
        elif given[0] == "launch_env":
            if args["launch_env"] not in os.environ:
                raise ConfigError("launch_env %s: the environment variable is not set" % args["launch_env"])
            text, source = os.environ[args["launch_env"]], "launch_env %s" % args["launch_env"]
        else:
            text, source = args["launch_text"], "launch_text"
        launch = launch_lib.parse(text, source)
        return launch, dict(launch.as_dict(), text=text)

    @staticmethod
    def _document(args):
        """The configuration document: a file (config_file, else the collection's), or the JSON of config_env."""
        if args.get("config_env"):
            name = args["config_env"]
            if args.get("config_file"):
                raise ConfigError("resolve_config: give config_file or config_env, not both")
            if name not in os.environ:
                raise ConfigError("config_env %s: the environment variable is not set" % name)
            try:
                document = json.loads(os.environ[name])
            except ValueError as exc:
                raise ConfigError("config_env %s: expected a configuration as JSON (%s)" % (name, exc)) from None
            if not isinstance(document, dict):
                raise ConfigError("config_env %s: expected a JSON object, got %s" % (name, type(document).__name__))
            return document, "$" + name
        config_file = args.get("config_file") or config_lib.default_config_path(COLLECTION_ROOT)
        return os.path.abspath(os.path.expanduser(config_file)), None

    def execute(self, result, args, task_vars, config):
        for option, variable in TASK_VAR_FALLBACKS.items():
            if args.get(option) in (None, "") and task_vars.get(variable) not in (None, ""):
                args[option] = self._templar.template(task_vars[variable])
                if option in ("overrides", "launch_text") and isinstance(args[option], str):
                    # -e name=value is split at whitespace by Ansible: take the whole text as typed
                    args[option] = raw_extra_var(variable) or args[option]

        if args.get("more_presets") not in (None, "", []):
            # an AWX survey's multiple-choice extras (cpt, rehearsal...): after the presets, in the
            # configuration's order whatever order the survey answers in
            document_presets = config_lib.known_presets_in_order(self._document(args)[0])
            extra = config_lib.parse_preset_names(args["more_presets"], source="more_presets")
            extra.sort(key=lambda name: document_presets.index(name) if name in document_presets else len(document_presets))
            args["presets"] = config_lib.parse_preset_names(args.get("presets")) + extra
        launch, launch_record = self._launch(args)
        if launch is not None:
            # a CI comment's presets come after -e preset; -e overrides win over its /var lines
            args["presets"] = config_lib.parse_preset_names(args.get("presets")) + launch.presets
            if launch.overrides:
                given = config_lib.parse_overrides(args.get("overrides"), source="overrides")
                args["overrides"] = dict(launch.overrides, **given)
        inventory = {option: self._templar.template(task_vars[variable])
                     for option, variable in INVENTORY_VARS.items() if task_vars.get(variable) not in (None, "")}
        document, source = self._document(args)
        resolved = config_lib.resolve_config(
            document, source=source,
            presets=args.get("presets"),
            overrides=args.get("overrides"),
            overrides_file=args.get("overrides_file"),
            inventory_presets=inventory.get("presets"),
            inventory_overrides=inventory.get("overrides"),
        )
        # every section, the matrix plan and the workload: a mistake fails here, before any work
        config_checks.validate_config(resolved.config)
        display = Display()
        for warning in resolved.warnings:
            display.warning(warning)
        if TOOLBOX_LOG_CALLBACK not in (C.CALLBACKS_ENABLED or ()) and not task_vars.get("perfscale_run_root"):
            display.warning("%s is not enabled: toolbox command directories get no _ansible.log; enable it with "
                            "ANSIBLE_CALLBACKS_ENABLED=%s (or callbacks_enabled in ansible.cfg)"
                            % (TOOLBOX_LOG_CALLBACK, TOOLBOX_LOG_CALLBACK))

        explicit_root = args.get("artifact_dir") or task_vars.get("perfscale_run_root")
        run_root = artifacts.resolve_run_root(explicit_root)
        written = {}
        if not self._task.check_mode and (args["write"] or os.path.isdir(run_root)):
            # one run per run directory, for the whole life of this ansible-playbook (the
            # worker running this task is its child)
            artifacts.ensure_dir(run_root)
            lock = run_lock.acquire(run_root, os.getppid())
            if lock.message():
                display.warning(lock.message())
        if args["write"] and not self._task.check_mode:
            # a matrix point's playbook (config_env) is part of its parent's run: no run identity of its own
            written = run_context.record_run_config(
                run_root, resolved, launch_record, identity=not args.get("config_env"),
                artifacts_destination=artifact_transfer.artifacts_destination(run_root, resolved.config))

        # resolving again in the same run (an imported playbook) keeps the
        # directory that is currently open
        if task_vars.get("perfscale_run_root") == run_root and task_vars.get("perfscale_artifact_dir"):
            current_dir = task_vars["perfscale_artifact_dir"]
            stack = list(task_vars.get("perfscale_artifact_dir_stack") or [])
        else:
            current_dir, stack = run_root, []
        result.update(
            # the facts hold the configuration as it is (a URL's user-info included): not shown
            # with -v; RV(config) is the masked copy people see
            _ansible_verbose_override=True,
            changed=bool(written),
            config_file=resolved.source,
            presets_applied=resolved.presets_applied,
            inventory=resolved.inventory,
            config=run_context.masked_config(resolved.config),
            run_root=run_root,
            written=written,
            ansible_facts=dict(
                perfscale_config=resolved.config,
                perfscale_config_file=resolved.source,
                perfscale_presets_applied=resolved.presets_applied,
                perfscale_run_root=run_root,
                perfscale_run_id=run_context.read_run_id(run_root),
                perfscale_artifact_dir=current_dir,
                perfscale_artifact_dir_stack=stack,
                perfscale_collection=collection_info.collection_info(COLLECTION_ROOT),
                perfscale_launch=launch.as_dict() if launch is not None else {},
            ),
        )
        return result
