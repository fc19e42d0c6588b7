# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for cluster objects the way their upstream controllers report them (standard library only).

A *judge* reads the objects a wait is about and says where they are: ``ready``
(the wait ends well), ``waiting`` (a state a real rollout passes through, or one
the controller retries: the wait goes on up to its deadline) or ``failed`` (a
state the controller will not leave by itself: the wait ends at once). Its
``summary`` is one line naming the object, the condition, its reason and
message, so that a wait that times out names the last state it saw.

Judges are small classes registered by name (``kube/waits/__init__.py``); each
cites the upstream code whose states it reads. They are held against the status
objects of the reality corpus (``tests/fixtures/upstream/``), not against kubesim.
"""

from __future__ import annotations

import time

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError
# what to read and how a read fails live beside the reads (kube/query.py), which need no judge
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.query import FetchError, Query  # noqa: F401

READY = "ready"
WAITING = "waiting"
FAILED = "failed"
STATES = (READY, WAITING, FAILED)
# longest message text kept in a summary (a controller's message can hold a whole log)
MESSAGE_CHARS = 240


class WaitError(PerfscaleError):
    """A wait that cannot be done (unknown judge, bad options) or that ended without its object ready."""


class Seen:
    """Where a wait's objects are: ``state`` (ready, waiting, failed) and a one-line ``summary``."""

    __slots__ = ("state", "summary")

    def __init__(self, state, summary):
        if state not in STATES:
            raise ValueError("state %r is not one of %s" % (state, ", ".join(STATES)))
        self.state = state
        self.summary = " ".join(str(summary).split())

    def __eq__(self, other):
        return isinstance(other, Seen) and (self.state, self.summary) == (other.state, other.summary)

    def __repr__(self):
        return "Seen(%r, %r)" % (self.state, self.summary)


def ready(summary):
    return Seen(READY, summary)


def waiting(summary):
    return Seen(WAITING, summary)


def failed(summary):
    return Seen(FAILED, summary)


class Target:
    """What a wait is about: ``namespace``, ``name``, ``label_selectors`` and the judge's ``options``."""

    def __init__(self, namespace=None, name=None, label_selectors=(), options=None):
        self.namespace = namespace or None
        self.name = name or None
        self.label_selectors = tuple(label_selectors or ())
        self.options = dict(options or {})

    def option(self, key, default=None):
        value = self.options.get(key)
        return default if value is None or value == "" else value


class Judge:
    """Base of the judges: set ``name``, ``description``, ``api_version`` and ``kind`` (the subject),
    ``upstream`` (where its states come from), and implement ``observe(found, target)``.

    ``found`` maps each query's name to the objects read (``subject`` for the default query).
    ``options`` lists the option names the judge reads (others are refused).
    """

    name = ""
    description = ""
    api_version = ""
    kind = ""
    upstream = ""
    options = ()
    # a judge that reads one object of its kind by name: the subject must be named
    needs_name = True

    def queries(self, target):
        return {"subject": Query(self.api_version, self.kind, target.namespace, target.name, target.label_selectors)}

    def check(self, target):
        """Refuse a target this judge cannot wait on (WaitError, one line)."""
        unknown = sorted(set(target.options) - set(self.options))
        if unknown:
            raise WaitError("wait %s: unknown option(s) %s (it takes: %s)" % (
                self.name, ", ".join(unknown), ", ".join(self.options) or "none"))
        if self.needs_name and not target.name:
            raise WaitError("wait %s: name: missing; expected the %s to wait for" % (self.name, self.kind))

    def observe(self, found, target):
        raise NotImplementedError

    def subject(self, found, target):
        """The one subject object, or None when it does not exist (yet)."""
        objects = [o for o in found.get("subject") or [] if isinstance(o, dict)]
        if target.name:
            objects = [o for o in objects if name_of(o) == target.name]
        return objects[0] if objects else None

    def absent(self, target):
        query = Query(self.api_version, self.kind, target.namespace, target.name)
        return waiting("%s does not exist (yet)" % query.describe())


# --- reading status objects ---------------------------------------------------------------------

def describe(obj):
    """``Kind namespace/name`` (``Kind name`` for a cluster-scoped object)."""
    if not isinstance(obj, dict):
        return "a %s where an object was expected" % type(obj).__name__
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    name = metadata.get("name") or "?"
    if metadata.get("namespace"):
        name = "%s/%s" % (metadata["namespace"], name)
    return "%s %s" % (obj.get("kind") or "object", name)


def name_of(obj):
    """``metadata.name`` of an object, or None."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    return metadata.get("name") if isinstance(metadata, dict) else None


def status_of(obj):
    status = obj.get("status") if isinstance(obj, dict) else None
    return status if isinstance(status, dict) else {}


def conditions_of(obj, field="conditions"):
    items = status_of(obj).get(field)
    return [c for c in items if isinstance(c, dict)] if isinstance(items, list) else []


def condition(obj, ctype, field="conditions"):
    """The condition of type ``ctype`` (a dict) or None."""
    for item in conditions_of(obj, field):
        if item.get("type") == ctype:
            return item
    return None


def is_true(obj, ctype):
    item = condition(obj, ctype)
    return item is not None and str(item.get("status")) == "True"


def is_false(obj, ctype):
    item = condition(obj, ctype)
    return item is not None and str(item.get("status")) == "False"


def short(text, limit=MESSAGE_CHARS):
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def condition_text(item):
    """``Type=Status (Reason: message)`` of one condition."""
    if item is None:
        return "no condition"
    text = "%s=%s" % (item.get("type"), item.get("status"))
    detail = ": ".join(str(p) for p in (item.get("reason"), short(item.get("message"))) if p)
    return "%s (%s)" % (text, detail) if detail else text


def conditions_text(obj, types=None, only_status=None):
    """Several conditions, ``; ``-separated (``types`` in that order, else all)."""
    items = conditions_of(obj)
    if types is not None:
        items = [condition(obj, t) for t in types]
        items = [i for i in items if i is not None]
    if only_status is not None:
        items = [i for i in items if str(i.get("status")) == only_status]
    return "; ".join(condition_text(i) for i in items) or "no conditions"


def generation_observed(obj):
    """False when the status describes an older generation than the spec (a waiting client's rule)."""
    observed = to_int(status_of(obj).get("observedGeneration"), None)
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    generation = to_int(metadata.get("generation"), None) if isinstance(metadata, dict) else None
    return observed is None or generation is None or observed >= generation


def to_int(value, default=0):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def quantity_count(value):
    """A count quantity (``"4"``, ``4``, ``"1k"``) as an int; 0 when unreadable."""
    if value is None:
        return 0
    text = str(value).strip()
    multipliers = {"k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9}
    try:
        if text and text[-1] in multipliers:
            return int(float(text[:-1]) * multipliers[text[-1]])
        return int(float(text))
    except ValueError:
        return 0


# --- the wait loop -------------------------------------------------------------------------------

# what a judge raises reading a field that is not of the type its schema gives it: no API server sends such
# an object (it validates status against the kind's schema), a proxy, a CRD whose status preserves unknown
# fields or a hand-written fake can
MISTYPED = (AttributeError, TypeError, ValueError, KeyError, IndexError)


def observe(judge, found, target):
    """``judge.observe(found, target)``; objects the judge cannot read because a field is mistyped end the
    wait as failed, with one line naming the judge, the objects and the error (waiting cannot fix them)."""
    try:
        return judge.observe(found, target)
    except MISTYPED as exc:
        objects = [describe(o) for answer in found.values() for o in (answer if isinstance(answer, list) else [answer])]
        shown = ", ".join(objects[:3]) + (" and %d more" % (len(objects) - 3) if len(objects) > 3 else "")
        return failed("%s cannot read %s: a field is not of the type its schema gives it (%s: %s)" % (
            judge.name, shown or "what the API answered", type(exc).__name__, short(exc)))


class WaitResult:
    """How a wait ended: ``state``, the last ``summary``, the objects last ``found``, the distinct
    ``states`` seen (``[{"after_s", "state", "summary"}]``) and the ``elapsed_s``."""

    def __init__(self, state, summary, found, states, elapsed_s, timed_out):
        self.state = state
        self.summary = summary
        self.found = found
        self.states = states
        self.elapsed_s = elapsed_s
        self.timed_out = timed_out

    def message(self, timeout_s):
        """One line for the user: the failure, or the last state seen when time ran out."""
        if self.state == READY:
            return self.summary
        if self.timed_out:
            return "not ready after %s s; last state: %s" % (_seconds(timeout_s), self.summary)
        return self.summary

    def as_dict(self):
        return {"state": self.state, "summary": self.summary, "states": self.states,
                "elapsed_s": round(self.elapsed_s, 3), "timed_out": self.timed_out}


def _seconds(value):
    return int(value) if float(value).is_integer() else round(float(value), 1)


def fetch_all(fetch, queries):
    """``{name: objects}`` for every query; a FetchError that is not terminal becomes a waiting state."""
    found = {}
    for name, query in queries.items():
        found[name] = list(fetch(query))
    return found


# with a watch, the shortest time between two looks (an object written many times a second is not
# re-read each time)
MIN_LOOK_INTERVAL_S = 0.5


def pause(seconds, watch=None, clock=time.monotonic, sleep=time.sleep):
    """Wait ``seconds`` before the next look; with ``watch(seconds) -> bool`` (True: the subject
    changed), return as soon as it changed, but not before ``MIN_LOOK_INTERVAL_S``. A watch that
    cannot be opened or ends early without a change leaves a plain sleep for the rest."""
    if seconds <= 0:
        return
    if watch is None:
        sleep(seconds)
        return
    start = clock()
    try:
        changed = watch(seconds)
    except FetchError:
        changed = False
    spent = clock() - start
    rest = (min(seconds, MIN_LOOK_INTERVAL_S) if changed else seconds) - spent
    if rest > 0:
        sleep(rest)


def wait_for(judge, target, fetch, timeout_s, delay_s, clock=time.monotonic, sleep=time.sleep, watch=None):
    """Look (``fetch(query) -> [objects]`` for each of the judge's queries) every ``delay_s`` seconds
    until ``judge`` says ready or failed, or ``timeout_s`` passed (then the result is the last state,
    ``timed_out``). With ``watch`` (see ``pause``), a change of the subject brings the next look
    forward: the wait notices it at once, and still looks every ``delay_s`` for the other objects.

    A query answered with a non-terminal FetchError (the API briefly unavailable, a kind not
    served yet while its operator installs it) is a waiting state; a terminal one (401, 403)
    ends the wait as failed.
    """
    judge.check(target)
    if timeout_s < 0 or delay_s <= 0:
        raise WaitError("wait %s: expected timeout >= 0 and delay > 0 seconds (got %s and %s)" % (
            judge.name, timeout_s, delay_s))
    queries = judge.queries(target)
    start = clock()
    states = []
    found = {}
    while True:
        try:
            found = fetch_all(fetch, queries)
            seen = observe(judge, found, target)
        except FetchError as exc:
            seen = Seen(FAILED if exc.terminal else WAITING, "API error: %s" % short(exc))
        elapsed = clock() - start
        if not states or (states[-1]["state"], states[-1]["summary"]) != (seen.state, seen.summary):
            states.append({"after_s": round(elapsed, 1), "state": seen.state, "summary": seen.summary})
        if seen.state != WAITING:
            return WaitResult(seen.state, seen.summary, found, states, elapsed, False)
        if elapsed >= timeout_s:
            return WaitResult(WAITING, seen.summary, found, states, elapsed, True)
        pause(max(0.0, min(delay_s, timeout_s - elapsed)), watch, clock, sleep)
