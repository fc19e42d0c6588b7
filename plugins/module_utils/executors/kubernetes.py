# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubernetes executor: each matrix point is a Job on the driver (or sutest) cluster.

The Job's pod runs ``pod_point.py`` (this package) with the point's command as
its arguments; it runs the command as the local executor would and sends the
point's directory back through the pod log as one archive; ``collect`` unpacks it into the point's
directory, so the artifact tree is the one the local executor leaves.

What ``tests.benchmark.kubernetes`` sets (``benchmark/section.benchmark_model``):
the cluster role, the namespace (created when missing), the image, the Python
and the collection inside the image (``null``: this controller's, as on
kubesim, where Jobs' pods run as local processes), node selector, tolerations,
resources (GPUs), service account, environment variables passed on, ``keep``
(leave the Jobs) and the archive size limit. The point's timeout becomes the
Job's ``activeDeadlineSeconds``; the parallelism policies keep their meaning,
since each point's Job is deleted (after collection) before its slot is free.

The Kubernetes client is imported when the first point starts.
"""

from __future__ import annotations

import binascii
import json
import math
import os
import sys
import threading
import time
import uuid
import zlib

from ansible_collections.perfscale.topsail.plugins.module_utils.executors import base
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import pod_point
from ansible_collections.perfscale.topsail.plugins.module_utils import safe_paths
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.names import dns_label

MANAGED_BY = "perfscale.topsail"
JOB_LABEL = "perfscale.io/point-job"
MATRIX_LABEL = "perfscale.io/matrix"
POINT_ANNOTATION = "perfscale.io/point"
CONTAINER = "point"
# the collection's root on this controller (executors -> module_utils -> plugins -> root)
CONTROLLER_COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
POD_ENTRY = os.path.join("plugins", "module_utils", "executors", "pod_point.py")
POLL_MAX_S = 0.5
POD_LOOK_S = 1.0
DELETE_WAIT_S = 30.0

# the defaults of tests.benchmark.kubernetes (benchmark/section.benchmark_model has the same)
DEFAULTS = {
    "cluster": "driver", "namespace": "perfscale-benchmark", "image": "quay.io/perfscale/topsail:latest",
    "image_pull_policy": None, "python": None, "collection_path": None, "node_selector": {}, "tolerations": [],
    "resources": {}, "service_account": None, "pass_env": [], "keep": False, "archive_limit_mib": 8,
}


def poll_pause(elapsed):
    """Seconds until the next look at a Job: 10 ms during its first second (a GET costs about
    1 ms; a short point's end is seen at once), then a tenth of its age, at most 0.5 s."""
    return 0.01 if elapsed < 1.0 else min(POLL_MAX_S, elapsed / 10.0)


def job_name(matrix_name, index, run_id):
    """``<matrix>-<index>-<run id>``: unique per attempt, short enough for the pods' names."""
    suffix = "-%04d-%s" % (index, run_id)
    return dns_label(matrix_name, 52 - len(suffix)) + suffix


def pod_argv(argv, python=None, collection_path=None):
    """The point's argv as the pod runs it: this controller's Python and collection paths
    replaced by the image's (unchanged when those are not set)."""
    translated = []
    for position, argument in enumerate(argv):
        if position == 0 and python and argument == sys.executable:
            argument = python
        elif collection_path and argument.startswith(CONTROLLER_COLLECTION + os.sep):
            argument = collection_path.rstrip("/") + "/" + argument[len(CONTROLLER_COLLECTION) + 1:]
        translated.append(argument)
    return translated


def render_job(settings, name, point, command, timeout_s, matrix_name, environ=None):
    """The Job manifest of one point (a plain dict, validated offline in the tests)."""
    python = settings.get("python") or sys.executable
    collection = (settings.get("collection_path") or CONTROLLER_COLLECTION).rstrip("/")
    environ = os.environ if environ is None else environ
    env = {pod_point.LIMIT_ENV: str(int(float(settings["archive_limit_mib"]) * 1024 * 1024))}
    for variable in settings.get("pass_env") or ():
        if variable in environ:
            env[variable] = environ[variable]
    env.update(command.env)
    container = {
        "name": CONTAINER,
        "image": settings["image"],
        "command": [python, "-S", "-P", collection + "/" + POD_ENTRY],
        "args": pod_argv(command.argv, settings.get("python"), settings.get("collection_path")),
        "env": [{"name": key, "value": str(value)} for key, value in sorted(env.items())],
    }
    if settings.get("image_pull_policy"):
        container["imagePullPolicy"] = settings["image_pull_policy"]
    if settings.get("resources"):
        container["resources"] = settings["resources"]
    labels = {"app.kubernetes.io/managed-by": MANAGED_BY, MATRIX_LABEL: dns_label(matrix_name, 63), JOB_LABEL: name}
    pod_spec = {"restartPolicy": "Never", "containers": [container]}
    if settings.get("node_selector"):
        pod_spec["nodeSelector"] = dict(settings["node_selector"])
    if settings.get("tolerations"):
        pod_spec["tolerations"] = list(settings["tolerations"])
    if settings.get("service_account"):
        pod_spec["serviceAccountName"] = settings["service_account"]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": settings["namespace"], "labels": labels,
                     "annotations": {POINT_ANNOTATION: point.name}},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": max(1, int(math.ceil(timeout_s))),
            "template": {"metadata": {"labels": labels, "annotations": {POINT_ANNOTATION: point.name}},
                         "spec": pod_spec},
        },
    }


# the most a pod's archive may unpack to (its files are held in memory before they are written)
MAX_ARCHIVE_BYTES = 1024 * 1024 * 1024


def parse_archive(log):
    """``(exit code, {relative path: bytes})`` from a pod log (``pod_point.py``'s format); ``None``
    when it holds no complete archive (the pod was stopped before writing it). Raises ValueError
    when the archive is there but damaged."""
    lines = log.splitlines()
    begins = [i for i, line in enumerate(lines) if line.startswith(pod_point.BEGIN + " ")]
    if not begins:
        return None
    first = begins[-1]
    try:
        end = lines.index(pod_point.END, first + 1)
    except ValueError:
        return None
    header = lines[first].split()
    if len(header) != 3 or not header[1].lstrip("-").isdigit() or not header[2].isdigit():
        raise ValueError("archive header %r: expected BEGIN <exit code> <files>" % lines[first])
    files, current, chunks, total = {}, None, [], [0]

    def finish():
        if current is None:
            return
        name, size, crc = current
        total[0] += size
        if size < 0 or total[0] > MAX_ARCHIVE_BYTES:
            raise ValueError("archive file %s: %d bytes would bring the archive past its limit of %d bytes"
                             % (name, size, MAX_ARCHIVE_BYTES))
        try:
            # never more than the announced size plus one byte: a zip bomb stops there
            data = zlib.decompressobj().decompress(binascii.a2b_base64("".join(chunks)), size + 1)
        except (binascii.Error, zlib.error) as exc:
            raise ValueError("archive file %s: %s" % (name, exc)) from None
        if len(data) != size or zlib.crc32(data) != crc:
            raise ValueError("archive file %s: %d bytes with crc32 %d, expected %d bytes with crc32 %d"
                             % (name, len(data), zlib.crc32(data), size, crc))
        files[name] = data

    for line in lines[first + 1:end]:
        if line.startswith(pod_point.FILE + " "):
            finish()
            fields = line.split()
            try:
                current = (binascii.a2b_base64(fields[1]).decode("utf-8"), int(fields[2]), int(fields[3]))
            except (IndexError, ValueError, binascii.Error) as exc:
                raise ValueError("archive file header %r: %s" % (line, exc)) from None
            chunks = []
        elif current is not None:
            chunks.append(line.strip())
    finish()
    if len(files) != int(header[2]):
        raise ValueError("archive: %d file(s), its header announced %s" % (len(files), header[2]))
    return int(header[1]), files


def extract_archive(files, directory):
    """Write an archive's files into ``directory``; a name ``safe_paths`` refuses (outside it, or a
    file where another needs a directory) refuses the whole archive before anything is written."""
    return safe_paths.write_files(directory, files, "archive member")


def api_error(exc):
    """One line for a Kubernetes client error."""
    status = getattr(exc, "status", None)
    if status:
        message = getattr(exc, "reason", "") or ""
        try:
            message = json.loads(exc.body).get("message") or message
        except (TypeError, ValueError, AttributeError):
            pass
        return "%s %s" % (status, message)
    return "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")


def _condition(obj, kind):
    for condition in ((obj or {}).get("status") or {}).get("conditions") or ():
        if condition.get("type") == kind and condition.get("status") == "True":
            return condition
    return None


def _pod_state(pod):
    """A short account of a pod: its phase, why it is not running yet (Unschedulable...), and
    its container's waiting or terminated reason."""
    status = (pod or {}).get("status") or {}
    phase = status.get("phase") or "Unknown"
    parts = [phase]
    if phase in ("Pending", "Unknown"):
        for condition in status.get("conditions") or ():
            if condition.get("status") == "False" and condition.get("reason"):
                parts.append(" ".join(filter(None, (condition["reason"] + ":", condition.get("message")))))
    for container in status.get("containerStatuses") or ():
        state = container.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            parts.append(" ".join(filter(None, ("waiting", state["waiting"]["reason"], state["waiting"].get("message")))))
        if state.get("terminated"):
            terminated = state["terminated"]
            parts.append("terminated %s (exit %s)" % (terminated.get("reason") or "", terminated.get("exitCode")))
    return "; ".join(parts)


def api_client_for(connection, base_env):
    """A Kubernetes API client: the inventory's kubeconfig/context, else ``KUBECONFIG`` (or
    ``~/.kube/config``), else the in-cluster service account."""
    from kubernetes import client, config

    kubeconfig = (connection or {}).get("kubeconfig") or (base_env or {}).get("KUBECONFIG")
    context = (connection or {}).get("context")
    if kubeconfig or context or os.path.exists(os.path.expanduser("~/.kube/config")) or \
            "KUBERNETES_SERVICE_HOST" not in os.environ:
        return config.new_client_from_config(config_file=kubeconfig, context=context)
    config.load_incluster_config()
    return client.ApiClient()


def client_errors():
    """What the Kubernetes client raises when the cluster refuses or cannot be reached."""
    import urllib3
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException

    return (ApiException, urllib3.exceptions.HTTPError, ConfigException, OSError)


def ensure_namespace(core, namespace):
    """Create ``namespace`` when it does not exist."""
    from kubernetes.client.exceptions import ApiException

    try:
        core.read_namespace(namespace)
    except ApiException as exc:
        if exc.status != 404:
            raise
        try:
            core.create_namespace({"metadata": {"name": namespace, "labels": {"app.kubernetes.io/managed-by": MANAGED_BY}}})
        except ApiException as create_exc:
            if create_exc.status != 409:
                raise


class KubernetesHandle:
    __slots__ = ("job", "directory", "started", "error", "pod", "execution")

    def __init__(self, job, directory, started, error=None):
        self.job = job
        self.directory = directory
        self.started = started
        self.error = error
        self.pod = None
        self.execution = None


class KubernetesExecutor(base.Executor):
    name = "kubernetes"
    description = "Each point is a Job on the driver (or sutest) cluster; its files come back through the pod log"

    def __init__(self, settings=None, connection=None, base_env=None, timeout_s=600, matrix_name="matbenchmarking"):
        self.settings = dict(DEFAULTS, **(settings or {}))
        self.connection = dict(connection or {})
        self.base_env = dict(os.environ if base_env is None else base_env)
        self.timeout_s = timeout_s
        self.matrix_name = matrix_name
        self.run_id = uuid.uuid4().hex[:6]
        self._lock = threading.Lock()
        self._api = None
        self._namespace_ready = False

    @classmethod
    def cluster_role(cls, section):
        return dict(DEFAULTS, **(section.get("kubernetes") or {}))["cluster"]

    @classmethod
    def from_section(cls, section, base_env=None, connections=None):
        settings = dict(DEFAULTS, **(section.get("kubernetes") or {}))
        return cls(settings, connection=(connections or {}).get(settings["cluster"]), base_env=base_env,
                   timeout_s=section.get("timeout_s", 600), matrix_name=section.get("name") or "matbenchmarking")

    # -- the client

    def _client(self):
        """The API client (created once, on first use: importing the client costs a fraction of a second)."""
        with self._lock:
            if self._api is None:
                from kubernetes import client

                api_client = api_client_for(self.connection, self.base_env)
                self._api = (client.CoreV1Api(api_client), client.BatchV1Api(api_client))
            return self._api

    @staticmethod
    def _errors():
        return client_errors()

    def _ensure_namespace(self, core):
        with self._lock:
            if not self._namespace_ready:
                ensure_namespace(core, self.settings["namespace"])
                self._namespace_ready = True

    def _details(self, handle):
        details = {"name": self.name, "cluster": self.settings["cluster"], "namespace": self.settings["namespace"],
                   "job": handle.job}
        pod = handle.pod or {}
        if pod:
            details["pod"] = pod["metadata"]["name"]
            details["node"] = (pod.get("spec") or {}).get("nodeName")
        return details

    # -- the executor interface

    def start(self, point, command, directory):
        started = time.monotonic()
        name = job_name(self.matrix_name, point.index, self.run_id)
        manifest = render_job(self.settings, name, point, command, self.timeout_s, self.matrix_name, self.base_env)
        try:
            core, batch = self._client()
            self._ensure_namespace(core)
            batch.create_namespaced_job(self.settings["namespace"], manifest)
        except self._errors() as exc:
            return KubernetesHandle(name, directory, started, error="Job %s/%s could not be created: %s"
                                    % (self.settings["namespace"], name, api_error(exc)))
        return KubernetesHandle(name, directory, started)

    def _read(self, call, *args, **kwargs):
        return call(*args, _preload_content=False, **kwargs)

    def _job(self, handle):
        _core, batch = self._client()
        response = self._read(batch.read_namespaced_job, handle.job, self.settings["namespace"])
        return json.loads(response.data)

    def _pod(self, handle):
        core, _batch = self._client()
        response = self._read(core.list_namespaced_pod, self.settings["namespace"],
                              label_selector="%s=%s" % (JOB_LABEL, handle.job))
        pods = json.loads(response.data).get("items") or []
        pods.sort(key=lambda pod: pod["metadata"].get("creationTimestamp") or "")
        return pods[-1] if pods else None

    def wait(self, handle, timeout):
        if handle.error:
            handle.execution = base.Execution(base.EXIT_NOT_STARTED, time.monotonic() - handle.started,
                                              error=handle.error, details=self._details(handle))
            return handle.execution
        deadline = handle.started + timeout
        errors = self._errors()
        looked_at_pod = handle.started
        while True:
            try:
                job = self._job(handle)
            except errors as exc:
                if getattr(exc, "status", None) == 404:
                    return self._ended(handle, base.Execution(
                        base.EXIT_CANCELLED, time.monotonic() - handle.started,
                        error="Job %s/%s was deleted before it finished" % (self.settings["namespace"], handle.job)))
                job = None  # a transient API error: try again until the deadline
            if job is not None and (_condition(job, "Complete") or _condition(job, "Failed")):
                return self._finished(handle, job)
            now = time.monotonic()
            if now >= deadline:
                return self._timed_out(handle, timeout)
            if now - looked_at_pod >= POD_LOOK_S:
                # what the pod was doing, for when it is gone (a Job past its deadline loses its pods)
                looked_at_pod = now
                try:
                    handle.pod = self._pod(handle) or handle.pod
                except errors:
                    pass
            time.sleep(min(poll_pause(now - handle.started), deadline - now))

    def _ended(self, handle, execution):
        execution.details = self._details(handle)
        handle.execution = execution
        return execution

    def _finished(self, handle, job):
        duration = time.monotonic() - handle.started
        try:
            handle.pod = self._pod(handle) or handle.pod
        except self._errors():
            pass
        failed = _condition(job, "Failed")
        if failed and failed.get("reason") == "DeadlineExceeded":
            return self._ended(handle, base.Execution(
                base.EXIT_TIMEOUT, duration, timed_out=True,
                error="harness timed out: Job %s/%s ran past activeDeadlineSeconds (%s; pod: %s)"
                      % (self.settings["namespace"], handle.job, failed.get("message") or "DeadlineExceeded",
                         "last seen: " + _pod_state(handle.pod) if handle.pod else "none seen")))
        code = None
        for container in ((handle.pod or {}).get("status") or {}).get("containerStatuses") or ():
            terminated = (container.get("state") or {}).get("terminated")
            if container.get("name") == CONTAINER and terminated:
                code = terminated.get("exitCode")
        if code is None:
            code = 1 if failed else 0
        if code == 0 and not failed:
            return self._ended(handle, base.Execution(0, duration))
        return self._ended(handle, base.Execution(
            code or 1, duration, error="harness exited with %d (Job %s/%s failed: %s)"
            % (code or 1, self.settings["namespace"], handle.job,
               _pod_state(handle.pod) if handle.pod else (failed or {}).get("reason", "no pod"))))

    def _timed_out(self, handle, timeout):
        try:
            handle.pod = self._pod(handle) or handle.pod
        except self._errors():
            pass
        pod = handle.pod
        self.cancel(handle)
        return self._ended(handle, base.Execution(
            base.EXIT_TIMEOUT, time.monotonic() - handle.started, timed_out=True,
            error="harness timed out after %s s (Job %s/%s deleted; pod: %s)"
                  % (timeout, self.settings["namespace"], handle.job, _pod_state(pod) if pod else "none")))

    def collect(self, handle, directory):
        """Unpack the archive of the pod log into the point's directory, then delete the Job
        (unless ``keep``); an ``Execution`` replacing the one of ``wait`` when the files did not
        come back."""
        execution = handle.execution
        if handle.error:
            return None  # no Job was created
        if handle.pod is None:
            self._cleanup(handle)
            return None
        replacement = None
        try:
            core, _batch = self._client()
            log = self._read(core.read_namespaced_pod_log, handle.pod["metadata"]["name"], self.settings["namespace"],
                             container=CONTAINER).data.decode("utf-8", "replace")
        except self._errors() as exc:
            log, replacement = None, "its log could not be read: %s" % api_error(exc)
        if log is not None:
            try:
                found = parse_archive(log)
                if found is None:
                    replacement = "its log holds no point archive (%s)" % _pod_state(handle.pod)
                else:
                    extract_archive(found[1], directory)
            except (ValueError, OSError) as exc:
                replacement = "its point archive is unusable: %s" % exc
        self._cleanup(handle)
        if replacement is None:
            return None
        error = "pod %s/%s: %s" % (self.settings["namespace"], handle.pod["metadata"]["name"], replacement)
        if execution is not None and not execution.ok:
            execution.error = "%s; %s" % (execution.error, error)
            return execution
        return base.Execution(base.EXIT_BAD_OUTPUT, execution.duration if execution else 0.0, error=error,
                              details=self._details(handle))

    def _cleanup(self, handle):
        """Delete the point's Job (unless ``keep``); a Job that cannot be deleted is noted in the
        point's executor details, it does not change the point's outcome."""
        try:
            self._delete(handle)
        except self._errors() as exc:
            if handle.execution is not None:
                handle.execution.details = dict(handle.execution.details or {}, cleanup_error=api_error(exc))

    def _delete(self, handle, wait=True):
        if self.settings["keep"] and wait:
            return
        errors = self._errors()
        _core, batch = self._client()
        try:
            batch.delete_namespaced_job(handle.job, self.settings["namespace"], propagation_policy="Background")
        except errors as exc:
            if getattr(exc, "status", None) == 404:
                return
            raise
        if not wait:
            return
        # the Job is gone before its slot is given to the next point (sliding:N = N Jobs at most)
        asked = time.monotonic()
        while time.monotonic() < asked + DELETE_WAIT_S:
            try:
                self._job(handle)
            except errors as exc:
                if getattr(exc, "status", None) == 404:
                    return
            time.sleep(poll_pause(time.monotonic() - asked))

    def cancel(self, handle):
        if handle.error:
            return
        try:
            self._delete(handle, wait=False)
        except self._errors():
            pass  # the cluster is unreachable: nothing more can be done from here
