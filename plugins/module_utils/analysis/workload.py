# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Workloads: what a project tells the results tree about its artifacts.

A workload is a Python module (named in the configuration, ``postprocess.workload``)
with these attributes (see docs/post-processing.md):

Parsing (the cache is invalidated when this module's source changes)
  ``ARTIFACT_DIRNAMES``  mapping of keys to globs (``*__host__capture_environment``)
  ``IMPORTANT_FILES``    files the parsers read (``output.json``, ``KEY/file.json``; globs allowed)
  ``parse_once(ctx, settings)``  -> JSON-serializable results (cached)
  ``parse_always(entry)``        -> adjusts ``entry.results`` (optional; never cached)
  ``SOURCE_FILES``       (optional) more files whose change invalidates the cache
KPIs and labels
  ``KPIS``               list of decorated KPI functions (see kpi.py)
  ``labels_model()``     -> pydantic model of the KPI labels (extra keys forbidden)
  ``kpi_labels(entry)``  -> raw labels of an entry
  ``payload_results(entry)`` -> the ``results`` part of the long-term payload (optional)
  ``REGRESSION``         comparison_keys, ignored_keys, sorting_keys, ignored_entries,
                         machine_keys (the labels that fingerprint the machine)
Noise (optional; ``regression.noise`` holds the thresholds)
  ``spread(entry)``      -> the relative spread of the test's repetitions (e.g. CV), or None
  ``load_per_cpu(entry)`` -> the host's load average per CPU while the test ran, or None
Hooks and reports (optional)
  ``timestamp(entry)``   -> ISO-8601 time of the test (default: mtime of exit_code)
  ``REPORT_GROUP_BY``    setting the generic reports group points by
  ``REPORTS``            {name: (builder(ctx) -> (title, html), one-line description)}
  ``DEFAULT_REPORTS``    names drawn when ``postprocess.reports`` is null (default: all of REPORTS)

``load_workload`` accepts a built-in short name (``BUILTIN`` below), an
importable module name, or a path to a ``.py`` file: it is for names the trusted configuration
gives (``postprocess.workload``, a playbook's parameters). A name read from data (a results store's
document, an artifact, a server's answer) goes through ``load_workload_named_by_data``: data never
names code (docs/security.md).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import types

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import kpi as kpi_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import KPIError, WorkloadError

REQUIRED = ("parse_once", "kpi_labels", "labels_model", "KPIS")

# the built-in workloads (``workloads/``) by short name: the registry the names of the configuration
# and of data resolve against. A workload is loaded by name like a team's own, never imported here:
# the built-in ones stand on this package (``kpi``, ``reports``), the loader below them.
BUILTIN_PACKAGE = "ansible_collections.perfscale.topsail.plugins.module_utils.workloads"
BUILTIN = {
    "perf_indicators": BUILTIN_PACKAGE + ".perf_indicators",
    "llm_load": BUILTIN_PACKAGE + ".llm_load",
    "fine_tuning": BUILTIN_PACKAGE + ".fine_tuning",
}

# the workloads of the Prometheus captures (``postprocess.prom_workload``)
PROM_BUILTIN = {
    "prom": BUILTIN_PACKAGE + ".prom",
}


def builtin_names():
    return sorted(BUILTIN)


class Workload:
    def __init__(self, module, name):
        self.module = module
        self.name = name
        missing = [attr for attr in REQUIRED if not hasattr(module, attr)]
        if missing:
            raise WorkloadError("workload %s lacks %s (see docs/post-processing.md)" % (name, ", ".join(missing)))
        self.artifact_dirnames = dict(getattr(module, "ARTIFACT_DIRNAMES", {}))
        self.important_files = list(getattr(module, "IMPORTANT_FILES", []))
        try:
            self.kpis = kpi_lib.collect_kpis(module.KPIS)
        except KPIError as exc:
            raise WorkloadError("workload %s: %s" % (name, exc)) from None
        self.regression = dict(getattr(module, "REGRESSION", {}))
        self.reports = dict(getattr(module, "REPORTS", {}))
        self.default_reports = list(getattr(module, "DEFAULT_REPORTS", self.reports))
        unknown = [report for report in self.default_reports if report not in self.reports]
        if unknown:
            raise WorkloadError("workload %s: DEFAULT_REPORTS names %s, which REPORTS does not define"
                                % (name, ", ".join(unknown)))
        self.report_group_by = getattr(module, "REPORT_GROUP_BY", None)
        # the units of the settings a report may plot on an axis ({"size": "n, n x n matrices"})
        self.setting_units = dict(getattr(module, "SETTING_UNITS", {}))

    def source_files(self):
        """The files whose change invalidates the parse cache: the workload's module, its
        ``SOURCE_FILES``, and the built-in workload modules it imports (``workloads.base``), so
        that a workload built on the base need not list it."""
        files = [os.path.abspath(self.module.__file__)]
        for value in vars(self.module).values():
            if isinstance(value, types.ModuleType) and value.__name__.startswith(BUILTIN_PACKAGE + ".") \
                    and getattr(value, "__file__", None):
                files.append(os.path.abspath(value.__file__))
        files.extend(os.path.abspath(path) for path in getattr(self.module, "SOURCE_FILES", []))
        return list(dict.fromkeys(files))

    def parse_once(self, context, settings):
        return self.module.parse_once(context, settings)

    def parse_always(self, entry):
        function = getattr(self.module, "parse_always", None)
        if function:
            function(entry)

    def labels_model(self):
        return self.module.labels_model()

    def kpi_labels(self, entry):
        return self.module.kpi_labels(entry)

    def payload_results(self, entry):
        function = getattr(self.module, "payload_results", None)
        return function(entry) if function else entry.results

    def noise_measures(self, entry):
        """The workload's measures of a test's noise: ``spread`` (its repetitions') and
        ``load_per_cpu`` (its host's), those it has (a dict; empty: none)."""
        measures = {}
        for hook in ("spread", "load_per_cpu"):
            function = getattr(self.module, hook, None)
            value = function(entry) if function else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                measures[hook] = value
        return measures

    def noise(self, entry, thresholds, measures=None):
        """Why the test is noisy (a list of one-line reasons; empty: it is not), given
        ``regression.noise``: its repetitions' spread or its host's load passed a threshold."""
        measures = self.noise_measures(entry) if measures is None else measures
        reasons = []
        checks = (("spread", "max_spread", "repetitions spread %.3f > %.3f"),
                  ("load_per_cpu", "max_load_per_cpu", "host load %.2f per CPU > %.2f"))
        for hook, threshold, text in checks:
            limit = (thresholds or {}).get(threshold)
            value = measures.get(hook)
            if limit and value is not None and value > limit:
                reasons.append(text % (value, limit))
        return reasons

    def host_load(self, entry):
        """The host's load average per CPU while the test ran (the workload's hook), or None."""
        function = getattr(self.module, "load_per_cpu", None)
        return function(entry) if function else None

    def timestamp(self, entry):
        """The workload's time of the test, or None (the caller falls back to a file time)."""
        function = getattr(self.module, "timestamp", None)
        return function(entry) if function else None


def _import_module(name, builtin, setting):
    """A workload module from a built-in short name (``builtin``), an importable module name or a
    ``.py`` path; ``setting`` names the configuration key in errors."""
    if not name or not isinstance(name, str):
        raise WorkloadError("%s: expected a workload name, module or .py path, got %r" % (setting, name))
    if name.endswith(".py"):
        if not os.path.exists(name):
            raise WorkloadError("%s: workload file %s does not exist" % (setting, name))
        spec = importlib.util.spec_from_file_location("perfscale_workload_%s" % os.path.basename(name)[:-3], name)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a user's file may fail in any way; say which file, keep the cause
            raise WorkloadError("%s: workload file %s failed to load: %s: %s"
                                % (setting, name, type(exc).__name__, exc)) from exc
        return module
    try:
        return importlib.import_module(builtin.get(name, name))
    except ImportError as exc:
        raise WorkloadError("%s: workload %r cannot be imported (%s); built-in workloads: %s"
                            % (setting, name, exc, ", ".join(sorted(builtin)))) from None


def load_workload(name):
    return Workload(_import_module(name, BUILTIN, "postprocess.workload"), name)


def load_workload_named_by_data(name, trusted=(), source="a stored document"):
    """The workload a piece of data names (``source``: a results store's document, an artifact...):
    resolved only against the built-in registry and the names the trusted configuration gave
    (``trusted``: ``postprocess.workload``, a playbook's parameters), never imported or executed
    otherwise; anything else is a one-line ``WorkloadError`` and nothing is imported."""
    if isinstance(name, str) and (name in BUILTIN or name in trusted):
        return load_workload(name)
    shown = repr(name[:200] + ("..." if len(name) > 200 else "")) if isinstance(name, str) else \
        "of type %s" % type(name).__name__
    raise WorkloadError("workload %s named by %s: not loaded, neither a built-in workload (%s) nor one the "
                        "configuration names%s; a name from data never imports or runs code"
                        % (shown, source, ", ".join(sorted(BUILTIN)),
                           " (%s)" % ", ".join(sorted(str(t) for t in trusted)) if trusted else ""))


# what a Prometheus workload provides (see workloads/prom.py)
PROM_REQUIRED = ("read_captures", "kpis_of", "CAPTURE_DIR_GLOB")


def load_prom_workload(name):
    """The module of ``postprocess.prom_workload`` (built-in ``prom``, a module or a ``.py`` path);
    None when the setting is empty (no Prometheus post-processing)."""
    if not name:
        return None
    module = _import_module(name, PROM_BUILTIN, "postprocess.prom_workload")
    required = PROM_REQUIRED + (("report_context",) if getattr(module, "REPORTS", None) else ())
    missing = [attr for attr in required if not hasattr(module, attr)]
    if missing:
        raise WorkloadError("postprocess.prom_workload %s lacks %s (see workloads/prom.py)" % (name, ", ".join(missing)))
    return module
