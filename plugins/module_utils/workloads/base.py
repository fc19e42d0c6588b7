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
        output = base.read_document(ctx)             # output.json: {} when missing or the point failed
        result = base.mapping(output.get("@result"))  # a part of the wrong shape reads as absent
        environment = base.read_host_environment(ctx, artifact="ENV")
        results.update(host=base.host_identity(environment), run_id=base.read_run_id(ctx))
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

The tree may come from anywhere (a bucket, a colleague's archive): what the helpers read has the
shape they promise - a mapping where a mapping is expected, a list where a list is - whatever the
files hold; a file of the wrong shape reads as absent, with a warning naming it, never an exception.

Plain Python: pydantic is imported when a labels model is built, nothing heavier at all.
"""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import kpi as kpi_lib

# the files of a matrix point every workload reads or looks for
COMMON_IMPORTANT_FILES = ["settings.yaml", "exit_code", ".uuid", "output.json", "point.json", "FAILURE"]
STDERR_FILE = "stderr.log"
OUTPUT_FILE = "output.json"
POINT_FILE = "point.json"
FAILURE_FILE = "FAILURE"
# where a host's environment capture is (the artifact key workloads give it) and the run's run.json
HOST_ENVIRONMENT = "HOST_CAPTURE_ENVIRONMENT"
ENVIRONMENT_FILE = "environment.json"
RUN_INFO = "RUN_INFO"
# how much of FAILURE a result keeps, and how many lines of a log's tail
FAILURE_CHARS = 4000
TAIL_LINES = 20


def important_files(*extra, stderr=True):
    """``IMPORTANT_FILES``: the common files of a point, ``stderr.log`` (unless ``stderr`` is
    false: a workload that does not read it), then ``extra`` (``KEY/file.json``, globs allowed)."""
    files = list(COMMON_IMPORTANT_FILES) + ([STDERR_FILE] if stderr else [])
    return files + [name for name in extra if name not in files]


# --------------------------------------------------------------------------
# shapes


def mapping(value):
    """``value`` when it is a mapping, else ``{}``: a part of a document of the wrong shape reads as absent."""
    return value if isinstance(value, dict) else {}


def listed(value):
    """``value`` when it is a list, else ``[]``."""
    return value if isinstance(value, list) else []


def field(document, *keys):
    """``document[key][key]...``, or None as soon as a level is missing or not a mapping."""
    for key in keys:
        if not isinstance(document, dict):
            return None
        document = document.get(key)
    return document


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


def _label(relative, artifact):
    """How the parse context names a file in its warnings."""
    return ("%s/%s" % (artifact, relative) if relative else artifact) if artifact else relative


def read_mapping(ctx, relative="", artifact=None, optional=False):
    """A JSON object of the test as a dict; ``{}`` when the file is missing (warned about unless
    ``optional``, as ``read_optional_json``), unreadable (warned about by the context), or another
    JSON value (``<file>: expected a JSON object, got list; ignored``)."""
    value = read_optional_json(ctx, relative, artifact) if optional else ctx.read_json(relative, artifact=artifact)
    if value is None:
        return {}
    if not isinstance(value, dict):
        ctx.warnings.append("%s: expected a JSON object, got %s; ignored" % (_label(relative, artifact),
                                                                             type(value).__name__))
        return {}
    return value


def read_point(ctx, warn_missing=False):
    """``point.json`` (the point's timing: ``duration_s``, ``started``, ``ended``, load averages)
    as a dict, ``{}`` when it is missing (with a warning if ``warn_missing``) or not an object."""
    return read_mapping(ctx, POINT_FILE, optional=not warn_missing)


def read_document(ctx, names=(OUTPUT_FILE,), failed_too=False, usable=None):
    """The harness's contract document of the point (``@parameters``, ``@result``...) as a dict, ``{}``
    when there is none: the first of ``names`` that is there, a JSON object and ``usable(document)``
    (when given). A point that failed has none unless ``failed_too`` (a harness that writes its own
    file, as ``result.json``, may leave one); a point that did not fail and has none gets one
    warning naming ``names[0]`` (missing, or unreadable)."""
    failed = ctx.exists(FAILURE_FILE)
    if failed and not failed_too:
        return {}
    read = set()
    for name in names:
        if ctx.exists(name):
            document = ctx.read_json(name)
            read.add(name)
            if isinstance(document, dict) and (usable is None or usable(document)):
                return document
    if not failed and names[0] not in read:
        ctx.read_json(names[0])  # for the warning that names it
    return {}


def read_host_environment(ctx, artifact=HOST_ENVIRONMENT, optional=True):
    """The host's environment capture nearest to the test (``environment.json`` of ``artifact``), ``{}``
    when there is none (warned about unless ``optional``) or it is not an object."""
    return read_mapping(ctx, ENVIRONMENT_FILE, artifact=artifact, optional=optional)


def host_identity(environment):
    """Which host and collection ran the test, from its environment capture: ``hostname``,
    ``collection_version``, ``git_commit``, ``cpu_model`` (None for what the capture lacks)."""
    return {"hostname": field(environment, "os", "hostname"),
            "collection_version": field(environment, "collection", "version"),
            "git_commit": field(environment, "collection", "git_commit"),
            "cpu_model": field(environment, "cpu", "model")}


def read_run_id(ctx, artifact=RUN_INFO, optional=True):
    """The run id of the test's run (the text ``run_id`` of its ``run.json``, the artifact ``artifact``),
    or None (a missing ``run.json`` warned about unless ``optional``)."""
    run_id = field(read_mapping(ctx, artifact=artifact, optional=optional), "run_id")
    return run_id if isinstance(run_id, str) else None


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
    parameters = mapping(entry.results.get("parameters"))
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
