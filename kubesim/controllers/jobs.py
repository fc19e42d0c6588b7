"""The Job controller (batch/v1, as kube-controller-manager 1.35 writes its status).

- pods from the template (``generateName: <job>-``, labels ``batch.kubernetes.io/job-name``,
  ``batch.kubernetes.io/controller-uid``, ``job-name``, ``controller-uid``); at most
  ``parallelism`` active, until ``completions`` succeeded (``NonIndexed``), one per
  index with ``batch.kubernetes.io/job-completion-index`` and ``JOB_COMPLETION_INDEX``
  (``Indexed``), or, without ``completions``, until one succeeded (work queue);
- failed pods count toward ``backoffLimit`` (default 6); a replacement waits
  the controller's exponential back-off (10 s, 20 s, ... 6 min of simulated time);
- Indexed Jobs with ``backoffLimitPerIndex``: an index whose pods failed more than that is
  not retried and is listed in ``failedIndexes``; the others go on, and the Job ends once
  every index succeeded or failed (``Failed``, reason ``FailedIndexes``, when one failed;
  ``maxFailedIndexes`` exceeded ends it at once, reason ``MaxFailedIndexesExceeded``);
- ``activeDeadlineSeconds`` from ``startTime``; ``suspend`` (``Suspended`` condition);
- status ``startTime``, ``active``, ``ready``, ``terminating``, ``succeeded``,
  ``failed``, ``completedIndexes``, ``uncountedTerminatedPods``, ``completionTime``;
- terminal conditions as in 1.31+: ``SuccessCriteriaMet`` then ``Complete``
  (reason ``CompletionsReached``), ``FailureTarget`` then ``Failed`` (reasons
  ``BackoffLimitExceeded``, ``DeadlineExceeded``); remaining active pods are deleted, and while
  they terminate the interim condition stands alone with ``terminating`` counting them (the
  terminal condition is delayed until no pod terminates: ``delayTerminalCondition``);
- ``ttlSecondsAfterFinished``: the finished Job is deleted (the TTL-after-finished controller).

Pods are not kept with the ``batch.kubernetes.io/job-tracking`` finalizer: the
counts come from the Job's pods and never decrease (a pod deleted after it
was counted stays counted).

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``job``: kubernetes/kubernetes @ 6ae037f1db843e99547258d7dd292301a74ba0eb; files:
  pkg/controller/job/job_controller.go.
"""

from kubesim.clock import parse_timestamp
from kubesim.controllers.util import (condition_true, delete_quietly, new_pod, pod_active, pod_phase, pod_ready,
                                      set_condition, since)
from kubesim.controllers.workloads import PODS, OwnerOfChildren

JOBS = ("batch", "jobs")
BACKOFF_BASE_S = 10.0
BACKOFF_MAX_S = 360.0
# kubesim deletes pods at once: the Job's next sync, this long after it terminated them, finds them gone
TERMINATION_GRACE_S = 1.0


def _finished(job):
    return condition_true(job, "Complete") or condition_true(job, "Failed")


def _interim(job):
    """The outcome an earlier sync decided (its ``FailureTarget``/``SuccessCriteriaMet`` condition), or None."""
    for interim, kind in (("FailureTarget", "Failed"), ("SuccessCriteriaMet", "Complete")):
        found = next((c for c in (job.get("status") or {}).get("conditions") or ()
                      if c.get("type") == interim and c.get("status") == "True"), None)
        if found is not None:
            return kind, found.get("reason"), found.get("message")
    return None


def _finish_time(pod):
    for status in (pod.get("status") or {}).get("containerStatuses") or ():
        finished = ((status.get("state") or {}).get("terminated") or {}).get("finishedAt")
        if finished:
            return parse_timestamp(finished)
    return None


class JobController(OwnerOfChildren):
    name = "job"
    watches = (JOBS, PODS)
    owner_key = JOBS
    owner_kind = "Job"

    def reconcile(self, ref):
        cluster = self.cluster
        job = cluster.store.get(JOBS, ref.namespace, ref.name)
        if job is None or job["metadata"].get("deletionTimestamp"):
            return None
        spec = job.get("spec") or {}
        status = job.get("status") or {}
        now = self.clock.timestamp()
        if _finished(job):
            return self._ttl(job)
        pods = self.children.children(job)
        pod_resource = cluster.resource_for_key(PODS)
        if spec.get("suspend"):
            for pod in pods:
                if pod_active(pod):
                    delete_quietly(cluster, pod_resource, ref.namespace, pod["metadata"]["name"])
            self._write(ref, job, pods, now, suspended=True)
            return None
        start_time = status.get("startTime") or now
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        parallelism = int(spec.get("parallelism", 1))
        backoff_limit = int(spec.get("backoffLimit", 6))
        active = [p for p in pods if pod_active(p)]
        succeeded_pods = [p for p in pods if pod_phase(p) == "Succeeded"]
        failed_pods = [p for p in pods if pod_phase(p) == "Failed"]
        succeeded = max(int(status.get("succeeded", 0)), len(succeeded_pods))
        failed = max(int(status.get("failed", 0)), len(failed_pods))
        done_indexes = sorted({_index(p) for p in succeeded_pods} - {-1})
        per_index = spec.get("backoffLimitPerIndex") if indexed else None
        failed_indexes = []
        if per_index is not None:
            tries = {}
            for pod in failed_pods:
                tries[_index(pod)] = tries.get(_index(pod), 0) + 1
            failed_indexes = sorted(i for i, n in tries.items() if n > int(per_index) and i not in done_indexes)
        outcome = None
        deadline = spec.get("activeDeadlineSeconds")
        max_failed = spec.get("maxFailedIndexes")
        if deadline is not None and since(start_time, self.clock) >= int(deadline):
            outcome = ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")
        elif per_index is not None and max_failed is not None and len(failed_indexes) > int(max_failed):
            outcome = ("Failed", "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed "
                                                             "indexes")
        elif per_index is not None and completions is not None and \
                len(done_indexes) + len(failed_indexes) >= int(completions) and failed_indexes:
            outcome = ("Failed", "FailedIndexes", "Job has failed indexes")
        elif per_index is None and failed > backoff_limit:
            outcome = ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        elif indexed and completions is not None and len(done_indexes) >= int(completions):
            outcome = ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
        elif not indexed and completions is not None and succeeded >= int(completions):
            outcome = ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
        elif completions is None and succeeded > 0 and not active:
            outcome = ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
        interim = _interim(job)
        if interim is not None:
            outcome = interim      # decided by an earlier sync: the remaining pods were being terminated
        failure = self.failure(job) if outcome is None else None
        if failure:
            outcome = ("Failed", "InjectedFault", failure)
        if outcome is not None:
            for pod in active:
                delete_quietly(cluster, pod_resource, ref.namespace, pod["metadata"]["name"])
            if active and interim is None:
                # the terminal condition waits until the Job's pods have terminated: the interim condition alone
                # first, with the pods being terminated counted (job_controller.go, delayTerminalCondition)
                self._write(ref, job, [p for p in pods if not pod_active(p)], now, start_time=start_time,
                            succeeded=succeeded, failed=failed, done_indexes=done_indexes, outcome=outcome,
                            failed_indexes=failed_indexes if per_index is not None else None,
                            terminating=len(active))
                return TERMINATION_GRACE_S
            self._write(ref, job, [p for p in pods if not pod_active(p)], now, start_time=start_time,
                        succeeded=succeeded, failed=failed, done_indexes=done_indexes, outcome=outcome,
                        failed_indexes=failed_indexes if per_index is not None else None)
            kind, reason, message = outcome
            if kind == "Complete":
                cluster.record_event(job, "Completed", "Job completed", component="job-controller")
            else:
                cluster.record_event(job, reason, message, "Warning", "job-controller")
            return self._ttl(cluster.store.get(JOBS, ref.namespace, ref.name) or job)
        requeue = None
        missing = self._missing(spec, indexed, completions, parallelism, active, succeeded,
                                list(done_indexes) + failed_indexes)
        if missing:
            wait = self._backoff(failed_pods, failed)
            if wait > 0:
                requeue = wait
            else:
                for index in missing:
                    self._create_pod(job, index)
        if deadline is not None:
            left = int(deadline) - since(start_time, self.clock)
            requeue = left if requeue is None else min(requeue, left)
        self._write(ref, job, self.children.children(job), now, start_time=start_time, succeeded=succeeded,
                    failed=failed, done_indexes=done_indexes, failed_indexes=failed_indexes if per_index is not None else None)
        return requeue

    @staticmethod
    def _missing(spec, indexed, completions, parallelism, active, succeeded, done_indexes):
        """The pods to create now: a list of completion indexes (``None`` for NonIndexed pods)."""
        if indexed and completions is not None:
            busy = {int((p["metadata"].get("annotations") or {}).get("batch.kubernetes.io/job-completion-index", -1))
                    for p in active}
            done = set(done_indexes)
            free = [i for i in range(int(completions)) if i not in busy and i not in done]
            return free[:max(0, parallelism - len(active))]
        if completions is None:
            want = parallelism if succeeded == 0 else 0
        else:
            want = min(parallelism, int(completions) - succeeded)
        return [None] * max(0, want - len(active))

    def _backoff(self, failed_pods, failed):
        """Simulated seconds to wait before replacing failed pods (exponential back-off)."""
        if not failed:
            return 0.0
        last = max([t for t in (_finish_time(p) for p in failed_pods) if t] or [0])
        if not last:
            return 0.0
        delay = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** (failed - 1))
        return max(0.0, last + delay - self.clock.time())

    def _create_pod(self, job, index):
        meta = job["metadata"]
        uid = meta["uid"]
        labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": meta["name"],
                  "controller-uid": uid, "job-name": meta["name"]}
        annotations = {}
        generate = meta["name"] + "-"

        def change(pod_spec):
            if index is None:
                return
            pod_spec.setdefault("hostname", "%s-%d" % (meta["name"], index))
            for container in pod_spec.get("containers") or ():
                env = [e for e in container.get("env") or () if e.get("name") != "JOB_COMPLETION_INDEX"]
                env.append({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}})
                container["env"] = env
        if index is not None:
            labels["batch.kubernetes.io/job-completion-index"] = str(index)
            annotations["batch.kubernetes.io/job-completion-index"] = str(index)
            generate = "%s-%d-" % (meta["name"], index)
        body = new_pod((job.get("spec") or {}).get("template"), job, meta["namespace"], generate_name=generate,
                       labels=labels, annotations=annotations, spec_changes=change)
        created = self.cluster.create(self.cluster.resource_for_key(PODS), body, meta["namespace"])
        self.cluster.record_event(job, "SuccessfulCreate", "Created pod: %s" % created["metadata"]["name"],
                                  component="job-controller")

    def _write(self, ref, job, pods, now, suspended=False, start_time=None, succeeded=0, failed=0, done_indexes=(),
               outcome=None, failed_indexes=None, terminating=None):
        """``terminating``: pods just deleted and still terminating; the outcome's interim condition alone."""
        active = [p for p in pods if pod_active(p)]
        ready = sum(1 for p in active if pod_ready(p))
        interim_only = terminating is not None
        if terminating is None:
            terminating = sum(1 for p in pods if p["metadata"].get("deletionTimestamp"))
        indexed = (job.get("spec") or {}).get("completionMode") == "Indexed"

        def write(obj):
            status = obj.setdefault("status", {})
            conditions = status.get("conditions") or []
            if suspended:
                # Job conventions: a suspended Job has no startTime and a Suspended=True condition
                status.pop("startTime", None)
                conditions = set_condition(conditions, "Suspended", "True", "JobSuspended", "Job suspended", now,
                                           lastProbeTime=now)
            else:
                if any(c.get("type") == "Suspended" and c.get("status") == "True" for c in conditions):
                    conditions = set_condition(conditions, "Suspended", "False", "JobResumed", "Job resumed", now,
                                               lastProbeTime=now)
                status["startTime"] = start_time
            status.update(active=len(active), ready=ready, terminating=terminating, succeeded=succeeded, failed=failed,
                          uncountedTerminatedPods={})
            for key in ("active", "succeeded", "failed"):
                if not status[key]:
                    del status[key]
            if indexed and done_indexes:
                status["completedIndexes"] = _ranges(done_indexes)
            if failed_indexes is not None:
                status["failedIndexes"] = _ranges(failed_indexes)
            if outcome is not None:
                kind, reason, message = outcome
                interim = "SuccessCriteriaMet" if kind == "Complete" else "FailureTarget"
                conditions = set_condition(conditions, interim, "True", reason, message, now, lastProbeTime=now)
                if not interim_only:
                    conditions = set_condition(conditions, kind, "True", reason, message, now, lastProbeTime=now)
                if kind == "Complete" and not interim_only:
                    status["completionTime"] = now
            if conditions:
                status["conditions"] = conditions
        self.cluster.mutate(self.cluster.resource_for_key(JOBS), ref.namespace, ref.name, write, subresource="status")

    def _ttl(self, job):
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None:
            return None
        finished = next((c.get("lastTransitionTime") for c in (job.get("status") or {}).get("conditions") or ()
                         if c.get("type") in ("Complete", "Failed") and c.get("status") == "True"), None)
        left = int(ttl) - since(finished, self.clock)
        if left > 0:
            return left
        delete_quietly(self.cluster, self.cluster.resource_for_key(JOBS), job["metadata"]["namespace"],
                       job["metadata"]["name"], propagation="Background")
        return None


def _index(pod):
    """A pod's completion index (-1 when it has none)."""
    return int((pod["metadata"].get("annotations") or {}).get("batch.kubernetes.io/job-completion-index", -1))


def _ranges(indexes):
    """``[0, 1, 2, 5]`` -> ``"0-2,5"`` (the completedIndexes format)."""
    parts = []
    start = prev = None
    for index in indexes:
        if start is None:
            start = prev = index
        elif index == prev + 1:
            prev = index
        else:
            parts.append(str(start) if start == prev else "%d-%d" % (start, prev))
            start = prev = index
    if start is not None:
        parts.append(str(start) if start == prev else "%d-%d" % (start, prev))
    return ",".join(parts)

