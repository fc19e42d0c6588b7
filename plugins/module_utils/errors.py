# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every error this collection raises on purpose, under one base.

Each error carries a one-line message meant for the user: it names the input
and what was expected, and never contains a secret. The action plugins catch
``PerfscaleError`` once (``plugin_utils/action.py``) and turn it into a failed
task with that message; anything else is a bug and keeps its traceback.

Only the standard library is used: the built-in indicator script imports this
module when it can (see ``harnesses/indicators.py``).
"""

from __future__ import annotations


class PerfscaleError(Exception):
    """Base of every domain error: a one-line message for the user."""


class ConfigError(PerfscaleError):
    """A configuration document, preset, override or section is invalid."""


class ArtifactError(PerfscaleError):
    """An artifact directory or file cannot be created, read or trusted."""


class RunLockError(ArtifactError):
    """A run directory is held by another run."""


class CommandArgsError(PerfscaleError):
    """Toolbox command arguments cannot be rendered or do not fit the role."""


class SecretError(PerfscaleError):
    """A secret cannot be resolved (the message never contains its value)."""


class MatrixError(PerfscaleError):
    """A matrix specification or plan is invalid."""


class HarnessError(PerfscaleError):
    """A harness is unknown or cannot run the settings it was given."""


class HarnessOutputError(HarnessError):
    """A harness ran but its output does not follow its contract."""


class IndicatorError(HarnessError):
    """Invalid settings for a built-in performance indicator."""


class ExecutorError(PerfscaleError):
    """An executor is unknown or cannot run a point."""


class ManifestValidationError(PerfscaleError):
    """A Kubernetes manifest does not validate against its schema (one problem per ';')."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


class KPIError(PerfscaleError):
    """A KPI declaration or computation problem."""


class MissingData(KPIError):
    """Strict mode: labels or KPI values are missing (the list of what)."""

    def __init__(self, missing):
        self.missing = list(missing)
        super().__init__("missing: %s" % ", ".join(self.missing))


class WorkloadError(PerfscaleError):
    """A post-processing workload cannot be loaded or is incomplete."""


class PostProcessError(PerfscaleError):
    """Post-processing cannot go on (bad input tree, strict-mode gaps)."""


class ReportError(PerfscaleError):
    """An unknown or failing report."""


class RegressionError(PerfscaleError):
    """Invalid regression method, options or input."""


class StoreError(PerfscaleError):
    """A results-store problem (never contains credentials)."""


class StoreUnavailable(StoreError):
    """The results store cannot be reached (nothing was written)."""


class StoreConfigError(StoreError):
    """Invalid results-store configuration."""


class ExportError(PerfscaleError):
    """Bad export input (a bundle, a spool)."""


class ClusterError(PerfscaleError):
    """A cluster, its objects or a toolbox command's request of it is not as expected."""


class OlmError(ClusterError):
    """A package, channel, version or example the operator catalog does not offer."""


class CapacityError(PerfscaleError):
    """A capacity plan's input is invalid: unknown GPU or architecture, a parallelism the model cannot take."""
