# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The performance-indicator harness: built-in indicators and the user's own.

A point names its ``indicator``. A built-in one (matmul, conv1d, conv2d; see
``indicators.py``) is validated here and runs ``indicators.py`` by path with
``python -P`` (it imports only the standard library until the thread settings
are in its environment, and ``module_utils/`` must not shadow the standard
library on ``sys.path``). A custom one comes from ``tests.benchmark.indicators``
(``{command: [...], parameters: [...]}``): its command is formatted with the
point's settings and must print the output contract.
"""

from __future__ import annotations

import difflib
import json
import os
import sys

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import IndicatorError, MatrixError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import indicators

INDICATOR_KEY = "indicator"


def indicator_script():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "indicators.py")


def builtin_command(indicator, settings, python=None):
    """argv running a built-in indicator of this collection."""
    arguments = ["%s=%s" % (key, json.dumps(value)) for key, value in sorted(settings.items())]
    return [python or sys.executable, "-P", indicator_script(), indicator] + arguments


def thread_environment(threads):
    """The BLAS/OpenMP thread variables for ``threads`` (nothing when unset)."""
    env = {}
    indicators.apply_thread_settings(threads, env)
    return env


def _custom_command(name, spec, settings):
    command = spec.get("command")
    if isinstance(command, str):
        command = command.split()
    if not command or not all(isinstance(part, (str, int, float)) for part in command):
        raise MatrixError("indicator '%s': command must be a non-empty list of arguments" % name)
    try:
        return [str(part).format(**settings) for part in command]
    except KeyError as exc:
        raise MatrixError("indicator '%s': command uses {%s}, which the point does not set" % (name, exc.args[0])) from None
    except (ValueError, IndexError) as exc:
        raise MatrixError("indicator '%s': command: %s" % (name, exc)) from None


class PerfIndicatorHarness(base.Harness):
    name = "perf_indicator"
    description = "Performance indicators (matmul, conv1d, conv2d on numpy or torch) and your own commands"
    # the built-in indicators are one script of the standard library plus numpy or torch; custom
    # indicators' commands must exist on the host
    runs_on_hosts = True

    def host_files(self):
        return {"indicators.py": indicator_script()}

    @staticmethod
    def _custom(section):
        return dict((section or {}).get("indicators") or {})

    def known_settings(self, section):
        names = {INDICATOR_KEY}
        for indicator in indicators.known_indicators():
            names.update(indicators.parameter_names(indicator))
        for spec in self._custom(section).values():
            if (spec or {}).get("parameters") is None:
                return None  # a custom indicator accepting anything: no restriction
            names.update(spec["parameters"])
        return names

    def check_section(self, section):
        clash = sorted(set(self._custom(section)) & set(indicators.known_indicators()))
        if clash:
            raise MatrixError("custom indicator %s shadows a built-in indicator" % ", ".join(clash))

    def plan_point(self, name, settings, section, python=None, config=None):
        custom = self._custom(section)
        indicator = settings.get(INDICATOR_KEY)
        parameters = {k: v for k, v in settings.items() if k != INDICATOR_KEY}
        if indicator is None:
            raise MatrixError("point '%s' has no '%s' setting; set it in factors or common_settings" % (name, INDICATOR_KEY))
        if indicator in custom:
            spec = custom[indicator] or {}
            allowed = spec.get("parameters")
            if allowed is not None:
                unknown = sorted(set(parameters) - set(allowed))
                if unknown:
                    raise MatrixError("point '%s': indicator %s has no parameter %s; its parameters: %s"
                                      % (name, indicator, ", ".join(unknown), ", ".join(sorted(allowed)) or "(none)"))
            threads = settings.get("threads")
            return base.PointCommand(_custom_command(indicator, spec, settings), thread_environment(threads), threads)
        if indicator not in indicators.known_indicators():
            known = indicators.known_indicators() + sorted(custom)
            hint = difflib.get_close_matches(str(indicator), known, n=1)
            raise MatrixError("point '%s': unknown indicator %r%s; known indicators: %s" % (
                name, indicator, " (did you mean '%s'?)" % hint[0] if hint else "", ", ".join(known)))
        try:
            params = indicators.validate_settings(indicator, parameters)
        except IndicatorError as exc:
            raise MatrixError("point '%s': %s" % (name, exc)) from None
        return base.PointCommand(builtin_command(indicator, parameters, python=python),
                                 thread_environment(params["threads"]), params["threads"])
