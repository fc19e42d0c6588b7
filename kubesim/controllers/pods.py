"""A minimal kubelet + scheduler: pods get a node, start, run and finish.

Annotations (prefix ``kubesim.perfscale.io/``) drive a simulated pod:

- ``outcome``: ``Running`` (stays running; the default for ``restartPolicy: Always``),
  ``Succeeded`` (the default for ``Never``/``OnFailure``), ``Failed``,
  ``CrashLoopBackOff`` (the container restarts every ``duration-s``);
- ``duration-s``: simulated seconds the container runs (default 1);
- ``start-delay-s``: simulated seconds from creation to Running (server default);
- ``exit-code``: the exit code of a Failed container (default 1);
- ``log``: text written to the container log when it starts (one line per line);
- ``run-local: "true"``: run the first container's ``command`` + ``args`` as a
  local process (see :mod:`kubesim.localexec`); its exit code decides
  Succeeded/Failed and its output is the log. ``--run-local-pods`` does this
  for every pod.

Scheduling: the first Ready, schedulable node whose labels match
``nodeSelector`` and whose allocatable ``nvidia.com/gpu`` covers the pod's
requests, least loaded first; otherwise the pod stays Pending
(``PodScheduled=False``, reason ``Unschedulable``) and is retried.
"""

import base64
import os

from kubesim.clock import parse_timestamp
from kubesim.controllers.base import Controller, Ref

PODS = ("", "pods")
NODES = ("", "nodes")
PREFIX = "kubesim.perfscale.io/"
GPU = "nvidia.com/gpu"


def _annotation(pod, name, default=None):
    return ((pod["metadata"].get("annotations") or {}).get(PREFIX + name, default))


def _float(value, default):
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _quantity(value):
    try:
        return float(str(value).rstrip("m")) / (1000 if str(value).endswith("m") else 1)
    except ValueError:
        return 0.0


def _gpu_request(pod):
    total = 0.0
    for container in (pod.get("spec") or {}).get("containers") or ():
        resources = container.get("resources") or {}
        total += _quantity((resources.get("limits") or {}).get(GPU) or (resources.get("requests") or {}).get(GPU) or 0)
    return total


class PodController(Controller):
    name = "pods"
    watches = (PODS,)

    def __init__(self, cluster, manager):
        super().__init__(cluster, manager)
        settings = getattr(cluster, "settings", None)
        self.start_delay = getattr(settings, "pod_start_delay", 0.5)
        self.run_all_local = getattr(settings, "run_local_pods", False)
        self.runner = getattr(cluster, "runner", None)
        self.logs = cluster.logs
        self._exits = {}

    # -- events ----------------------------------------------------------------------------
    def on_event(self, event):
        meta = event.obj["metadata"]
        if event.type == "DELETED":
            if self.runner is not None:
                self.runner.kill(meta["uid"])
            self.logs.drop(meta.get("namespace"), meta["name"])
            return []
        return [Ref(event.key, meta.get("namespace"), meta["name"])]

    def stop(self):
        if self.runner is not None:
            self.runner.shutdown()

    # -- helpers ---------------------------------------------------------------------------
    @property
    def pods(self):
        return self.cluster.resource_for_key(PODS)

    def _status(self, ref, change):
        return self.cluster.mutate(self.pods, ref.namespace, ref.name, change, subresource="status")

    def _containers(self, pod):
        return [c["name"] for c in (pod.get("spec") or {}).get("containers") or ()]

    def _local(self, pod):
        return self.runner is not None and (self.run_all_local or str(_annotation(pod, "run-local", "")).lower() == "true")

    def _outcome(self, pod):
        default = "Running" if (pod.get("spec") or {}).get("restartPolicy", "Always") == "Always" else "Succeeded"
        return _annotation(pod, "outcome", default)

    # -- scheduling ------------------------------------------------------------------------
    def _schedule(self, pod):
        selector = (pod.get("spec") or {}).get("nodeSelector") or {}
        gpus = _gpu_request(pod)
        nodes, _ = self.cluster.store.list(NODES)
        load = {}
        for other in self.cluster.store.list(PODS)[0]:
            node = (other.get("spec") or {}).get("nodeName")
            if node and (other.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                load[node] = load.get(node, 0.0) + _gpu_request(other) * 1000 + 1
        candidates = []
        for node in nodes:
            labels = node["metadata"].get("labels") or {}
            if (node.get("spec") or {}).get("unschedulable") or any(labels.get(k) != v for k, v in selector.items()):
                continue
            taints = [t for t in (node.get("spec") or {}).get("taints") or () if t.get("effect") == "NoSchedule"]
            tolerations = (pod.get("spec") or {}).get("tolerations") or ()
            if any(not any(tol.get("operator") == "Exists" and (not tol.get("key") or tol.get("key") == t.get("key"))
                           or tol.get("key") == t.get("key") for tol in tolerations) for t in taints):
                continue
            capacity = _quantity(((node.get("status") or {}).get("allocatable") or {}).get(GPU, 0))
            used = sum(_gpu_request(p) for p in self.cluster.store.list(PODS)[0]
                       if (p.get("spec") or {}).get("nodeName") == node["metadata"]["name"]
                       and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
            if gpus and capacity - used < gpus:
                continue
            candidates.append((load.get(node["metadata"]["name"], 0.0), node["metadata"]["name"]))
        return min(candidates)[1] if candidates else None

    # -- reconcile -------------------------------------------------------------------------
    def reconcile(self, ref):
        pod = self.cluster.store.get(PODS, ref.namespace, ref.name)
        if pod is None:
            return None
        meta = pod["metadata"]
        status = pod.get("status") or {}
        phase = status.get("phase")
        if meta.get("deletionTimestamp"):
            if self.runner is not None:
                self.runner.kill(meta["uid"])
            return None
        if phase in ("Succeeded", "Failed"):
            return None
        now = self.clock.timestamp()
        if not (pod.get("spec") or {}).get("nodeName"):
            node = self._schedule(pod)
            if node is None:
                def unschedulable(obj):
                    obj["status"] = {"phase": "Pending", "conditions": [{
                        "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastTransitionTime": now,
                        "message": "0/%d nodes are available: no node matches the pod's node selector, taints or GPU "
                                   "requests" % len(self.cluster.store.list(NODES)[0])}]}
                    return obj["status"] != (pod.get("status") or {})
                self._status(ref, unschedulable)
                return 2.0

            def bind(obj):
                obj["spec"]["nodeName"] = node
            self.cluster.mutate(self.pods, ref.namespace, ref.name, bind)
            self.cluster.record_event(pod, "Scheduled", "Successfully assigned %s/%s to %s" % (ref.namespace, ref.name, node),
                                      component="default-scheduler")
            return 0.0
        if phase is None or (phase == "Pending" and not status.get("startTime")):
            return self._pending(ref, pod, now)
        if phase == "Pending":
            return self._start(ref, pod, now)
        if phase == "Running":
            return self._running(ref, pod, now)
        return None

    def _pending(self, ref, pod, now):
        if (pod.get("status") or {}).get("phase") != "Pending" or not pod["status"].get("conditions") or \
                pod["status"]["conditions"][0].get("status") != "True":
            def pending(obj):
                obj["status"] = {
                    "phase": "Pending", "qosClass": "BestEffort", "startTime": now,
                    "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": now}],
                    "containerStatuses": [{"name": c, "ready": False, "restartCount": 0, "started": False,
                                           "image": self._image(obj, c), "imageID": "",
                                           "state": {"waiting": {"reason": "ContainerCreating"}}}
                                          for c in self._containers(obj)]}
            self._status(ref, pending)
        created = parse_timestamp(pod["metadata"].get("creationTimestamp")) or self.clock.time()
        delay = _float(_annotation(pod, "start-delay-s"), self.start_delay)
        remaining = created + delay - self.clock.time()
        return max(0.0, remaining) if remaining > 0 else 0.0

    @staticmethod
    def _image(pod, container):
        for c in (pod.get("spec") or {}).get("containers") or ():
            if c["name"] == container:
                return c.get("image", "")
        return ""

    def _running_status(self, obj, now, restarts=0, last_state=None, waiting=None):
        status = obj.setdefault("status", {})
        status["phase"] = "Running"
        ready = "False" if waiting else "True"
        status["conditions"] = [
            {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": now},
            {"type": "Initialized", "status": "True", "lastTransitionTime": now},
            {"type": "Ready", "status": ready, "lastTransitionTime": now},
            {"type": "ContainersReady", "status": ready, "lastTransitionTime": now},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": now}]
        status["podIP"] = status.get("podIP") or "10.128.%d.%d" % (hash(obj["metadata"]["uid"]) % 250, hash(obj["metadata"]["name"]) % 250 + 2)
        status["hostIP"] = "192.168.0.10"
        statuses = []
        for c in self._containers(obj):
            entry = {"name": c, "ready": not waiting, "restartCount": restarts, "started": not waiting,
                     "image": self._image(obj, c), "imageID": "sha256:kubesim", "containerID": "kubesim://%s-%s" % (obj["metadata"]["uid"][:8], c),
                     "state": {"waiting": waiting} if waiting else {"running": {"startedAt": now}}}
            if last_state:
                entry["lastState"] = last_state
            statuses.append(entry)
        status["containerStatuses"] = statuses

    def _start(self, ref, pod, now):
        created = parse_timestamp(pod["metadata"].get("creationTimestamp")) or self.clock.time()
        remaining = created + _float(_annotation(pod, "start-delay-s"), self.start_delay) - self.clock.time()
        if remaining > 0:
            return remaining
        failure = self.failure(pod)
        if failure:
            return self._terminate(ref, pod, now, "Failed", 1, "InjectedFault", failure)
        if self._local(pod):
            return self._start_local(ref, pod, now)
        for container in self._containers(pod):
            self.logs.restart(ref.namespace, ref.name, container)
            for line in str(_annotation(pod, "log", "") or "").splitlines():
                self.logs.append(ref.namespace, ref.name, container, line)
        self._status(ref, lambda obj: self._running_status(obj, now))
        self.cluster.record_event(pod, "Started", "Started container %s" % self._containers(pod)[0], component="kubelet")
        if self._outcome(pod) == "Running":
            return None
        return _float(_annotation(pod, "duration-s"), 1.0)

    def _running(self, ref, pod, now):
        uid = pod["metadata"]["uid"]
        if uid in self._exits:
            code = self._exits.pop(uid)
            return self._terminate(ref, pod, now, "Succeeded" if code == 0 else "Failed", code,
                                   "Completed" if code == 0 else "Error", "")
        if self._local(pod):
            if self.runner.running(uid):
                return None
            return self._start_local(ref, pod, now)
        outcome = self._outcome(pod)
        if outcome == "Running":
            return None
        container = ((pod.get("status") or {}).get("containerStatuses") or [{}])[0]
        state = container.get("state") or {}
        since = parse_timestamp((state.get("running") or {}).get("startedAt")) or parse_timestamp(
            (container.get("lastState") or {}).get("terminated", {}).get("finishedAt")) or self.clock.time()
        duration = _float(_annotation(pod, "duration-s"), 1.0)
        left = since + duration - self.clock.time()
        if left > 0:
            return left
        failure = self.failure(pod)
        if failure:
            return self._terminate(ref, pod, now, "Failed", 1, "InjectedFault", failure)
        if outcome == "CrashLoopBackOff":
            restarts = int(container.get("restartCount") or 0)
            if "waiting" in state:
                for name in self._containers(pod):
                    self.logs.restart(ref.namespace, ref.name, name)
                    for line in str(_annotation(pod, "log", "") or "").splitlines():
                        self.logs.append(ref.namespace, ref.name, name, line)
                self._status(ref, lambda obj: self._running_status(obj, now, restarts, container.get("lastState")))
                return duration
            code = int(_float(_annotation(pod, "exit-code"), 1))
            last = {"terminated": {"exitCode": code, "reason": "Error", "startedAt": (state.get("running") or {}).get("startedAt"),
                                   "finishedAt": now}}
            self._status(ref, lambda obj: self._running_status(
                obj, now, restarts + 1, last, {"reason": "CrashLoopBackOff",
                                               "message": "back-off restarting failed container"}))
            self.cluster.record_event(pod, "BackOff", "Back-off restarting failed container", "Warning", "kubelet")
            return duration
        if outcome == "Failed":
            return self._terminate(ref, pod, now, "Failed", int(_float(_annotation(pod, "exit-code"), 1)), "Error", "")
        return self._terminate(ref, pod, now, "Succeeded", 0, "Completed", "")

    def _terminate(self, ref, pod, now, phase, code, reason, message):
        started = ((pod.get("status") or {}).get("startTime")) or now

        def finish(obj):
            status = obj.setdefault("status", {})
            status["phase"] = phase
            if message:
                status["message"] = message
                status["reason"] = reason
            status.setdefault("startTime", started)
            status["conditions"] = [
                {"type": "Initialized", "status": "True", "lastTransitionTime": now},
                {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now},
                {"type": "ContainersReady", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": now}]
            statuses = []
            for c in self._containers(obj):
                statuses.append({"name": c, "ready": False, "restartCount": 0, "started": False,
                                 "image": self._image(obj, c), "imageID": "sha256:kubesim",
                                 "state": {"terminated": {"exitCode": code, "reason": reason, "startedAt": started,
                                                          "finishedAt": now, "message": message or None}}})
                if not message:
                    del statuses[-1]["state"]["terminated"]["message"]
            status["containerStatuses"] = statuses
        self._status(ref, finish)
        self.logs.close(ref.namespace, ref.name)
        if phase == "Failed":
            self.cluster.record_event(pod, "Failed", message or "container exited with code %d" % code, "Warning", "kubelet")
        return None

    # -- local processes -------------------------------------------------------------------
    def _env(self, pod, container):
        env = {"KUBESIM_POD_NAME": pod["metadata"]["name"], "KUBESIM_POD_NAMESPACE": pod["metadata"].get("namespace", ""),
               "HOSTNAME": pod["metadata"]["name"]}
        cluster = self.cluster
        ns = pod["metadata"].get("namespace")
        for source in container.get("envFrom") or ():
            for kind, plural in (("configMapRef", "configmaps"), ("secretRef", "secrets")):
                ref = source.get(kind)
                if ref:
                    obj = cluster.store.get(("", plural), ns, ref.get("name"))
                    for key, value in ((obj or {}).get("data") or {}).items():
                        env[source.get("prefix", "") + key] = _decode(value) if plural == "secrets" else value
        for item in container.get("env") or ():
            if "value" in item:
                env[item["name"]] = str(item["value"])
                continue
            value_from = item.get("valueFrom") or {}
            for kind, plural in (("configMapKeyRef", "configmaps"), ("secretKeyRef", "secrets")):
                ref = value_from.get(kind)
                if ref:
                    obj = cluster.store.get(("", plural), ns, ref.get("name")) or {}
                    value = (obj.get("data") or {}).get(ref.get("key"))
                    if value is not None:
                        env[item["name"]] = _decode(value) if plural == "secrets" else value
            field = (value_from.get("fieldRef") or {}).get("fieldPath")
            if field:
                node = pod
                for part in field.replace("['", ".").replace("']", "").split("."):
                    node = node.get(part) if isinstance(node, dict) else None
                if node is not None:
                    env[item["name"]] = str(node)
        return env

    def _start_local(self, ref, pod, now):
        container = (pod.get("spec") or {}).get("containers", [{}])[0]
        argv = list(container.get("command") or []) + list(container.get("args") or [])
        if not argv:
            return self._terminate(ref, pod, now, "Failed", 127, "RunLocalError",
                                   "run-local needs spec.containers[0].command")
        uid = pod["metadata"]["uid"]
        name = container["name"]
        self.logs.restart(ref.namespace, ref.name, name)

        def on_line(text):
            self.logs.append(ref.namespace, ref.name, name, text)

        def on_exit(code):
            self._exits[uid] = code
            self.enqueue(ref)

        try:
            started = self.runner.start(uid, argv, self._env(pod, container), on_line, on_exit,
                                        "%s_%s_%s" % (ref.namespace, ref.name, uid[:8]))
        except OSError as exc:
            return self._terminate(ref, pod, now, "Failed", 127, "StartError", "cannot start %s: %s" % (argv[0], exc.strerror))
        if not started:
            return 0.5  # every slot is taken: stay ContainerCreating
        self._status(ref, lambda obj: self._running_status(obj, now))
        self.cluster.record_event(pod, "Started", "Started local process %s" % os.path.basename(argv[0]), component="kubelet")
        return None


def _decode(value):
    try:
        return base64.b64decode(value).decode("utf-8", "replace")
    except (ValueError, TypeError):
        return value

