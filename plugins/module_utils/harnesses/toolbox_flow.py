# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The toolbox-flow harness: each matrix point runs toolbox commands on a cluster
(``tests.<flow>.benchmark.harness: toolbox_flow``).

This is the reference's matrix benchmarking of cluster tests: before each point, the
point's settings are written into the configuration (``settings_key``, e.g.
``tests.fine_tuning.test_settings.gpu: 2``), then the toolbox commands of the point
run with their arguments rendered from ``command_args.yml.j2`` against that
configuration. Concretely a point is one child ``ansible-playbook
perfscale.topsail.flow_point`` started in the point's directory; it runs the steps of
the flow ``tests.<point_flow>.steps`` (``test``: deploy, wait, load, capture;
``cleanup_after``: undeploy, even when the test failed), each command in its own
``NNN__group__command`` directory inside the point directory.

The child receives the parent's resolved configuration as JSON in its environment
(``PERFSCALE_POINT_CONFIG``: never on a command line, never in an artifact) and the
point's settings as overrides; it records the point's effective configuration
(masked) in the point directory.

The point's result is the contract document (``name``, ``framework``,
``@parameters``, ``@result``) that a command of the point wrote as ``result.json``
into its directory - ``llm_load run``, ``fine_tuning run_fine_tuning_job`` do -
(``result_command`` picks one when several do); it is kept as the point's
``output.json``. A point that failed gets the ``FAILURE`` of the command that broke.
"""

from __future__ import annotations

import copy
import glob
import json
import os
import sys

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError, MatrixError, PerfscaleError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base

CONFIG_ENV = "PERFSCALE_POINT_CONFIG"
PLAYBOOK = "perfscale.topsail.flow_point"
RESULT_FILE = "result.json"
FLOW_FILE = "flow.json"
# the running Python's ansible-playbook (a venv, ansible-runner): as toolbox_parallel does
PLAYBOOK_COMMAND = ("-m", "ansible.cli.playbook")


def _options(section):
    options = (section or {}).get("toolbox_flow") or {}
    return options.get("point_flow"), options.get("settings_key"), options.get("result_command")


def point_overrides(settings_key, settings):
    """The dotted overrides that write a point's settings under ``settings_key`` (a setting's own dots
    go deeper: ``hyper_parameters.lr`` sets ``<settings_key>.hyper_parameters.lr``)."""
    return {"%s.%s" % (settings_key, key): value for key, value in sorted(settings.items())}


def command_dir_pattern(command):
    """The glob of a command's directories in a point directory ('llm_load run' -> '[0-9]*__llm_load__run*')."""
    return "[0-9]*__%s*" % "__".join(command.split())


class ToolboxFlowHarness(base.Harness):
    name = "toolbox_flow"
    description = "Toolbox commands on a cluster per point (deploy, wait, load or train, capture, undeploy)"

    def known_settings(self, section):
        return None  # checked against the configuration under settings_key, point by point

    def check_section(self, section):
        flow, settings_key, result_command = _options(section)
        if not flow or not settings_key:
            raise MatrixError("the toolbox_flow harness needs toolbox_flow.point_flow (a tests.<name> flow run for each "
                              "point) and toolbox_flow.settings_key (where the point's settings are written)")
        if result_command is not None and len(str(result_command).split()) != 2:
            raise MatrixError("toolbox_flow.result_command %r: expected 'group command', e.g. 'llm_load run'"
                              % (result_command,))

    def plan_point(self, name, settings, section, python=None, config=None):
        flow, settings_key, _result = _options(section)
        if config is not None:
            steps = config_lib.get_dotted(config, "tests.%s.steps" % flow, None)
            if not isinstance(steps, dict):
                raise MatrixError("toolbox_flow.point_flow %r: the configuration has no flow tests.%s.steps" % (flow, flow))
            if not isinstance(config_lib.get_dotted(config, settings_key, None), dict):
                raise MatrixError("toolbox_flow.settings_key %r: expected a mapping of the configuration" % settings_key)
            try:
                config_lib.apply_overrides(copy.deepcopy(config), point_overrides(settings_key, settings),
                                           source="point '%s'" % name)
            except PerfscaleError as exc:
                raise MatrixError("%s (the point's settings must be keys of %s)" % (exc, settings_key)) from None
        extra = {"point_flow": flow, "artifact_dir": ".", "overrides": point_overrides(settings_key, settings)}
        argv = [python or sys.executable] + list(PLAYBOOK_COMMAND) + ["-e", json.dumps(extra, sort_keys=True), PLAYBOOK]
        # the configuration travels in the environment: a URL's user-info stays off command lines and point.json
        return base.PointCommand(argv, env={CONFIG_ENV: json.dumps(config or {}, sort_keys=True, default=str)})

    @staticmethod
    def _result_paths(directory, section):
        _flow, _key, result_command = _options(section)
        pattern = command_dir_pattern(result_command) if result_command else "[0-9]*__*"
        return sorted(glob.glob(os.path.join(directory, pattern, RESULT_FILE))), result_command

    def read_output(self, directory, section=None):
        paths, result_command = self._result_paths(directory, section)
        if not paths:
            raise HarnessOutputError("no command of the point wrote %s%s (expected a command that measures, such as "
                                     "llm_load run or fine_tuning run_fine_tuning_job)"
                                     % (RESULT_FILE, " in a %s directory" % result_command if result_command else ""))
        if len(paths) > 1 and not result_command:
            raise HarnessOutputError("several commands of the point wrote %s (%s); set toolbox_flow.result_command"
                                     % (RESULT_FILE, ", ".join(os.path.basename(os.path.dirname(p)) for p in paths)))
        with open(paths[-1], encoding="utf-8") as handle:
            try:
                return base.validate_output(handle.read())
            except HarnessOutputError as exc:
                raise HarnessOutputError("%s: %s" % (os.path.relpath(paths[-1], directory), exc)) from None

    def keep_output(self, directory, document):
        artifacts.write_json_atomic(os.path.join(directory, base.OUTPUT_FILE), document)

    def failure_detail(self, directory):
        """What broke: the point flow's step outcomes and the FAILURE of each command that wrote one."""
        lines = []
        try:
            with open(os.path.join(directory, FLOW_FILE), encoding="utf-8") as handle:
                lines += ["--- steps ---"] + list(json.load(handle).get("steps") or [])
        except (OSError, ValueError):
            pass
        for path in sorted(glob.glob(os.path.join(directory, "[0-9]*__*", artifacts.FAILURE_FILE))):
            lines += ["--- %s ---" % os.path.basename(os.path.dirname(path)), base.tail(path, lines=10)]
        return "\n".join(lines) or super().failure_detail(directory)
