"""A minimal kubelet + scheduler: pods get a node, start, run and finish.

Annotations (prefix ``kubesim.perfscale.io/``) drive a simulated pod; they come
from the pod's own metadata, so a Deployment's, Job's or PyTorchJob's pod
template annotations reach every pod it creates:

- ``outcome``: ``Running`` (stays running; the default for ``restartPolicy: Always``),
  ``Succeeded`` (the default for ``Never``/``OnFailure``), ``Failed``,
  ``CrashLoopBackOff`` (the container restarts every ``duration-s``; with ``crash-count: N`` it crashes
  N times, then its next start runs: a transient crash the kubelet's restart recovers from);
- ``duration-s``: simulated seconds the container runs (default 1);
- ``start-delay-s``: simulated seconds from creation to Running (server default);
- ``exit-code``: the exit code of a Failed container (default 1);
- ``log``: text written to the container log when it starts (one line per line);
- ``trainer-summary``: a JSON object; rank-0 pods log a Hugging Face Trainer run
  ending with it (:mod:`kubesim.trainerlog`; ``trainer-steps``: loss records, default 4);
- ``pod-ip``: the pod's IP (default a fake ``10.128.x.y``); ``127.0.0.1`` makes the pod's ports those of
  a local process, for a client that dials the pod's IP (a scraper);
- ``ready``: ``"false"``: the container runs but never becomes Ready (a failing
  readiness probe); ``ready-delay-s``: simulated seconds from start to Ready. A start that crashes
  (``CrashLoopBackOff``) is Ready until it exits when its first container has no ``readinessProbe``, as the
  kubelet marks it, and never Ready when it has one (the server it probes never came up);
- ``run-local``: ``"true"``: run the first container's ``command`` + ``args`` as a
  local process (see :mod:`kubesim.localexec`); its exit code decides
  Succeeded/Failed and its output is the log; ``"false"``: never. With
  ``--run-local-pods`` (the default of ``python -m kubesim``) the pods of Jobs
  that have a command run locally (``--run-local-scope all``: every pod with a command).

Images: a reference that does not parse (``registry.example.com/team/app::1.0``) waits ``InvalidImageName``
for ever, as the kubelet's image manager leaves it (an ``InspectFailed`` event); an image whose
repository or tag is ``does-not-exist`` (``quay.io/x/does-not-exist:1``,
``quay.io/x/vllm:does-not-exist``), or a pod annotated ``image-pull: fail``, cannot be pulled: the
container waits with ``ErrImagePull`` (a ``Failed`` event), then ``ImagePullBackOff`` (a ``BackOff``
event), then tries again after the kubelet's doubling back-off (10 s to 300 s), for ever - as a
registry answers for a missing image (kubernetes/kubernetes pkg/kubelet/images/image_manager.go).

Scheduling (:mod:`kubesim.scheduling`): node selector, required node affinity,
taints and tolerations, resource requests (``cpu``, ``memory``, ``pods``,
``nvidia.com/gpu``...) against allocatable; an unschedulable pod stays Pending
with ``PodScheduled=False`` (reason ``Unschedulable``, the scheduler's message)
and a ``FailedScheduling`` event, and is retried when nodes change or pods finish.

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``pods``: kubernetes/kubernetes @ 00a3928bde544dbb4fd046bb78439178ec37fb5a; files:
  pkg/kubelet/images/image_manager.go, pkg/kubelet/images/types.go, pkg/kubelet/status/generate.go,
  pkg/scheduler/framework/types.go (FitError).
"""

import base64
import collections
import os
import re
import shutil

from kubesim import scheduling, trainerlog
from kubesim.clock import parse_timestamp
from kubesim.controllers.base import Controller, Ref
from kubesim.controllers.util import annotation, float_annotation

PODS = ("", "pods")
NODES = ("", "nodes")
PREFIX = "kubesim.perfscale.io/"
GPU = "nvidia.com/gpu"
# an image the registries do not have (a repository or tag named does-not-exist): ErrImagePull
UNPULLABLE = re.compile(r"(^|/|:)does-not-exist")
# distribution/reference's grammar (regexp.go), which the kubelet parses an image with before pulling it
# (pkg/kubelet/images/image_manager.go applyDefaultImageTag: reference.ParseNormalizedNamed)
_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = r"%s(?:\.%s)*(?::[0-9]+)?" % (_LABEL, _LABEL)
_PATH = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
IMAGE_REFERENCE = re.compile(r"(?:%s/)?%s(?:/%s)*(?::[\w][\w.-]{0,127})?"
                             r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,})?" % (
                                 _DOMAIN, _PATH, _PATH))
NAME_TOTAL_LENGTH_MAX = 255    # reference.go: a longer repository name is refused (ErrNameTooLong)
RETRY_UNSCHEDULABLE_S = 30.0  # kube-scheduler flushes unschedulable pods periodically
RETRY_ON_FREED = 8            # pods retried when one pod stops using a node


def valid_image(image):
    """Does the kubelet accept ``image`` as a reference (an empty one is the API server's to refuse)?"""
    if not image:
        return True
    if IMAGE_REFERENCE.fullmatch(image) is None:
        return False
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name = name[:len(name) - len(last) + last.index(":")]
    return len(name) <= NAME_TOTAL_LENGTH_MAX


def _annotation(pod, name, default=None):
    return annotation(pod, name, default)


def _float(value, default):
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


class PodController(Controller):
    name = "pods"
    watches = (PODS, NODES)

    def __init__(self, cluster, manager):
        super().__init__(cluster, manager)
        settings = getattr(cluster, "settings", None)
        self.start_delay = getattr(settings, "pod_start_delay", 0.5)
        self.run_local_default = getattr(settings, "run_local_pods", False)
        self.run_local_scope = getattr(settings, "run_local_scope", "jobs")
        self.runner = getattr(cluster, "runner", None)
        self.logs = cluster.logs
        self.usage = scheduling.NodeUsage()
        self._exits = {}
        self._unschedulable = collections.OrderedDict()   # Ref -> None, oldest first
        self._waiting_local = collections.OrderedDict()   # Ref -> None: waiting for a local process slot
        self._which = {}                                   # (command, PATH) -> found
        self._pull_tries = {}                              # uid -> (image pulls tried, time of the next try)

    # -- events ----------------------------------------------------------------------------
    def start(self):
        with self.cluster.store.lock:
            for pod in self.cluster.store.list(PODS)[0]:
                self.usage.update(pod)

    def on_event(self, event):
        if event.key == NODES:
            return list(self._unschedulable)
        meta = event.obj["metadata"]
        ref = Ref(PODS, meta.get("namespace"), meta["name"])
        freed = self.usage.update(event.obj, deleted=event.type == "DELETED")
        refs = [ref]
        if freed:
            refs += list(self._unschedulable)[:RETRY_ON_FREED]
        if event.type == "DELETED":
            self._unschedulable.pop(ref, None)
            self._waiting_local.pop(ref, None)
            if self.runner is not None:
                self.runner.kill(meta["uid"])
            self.logs.drop(meta.get("namespace"), meta["name"])
            self._pull_tries.pop(meta["uid"], None)
            return refs[1:]
        return refs

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
        """Run this pod as a local process? (annotation first, then the server's policy)."""
        if self.runner is None:
            return False
        explicit = str(_annotation(pod, "run-local", "")).lower()
        if explicit in ("true", "false"):
            return explicit == "true"
        if not self.run_local_default:
            return False
        container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
        if not container.get("command"):
            return False  # the image's entrypoint cannot run here: simulated
        if self.run_local_scope == "all":
            return True
        return any(o.get("kind") == "Job" and o.get("apiVersion") == "batch/v1"
                   for o in pod["metadata"].get("ownerReferences") or ())

    def _outcome(self, pod):
        default = "Running" if (pod.get("spec") or {}).get("restartPolicy", "Always") == "Always" else "Succeeded"
        return _annotation(pod, "outcome", default)

    # -- scheduling ------------------------------------------------------------------------
    def _schedule(self, ref, pod, now):
        nodes, _ = self.cluster.store.list(NODES)
        node, message = scheduling.schedule(pod, nodes, self.usage)
        if node is None:
            self._unschedulable[ref] = None

            def unschedulable(obj):
                status = obj.setdefault("status", {})
                previous = next((c for c in status.get("conditions") or () if c.get("type") == "PodScheduled"), {})
                if status.get("phase") == "Pending" and previous.get("message") == message:
                    return False
                status["phase"] = "Pending"
                status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                         "message": message, "lastProbeTime": None,
                                         "lastTransitionTime": previous.get("lastTransitionTime") or now}]
                status.setdefault("qosClass", scheduling.qos_class(obj))
                return True
            changed = self._status(ref, unschedulable)
            if changed is not None and (changed.get("metadata") or {}).get("resourceVersion") != pod["metadata"]["resourceVersion"]:
                self.cluster.record_event(pod, "FailedScheduling", message, "Warning", "default-scheduler")
            return RETRY_UNSCHEDULABLE_S
        self._unschedulable.pop(ref, None)

        def bind(obj):
            obj["spec"]["nodeName"] = node
        self.cluster.mutate(self.pods, ref.namespace, ref.name, bind)
        self.cluster.record_event(pod, "Scheduled", "Successfully assigned %s/%s to %s" % (ref.namespace, ref.name, node),
                                  component="default-scheduler")
        return 0.0

    def _host_ip(self, pod):
        node = self.cluster.store.get(NODES, "", (pod.get("spec") or {}).get("nodeName") or "")
        for address in ((node or {}).get("status") or {}).get("addresses") or ():
            if address.get("type") == "InternalIP":
                return address.get("address")
        return "192.168.0.10"

    # -- reconcile -------------------------------------------------------------------------
    def reconcile(self, ref):
        if ref.key != PODS:
            return None
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
            return self._schedule(ref, pod, now)
        if phase is None or (phase == "Pending" and not status.get("startTime")):
            return self._pending(ref, pod, now)
        if phase == "Pending":
            return self._start(ref, pod, now)
        if phase == "Running":
            return self._running(ref, pod, now)
        return None

    def _pending(self, ref, pod, now):
        host_ip = self._host_ip(pod)

        def pending(obj):
            obj["status"] = {
                "phase": "Pending", "qosClass": scheduling.qos_class(obj), "startTime": now, "hostIP": host_ip,
                "hostIPs": [{"ip": host_ip}],
                "conditions": self._waiting_conditions(obj, now, sandbox=False),
                "containerStatuses": [{"name": c, "ready": False, "restartCount": 0, "started": False,
                                       "image": self._image(obj, c), "imageID": "",
                                       "state": {"waiting": {"reason": "ContainerCreating"}}}
                                      for c in self._containers(obj)]}
        self._status(ref, pending)
        created = parse_timestamp(pod["metadata"].get("creationTimestamp")) or self.clock.time()
        delay = _float(_annotation(pod, "start-delay-s"), self.start_delay)
        return max(0.0, created + delay - self.clock.time())

    def _waiting_conditions(self, obj, now, sandbox):
        """The conditions of a bound pod whose containers wait (pkg/kubelet/status/generate.go): the sandbox
        (``PodReadyToStartContainers``) not yet or already created, initialized, not ready."""
        previous = {c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or ()}
        unready = "containers with unready status: [%s]" % " ".join(self._containers(obj))

        def cond(ctype, value, reason=None):
            old = previous.get(ctype) or {}
            entry = {"type": ctype, "status": value, "lastProbeTime": None,
                     "lastTransitionTime": old.get("lastTransitionTime") if old.get("status") == value else now}
            if reason:
                entry.update(reason=reason, message=unready)
            return entry
        return [cond("PodReadyToStartContainers", "True" if sandbox else "False"), cond("Initialized", "True"),
                cond("Ready", "False", "ContainersNotReady"), cond("ContainersReady", "False", "ContainersNotReady"),
                cond("PodScheduled", "True")]

    @staticmethod
    def _image(pod, container):
        for c in (pod.get("spec") or {}).get("containers") or ():
            if c["name"] == container:
                return c.get("image", "")
        return ""

    def _readiness_probed(self, pod):
        """Has the first container a readiness probe? The kubelet marks a container without one Ready as soon as
        it runs, and one with a probe only once the probe passes (kubernetes/kubernetes
        pkg/kubelet/prober/prober_manager.go, UpdatePodStatus): a start that crashes (a model server that fails
        to load and never listens) is never Ready behind a probe, and Ready until it exits without one."""
        containers = (pod.get("spec") or {}).get("containers") or [{}]
        return bool(containers[0].get("readinessProbe"))

    def _readiness(self, pod, started_at):
        """``(ready, seconds until ready or None)`` from the ``ready``/``ready-delay-s`` annotations."""
        if str(_annotation(pod, "ready", "true")).lower() == "false":
            return False, None
        delay = float_annotation(pod, "ready-delay-s", 0.0)
        if delay <= 0:
            return True, None
        left = (parse_timestamp(started_at) or self.clock.time()) + delay - self.clock.time()
        return (True, None) if left <= 0 else (False, left)

    def _running_status(self, obj, now, restarts=0, last_state=None, waiting=None, ready=True, started_at=None):
        status = obj.setdefault("status", {})
        status["phase"] = "Running"
        ready_text = "True" if ready and not waiting else "False"
        conditions = {c.get("type"): c for c in status.get("conditions") or ()}

        def cond(ctype, value):
            previous = conditions.get(ctype) or {}
            entry = {"type": ctype, "status": value, "lastProbeTime": None,
                     "lastTransitionTime": previous.get("lastTransitionTime") if previous.get("status") == value else now}
            if value == "False" and ctype in ("Ready", "ContainersReady"):
                entry["reason"] = "ContainersNotReady"
                entry["message"] = "containers with unready status: [%s]" % " ".join(self._containers(obj))
            return entry
        status["conditions"] = [cond("PodReadyToStartContainers", "True"), cond("Initialized", "True"),
                                cond("Ready", ready_text), cond("ContainersReady", ready_text),
                                cond("PodScheduled", "True")]
        uid = obj["metadata"]["uid"]
        status["podIP"] = (status.get("podIP") or _annotation(obj, "pod-ip")
                           or "10.128.%d.%d" % (int(uid[:2], 16) % 250, int(uid[2:4], 16) % 250 + 2))
        status["podIPs"] = [{"ip": status["podIP"]}]
        statuses = []
        for c in self._containers(obj):
            entry = {"name": c, "ready": ready and not waiting, "restartCount": restarts, "started": not waiting,
                     "image": self._image(obj, c), "imageID": "sha256:kubesim",
                     "containerID": "kubesim://%s-%s" % (obj["metadata"]["uid"][:8], c),
                     "state": {"waiting": waiting} if waiting else {"running": {"startedAt": started_at or now}}}
            if last_state:
                entry["lastState"] = last_state
            statuses.append(entry)
        status["containerStatuses"] = statuses

    def _write_log(self, ref, pod):
        lines = str(_annotation(pod, "log", "") or "").splitlines()
        trainer = trainerlog.pod_trainer_lines(pod)
        for index, container in enumerate(self._containers(pod)):
            self.logs.restart(ref.namespace, ref.name, container)
            for line in lines + (trainer if index == 0 else []):
                self.logs.append(ref.namespace, ref.name, container, line)

    def _start(self, ref, pod, now):
        created = parse_timestamp(pod["metadata"].get("creationTimestamp")) or self.clock.time()
        remaining = created + _float(_annotation(pod, "start-delay-s"), self.start_delay) - self.clock.time()
        if remaining > 0:
            return remaining
        failure = self.failure(pod)
        if failure:
            return self._terminate(ref, pod, now, "Failed", 1, "InjectedFault", failure)
        invalid = next((self._image(pod, c) for c in self._containers(pod) if not valid_image(self._image(pod, c))),
                       None)
        if invalid is not None:
            return self._invalid_image(ref, pod, invalid, now)
        missing = next((self._image(pod, c) for c in self._containers(pod)
                        if UNPULLABLE.search(self._image(pod, c)) or _annotation(pod, "image-pull") == "fail"), None)
        if missing:
            return self._pull_failed(ref, pod, missing, now)
        if self._local(pod):
            return self._start_local(ref, pod, now)
        self._write_log(ref, pod)
        # a first start that crashes (crash-count is at least one) is never Ready behind a readiness probe
        crashing_probed = self._outcome(pod) == "CrashLoopBackOff" and self._readiness_probed(pod)
        ready, ready_in = (False, None) if crashing_probed else self._readiness(pod, now)
        self._status(ref, lambda obj: self._running_status(obj, now, ready=ready))
        self.cluster.record_event(pod, "Started", "Started container %s" % self._containers(pod)[0], component="kubelet")
        if self._outcome(pod) == "Running":
            return ready_in
        duration = _float(_annotation(pod, "duration-s"), 1.0)
        return min(duration, ready_in) if ready_in else duration

    def _invalid_image(self, ref, pod, image, now):
        """An image reference that does not parse: the container waits ``InvalidImageName`` for ever, nothing is
        pulled (image_manager.go EnsureImageExists: applyDefaultImageTag fails, ErrInvalidImageName)."""
        message = ('Failed to apply default image tag "%s": couldn\'t parse image name "%s": invalid reference format'
                   % (image, image))
        statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
        if ((statuses[0].get("state") or {}).get("waiting") or {}).get("reason") == "InvalidImageName":
            return None

        def waiting(obj):
            obj.setdefault("status", {})["conditions"] = self._waiting_conditions(obj, now, sandbox=True)
            for entry in obj["status"].get("containerStatuses") or ():
                entry["state"] = {"waiting": {"reason": "InvalidImageName", "message": message}}
        self._status(ref, waiting)
        self.cluster.record_event(pod, "InspectFailed", message, component="kubelet", event_type="Warning")
        return None

    def _pull_failed(self, ref, pod, image, now):
        """The kubelet's answer to an image the registry does not have: ErrImagePull, then ImagePullBackOff,
        then another try after a back-off that doubles (10 s to 300 s, the kubelet's image back-off),
        for ever: a waiting client sees both reasons in turn."""
        message = ('rpc error: code = NotFound desc = failed to pull and unpack image "%s": %s: not found'
                   % (image, image))
        uid = pod["metadata"]["uid"]
        tries, next_try = self._pull_tries.get(uid, (0, 0.0))
        if self.clock.time() < next_try:    # woken by an event during the back-off: the kubelet waits it out
            return next_try - self.clock.time()
        statuses = ((pod.get("status") or {}).get("containerStatuses") or [{}])
        previous = statuses[0].get("state", {}).get("waiting", {}).get("reason")
        reason = "ImagePullBackOff" if previous == "ErrImagePull" else "ErrImagePull"

        def waiting(obj):
            obj.setdefault("status", {})["conditions"] = self._waiting_conditions(obj, now, sandbox=True)
            for entry in obj["status"].get("containerStatuses") or ():
                entry["state"] = {"waiting": {"reason": reason, "message": message if reason == "ErrImagePull" else
                                              'Back-off pulling image "%s"' % image}}
        self._status(ref, waiting)
        if reason == "ErrImagePull":
            self.cluster.record_event(pod, "Failed", "Failed to pull image \"%s\": %s" % (image, message),
                                      component="kubelet", event_type="Warning")
            self._pull_tries[uid] = (tries, self.clock.time() + 1.0)
            return 1.0
        back_off = min(300.0, 10.0 * 2 ** min(tries, 5))
        self._pull_tries[uid] = (tries + 1, self.clock.time() + back_off)
        self.cluster.record_event(pod, "BackOff", 'Back-off pulling image "%s"' % image, component="kubelet",
                                  event_type="Normal")
        return back_off

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
        container = ((pod.get("status") or {}).get("containerStatuses") or [{}])[0]
        state = container.get("state") or {}
        crashes = _float(_annotation(pod, "crash-count"), 0)
        if outcome == "CrashLoopBackOff" and crashes >= 1 and "running" in state and \
                int(container.get("restartCount") or 0) >= crashes:
            outcome = "Running"    # crashed crash-count times: this start succeeds
        started_at = (state.get("running") or {}).get("startedAt")
        crashing_probed = outcome == "CrashLoopBackOff" and self._readiness_probed(pod)
        if started_at and not container.get("ready") and not crashing_probed:
            ready, ready_in = self._readiness(pod, started_at)
            if ready:
                self._status(ref, lambda obj: self._running_status(
                    obj, now, int(container.get("restartCount") or 0), container.get("lastState"), started_at=started_at))
                self.cluster.record_event(pod, "Ready", "Container %s is ready" % container.get("name"), component="kubelet")
        else:
            ready_in = None
        if outcome == "Running":
            return ready_in
        duration = _float(_annotation(pod, "duration-s"), 1.0)
        if "waiting" in state:
            # the kubelet's crash back-off: 10 s, doubled per restart, at most 5 minutes
            restarts = int(container.get("restartCount") or 0)
            since = parse_timestamp((container.get("lastState") or {}).get("terminated", {}).get("finishedAt"))
            left = (since or self.clock.time()) + min(300.0, 10.0 * 2 ** max(0, restarts - 1)) - self.clock.time()
        else:
            since = parse_timestamp(started_at) or self.clock.time()
            left = since + duration - self.clock.time()
        if left > 0:
            return min(left, ready_in) if ready_in else left
        failure = self.failure(pod)
        if failure:
            return self._terminate(ref, pod, now, "Failed", 1, "InjectedFault", failure)
        if outcome == "CrashLoopBackOff":
            restarts = int(container.get("restartCount") or 0)
            if "waiting" in state:
                self._write_log(ref, pod)
                # the restarted container runs: Ready unless this start crashes too behind a readiness probe
                ready, ready_in = (False, None) if crashing_probed else self._readiness(pod, now)
                self._status(ref, lambda obj: self._running_status(obj, now, restarts, container.get("lastState"),
                                                                    ready=ready))
                return min(duration, ready_in) if ready_in else duration
            code = int(_float(_annotation(pod, "exit-code"), 1))
            last = {"terminated": {"exitCode": code, "reason": "Error", "startedAt": started_at, "finishedAt": now}}
            fallback = self._log_message(ref, pod, self._containers(pod)[0], code)
            if fallback:
                last["terminated"]["message"] = fallback
            self._status(ref, lambda obj: self._running_status(
                obj, now, restarts + 1, last, {"reason": "CrashLoopBackOff",
                                               "message": "back-off 10s restarting failed container=%s pod=%s_%s(%s)"
                                               % (self._containers(pod)[0], ref.name, ref.namespace, uid)}))
            for name in self._containers(pod):
                self.logs.terminated(ref.namespace, ref.name, name)
            self.cluster.record_event(pod, "BackOff", "Back-off restarting failed container", "Warning", "kubelet")
            return min(300.0, 10.0 * 2 ** restarts)
        if outcome == "Failed":
            return self._terminate(ref, pod, now, "Failed", int(_float(_annotation(pod, "exit-code"), 1)), "Error", "")
        return self._terminate(ref, pod, now, "Succeeded", 0, "Completed", "")

    def _terminate(self, ref, pod, now, phase, code, reason, message):
        started = ((pod.get("status") or {}).get("startTime")) or now
        host_ip = self._host_ip(pod) if (pod.get("spec") or {}).get("nodeName") else None

        def finish(obj):
            status = obj.setdefault("status", {})
            status["phase"] = phase
            if message:
                status["message"] = message
                status["reason"] = reason
            status.setdefault("startTime", started)
            status.setdefault("qosClass", scheduling.qos_class(obj))
            if host_ip:
                status.setdefault("hostIP", host_ip)
            status["conditions"] = [
                {"type": "PodReadyToStartContainers", "status": "False", "lastProbeTime": None, "lastTransitionTime": now},
                {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": now},
                {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastProbeTime": None,
                 "lastTransitionTime": now},
                {"type": "ContainersReady", "status": "False", "reason": "PodCompleted", "lastProbeTime": None,
                 "lastTransitionTime": now},
                {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now}]
            statuses = []
            for c in self._containers(obj):
                terminated = {"exitCode": code, "reason": reason, "startedAt": started, "finishedAt": now}
                if message or self._log_message(ref, pod, c, code):
                    terminated["message"] = message or self._log_message(ref, pod, c, code)
                statuses.append({"name": c, "ready": False, "restartCount": 0, "started": False,
                                 "image": self._image(obj, c), "imageID": "sha256:kubesim",
                                 "state": {"terminated": terminated}})
            status["containerStatuses"] = statuses
        self._status(ref, finish)
        self.logs.close(ref.namespace, ref.name)
        if phase == "Failed":
            self.cluster.record_event(pod, "Failed", message or "container exited with code %d" % code, "Warning", "kubelet")
        return None

    def _log_message(self, ref, pod, container, code):
        """``terminationMessagePolicy: FallbackToLogsOnError``: a failed container's message is its log's tail."""
        spec = next((c for c in (pod.get("spec") or {}).get("containers") or () if c.get("name") == container), {})
        if not code or spec.get("terminationMessagePolicy") != "FallbackToLogsOnError":
            return None
        text = "\n".join(self.logs.lines(ref.namespace, ref.name, container, tail=80))
        return text[-2048:] or None

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
                value = _field_path(pod, field)
                if value is not None:
                    env[item["name"]] = str(value)
        return env

    def _executable(self, name):
        path = os.environ.get("PATH", "")
        key = (name, path)
        if key not in self._which:
            self._which[key] = shutil.which(name, path=path) is not None
        return self._which[key]

    def _start_local(self, ref, pod, now):
        container = (pod.get("spec") or {}).get("containers", [{}])[0]
        argv = list(container.get("command") or []) + list(container.get("args") or [])
        if not argv:
            return self._terminate(ref, pod, now, "Failed", 127, "RunLocalError",
                                   "run-local needs spec.containers[0].command")
        if os.sep not in argv[0] and not self._executable(argv[0]):
            # what the container runtime answers when the image lacks the executable
            return self._terminate(ref, pod, now, "Failed", 128, "StartError",
                                   'exec: "%s": executable file not found in $PATH' % argv[0])
        uid = pod["metadata"]["uid"]
        name = container["name"]

        def on_line(text):
            self.logs.append(ref.namespace, ref.name, name, text)

        def on_exit(code):
            self._exits[uid] = code
            self.enqueue(ref)
            if self._waiting_local:
                waiting, _ = self._waiting_local.popitem(last=False)
                self.enqueue(waiting)

        self.logs.restart(ref.namespace, ref.name, name)
        try:
            started = self.runner.start(uid, argv, self._env(pod, container), on_line, on_exit,
                                        "%s_%s_%s" % (ref.namespace, ref.name, uid[:8]))
        except OSError as exc:
            return self._terminate(ref, pod, now, "Failed", 128, "StartError", "cannot start %s: %s" % (argv[0], exc.strerror))
        if not started:
            # every slot is taken: stay ContainerCreating until a process exits (its on_exit wakes the oldest)
            self._waiting_local[ref] = None
            if self.runner.has_slot():  # a process exited in between: try again now
                self._waiting_local.pop(ref, None)
                return 0.0
            return None
        self._waiting_local.pop(ref, None)
        self._status(ref, lambda obj: self._running_status(obj, now))
        self.cluster.record_event(pod, "Started", "Started local process %s" % os.path.basename(argv[0]), component="kubelet")
        return None


def _field_path(pod, path):
    """The value of a downward-API ``fieldPath`` (``metadata.name``, ``metadata.annotations['key']``...)."""
    match = re.match(r"^(metadata\.(?:annotations|labels))\['(.+)'\]$", path)
    if match:
        node = pod
        for part in match.group(1).split("."):
            node = (node or {}).get(part)
        return (node or {}).get(match.group(2))
    node = pod
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _decode(value):
    try:
        return base64.b64decode(value).decode("utf-8", "replace")
    except (ValueError, TypeError):
        return value
