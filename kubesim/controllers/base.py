"""The controller framework: an event bus, a delayed work queue, a registry.

A controller declares the storage keys it ``watches`` (``(group, plural)``);
every committed change of those kinds reaches its :meth:`Controller.on_event`
synchronously (keep it cheap: it runs under the store lock), which returns the
object references to reconcile. The :class:`Manager`'s worker thread then calls
:meth:`Controller.reconcile` for each reference; returning a number asks for
another reconcile after that many *simulated* seconds (see :mod:`kubesim.clock`).
Exceptions are logged and the reference is retried with a back-off.

Controllers plug in through a :class:`ControllerRegistry` (``register(cls)``),
never through an if-chain; :func:`default_registry` holds the built-in ones.
"""

import collections
import heapq
import itertools
import logging
import threading
import time

LOG = logging.getLogger("kubesim.controllers")

Event = collections.namedtuple("Event", "type key obj old")
Ref = collections.namedtuple("Ref", "key namespace name")


def ref_of(key, obj):
    meta = obj["metadata"]
    return Ref(key, meta.get("namespace") or "", meta["name"])


class Controller:
    """Base class: set ``name`` and ``watches``; implement ``reconcile``."""

    name = ""
    watches = ()  # storage keys, e.g. (("", "pods"),)
    # the transient states this controller simulates, by name: {name: what a real rollout shows};
    # all are on unless the cluster's settings disable them (``--no-transient NAME``)
    transients = {}

    def __init__(self, cluster, manager):
        self.cluster = cluster
        self.manager = manager

    @property
    def clock(self):
        return self.cluster.clock

    def start(self):
        """Called once, after the server bootstrapped its objects."""

    def stop(self):
        """Called once at shutdown (kill processes, close files)."""

    def on_event(self, event):
        """References to reconcile for ``event`` (default: the object itself)."""
        return [ref_of(event.key, event.obj)]

    def reconcile(self, ref):
        """Bring ``ref`` to its desired state; return seconds (simulated) to requeue, or None."""
        return None

    def enqueue(self, ref, after=0.0):
        self.manager.enqueue(self, ref, after)

    def transient(self, name):
        """Is the transient state ``name`` (one of ``transients``) simulated? On unless disabled."""
        if name not in self.transients:
            raise KeyError("controller %s has no transient state %r" % (self.name, name))
        settings = getattr(self.cluster, "settings", None)
        return name not in getattr(settings, "disabled_transients", ())

    def failure(self, obj):
        """The message of an injected controller fault for ``obj``, or None."""
        faults = getattr(self.cluster, "faults", None)
        return faults.controller_failure(self.name, obj) if faults is not None else None


class ControllerRegistry:
    """Controller classes by name; ``create`` instantiates the enabled ones."""

    def __init__(self, classes=()):
        self._classes = collections.OrderedDict()
        for cls in classes:
            self.register(cls)

    def register(self, cls):
        if not cls.name:
            raise ValueError("controller class %s has no name" % cls.__name__)
        self._classes[cls.name] = cls
        return cls

    def unregister(self, name):
        self._classes.pop(name, None)

    def names(self):
        return list(self._classes)

    def classes(self):
        return list(self._classes.values())

    def create(self, cluster, manager, enabled=None, disabled=()):
        return [cls(cluster, manager) for name, cls in self._classes.items()
                if (enabled is None or name in enabled) and name not in disabled]


class Manager:
    """Runs controllers: dispatches store events, keeps a delayed queue, one worker thread."""

    def __init__(self, cluster, registry, enabled=None, disabled=()):
        self.cluster = cluster
        self.clock = cluster.clock
        self._cond = threading.Condition()
        self._heap = []
        self._due = {}
        self._seq = itertools.count()
        self._stopping = False
        self._thread = None
        self._busy = 0
        self.controllers = registry.create(cluster, self, enabled, disabled)
        self._by_key = collections.defaultdict(list)
        for controller in self.controllers:
            for key in controller.watches:
                self._by_key[tuple(key)].append(controller)
        cluster.store.add_listener(self._dispatch)

    def controller(self, name):
        return next((c for c in self.controllers if c.name == name), None)

    def _dispatch(self, event_type, key, obj, old):
        controllers = self._by_key.get(key)
        if not controllers:
            return
        event = Event(event_type, key, obj, old)
        for controller in controllers:
            try:
                refs = controller.on_event(event)
            except Exception:  # a controller bug must not break the write that triggered it
                LOG.exception("controller %s: on_event failed", controller.name)
                continue
            for ref in refs or ():
                self.enqueue(controller, ref)

    def enqueue(self, controller, ref, after=0.0):
        due = time.monotonic() + self.clock.real_seconds(after)
        with self._cond:
            item = (controller.name, ref)
            if item in self._due and self._due[item] <= due:
                return
            self._due[item] = due
            heapq.heappush(self._heap, (due, next(self._seq), controller, ref))
            self._cond.notify()

    def start(self):
        for controller in self.controllers:
            controller.start()
        self.resync()
        self._thread = threading.Thread(target=self._run, name="kubesim-controllers", daemon=True)
        self._thread.start()

    def resync(self):
        """Offer every stored object to the controllers watching its kind (an informer's initial list).

        Objects reloaded from a snapshot sent no events: this resumes their reconciliation.
        """
        store = self.cluster.store
        with store.lock:
            for key in list(self._by_key):
                for obj in store.list(key)[0]:
                    self._dispatch("ADDED", key, obj, None)

    def stop(self):
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for controller in self.controllers:
            try:
                controller.stop()
            except Exception:  # keep stopping the others
                LOG.exception("controller %s: stop failed", controller.name)

    def idle(self):
        """True when nothing is due now and no reconcile runs (tests wait on it)."""
        with self._cond:
            now = time.monotonic()
            return self._busy == 0 and not any(d <= now for d in self._due.values())

    def _run(self):
        failures = collections.Counter()
        while True:
            with self._cond:
                while not self._stopping and (not self._heap or self._heap[0][0] > time.monotonic()):
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cond.wait(timeout)
                if self._stopping:
                    return
                due, _, controller, ref = heapq.heappop(self._heap)
                item = (controller.name, ref)
                if self._due.get(item) != due:
                    continue  # superseded by an earlier or later entry
                del self._due[item]
                self._busy += 1
            try:
                requeue = controller.reconcile(ref)
                failures.pop(item, None)
            except Exception:  # logged and retried with a back-off, as controller-runtime does
                failures[item] += 1
                LOG.exception("controller %s: reconcile %s failed", controller.name, ref)
                requeue = self.clock.simulated_seconds(min(30.0, 0.05 * 2 ** failures[item]))
            finally:
                with self._cond:
                    self._busy -= 1
            if requeue is not None:
                self.enqueue(controller, ref, requeue)
