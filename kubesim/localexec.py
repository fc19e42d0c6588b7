"""Run a pod's container command as a local process.

One process per pod (the first container), in its own process group and
working directory, with the environment of the pod spec. Concurrency is
bounded: a pod waits (``ContainerCreating``) while every slot is taken. A
delete or the server's shutdown kills the whole process group (SIGTERM, then
SIGKILL after a grace period).
"""

import os
import signal
import subprocess
import threading
import time

KEEP_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV", "USER", "KUBECONFIG")


class LocalProcess:
    def __init__(self, key, popen, workdir):
        self.key = key
        self.popen = popen
        self.workdir = workdir
        self.started = time.time()
        self.exit_code = None


class LocalProcessRunner:
    def __init__(self, work_root, max_concurrent=4, grace_seconds=2.0):
        self.work_root = work_root
        self.max_concurrent = max_concurrent
        self.grace_seconds = grace_seconds
        self._lock = threading.Lock()
        self._running = {}

    def has_slot(self):
        with self._lock:
            return len(self._running) < self.max_concurrent

    def running(self, key):
        with self._lock:
            return key in self._running

    def start(self, key, argv, env, on_line, on_exit, workdir_name):
        """Start ``argv``; ``on_line(text)`` per output line, ``on_exit(code)`` at the end.

        Returns False when every slot is taken. Raises OSError when the command
        cannot be started.
        """
        with self._lock:
            if key in self._running:
                return True
            if len(self._running) >= self.max_concurrent:
                return False
            workdir = os.path.join(self.work_root, workdir_name)
            os.makedirs(workdir, exist_ok=True)
            base = {k: os.environ[k] for k in KEEP_ENV if k in os.environ}
            base.update(env)
            popen = subprocess.Popen(argv, cwd=workdir, env=base, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
            process = LocalProcess(key, popen, workdir)
            self._running[key] = process
        thread = threading.Thread(target=self._pump, args=(process, on_line, on_exit), daemon=True,
                                  name="kubesim-pod-%s" % workdir_name)
        thread.start()
        return True

    def _pump(self, process, on_line, on_exit):
        for raw in iter(process.popen.stdout.readline, b""):
            on_line(raw.decode("utf-8", "replace"))
        process.popen.stdout.close()
        code = process.popen.wait()
        process.exit_code = code if code >= 0 else 128 - code
        with self._lock:
            self._running.pop(process.key, None)
        on_exit(process.exit_code)

    def kill(self, key):
        with self._lock:
            process = self._running.get(key)
        if process is None:
            return
        self._signal(process, signal.SIGTERM)
        threading.Thread(target=self._reap, args=(process,), daemon=True).start()

    def _reap(self, process):
        try:
            process.popen.wait(timeout=self.grace_seconds)
        except subprocess.TimeoutExpired:
            self._signal(process, signal.SIGKILL)

    @staticmethod
    def _signal(process, signum):
        try:
            os.killpg(process.popen.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    def shutdown(self):
        with self._lock:
            processes = list(self._running.values())
        for process in processes:
            self._signal(process, signal.SIGTERM)
        deadline = time.monotonic() + self.grace_seconds
        for process in processes:
            try:
                process.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._signal(process, signal.SIGKILL)
