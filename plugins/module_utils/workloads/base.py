# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of a post-processing workload: what the built-in workloads share.

A workload module (``analysis/workload.py`` lists what it declares) built on this one states
only what differs::

    from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import base

    IMPORTANT_FILES = base.important_files("ENV/environment.json")
    parse_always = base.parse_always                  # test_path, and a run id from where the test is
    timestamp = base.timestamp                        # results["started"]

    def parse_once(ctx, settings):
        results = base.read_failure(ctx)              # failure, stderr_tail
        output = ctx.read_json("output.json") or {}
        ...
        return results

    def labels_model():
        return base.labels_model(model=str, batch=Optional[int])

    def kpi_labels(entry):
        return base.kpi_labels(KPI_SETTINGS_VERSION, entry, model=..., batch=...)

    KPIS = [base.kpi("rate", "Median throughput", "GFLOP/s", "higher", fmt="{:.1f}")]

The point directory, as the matrix engine leaves it (``matrix/engine.py``): ``settings.yaml``,
``.uuid``, ``output.json`` (the harness's document), ``stderr.log``, ``point.json`` (timing),
``FAILURE`` when the point failed and, last, ``exit_code`` (read by the results tree itself:
``entry.exit_code``, ``entry.failed``).

Plain Python: pydantic is imported when a labels model is built, nothing heavier at all.
"""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import kpi as kpi_lib

# the files of a matrix point every workload reads or looks for
COMMON_IMPORTANT_FILES = ["settings.yaml", "exit_code", ".uuid", "output.json", "point.json", "FAILURE"]
STDERR_FILE = "stderr.log"
# how much of FAILURE a result keeps, and how many lines of a log's tail
FAILURE_CHARS = 4000
TAIL_LINES = 20


def important_files(*extra, stderr=True):
    """``IMPORTANT_FILES``: the common files of a point, ``stderr.log`` (unless ``stderr`` is
    false: a workload that does not read it), then ``extra`` (``KEY/file.json``, globs allowed)."""
    files = list(COMMON_IMPORTANT_FILES) + ([STDERR_FILE] if stderr else [])
    return files + [name for name in extra if name not in files]


# --------------------------------------------------------------------------
# reading a point directory


def tail(text, lines=TAIL_LINES):
    """The last ``lines`` lines of ``text`` (stripped), or None when there is nothing."""
    return "\n".join((text or "").strip().splitlines()[-lines:]) or None


def read_tail(ctx, relative, lines=TAIL_LINES):
    """The tail of a log of the point (``stderr.log``, ``stdout.log``), or None."""
    return tail(ctx.read_text(relative), lines)


def read_failure(ctx, stderr=True):
    """``{"failure", "stderr_tail"}``: what ``FAILURE`` says (its first ``FAILURE_CHARS``) and the
    tail of ``stderr.log`` when the point failed, None for both when it did not. A point whose
    exit code is not 0 has a ``FAILURE`` (the matrix engine writes it before ``exit_code``).
    With ``stderr`` false the result has no ``stderr_tail`` (and the log is not read)."""
    failed = ctx.exists("FAILURE")
    results = {"failure": ((ctx.read_text("FAILURE") or "")[:FAILURE_CHARS] or None) if failed else None}
    if stderr:
        results["stderr_tail"] = read_tail(ctx, STDERR_FILE) if failed else None
    return results


def read_optional_json(ctx, relative="", artifact=None):
    """A JSON file a test may lack, or None, without a warning: in the test directory when it
    exists, in the artifact directory ``artifact`` when one was found (a file missing from a
    directory that was found is still warned about)."""
    if artifact is not None:
        return ctx.read_json(relative, artifact=artifact) if ctx.path(artifact=artifact) else None
    return ctx.read_json(relative) if ctx.exists(relative) else None


def read_point(ctx, warn_missing=False):
    """``point.json`` (the point's timing: ``duration_s``, ``started``, ``ended``, load averages)
    as a dict, ``{}`` when it is missing (with a warning if ``warn_missing``) or not an object."""
    point = ctx.read_json("point.json") if warn_missing else read_optional_json(ctx, "point.json")
    return point if isinstance(point, dict) else {}


# --------------------------------------------------------------------------
# hooks


def parse_always(entry):
    """What depends on where the tree is now: its path relative to the results root (and, when
    the parse found no run id, as for a tree of an older release without run.json, a run id made
    of it: the first directory of the path)."""
    entry.results["test_path"] = entry.relative
    if not entry.results.get("run_id"):
        entry.results["run_id"] = entry.relative.split(os.sep)[0] if os.sep in entry.relative else "."


def timestamp(entry):
    """The time the test started (``results["started"]``, from ``point.json`` or the harness), or
    None: the caller falls back to the modification time of ``exit_code``."""
    return entry.results.get("started")


# --------------------------------------------------------------------------
# labels


def settings_reader(entry, none_is_unset=True):
    """``setting(key, default=None)``: the value a point ran with, from the harness's
    ``@parameters`` (``results["parameters"]``) first, then the point's settings. A parameter of
    None is taken as unset (the settings are asked) unless ``none_is_unset`` is false."""
    parameters = entry.results.get("parameters") or {}
    settings = entry.settings

    def setting(key, default=None):
        if not none_is_unset:
            return parameters.get(key, settings.get(key, default))
        value = parameters.get(key)
        return settings.get(key, default) if value is None else value

    return setting


def labels_model(**fields):
    """The pydantic model of a workload's labels: ``kpi_settings_version``, then ``fields``
    (``name=type``, in order; every one required, ``Optional[...]`` ones accepting None), then
    ``test_path`` and ``run_id`` (set by ``parse_always``); an unknown label is refused."""
    import pydantic  # pylint: disable=import-outside-toplevel

    declared = {"kpi_settings_version": str}
    declared.update(fields)
    declared.update(test_path=str, run_id=str)
    return pydantic.create_model("Labels", __config__=pydantic.ConfigDict(extra="forbid"),
                                 **{name: (kind, ...) for name, kind in declared.items()})


def kpi_labels(version, entry, **labels):
    """The raw labels of ``labels_model``: ``kpi_settings_version`` (``version``), ``labels``, then
    where the test is (``test_path``, ``run_id``)."""
    raw = {"kpi_settings_version": version}
    raw.update(labels)
    raw.update(test_path=entry.results.get("test_path"), run_id=entry.results.get("run_id"))
    return raw


def summary_results(entry, section, **counts):
    """``payload_results`` of a workload whose numbers are one section of its results: that
    section, the point's ``duration_s``, and ``name=key`` the length of the list ``results[key]``."""
    results = dict(entry.results.get(section) or {})
    results["duration_s"] = entry.results.get("duration_s")
    for name, key in counts.items():
        results[name] = len(entry.results.get(key) or [])
    return results


# --------------------------------------------------------------------------
# KPIs

# one KPI declared in one call (``kpi_lib.declare``: the point resources' KPIs of analysis use it too)
BETTER = kpi_lib.BETTER
kpi = kpi_lib.declare
