# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judges of Kubernetes' own kinds: pods, Jobs, Deployments, DaemonSets, StatefulSets, PVCs, nodes,
and the generic condition and jsonpath waits.

Upstream: kubernetes/kubernetes - the kubelet's container waiting reasons
(pkg/kubelet/images/types.go, pkg/kubelet/kuberuntime/kuberuntime_manager.go,
pkg/kubelet/container/sync_result.go), the Job controller's conditions
(pkg/controller/job/job_controller.go, staging/src/k8s.io/api/batch/v1/types.go) and
``kubectl rollout status`` (staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go),
whose rules the rollout judges follow.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import jsonpath
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    FAILED, READY, Judge, Query, WaitError, condition, condition_text, conditions_of, describe, failed,
    generation_observed, is_true, ready, short, status_of, to_int, waiting)

KUBE = ("https://github.com/kubernetes/kubernetes", "pkg/kubelet, pkg/controller/job, "
        "staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go")

# container waiting reasons the kubelet keeps retrying (with back-off): a waiting client goes on
RETRIED_WAITING = ("ContainerCreating", "PodInitializing", "ErrImagePull", "ImagePullBackOff", "CrashLoopBackOff",
                   "CreateContainerConfigError", "CreateContainerError", "RunContainerError", "PreStartHookError",
                   "PostStartHookError", "ErrImageNeverPull", "RegistryUnavailable", "SignatureValidationFailed")
# waiting reasons no retry can clear: the pod spec itself must change
TERMINAL_WAITING = ("InvalidImageName",)


def container_problem(pod):
    """``(reason, message, container)`` of the first container not running well, or None."""
    status = status_of(pod)
    for field in ("initContainerStatuses", "containerStatuses"):
        for item in status.get(field) or ():
            state = item.get("state") or {}
            if "waiting" in state:
                info = state["waiting"] or {}
                return info.get("reason") or "Waiting", info.get("message") or "", item.get("name")
            terminated = state.get("terminated")
            if terminated and field == "containerStatuses" and to_int(terminated.get("exitCode")) != 0:
                return (terminated.get("reason") or "Error", "exit code %s%s" % (
                    terminated.get("exitCode"), (": " + terminated["message"]) if terminated.get("message") else ""),
                    item.get("name"))
    return None


def pod_summary(pod):
    """``Pod ns/name: Phase, container c waiting: Reason (message)`` or the scheduling problem."""
    status = status_of(pod)
    text = "%s: %s" % (describe(dict(pod, kind="Pod")), status.get("phase") or "no phase yet")
    scheduled = condition(pod, "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False":
        return "%s, not scheduled: %s" % (text, condition_text(scheduled))
    problem = container_problem(pod)
    if problem:
        reason, message, name = problem
        return "%s, container %s %s%s" % (text, name, reason, " (%s)" % short(message) if message else "")
    if status.get("phase") == "Running" and not is_true(pod, "Ready"):
        return "%s, not Ready (%s)" % (text, condition_text(condition(pod, "Ready")))
    if status.get("reason") or status.get("message"):
        return "%s (%s)" % (text, ": ".join(p for p in (status.get("reason"), short(status.get("message"))) if p))
    return text


def pod_state(pod, succeeded_is_ready=False):
    """``ready``, ``waiting`` or ``failed`` for one pod, as the kubelet will treat it."""
    phase = status_of(pod).get("phase")
    if phase == "Failed":
        return FAILED
    if phase == "Succeeded":
        return READY if succeeded_is_ready else FAILED
    problem = container_problem(pod)
    if problem and problem[0] in TERMINAL_WAITING:
        return FAILED
    if phase == "Running" and is_true(pod, "Ready"):
        return READY
    return "waiting"


class PodsReady(Judge):
    """Every selected pod Running and Ready (at least ``minimum``); a Failed pod, or one whose image
    name cannot be parsed, fails the wait; image pulls, container creation and crash loops are retried
    by the kubelet and waited through."""

    name = "pods_ready"
    description = "pods Running and Ready"
    api_version = "v1"
    kind = "Pod"
    upstream = KUBE
    options = ("minimum", "succeeded_is_ready")
    needs_name = False

    def observe(self, found, target):
        pods = found.get("subject") or []
        minimum = to_int(target.option("minimum", 1), 1)
        if len(pods) < minimum:
            return waiting("%s: %d of at least %d pod(s) exist" % (
                Query("v1", "Pod", target.namespace, target.name, target.label_selectors).describe(),
                len(pods), minimum))
        states = [(pod_state(p, bool(target.option("succeeded_is_ready", False))), p) for p in pods]
        for state, pod in states:
            if state == FAILED:
                return failed(pod_summary(pod))
        pending = [p for s, p in states if s != READY]
        if pending:
            return waiting("%d of %d pod(s) ready; %s" % (len(pods) - len(pending), len(pods), pod_summary(pending[0])))
        return ready("%d pod(s) Running and Ready" % len(pods))


class ImagePulled(Judge):
    """Every selected pod (at least ``minimum``) has pulled its first container's image (its status
    has an ``imageID``). Pull errors are retried by the kubelet with back-off and waited through, the
    nodes named; an image name that cannot be parsed, or a Failed pod, ends the wait."""

    name = "image_pulled"
    description = "an image pulled by pods"
    api_version = "v1"
    kind = "Pod"
    upstream = ("https://github.com/kubernetes/kubernetes", "pkg/kubelet/images/image_manager.go, pkg/kubelet/images/types.go")
    options = ("minimum",)
    needs_name = False

    def observe(self, found, target):
        pods = [p for p in found.get("subject") or [] if not (p.get("metadata") or {}).get("deletionTimestamp")]
        minimum = to_int(target.option("minimum", 1), 1)
        pulled, pending = [], []
        for pod in pods:
            statuses = status_of(pod).get("containerStatuses") or [{}]
            node = (pod.get("spec") or {}).get("nodeName") or (pod.get("metadata") or {}).get("name")
            if statuses[0].get("imageID"):
                pulled.append(node)
                continue
            if pod_state(pod) == FAILED:
                return failed("on %s: %s" % (node, pod_summary(pod)))
            pending.append("%s (%s)" % (node, pod_summary(pod)))
        if len(pulled) >= minimum and not pending:
            return ready("image pulled on %d node(s): %s" % (len(pulled), ", ".join(sorted(pulled))))
        return waiting("image pulled on %d of %d node(s)%s" % (len(pulled), max(minimum, len(pods)),
                                                               "; not yet on " + pending[0] if pending else ""))


class PodsConsidered(Judge):
    """Every selected pod considered by the scheduler: bound to a node, or refused
    (``PodScheduled=False``). A pod the scheduler has not looked at has neither."""

    name = "pods_considered"
    description = "pods considered by the scheduler"
    api_version = "v1"
    kind = "Pod"
    upstream = ("https://github.com/kubernetes/kubernetes", "pkg/scheduler/schedule_one.go (PodScheduled condition)")
    needs_name = False

    def observe(self, found, target):
        pods = found.get("subject") or []
        unseen = [p for p in pods if not (p.get("spec") or {}).get("nodeName") and condition(p, "PodScheduled") is None]
        if unseen:
            return waiting("%d of %d pod(s) not considered by the scheduler yet; first %s" % (
                len(unseen), len(pods), describe(dict(unseen[0], kind="Pod"))))
        return ready("%d pod(s) bound or refused by the scheduler" % len(pods))


def job_outcome(job):
    """``(finished, failed_condition)``: Complete, or Failed/FailureTarget (Kubernetes 1.31+: the Job
    will fail once its pods terminate; it cannot be undone), or still running."""
    for ctype in ("Failed", "FailureTarget"):
        if is_true(job, ctype):
            return True, condition(job, ctype)
    return is_true(job, "Complete"), None


def job_progress(job):
    status = status_of(job)
    return "active=%s succeeded=%s failed=%s" % (status.get("active", 0), status.get("succeeded", 0), status.get("failed", 0))


def last_failed_pod(job, pods, label="batch.kubernetes.io/job-name"):
    """``; <the job's newest failed pod, as pod_summary says it>``, or "" (its pods may be gone); the
    job's pods are those whose ``label`` is its name."""
    name = (job.get("metadata") or {}).get("name")
    mine = [p for p in pods or () if status_of(p).get("phase") == "Failed"
            and ((p.get("metadata") or {}).get("labels") or {}).get(label) == name]
    if not mine:
        return ""
    newest = max(mine, key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or "")
    return "; " + pod_summary(newest)


class JobFinished(Judge):
    """Jobs finished: one by name, or ``count`` (default: those found, at least one) by label. All
    ``Complete`` ends the wait well; once every Job finished, a ``Failed`` one (or ``FailureTarget``,
    which cannot be undone) ends it as failed, naming it. While they run, the summary names the first
    active pod's trouble (an image pull back-off, a pod that cannot be scheduled)."""

    name = "job"
    description = "Jobs Complete"
    api_version = "batch/v1"
    kind = "Job"
    upstream = KUBE
    options = ("count",)
    needs_name = False

    def check(self, target):
        super().check(target)
        if not target.name and not target.label_selectors:
            raise WaitError("wait job: expected the Job's name or label selectors")

    def queries(self, target):
        queries = super().queries(target)
        selector = "batch.kubernetes.io/job-name=%s" % target.name if target.name else "batch.kubernetes.io/job-name"
        queries["pods"] = Query("v1", "Pod", target.namespace, None, (selector,))
        return queries

    def observe(self, found, target):
        jobs = found.get("subject") or []
        if target.name:
            jobs = [j for j in jobs if (j.get("metadata") or {}).get("name") == target.name]
            if not jobs:
                return self.absent(target)
        count = to_int(target.option("count", max(len(jobs), 1)), 1)
        if len(jobs) < count:
            return waiting("%d of %d Job(s) exist (%s)" % (len(jobs), count, ",".join(target.label_selectors)))
        running = []
        failures = []
        for job in jobs:
            finished, bad = job_outcome(job)
            if bad is not None:
                failures.append("%s: %s%s" % (describe(job), condition_text(bad), last_failed_pod(job, found.get("pods"))))
            elif not finished:
                running.append(job)
        if running:
            job = running[0]
            names = {(j.get("metadata") or {}).get("name") for j in running}
            pods = [p for p in found.get("pods") or () if status_of(p).get("phase") not in ("Succeeded", "Failed")
                    and ((p.get("metadata") or {}).get("labels") or {}).get("batch.kubernetes.io/job-name") in names]
            detail = "; " + pod_summary(pods[0]) if pods else ""
            state = "SuccessCriteriaMet, its pods terminating" if is_true(job, "SuccessCriteriaMet") else (
                condition_text(condition(job, "Suspended")) if is_true(job, "Suspended") else "running")
            prefix = "%d of %d Job(s) running; " % (len(running), len(jobs)) if len(jobs) > 1 else ""
            return waiting("%s%s: %s (%s)%s" % (prefix, describe(job), state, job_progress(job), detail))
        if failures:
            return failed(failures[0] + (" (and %d more)" % (len(failures) - 1) if len(failures) > 1 else ""))
        if len(jobs) == 1:
            return ready("%s: %s" % (describe(jobs[0]), condition_text(condition(jobs[0], "Complete"))))
        return ready("%d Job(s) Complete" % len(jobs))


def rollout(obj):
    """``(done, why)`` as ``kubectl rollout status`` judges a Deployment, DaemonSet or StatefulSet."""
    kind = obj.get("kind")
    status, spec = status_of(obj), obj.get("spec") or {}
    if not generation_observed(obj):
        return False, "waiting for the rollout to be observed (generation %s, observed %s)" % (
            (obj.get("metadata") or {}).get("generation"), status.get("observedGeneration"))
    if kind == "Deployment":
        wanted = to_int(spec.get("replicas"), 1)
        updated, total = to_int(status.get("updatedReplicas")), to_int(status.get("replicas"))
        available = to_int(status.get("availableReplicas"))
        if updated < wanted:
            return False, "%d of %d new replicas updated" % (updated, wanted)
        if total > updated:
            return False, "%d old replicas pending termination" % (total - updated)
        if available < updated:
            return False, "%d of %d updated replicas available" % (available, updated)
        return True, "%d of %d replicas available" % (available, wanted)
    if kind == "DaemonSet":
        desired = to_int(status.get("desiredNumberScheduled"))
        updated = to_int(status.get("updatedNumberScheduled"))
        available = to_int(status.get("numberAvailable"))
        if updated < desired:
            return False, "%d of %d updated pods scheduled" % (updated, desired)
        if available < desired:
            return False, "%d of %d updated pods available" % (available, desired)
        return True, "%d of %d pods available" % (available, desired)
    wanted = to_int(spec.get("replicas"), 1)
    ready_count = to_int(status.get("readyReplicas"))
    updated = to_int(status.get("updatedReplicas"), wanted)
    if ready_count < wanted:
        return False, "%d of %d pods ready" % (ready_count, wanted)
    if updated < wanted:
        return False, "%d of %d pods updated" % (updated, wanted)
    return True, "%d of %d pods ready" % (ready_count, wanted)


class Rollout(Judge):
    """Every selected workload rolled out, as ``kubectl rollout status`` says it; a Deployment whose
    ``Progressing`` condition says ``ProgressDeadlineExceeded`` fails the wait (the controller stops
    trying). ``minimum`` objects must exist (default 1); ``minimum_desired`` (DaemonSets) pods too."""

    description = "rolled out"
    upstream = KUBE
    options = ("minimum", "minimum_desired")
    needs_name = False

    def observe(self, found, target):
        objects = found.get("subject") or []
        if target.name:
            objects = [o for o in objects if (o.get("metadata") or {}).get("name") == target.name]
        minimum = to_int(target.option("minimum", 1), 1)
        if len(objects) < minimum:
            if target.name:
                return self.absent(target)
            return waiting("%s: %d of at least %d exist" % (
                Query(self.api_version, self.kind, target.namespace, None, target.label_selectors).describe(),
                len(objects), minimum))
        pending = []
        for obj in objects:
            progressing = condition(obj, "Progressing")
            if progressing is not None and progressing.get("reason") == "ProgressDeadlineExceeded":
                return failed("%s: %s" % (describe(obj), condition_text(progressing)))
            done, why = rollout(obj)
            desired = to_int(status_of(obj).get("desiredNumberScheduled"))
            if done and self.kind == "DaemonSet" and desired < to_int(target.option("minimum_desired", 0)):
                done, why = False, "%d pods desired, expected at least %s (no node matches its selector yet?)" % (
                    desired, target.option("minimum_desired"))
            if not done:
                pending.append("%s: %s" % (describe(obj), why))
        if pending:
            return waiting("%d of %d not rolled out; %s" % (len(pending), len(objects), pending[0]))
        return ready("%s rolled out" % ", ".join(describe(o) for o in objects))


class DeploymentRollout(Rollout):
    name = "deployment"
    description = "Deployments rolled out"
    api_version = "apps/v1"
    kind = "Deployment"


class DaemonSetRollout(Rollout):
    name = "daemonset"
    description = "DaemonSets rolled out"
    api_version = "apps/v1"
    kind = "DaemonSet"


class StatefulSetRollout(Rollout):
    name = "statefulset"
    description = "StatefulSets rolled out"
    api_version = "apps/v1"
    kind = "StatefulSet"


class ClaimBound(Judge):
    """A PersistentVolumeClaim ``Bound``; ``Lost`` fails (its volume is gone)."""

    name = "pvc_bound"
    description = "a PersistentVolumeClaim Bound"
    api_version = "v1"
    kind = "PersistentVolumeClaim"
    upstream = ("https://github.com/kubernetes/kubernetes", "pkg/controller/volume/persistentvolume/pv_controller.go")

    def observe(self, found, target):
        claim = self.subject(found, target)
        if claim is None:
            return self.absent(target)
        phase = status_of(claim).get("phase") or "Pending"
        text = "%s: %s" % (describe(claim), phase)
        if phase == "Bound":
            return ready(text)
        if phase == "Lost":
            return failed(text + " (its volume is gone)")
        return waiting(text)


def _label_matches(labels, wanted):
    key, sep, value = wanted.partition("=")
    return key in labels and (not sep or str(labels[key]) == value)


class NodesReady(Judge):
    """Every (selected) node ``Ready=True``, at least ``minimum`` of them; with ``names``, those nodes."""

    name = "nodes_ready"
    description = "nodes Ready"
    api_version = "v1"
    kind = "Node"
    upstream = ("https://github.com/kubernetes/kubernetes", "pkg/kubelet/nodestatus/setters.go (ReadyCondition)")
    options = ("minimum", "names")
    needs_name = False

    def observe(self, found, target):
        nodes = found.get("subject") or []
        names = list(target.option("names", []) or [])
        if names:
            present = {(n.get("metadata") or {}).get("name") for n in nodes}
            missing = [n for n in names if n not in present]
            nodes = [n for n in nodes if (n.get("metadata") or {}).get("name") in names]
            if missing:
                return waiting("node(s) %s not registered yet" % ", ".join(missing))
        minimum = to_int(target.option("minimum", len(names) or 1), 1)
        not_ready = [n for n in nodes if not is_true(n, "Ready")]
        if len(nodes) < minimum:
            return waiting("%d of at least %d node(s) registered" % (len(nodes), minimum))
        if not_ready:
            return waiting("%d of %d node(s) not Ready: %s" % (len(not_ready), len(nodes), "; ".join(
                "%s %s" % ((n.get("metadata") or {}).get("name"), condition_text(condition(n, "Ready")))
                for n in not_ready[:3])))
        return ready("%d node(s) Ready" % len(nodes))


class NodesLabelled(Judge):
    """At least ``minimum`` nodes carry ``label`` (``key`` or ``key=value``), or any label starting
    with ``label_prefix``."""

    name = "node_labels"
    description = "nodes labelled"
    api_version = "v1"
    kind = "Node"
    upstream = ("https://github.com/kubernetes-sigs/node-feature-discovery", "pkg/nfd-master/nfd-master.go")
    options = ("label", "label_prefix", "minimum")
    needs_name = False

    def check(self, target):
        super().check(target)
        if not target.option("label") and not target.option("label_prefix"):
            raise WaitError("wait node_labels: expected a label or a label_prefix")

    def observe(self, found, target):
        wanted, prefix = target.option("label"), target.option("label_prefix")
        minimum = to_int(target.option("minimum", 1), 1)
        nodes = found.get("subject") or []
        labelled = []
        for node in nodes:
            labels = (node.get("metadata") or {}).get("labels") or {}
            if (wanted and _label_matches(labels, wanted)) or (prefix and any(k.startswith(prefix) for k in labels)):
                labelled.append((node.get("metadata") or {}).get("name"))
        what = wanted or (prefix + "*")
        if len(labelled) >= minimum:
            return ready("%d node(s) labelled %s: %s" % (len(labelled), what, ", ".join(sorted(labelled))))
        return waiting("%d of %d node(s) labelled %s (expected at least %d)" % (len(labelled), len(nodes), what, minimum))


class GenericJudge(Judge):
    """Base of the judges of any kind: the kind comes from the options."""

    needs_name = False

    def check(self, target):
        super().check(target)
        if not target.option("api_version") or not target.option("kind"):
            raise WaitError("wait %s: expected the api_version and kind of the objects" % self.name)

    def queries(self, target):
        return {"subject": Query(target.option("api_version"), target.option("kind"), target.namespace, target.name,
                                 target.label_selectors)}

    def objects(self, found, target):
        objects = found.get("subject") or []
        if target.name:
            objects = [o for o in objects if (o.get("metadata") or {}).get("name") == target.name]
        return objects

    def none(self, target):
        query = Query(target.option("api_version"), target.option("kind"), target.namespace, target.name,
                      target.label_selectors)
        return waiting("%s: none exists (yet)" % query.describe())


class ConditionOfAny(GenericJudge):
    """Every selected object (at least one) has condition ``type`` with ``status`` (default True).
    The user says what to wait for: no state of the kind is taken as a failure."""

    name = "condition"
    description = "a condition"
    upstream = ("https://github.com/kubernetes/community", "contributors/devel/sig-architecture/api-conventions.md "
                "(typical status properties)")
    options = ("api_version", "kind", "type", "status")

    def check(self, target):
        super().check(target)
        if not target.option("type"):
            raise WaitError("wait condition: expected the condition type")

    def observe(self, found, target):
        objects = self.objects(found, target)
        if not objects:
            return self.none(target)
        ctype, wanted = target.option("type"), str(target.option("status", "True"))
        pending = [o for o in objects if str((condition(o, ctype) or {}).get("status")) != wanted]
        if pending:
            return waiting("%s: %s (waiting for %s=%s)" % (describe(pending[0]), condition_text(condition(
                pending[0], ctype)) if condition(pending[0], ctype) else "no %s condition" % ctype, ctype, wanted))
        return ready("%d object(s) with %s=%s" % (len(objects), ctype, wanted))


class JsonpathOfAny(GenericJudge):
    """Every selected object (at least one) holds ``value`` at ``jsonpath`` (kubectl's syntax)."""

    name = "jsonpath"
    description = "a jsonpath value"
    upstream = ("https://github.com/kubernetes/kubernetes", "staging/src/k8s.io/kubectl/pkg/cmd/wait/wait.go "
                "(--for=jsonpath)")
    options = ("api_version", "kind", "jsonpath", "value")

    def check(self, target):
        super().check(target)
        if not target.option("jsonpath"):
            raise WaitError("wait jsonpath: expected the jsonpath")
        jsonpath.evaluate({}, target.option("jsonpath"))

    def observe(self, found, target):
        objects = self.objects(found, target)
        if not objects:
            return self.none(target)
        expression, value = target.option("jsonpath"), str(target.options.get("value", ""))
        for obj in objects:
            values = [str(v) for v in jsonpath.evaluate(obj, expression)]
            if value not in values:
                seen = ", ".join(values) or "absent"
                return waiting("%s: %s is %s (waiting for %s)" % (describe(obj), expression, seen, value))
        return ready("%d object(s) with %s = %s" % (len(objects), expression, value))


JUDGES = (PodsReady, ImagePulled, PodsConsidered, JobFinished, DeploymentRollout, DaemonSetRollout, StatefulSetRollout, ClaimBound, NodesReady,
          NodesLabelled, ConditionOfAny, JsonpathOfAny)
# conditions_of is re-exported for the judges of other modules' convenience
__all__ = ["JUDGES", "pod_summary", "pod_state", "rollout", "container_problem", "conditions_of"]
