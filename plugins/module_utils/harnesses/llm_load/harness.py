# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The LLM load harness as a matrix harness (``tests.benchmark.harness: llm_load``).

A point's settings are the command line's options with underscores
(``rate``, ``output_tokens``, ``stream: false``...); each point runs
``python -m ...harnesses.llm_load ... --output .`` in its own directory, so its
reports (``benchmark_report_stage_<i>.json``), ``requests.jsonl`` and
``result.json`` land beside the contract document the matrix engine keeps as
``output.json``. The bearer token is given by reference only: ``token:
secret:NAME`` becomes ``--token-file <secrets dir>/NAME``; a literal token is refused.
Settings listed in the section's ``deployment_factors`` are labels of the point,
not options (see ``matrix.plan_points``).
"""

from __future__ import annotations

import difflib
import os
import subprocess

from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import MatrixError, SecretError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import child_pythonpath

TOKEN_SETTING = "token"
REQUIRED = ("url", "model")


def _cli():
    # the command line module imports the asyncio client: only when a plan needs it
    from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import cli  # pylint: disable=import-outside-toplevel

    return cli


class LlmLoadHarness(base.Harness):
    name = "llm_load"
    description = "LLM inference load (OpenAI-compatible servers): constant, Poisson, concurrency, sweep, trace"

    def known_settings(self, section):
        return set(_cli().option_actions()) | {TOKEN_SETTING}

    def plan_point(self, name, settings, section, python=None, config=None):
        cli = _cli()
        missing = [key for key in REQUIRED if settings.get(key) in (None, "")]
        if missing:
            raise MatrixError("point '%s': the llm_load harness needs %s (set in factors or common_settings)"
                              % (name, " and ".join(missing)))
        known = set(cli.option_actions()) | {TOKEN_SETTING}
        unknown = sorted(set(settings) - known)
        if unknown:
            known = sorted(known)
            hints = ["%s (did you mean %s?)" % (key, difflib.get_close_matches(key, known, n=1)[0])
                     if difflib.get_close_matches(key, known, n=1) else key for key in unknown]
            raise MatrixError("point '%s': the llm_load harness has no option %s; list labels of the system under "
                              "test in deployment_factors" % (name, ", ".join(hints)))
        options = dict(settings)
        token = options.pop(TOKEN_SETTING, None)
        if token is not None:
            if not secret_refs.is_secret_ref(token):
                raise MatrixError("point '%s': token must be a secret reference (secret:NAME, a file of the "
                                  "secrets directory), never the token itself" % name)
            if options.get("token_file"):
                raise MatrixError("point '%s': give token or token_file, not both" % name)
            try:
                options["token_file"] = secret_refs.secret_path(config or {}, secret_refs.secret_name(token))
            except SecretError as exc:
                raise MatrixError("point '%s': token: %s" % (name, exc)) from None
        return base.PointCommand(cli.command_from_settings(options, ".", python=python),
                                 env={"PYTHONPATH": child_pythonpath()})


class LoadRunError(Exception):
    """The harness could not run, or ran and failed (one line: what and why)."""


STDERR_LOG = "llm_load.log"


def run_in_directory(options, dest, timeout, python=None):
    """Run the harness once with ``options`` (settings as for a matrix point; the token given as
    ``token_file``), writing its files into ``dest`` and its stderr into ``dest/llm_load.log``.
    Returns the validated contract document; LoadRunError with the harness's last line otherwise."""
    cli = _cli()
    from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError  # pylint: disable=import-outside-toplevel

    try:
        argv = cli.command_from_settings(options, dest, python=python)
    except ConfigError as exc:
        raise LoadRunError(str(exc)) from None
    os.makedirs(dest, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=child_pythonpath())
    log_path = os.path.join(dest, STDERR_LOG)
    with open(log_path, "w", encoding="utf-8") as log:
        try:
            done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=log, text=True, timeout=timeout, env=env, check=False)
        except subprocess.TimeoutExpired:
            raise LoadRunError("llm_load did not finish within %s s (see %s)" % (timeout, log_path)) from None
    if done.returncode != 0:
        last = base.tail(log_path, lines=1) or "no message"
        raise LoadRunError("llm_load exited with %d: %s" % (done.returncode, last))
    return base.validate_output(done.stdout)
