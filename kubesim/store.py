"""The object store: objects by resource, a global resourceVersion, watch fan-out.

Conventions followed ("Concurrency Control and Consistency", "Watch"):
``metadata.resourceVersion`` comes from one global counter, increased by every
write; a watch from a resourceVersion replays the changes after it from a
bounded history, and a resourceVersion older than that history is ``410 Gone``
(reason ``Expired``). Stored objects are never mutated in place: a write stores
a new dict, so readers may keep a reference without a lock.
"""

import collections
import json
import os
import queue
import tempfile
import threading

HISTORY = 20000


class Watcher:
    """A subscription: events of one storage key (optionally one namespace) go into ``queue``."""

    def __init__(self, key, namespace=None):
        self.key = key
        self.namespace = namespace
        self.queue = queue.Queue()
        self.closed = False

    def close(self):
        self.closed = True
        self.queue.put(None)


class Store:
    def __init__(self):
        self.lock = threading.RLock()
        self._objects = collections.defaultdict(dict)  # (group, plural) -> {(namespace, name): obj}
        self._rv = 0
        self._history = collections.deque(maxlen=HISTORY)  # (rv, key, type, obj)
        self._watchers = collections.defaultdict(list)
        self._listeners = []  # callables (event_type, key, obj, old): controllers' event bus

    # -- reads -----------------------------------------------------------------------------
    @property
    def resource_version(self):
        return self._rv

    def get(self, key, namespace, name):
        return self._objects[key].get((namespace or "", name))

    def list(self, key, namespace=None):
        """Objects of ``key`` sorted by namespace and name (the order of a real list)."""
        with self.lock:
            bucket = self._objects.get(key) or {}
            if namespace:
                items = [(k, v) for k, v in bucket.items() if k[0] == namespace]
            else:
                items = list(bucket.items())
            rv = self._rv
        items.sort(key=lambda kv: kv[0])
        return [v for _, v in items], rv

    def count(self):
        with self.lock:
            return sum(len(b) for b in self._objects.values())

    def keys(self):
        with self.lock:
            return [k for k, b in self._objects.items() if b]

    # -- writes ----------------------------------------------------------------------------
    def next_rv(self):
        """Reserve the next resourceVersion (call with ``lock`` held, then ``put``/``remove``)."""
        self._rv += 1
        return self._rv

    def put(self, key, obj, event_type):
        """Store ``obj`` (its resourceVersion already set) and tell watchers and listeners."""
        meta = obj["metadata"]
        bucket = self._objects[key]
        ident = (meta.get("namespace") or "", meta["name"])
        old = bucket.get(ident)
        bucket[ident] = obj
        self._emit(key, event_type, obj, old)

    def remove(self, key, obj):
        """Remove ``obj``; the DELETED event carries ``obj`` (with its final resourceVersion)."""
        meta = obj["metadata"]
        old = self._objects[key].pop((meta.get("namespace") or "", meta["name"]), None)
        self._emit(key, "DELETED", obj, old)

    def _emit(self, key, event_type, obj, old):
        rv = int(obj["metadata"]["resourceVersion"])
        self._history.append((rv, key, event_type, obj))
        namespace = obj["metadata"].get("namespace")
        for watcher in self._watchers.get(key, ()):
            if watcher.namespace is None or watcher.namespace == namespace:
                watcher.queue.put((event_type, obj))
        for listener in self._listeners:
            listener(event_type, key, obj, old)

    # -- watch -----------------------------------------------------------------------------
    def watch(self, key, namespace=None, since=None):
        """A :class:`Watcher` plus the events after ``since`` (None when too old: 410)."""
        watcher = Watcher(key, namespace)
        with self.lock:
            backlog = []
            if since is not None and since < self._rv:
                if self._history and self._history[0][0] > since + 1 and len(self._history) == self._history.maxlen:
                    return None, None
                for rv, k, event_type, obj in self._history:
                    if rv > since and k == key and (namespace is None or obj["metadata"].get("namespace") == namespace):
                        backlog.append((event_type, obj))
            self._watchers[key].append(watcher)
        return watcher, backlog

    def unwatch(self, watcher):
        with self.lock:
            if watcher in self._watchers.get(watcher.key, ()):
                self._watchers[watcher.key].remove(watcher)

    def close_watchers(self):
        with self.lock:
            for watchers in self._watchers.values():
                for watcher in watchers:
                    watcher.close()
            self._watchers.clear()

    def add_listener(self, listener):
        with self.lock:
            self._listeners.append(listener)

    def remove_listener(self, listener):
        with self.lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    # -- persistence -----------------------------------------------------------------------
    def snapshot(self, path, extra=None):
        """Write every object and the counter to ``path`` (atomically)."""
        with self.lock:
            data = {"resourceVersion": self._rv, "extra": extra or {},
                    "objects": [{"group": k[0], "plural": k[1], "items": list(b.values())}
                                for k, b in self._objects.items() if b]}
            text = json.dumps(data, separators=(",", ":"))
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".snapshot.")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)

    def load(self, path):
        """Load a snapshot (no events are sent); returns its ``extra`` dict."""
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        with self.lock:
            self._rv = int(data["resourceVersion"])
            for entry in data["objects"]:
                bucket = self._objects[(entry["group"], entry["plural"])]
                for obj in entry["items"]:
                    bucket[(obj["metadata"].get("namespace") or "", obj["metadata"]["name"])] = obj
        return data.get("extra") or {}
