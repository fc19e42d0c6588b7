# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Load models: when each request of a stage is due.

Open-loop models give every arrival a *scheduled* offset from the stage start,
computed up front from the model alone (never from how the server or the client
is doing), so a late send shows as send lag instead of shifting the schedule:
the measurement is free of coordinated omission.

========== ====== ==============================================================
model      loop   arrivals
========== ====== ==============================================================
constant   open   offset of arrival i = i / rate (evenly spaced)
poisson    open   exponential gaps of mean 1 / rate from a seeded generator
                  (first arrival at 0)
trace      open   offsets = (timestamp - first timestamp) x time_scale, lengths
                  from the file
concurrency closed N requests in flight: each completion launches the next one;
                  its scheduled time is the completion that freed the slot
sweep      plan   a saturation probe (closed loop at ``concurrency``), then
                  ``sweep_steps`` constant stages at k/(steps+1) of the probe's
                  completed request rate, k = 1..steps
========== ====== ==============================================================

A stage's arrivals stop at ``warmup + duration`` seconds and/or after
``warmup_requests + max_requests`` arrivals. With ``workers`` processes, worker w
sends the arrivals whose index i satisfies i mod workers = w, from the same
schedule (same seed): the union is exactly the single-process schedule.
"""

from __future__ import annotations

import itertools
import json
import random

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError


class Arrival:
    """One scheduled request of a stage."""

    __slots__ = ("index", "offset", "warmup", "input_tokens", "output_tokens", "prompt")

    def __init__(self, index, offset, warmup, input_tokens=None, output_tokens=None, prompt=None):
        self.index = index
        self.offset = offset
        self.warmup = warmup
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.prompt = prompt


def constant_offsets(stage, seed):
    rate = stage.rate
    return ((i / rate, None) for i in itertools.count())


def poisson_offsets(stage, seed):
    generator = random.Random("%s:%s:poisson" % (seed, stage.index))
    rate = stage.rate

    def offsets():
        offset = 0.0
        while True:
            yield offset, None
            offset += generator.expovariate(rate)
    return offsets()


def read_trace(path):
    """Entries of a JSONL trace, sorted by time: ``{"timestamp": s, "input_tokens": n, "output_tokens": m}``
    (``prompt`` optional). One-line errors name the file and line."""
    entries = []
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise ConfigError("trace file %s: %s" % (path, exc.strerror or exc)) from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise ConfigError("trace file %s line %d: not JSON (%s)" % (path, number, exc)) from None
            if not isinstance(item, dict) or isinstance(item.get("timestamp"), bool) \
                    or not isinstance(item.get("timestamp"), (int, float)):
                raise ConfigError("trace file %s line %d: expected an object with a numeric timestamp (seconds)" % (path, number))
            for key in ("input_tokens", "output_tokens"):
                value = item.get(key)
                if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                    raise ConfigError("trace file %s line %d: %s must be a positive integer, got %r" % (path, number, key, value))
            entries.append(item)
    if not entries:
        raise ConfigError("trace file %s: no entries" % path)
    entries.sort(key=lambda item: item["timestamp"])
    return entries


def trace_offsets(stage, seed):
    entries = read_trace(stage.trace)
    first = entries[0]["timestamp"]
    scale = stage.time_scale
    return (((entry["timestamp"] - first) * scale, entry) for entry in entries)


class LoadModel:
    """A registered load model: ``offsets(stage, seed)`` for open loops, None for closed ones."""

    def __init__(self, name, open_loop, offsets=None, description=""):
        self.name = name
        self.open_loop = open_loop
        self.offsets = offsets
        self.description = description


LOAD_MODELS = {
    "constant": LoadModel("constant", True, constant_offsets, "evenly spaced arrivals at --rate"),
    "poisson": LoadModel("poisson", True, poisson_offsets, "Poisson arrivals at --rate (seeded)"),
    "trace": LoadModel("trace", True, trace_offsets, "timestamps and lengths replayed from a JSONL file"),
    "concurrency": LoadModel("concurrency", False, None, "closed loop: --concurrency requests in flight"),
}


def arrivals(stage, seed, worker=0, workers=1):
    """The arrivals of an open-loop stage for one worker, with the stage's limits applied."""
    model = LOAD_MODELS[stage.load]
    horizon = (stage.warmup + stage.duration) if stage.duration else None
    limit = (stage.warmup_requests + stage.max_requests) if stage.max_requests else None
    for index, (offset, entry) in enumerate(model.offsets(stage, seed)):
        if limit is not None and index >= limit:
            return
        if horizon is not None and offset >= horizon:
            return
        if index % workers != worker:
            continue
        warmup = index < stage.warmup_requests if stage.warmup_requests else offset < stage.warmup
        if entry is None:
            yield Arrival(index, offset, warmup)
        else:
            yield Arrival(index, offset, warmup, entry.get("input_tokens"), entry.get("output_tokens"), entry.get("prompt"))


def is_warmup(stage, index, offset):
    """Warm-up status of a closed-loop request (its index and scheduled offset)."""
    return index < stage.warmup_requests if stage.warmup_requests else offset < stage.warmup


def closed_loop_slots(concurrency, worker, workers):
    """How many of ``concurrency`` slots worker ``worker`` of ``workers`` holds."""
    return concurrency // workers + (1 if worker < concurrency % workers else 0)


# --------------------------------------------------------------------------
# plans: stages as they are run (a sweep becomes a probe and its rates)


def sweep_fractions(steps):
    return [k / (steps + 1.0) for k in range(1, steps + 1)]


def expand_sweep(stage, next_index):
    """A generator of stages: the probe, then (after receiving its completed request
    rate through ``send``) one constant stage per fraction of it."""
    steps = stage.sweep_steps or 4
    probe = stage.copy(load="concurrency", index=next_index, name="%s-probe" % stage.label,
                       origin="sweep probe at concurrency %d" % stage.concurrency, sweep_steps=None)
    saturation = yield probe
    if not saturation or saturation <= 0:
        raise ConfigError("%s: the saturation probe completed no request; no sweep rates can be derived" % stage.label)
    for step, fraction in enumerate(sweep_fractions(steps), 1):
        yield stage.copy(load="constant", rate=saturation * fraction, concurrency=None, sweep_steps=None,
                         index=next_index + step, name="%s-%d" % (stage.label, step),
                         origin="sweep %d/%d: %.0f%% of the probe's %.2f req/s" % (step, steps, 100 * fraction, saturation))


PLANNERS = {"sweep": expand_sweep}


def known_loads():
    return sorted(set(LOAD_MODELS) | set(PLANNERS))


def plan(stages):
    """Generator of the stages to run; ``send`` it each run's completed request rate
    (a sweep needs its probe's). Indexes are renumbered in run order."""
    index = 0
    for stage in stages:
        planner = PLANNERS.get(stage.load)
        if planner is None:
            yield stage.copy(index=index)
            index += 1
            continue
        expansion = planner(stage, index)
        try:
            current = next(expansion)
            while True:
                result = yield current
                index += 1
                current = expansion.send(result)
        except StopIteration:
            pass
