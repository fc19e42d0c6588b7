"""Container logs of pods: current and previous instance, tail and follow."""

import threading
import time


class PodLogs:
    def __init__(self, clock):
        self.clock = clock
        self._cond = threading.Condition()
        self._logs = {}     # (namespace, pod, container) -> {"current": [(ts, line)], "previous": [...], "open": bool}
        self._pods = {}     # (namespace, pod) -> {container}

    def _entry(self, key):
        entry = self._logs.get(key)
        if entry is None:
            entry = self._logs[key] = {"current": [], "previous": [], "open": True}
            self._pods.setdefault(key[:2], set()).add(key[2])
        return entry

    def append(self, namespace, pod, container, line):
        with self._cond:
            entry = self._entry((namespace, pod, container))
            entry["current"].append((self.clock.micro_timestamp(), line.rstrip("\n")))
            entry["open"] = True
            self._cond.notify_all()

    def restart(self, namespace, pod, container):
        """A new container instance: the current log becomes the previous one."""
        with self._cond:
            entry = self._entry((namespace, pod, container))
            entry["previous"], entry["current"], entry["open"] = entry["current"], [], True
            self._cond.notify_all()

    def terminated(self, namespace, pod, container):
        """The container instance ended (it will restart): its log is also the ``previous`` one from now on."""
        with self._cond:
            entry = self._entry((namespace, pod, container))
            entry["previous"] = list(entry["current"])
            self._cond.notify_all()

    def _containers_of(self, namespace, pod):
        return self._pods.get((namespace, pod), ())

    def close(self, namespace, pod, container=None):
        """The container stopped: followers end after the last line."""
        with self._cond:
            for name in list(self._containers_of(namespace, pod)):
                if container is None or name == container:
                    self._logs[(namespace, pod, name)]["open"] = False
            self._cond.notify_all()

    def drop(self, namespace, pod):
        with self._cond:
            for name in list(self._pods.pop((namespace, pod), ())):
                entry = self._logs.pop((namespace, pod, name), None)
                if entry is not None:
                    entry["open"] = False
            self._cond.notify_all()

    def lines(self, namespace, pod, container, previous=False, tail=None, timestamps=False):
        with self._cond:
            entry = self._logs.get((namespace, pod, container)) or {"current": [], "previous": []}
            lines = list(entry["previous" if previous else "current"])
        if tail is not None:
            lines = lines[-tail:] if tail > 0 else []
        return [("%s %s" % (ts, text)) if timestamps else text for ts, text in lines]

    def follow(self, namespace, pod, container, tail=None, timestamps=False, stop=None, timeout=None):
        """Yield lines (already written, then new ones) until the container stops."""
        key = (namespace, pod, container)
        with self._cond:
            entry = self._logs.get(key) or {"current": []}
            start = len(entry["current"]) - tail if tail is not None and tail >= 0 else 0
            index = max(0, start)
        deadline = time.monotonic() + timeout if timeout else None
        while True:
            with self._cond:
                entry = self._logs.get(key)
                if entry is None:
                    return
                pending = entry["current"][index:]
                index += len(pending)
                is_open = entry["open"]
                if not pending and is_open:
                    self._cond.wait(0.5)
            for ts, text in pending:
                yield ("%s %s" % (ts, text)) if timestamps else text
            if not pending and not is_open:
                return
            if (stop is not None and stop()) or (deadline is not None and time.monotonic() > deadline):
                return
