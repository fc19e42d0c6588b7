# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for several objects in one look loop (``k8s_wait``'s ``waits``): each wait has its own judge
and target, as a wait of one object has; every look reads what the waits not yet settled need (a
query two of them share is read once) and asks each judge where its objects are.

A wait that is ready is settled and no longer read: the result is what several waits one after the
other would give. The first wait that fails ends them all at once (a role stops at the first failure);
time running out ends the waits still waiting, each ``timed_out`` with the last state it saw. Every
message is one line naming the objects (``judge.summary``), the failed or unfinished ones first.
"""

from __future__ import annotations

import time

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import waits as registry
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    FAILED, READY, WAITING, FetchError, Seen, Target, WaitError, WaitResult, observe, pause, short)

# the keys of one wait of ``waits`` (k8s_wait's options of the same names)
WAIT_KEYS = ("judge", "namespace", "name", "label_selectors", "options")
# the most waits one call takes (each is a query or more per look)
MAX_WAITS = 50


def _strings(where, key, value):
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
        raise WaitError("%s: %s: %r; expected a list of strings" % (where, key, value))
    return tuple(value)


def _text(where, key, value):
    if value is not None and not isinstance(value, str):
        raise WaitError("%s: %s: %r; expected a string" % (where, key, value))
    return value or None


def waits_from(specs, judge=None, namespace=None, options=None):
    """``[(judge, Target)]`` from k8s_wait's ``waits``; ``judge``, ``namespace`` and ``options`` are the
    defaults of each wait (a wait's own ``options`` are added to them). One-line WaitError naming the
    wait (``waits[1]``) when one is malformed, before anything is read."""
    if not isinstance(specs, (list, tuple)) or not specs:
        raise WaitError("waits: %r; expected a list of at least one wait (mappings of %s)" % (
            specs, ", ".join(WAIT_KEYS)))
    if len(specs) > MAX_WAITS:
        raise WaitError("waits: %d waits; expected at most %d" % (len(specs), MAX_WAITS))
    entries = []
    for index, spec in enumerate(specs):
        where = "waits[%d]" % index
        if not isinstance(spec, dict):
            raise WaitError("%s: %r; expected a mapping of %s" % (where, spec, ", ".join(WAIT_KEYS)))
        unknown = sorted(str(key) for key in set(spec) - set(WAIT_KEYS))
        if unknown:
            raise WaitError("%s: unknown key(s) %s (expected some of %s)" % (
                where, ", ".join(unknown), ", ".join(WAIT_KEYS)))
        name = _text(where, "judge", spec.get("judge")) or judge
        if not name:
            raise WaitError("%s: judge: missing; expected the judge of this wait (or a judge for every wait)" % where)
        own = spec.get("options")
        if own is not None and not isinstance(own, dict):
            raise WaitError("%s: options: %r; expected a mapping" % (where, own))
        target = Target(_text(where, "namespace", spec.get("namespace")) or namespace,
                        _text(where, "name", spec.get("name")),
                        _strings(where, "label_selectors", spec.get("label_selectors")),
                        dict(options or {}, **(own or {})))
        try:
            chosen = registry.judge(name)
            chosen.check(target)
        except WaitError as exc:
            raise WaitError("%s: %s" % (where, exc)) from None
        entries.append((chosen, target))
    return entries


class SeveralResult(WaitResult):
    """How several waits ended: ``state`` (ready when all are, failed when one is), a one-line ``summary``,
    ``results`` (a ``WaitResult`` per wait, in order), the distinct overall ``states`` seen, ``elapsed_s``;
    its message and dict are a single wait's (the objects are each wait's own, in ``results``)."""

    def __init__(self, state, summary, results, states, elapsed_s, timed_out):
        super().__init__(state, summary, {}, states, elapsed_s, timed_out)
        self.results = results


class _Look:
    """One look's reads: a query shared by several waits is read once (its error too)."""

    def __init__(self, fetch):
        self.fetch = fetch
        self.answers = {}

    def read(self, query):
        if query not in self.answers:
            try:
                self.answers[query] = list(self.fetch(query))
            except FetchError as exc:
                self.answers[query] = exc
        answer = self.answers[query]
        if isinstance(answer, FetchError):
            raise answer
        return answer


def _observe(judge, target, look):
    found = {}
    try:
        for key, query in judge.queries(target).items():
            found[key] = look.read(query)
        return observe(judge, found, target), found
    except FetchError as exc:
        return Seen(FAILED if exc.terminal else WAITING, "API error: %s" % short(exc)), found


def _record(states, elapsed, state, summary):
    if not states or (states[-1]["state"], states[-1]["summary"]) != (state, summary):
        states.append({"after_s": round(elapsed, 1), "state": state, "summary": summary})


def wait_for_all(entries, fetch, timeout_s, delay_s, clock=time.monotonic, sleep=time.sleep, watch=None):
    """Look at every wait of ``entries`` (``[(judge, Target)]``, see ``waits_from``) every ``delay_s``
    seconds until all are ready, one failed, or ``timeout_s`` passed. ``fetch(query) -> [objects]`` as
    for ``base.wait_for``; ``watch(seconds, queries) -> bool`` waits for a change of one of the subjects
    of the waits still waiting (``queries``, in order) and brings the next look forward."""
    if timeout_s < 0 or delay_s <= 0:
        raise WaitError("waits: expected timeout >= 0 and delay > 0 seconds (got %s and %s)" % (timeout_s, delay_s))
    start = clock()
    count = len(entries)
    settled = [None] * count
    last = [None] * count
    found = [{} for _entry in entries]
    states = [[] for _entry in entries]
    overall = []
    while True:
        look = _Look(fetch)
        seen = {}
        for index, (judge, target) in enumerate(entries):
            if settled[index] is None:
                seen[index], found[index] = _observe(judge, target, look)
        elapsed = clock() - start
        for index, current in seen.items():
            last[index] = current
            _record(states[index], elapsed, current.state, current.summary)
            if current.state != WAITING:
                settled[index] = WaitResult(current.state, current.summary, found[index], states[index], elapsed, False)
        failed = [index for index in range(count) if settled[index] is not None and settled[index].state == FAILED]
        pending = [index for index in range(count) if settled[index] is None]
        timed_out = bool(pending) and not failed and elapsed >= timeout_s
        if failed:
            state, summary = FAILED, "; ".join(settled[index].summary for index in failed)
        elif not pending:
            state, summary = READY, "; ".join(result.summary for result in settled)
        else:
            state, summary = WAITING, "; ".join(last[index].summary for index in pending)
        _record(overall, elapsed, state, summary)
        if state != WAITING or timed_out:
            results = [settled[index] or WaitResult(WAITING, last[index].summary, found[index], states[index],
                                                    elapsed, timed_out) for index in range(count)]
            return SeveralResult(state, summary, results, overall, elapsed, timed_out)
        subjects = [entries[index][0].queries(entries[index][1]).get("subject") for index in pending]
        subjects = [query for query in subjects if query is not None]
        watch_one = (lambda seconds: watch(seconds, subjects)) if watch is not None and subjects else None
        pause(max(0.0, min(delay_s, timeout_s - elapsed)), watch_one, clock, sleep)
