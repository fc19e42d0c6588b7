"""Fault injection: errors, throttling, latency, controller failures.

A fault is a dict; ``match`` narrows the requests it applies to (all keys
optional: ``verb``, ``group``, ``resource``, ``namespace``, ``name``, ``user``,
``path`` (a regular expression)); ``action`` is one of:

- ``error``: answer ``status`` (500 or 503 by default 500) with probability ``rate`` (default 1);
- ``throttle``: answer 429 with ``Retry-After: retry_after`` (seconds, default 1);
- ``latency``: sleep ``delay_s`` before handling the request;
- ``controller``: the controller named ``controller`` fails the matching
  object (the pod controller marks the pod Failed with the fault's ``message``).

``count`` limits how many times a fault fires (then it is removed). Faults are
set through :class:`Faults` (Python) or ``/kubesim/faults`` (admin token):
``GET`` lists, ``POST`` adds (returns the fault with its ``id``), ``DELETE``
clears all, ``DELETE /kubesim/faults/<id>`` removes one.
"""

import itertools
import random
import re
import threading
import time

from kubesim.errors import ApiError

ACTIONS = ("error", "throttle", "latency", "controller")


class Faults:
    def __init__(self, seed=None):
        self._lock = threading.Lock()
        self._faults = []
        self._ids = itertools.count(1)
        self._random = random.Random(seed)

    def add(self, action, match=None, **params):
        if action not in ACTIONS:
            raise ValueError("unknown fault action %r (known: %s)" % (action, ", ".join(ACTIONS)))
        fault = {"action": action, "match": dict(match or {})}
        fault.update(params)
        if action == "error" and int(fault.setdefault("status", 500)) not in (500, 503):
            raise ValueError("error faults answer 500 or 503, not %s" % fault["status"])
        if "path" in fault["match"]:
            re.compile(fault["match"]["path"])
        with self._lock:
            fault["id"] = next(self._ids)
            self._faults.append(fault)
        return dict(fault)

    def from_dict(self, data):
        if not isinstance(data, dict) or "action" not in data:
            raise ValueError("a fault is an object with an \"action\"")
        data = dict(data)
        return self.add(data.pop("action"), data.pop("match", None), **{k: v for k, v in data.items() if k != "id"})

    def list(self):
        with self._lock:
            return [dict(f) for f in self._faults]

    def remove(self, fault_id=None):
        with self._lock:
            before = len(self._faults)
            self._faults = [f for f in self._faults if fault_id is not None and f["id"] != int(fault_id)]
            return before - len(self._faults)

    def _take(self, fault):
        """Count one firing (lock held); True when the fault fires."""
        if self._random.random() >= float(fault.get("rate", 1.0)):
            return False
        if "count" in fault:
            fault["count"] = int(fault["count"]) - 1
            if fault["count"] <= 0:
                self._faults.remove(fault)
        return True

    @staticmethod
    def _matches(match, request):
        for key, wanted in match.items():
            if key == "path":
                if not re.search(wanted, request.get("path") or ""):
                    return False
            elif wanted is not None and request.get(key) != wanted:
                return False
        return True

    def before_request(self, request):
        """Apply request faults; ``request`` has verb, group, resource, namespace, name, user, path."""
        delay = 0.0
        error = None
        with self._lock:
            for fault in list(self._faults):
                if fault["action"] == "controller" or not self._matches(fault["match"], request):
                    continue
                if not self._take(fault):
                    continue
                if fault["action"] == "latency":
                    delay += float(fault.get("delay_s", 0.1))
                elif error is None and fault["action"] == "throttle":
                    error = ApiError.too_many_requests(fault.get("retry_after", 1))
                elif error is None and fault["action"] == "error":
                    status = int(fault.get("status", 500))
                    error = ApiError.internal("injected fault") if status == 500 else ApiError.unavailable(
                        "the server is currently unable to handle the request (injected fault)")
        if delay:
            time.sleep(delay)
        if error is not None:
            raise error

    def controller_failure(self, controller, obj):
        meta = obj.get("metadata") or {}
        request = {"controller": controller, "namespace": meta.get("namespace"), "name": meta.get("name"),
                   "kind": obj.get("kind")}
        with self._lock:
            for fault in list(self._faults):
                if fault["action"] != "controller" or fault.get("controller", controller) != controller:
                    continue
                if self._matches(fault["match"], request) and self._take(fault):
                    return fault.get("message") or "injected failure by the %s controller" % controller
        return None
