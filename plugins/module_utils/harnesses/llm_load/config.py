# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a run does: its stages and their validation (one-line errors naming the input).

A *stage* is one load level: a load model (``constant``, ``poisson``,
``concurrency``, ``trace``, or ``sweep``, which expands into several stages), its
rate or concurrency, how long it lasts (``duration`` seconds and/or ``max_requests``)
and its warm-up (``warmup`` seconds or ``warmup_requests``), which is sent and
recorded but left out of the aggregates.
"""

from __future__ import annotations

import json
import math
import os

STAGE_KEYS = ("name", "load", "rate", "concurrency", "duration", "max_requests", "warmup", "warmup_requests",
              "trace", "time_scale", "sweep_steps")


class ConfigError(ValueError):
    """An invalid option or stage (one line)."""


class Stage:
    """One load level. ``index`` is its position in the run (after sweep expansion)."""

    def __init__(self, load, rate=None, concurrency=None, duration=None, max_requests=None, warmup=0.0,
                 warmup_requests=0, trace=None, time_scale=1.0, sweep_steps=None, name=None, index=0, origin=None):
        self.load = load
        self.rate = rate
        self.concurrency = concurrency
        self.duration = duration
        self.max_requests = max_requests
        self.warmup = warmup or 0.0
        self.warmup_requests = warmup_requests or 0
        self.trace = trace
        self.time_scale = time_scale
        self.sweep_steps = sweep_steps
        self.name = name
        self.index = index
        self.origin = origin   # e.g. "sweep probe", "sweep 2/4 (40% of 812.3 req/s)"

    def copy(self, **changes):
        values = {key: getattr(self, key) for key in STAGE_KEYS}
        values.update(index=self.index, origin=self.origin)
        values.update(changes)
        return Stage(**values)

    @property
    def label(self):
        return self.name or "stage-%d" % self.index

    def to_wire(self):
        """Every field (for a worker process); ``Stage(**wire)`` rebuilds it."""
        document = {key: getattr(self, key) for key in STAGE_KEYS}
        document.update(index=self.index, origin=self.origin)
        return document

    def as_dict(self):
        document = {key: getattr(self, key) for key in STAGE_KEYS if getattr(self, key) not in (None, 0, 0.0)}
        document["load"] = self.load
        document["index"] = self.index
        if self.time_scale == 1.0:
            document.pop("time_scale", None)
        if self.origin:
            document["origin"] = self.origin
        return document

    def describe(self):
        level = {"constant": "%s req/s" % _num(self.rate), "poisson": "%s req/s" % _num(self.rate),
                 "concurrency": "%s in flight" % self.concurrency, "trace": "trace x%s" % _num(self.time_scale),
                 "sweep": "sweep"}.get(self.load, self.load)
        limits = []
        if self.duration:
            limits.append("%ss" % _num(self.duration))
        if self.max_requests:
            limits.append("%d requests" % self.max_requests)
        return "%s %s %s, %s" % (self.label, self.load, level, " or ".join(limits))


def _num(value):
    return "%g" % value if isinstance(value, (int, float)) else str(value)


def _number(where, key, value, kind=float, minimum=None, allow_zero=False):
    if value is None:
        return None
    if isinstance(value, bool):
        raise ConfigError("%s: %s must be a number, got %r" % (where, key, value))
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise ConfigError("%s: %s must be %s, got %r" % (where, key, "an integer" if kind is int else "a number", value)) from None
    if kind is int and isinstance(value, float) and not value.is_integer():
        raise ConfigError("%s: %s must be an integer, got %r" % (where, key, value))
    if isinstance(number, float) and not math.isfinite(number):
        raise ConfigError("%s: %s must be finite, got %r" % (where, key, value))
    if minimum is not None and (number < minimum or (number == minimum and not allow_zero)):
        raise ConfigError("%s: %s must be %s %s, got %r" % (where, key, ">=" if allow_zero else ">", minimum, value))
    return number


def validate_stage(raw, index, known_loads):
    """A Stage from a mapping (a stages-file item or the command line options)."""
    where = "stage %d" % index
    if not isinstance(raw, dict):
        raise ConfigError("%s: expected a mapping of stage options, got %s" % (where, type(raw).__name__))
    unknown = sorted(set(raw) - set(STAGE_KEYS))
    if unknown:
        raise ConfigError("%s: unknown option(s) %s; stage options: %s" % (where, ", ".join(unknown), ", ".join(STAGE_KEYS)))
    load = raw.get("load")
    if load not in known_loads:
        raise ConfigError("%s: load must be one of %s, got %r" % (where, ", ".join(known_loads), load))
    stage = Stage(
        load=load,
        rate=_number(where, "rate", raw.get("rate"), float, 0),
        concurrency=_number(where, "concurrency", raw.get("concurrency"), int, 0),
        duration=_number(where, "duration", raw.get("duration"), float, 0),
        max_requests=_number(where, "max_requests", raw.get("max_requests"), int, 0),
        warmup=_number(where, "warmup", raw.get("warmup"), float, 0, allow_zero=True) or 0.0,
        warmup_requests=_number(where, "warmup_requests", raw.get("warmup_requests"), int, 0, allow_zero=True) or 0,
        trace=raw.get("trace"),
        time_scale=_number(where, "time_scale", raw.get("time_scale", 1.0), float, 0),
        sweep_steps=_number(where, "sweep_steps", raw.get("sweep_steps"), int, 0),
        name=None if raw.get("name") is None else str(raw.get("name")),
        index=index,
    )
    if stage.duration is None and stage.max_requests is None:
        raise ConfigError("%s: give a duration (seconds) or max_requests, or both" % where)
    if load in ("constant", "poisson") and stage.rate is None:
        raise ConfigError("%s: load %s needs a rate (requests per second)" % (where, load))
    if load in ("concurrency", "sweep") and stage.concurrency is None:
        raise ConfigError("%s: load %s needs a concurrency (requests in flight%s)"
                          % (where, load, "; the sweep's saturation probe runs at it" if load == "sweep" else ""))
    if load == "trace":
        if not stage.trace:
            raise ConfigError("%s: load trace needs a trace file (JSONL: timestamp, input_tokens, output_tokens)" % where)
        if not os.path.isfile(stage.trace):
            raise ConfigError("%s: trace file %s does not exist" % (where, stage.trace))
    if load == "sweep" and stage.duration is None:
        raise ConfigError("%s: a sweep needs a duration per step (its rates are only known after the probe)" % where)
    if stage.warmup and stage.warmup_requests:
        raise ConfigError("%s: give warmup (seconds) or warmup_requests, not both" % where)
    return stage


def read_stages_file(path):
    """A list of stage mappings from a JSON file, or a YAML one when PyYAML is importable."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ConfigError("stages file %s: %s" % (path, exc.strerror or exc)) from None
    try:
        data = json.loads(text)
    except ValueError:
        try:
            import yaml  # pylint: disable=import-outside-toplevel
        except ImportError:
            raise ConfigError("stages file %s is not JSON, and PyYAML (to read YAML) is not installed: "
                              "write it as JSON" % path) from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError("stages file %s: malformed YAML: %s" % (path, " ".join(str(exc).split()))) from None
    if isinstance(data, dict) and isinstance(data.get("stages"), list):
        data = data["stages"]
    if not isinstance(data, list) or not data:
        raise ConfigError("stages file %s: expected a non-empty list of stages (or a mapping with 'stages')" % path)
    return data
