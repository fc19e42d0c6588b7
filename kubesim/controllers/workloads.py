"""Workload controllers: Deployment, ReplicaSet, StatefulSet, DaemonSet (kube-controller-manager, simplified).

Each follows the status its real controller writes, so that ``kubectl rollout
status``, ``kubectl wait --for=condition=Available`` and ``kubernetes.core.k8s``
``wait: true`` behave as on a cluster:

- ReplicaSet: keeps ``spec.replicas`` active pods (creates from the template,
  deletes unscheduled/pending/unready/newest first); ``status.replicas``,
  ``fullyLabeledReplicas``, ``readyReplicas``, ``availableReplicas`` (Ready for
  ``minReadySeconds``), ``observedGeneration``; an injected controller fault is
  condition ``ReplicaFailure=True`` (reason ``FailedCreate``), as a failed pod creation.
- Deployment: one ReplicaSet per pod template (``<name>-<pod-template-hash>``,
  annotation ``deployment.kubernetes.io/revision``); ``RollingUpdate`` with
  ``maxSurge``/``maxUnavailable`` (25 % defaults, rounded up/down) or ``Recreate``;
  ``paused``; ``revisionHistoryLimit``; status ``replicas``, ``updatedReplicas``,
  ``readyReplicas``, ``availableReplicas``, ``unavailableReplicas`` and conditions
  ``Available`` (``MinimumReplicasAvailable``/``MinimumReplicasUnavailable``),
  ``Progressing`` (``NewReplicaSetCreated``, ``ReplicaSetUpdated``,
  ``NewReplicaSetAvailable``, ``ProgressDeadlineExceeded`` after
  ``progressDeadlineSeconds`` without progress) and ``ReplicaFailure``.
- StatefulSet: pods ``<name>-<ordinal>`` (``OrderedReady``: one at a time, each
  Running and Ready before the next; ``Parallel``), a PVC per
  ``volumeClaimTemplates`` entry and ordinal, rolling update from the highest
  ordinal (``partition``), ControllerRevisions, ``currentRevision``/``updateRevision``.
- DaemonSet: one pod per eligible node (node selector, required node affinity,
  taints vs tolerations plus the tolerations the DaemonSet controller adds),
  pinned with node affinity on ``metadata.name``; ``desiredNumberScheduled``,
  ``currentNumberScheduled``, ``numberReady``, ``numberAvailable``,
  ``numberUnavailable``, ``numberMisscheduled``, ``updatedNumberScheduled``.

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``replicaset``: kubernetes/kubernetes @ 3e4a7900d75552087b6d82edb80ac44be8f71d67; files:
  pkg/controller/replicaset/replica_set.go.
- ``deployment``: kubernetes/kubernetes @ 008b3652959ca58af8be3fb5b6ecfe9ae7638282; files:
  pkg/controller/deployment/progress.go, pkg/controller/deployment/sync.go.
- ``statefulset``: kubernetes/kubernetes @ d232dfe7989b8bfe230d9b313938b6417bdcab09; files:
  pkg/controller/statefulset/stateful_set_status_updater.go.
- ``daemonset``: kubernetes/kubernetes @ d826f92a2f903298ea56d9a893395deaba71c89e; files:
  pkg/controller/daemon/daemon_controller.go.
"""

import copy
import math

from kubesim import scheduling
from kubesim.controllers.base import Controller, Ref
from kubesim.controllers.util import (ChildIndex, controller_of, create_or_skip, delete_quietly, new_pod,
                                      owner_reference, pod_active, pod_phase, pod_ready, set_condition, since,
                                      template_hash)

PODS = ("", "pods")
NODES = ("", "nodes")
PVCS = ("", "persistentvolumeclaims")
DEPLOYMENTS = ("apps", "deployments")
REPLICASETS = ("apps", "replicasets")
STATEFULSETS = ("apps", "statefulsets")
DAEMONSETS = ("apps", "daemonsets")
REVISIONS = ("apps", "controllerrevisions")
BURST_REPLICAS = 500  # the ReplicaSet controller's burstReplicas


def _int_or_percent(value, total, round_up):
    if value is None:
        return None
    if isinstance(value, str) and value.endswith("%"):
        fraction = float(value[:-1]) * total / 100.0
        return int(math.ceil(fraction) if round_up else math.floor(fraction))
    return int(value)


def _available(pod, min_ready_seconds, clock):
    """Ready for at least ``minReadySeconds`` (the pod's Ready lastTransitionTime)."""
    if not pod_ready(pod) or not pod_active(pod):
        return False
    if not min_ready_seconds:
        return True
    ready = next((c for c in pod["status"]["conditions"] if c.get("type") == "Ready"), {})
    return since(ready.get("lastTransitionTime"), clock) >= min_ready_seconds


def _deletion_rank(pod):
    """Pods deleted first sort first (ReplicaSet controller's ActivePods ordering)."""
    status = pod.get("status") or {}
    return (bool((pod.get("spec") or {}).get("nodeName")),
            {"Pending": 0, "Unknown": 1, "Running": 2}.get(pod_phase(pod), 2),
            pod_ready(pod),
            sum(int(s.get("restartCount") or 0) for s in status.get("containerStatuses") or ()) * -1,
            pod["metadata"].get("creationTimestamp") or "")


class OwnerOfChildren(Controller):
    """Base: watch the owner kind and its children (pods by default); a child maps to its controller owner."""

    owner_key = None
    owner_kind = None
    child_key = PODS

    def __init__(self, cluster, manager):
        super().__init__(cluster, manager)
        self.children = ChildIndex(cluster.store, self.child_key, self.owner_kind)

    def start(self):
        self.children.rebuild()

    def on_event(self, event):
        if event.key == self.owner_key:
            return [Ref(self.owner_key, event.obj["metadata"].get("namespace") or "", event.obj["metadata"]["name"])]
        owner = self.children.update(event.type, event.obj)
        if owner is None:
            return []
        return [Ref(self.owner_key, event.obj["metadata"].get("namespace") or "", owner)]

    def resource(self, key):
        return self.cluster.resource_for_key(key)


class ReplicaSetController(OwnerOfChildren):
    name = "replicaset"
    watches = (REPLICASETS, PODS)
    owner_key = REPLICASETS
    owner_kind = "ReplicaSet"

    def reconcile(self, ref):
        rs = self.cluster.store.get(REPLICASETS, ref.namespace, ref.name)
        if rs is None or rs["metadata"].get("deletionTimestamp"):
            return None
        spec = rs.get("spec") or {}
        desired = int(spec.get("replicas", 1))
        pods = self.children.children(rs)
        active = [p for p in pods if pod_active(p)]
        failure = None
        diff = desired - len(active)
        if diff > 0:
            failure = self.failure(rs)
            if failure is None:
                for _ in range(min(diff, BURST_REPLICAS)):
                    self.cluster.create(self.resource(PODS), new_pod(spec.get("template"), rs, ref.namespace),
                                        ref.namespace)
                self.cluster.record_event(rs, "SuccessfulCreate", "Created pod(s): %d" % min(diff, BURST_REPLICAS),
                                          component="replicaset-controller")
            else:
                self.cluster.record_event(rs, "FailedCreate", "Error creating: %s" % failure, "Warning",
                                          "replicaset-controller")
        elif diff < 0:
            for pod in sorted(active, key=_deletion_rank)[:-diff]:
                if delete_quietly(self.cluster, self.resource(PODS), ref.namespace, pod["metadata"]["name"]):
                    self.cluster.record_event(rs, "SuccessfulDelete", "Deleted pod: %s" % pod["metadata"]["name"],
                                              component="replicaset-controller")
        pods = [p for p in self.children.children(rs) if pod_active(p)]
        min_ready = int(spec.get("minReadySeconds") or 0)
        ready = sum(1 for p in pods if pod_ready(p))
        available = sum(1 for p in pods if _available(p, min_ready, self.clock))
        selector = (spec.get("selector") or {}).get("matchLabels") or {}
        labelled = sum(1 for p in pods if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items()))
        now = self.clock.timestamp()

        def write(obj):
            status = obj.setdefault("status", {})
            status.update(replicas=len(pods), fullyLabeledReplicas=labelled, readyReplicas=ready,
                          availableReplicas=available, observedGeneration=obj["metadata"].get("generation", 1))
            for key in ("readyReplicas", "availableReplicas", "fullyLabeledReplicas"):
                if not status[key]:
                    del status[key]  # omitempty, as the real status is serialized
            conditions = [c for c in status.get("conditions") or () if c.get("type") != "ReplicaFailure"]
            if failure:
                # ReplicaSet convention: a failed pod creation is ReplicaFailure=True, reason FailedCreate
                conditions = set_condition(conditions, "ReplicaFailure", "True", "FailedCreate", failure, now)
            if conditions:
                status["conditions"] = conditions
            else:
                status.pop("conditions", None)
        self.cluster.mutate(self.resource(REPLICASETS), ref.namespace, ref.name, write, subresource="status")
        if failure:
            return 10.0
        if min_ready and ready > available:
            return float(min_ready)
        return None


class DeploymentController(OwnerOfChildren):
    name = "deployment"
    watches = (DEPLOYMENTS, REPLICASETS)
    owner_key = DEPLOYMENTS
    owner_kind = "Deployment"
    child_key = REPLICASETS

    def reconcile(self, ref):
        cluster = self.cluster
        deployment = cluster.store.get(DEPLOYMENTS, ref.namespace, ref.name)
        if deployment is None or deployment["metadata"].get("deletionTimestamp"):
            return None
        spec = deployment.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        template = copy.deepcopy(spec.get("template") or {})
        template.setdefault("metadata", {}).setdefault("labels", {}).pop("pod-template-hash", None)
        pod_hash = template_hash(template, (deployment.get("status") or {}).get("collisionCount"))
        all_rs = self.children.children(deployment)
        new_rs = next((rs for rs in all_rs if (rs["metadata"].get("labels") or {}).get("pod-template-hash") == pod_hash), None)
        old_rs = [rs for rs in all_rs if rs is not new_rs]
        revision = max([int((rs["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision", "0"))
                        for rs in all_rs] or [0])
        created = False
        rs_resource = self.resource(REPLICASETS)
        strategy = spec.get("strategy") or {}
        recreate = strategy.get("type") == "Recreate"
        if spec.get("paused"):
            return self._status(ref, deployment, new_rs, old_rs, created, pod_hash)
        if new_rs is None:
            if recreate and any(int((rs.get("spec") or {}).get("replicas", 0)) or int((rs.get("status") or {}).get("replicas", 0))
                                for rs in old_rs):
                self._scale_all(old_rs, 0)
                return self._status(ref, deployment, None, old_rs, created, pod_hash)
            scaled_old = any(int((rs.get("spec") or {}).get("replicas", 0)) for rs in old_rs)
            new_rs = self._create_rs(deployment, template, pod_hash, revision + 1, 0 if scaled_old else replicas)
            created = True
        elif (new_rs["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision") != str(revision) and old_rs:
            # a rollback to an older template: its ReplicaSet becomes the newest revision
            self._annotate(new_rs, revision + 1, replicas, deployment)
        if recreate:
            self._scale_all(old_rs, 0)
            if not any(int((rs.get("status") or {}).get("replicas", 0)) for rs in old_rs):
                self._scale(new_rs, replicas, deployment)
        else:
            self._rolling(deployment, replicas, strategy, new_rs, old_rs)
        self._cleanup(deployment, old_rs)
        return self._status(ref, deployment, cluster.store.get(REPLICASETS, ref.namespace, new_rs["metadata"]["name"]),
                            [cluster.store.get(REPLICASETS, ref.namespace, rs["metadata"]["name"]) or rs for rs in old_rs],
                            created, pod_hash)

    # -- replica sets ----------------------------------------------------------------------
    def _create_rs(self, deployment, template, pod_hash, revision, replicas):
        meta = deployment["metadata"]
        rs_template = copy.deepcopy(template)
        rs_template["metadata"]["labels"]["pod-template-hash"] = pod_hash
        selector = copy.deepcopy((deployment.get("spec") or {}).get("selector") or {})
        selector.setdefault("matchLabels", {})["pod-template-hash"] = pod_hash
        body = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": "%s-%s" % (meta["name"], pod_hash), "namespace": meta.get("namespace"),
                             "labels": dict(rs_template["metadata"]["labels"]),
                             "annotations": self._annotations(deployment, revision,
                                                              int((deployment.get("spec") or {}).get("replicas", 1))),
                             "ownerReferences": [owner_reference(deployment)]},
                "spec": {"replicas": replicas, "selector": selector, "template": rs_template,
                         "minReadySeconds": int((deployment.get("spec") or {}).get("minReadySeconds") or 0)}}
        created = create_or_skip(self.cluster, self.resource(REPLICASETS), body, meta.get("namespace"))
        self.cluster.record_event(deployment, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d"
                                  % (body["metadata"]["name"], replicas), component="deployment-controller")
        self.children.update("ADDED", created or self.cluster.store.get(REPLICASETS, meta.get("namespace"),
                                                                          body["metadata"]["name"]))
        return created or self.cluster.store.get(REPLICASETS, meta.get("namespace"), body["metadata"]["name"])

    @staticmethod
    def _annotations(deployment, revision, replicas):
        annotations = {k: v for k, v in (deployment["metadata"].get("annotations") or {}).items()
                       if not k.startswith("kubectl.kubernetes.io/") and not k.startswith("deployment.kubernetes.io/")}
        max_surge = _int_or_percent(((deployment.get("spec") or {}).get("strategy") or {}).get("rollingUpdate", {})
                                    .get("maxSurge", "25%"), replicas, True) or 0
        annotations.update({"deployment.kubernetes.io/revision": str(revision),
                            "deployment.kubernetes.io/desired-replicas": str(replicas),
                            "deployment.kubernetes.io/max-replicas": str(replicas + max_surge)})
        return annotations

    def _annotate(self, rs, revision, replicas, deployment):
        def change(obj):
            obj["metadata"].setdefault("annotations", {}).update(
                {k: v for k, v in self._annotations(deployment, revision, replicas).items()
                 if k.startswith("deployment.kubernetes.io/")})
        self.cluster.mutate(self.resource(REPLICASETS), rs["metadata"]["namespace"], rs["metadata"]["name"], change)

    def _scale(self, rs, replicas, deployment=None):
        current = int((rs.get("spec") or {}).get("replicas", 0))
        if current == replicas:
            return

        def change(obj):
            obj["spec"]["replicas"] = replicas
            if deployment is not None:
                obj["metadata"].setdefault("annotations", {})["deployment.kubernetes.io/desired-replicas"] = \
                    str(int((deployment.get("spec") or {}).get("replicas", 1)))
        self.cluster.mutate(self.resource(REPLICASETS), rs["metadata"]["namespace"], rs["metadata"]["name"], change)
        if deployment is not None:
            self.cluster.record_event(deployment, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d" % (
                "up" if replicas > current else "down", rs["metadata"]["name"], current, replicas),
                component="deployment-controller")

    def _scale_all(self, replica_sets, replicas):
        for rs in replica_sets:
            self._scale(rs, replicas)

    def _rolling(self, deployment, replicas, strategy, new_rs, old_rs):
        rolling = strategy.get("rollingUpdate") or {}
        max_surge = _int_or_percent(rolling.get("maxSurge", "25%"), replicas, True)
        max_unavailable = _int_or_percent(rolling.get("maxUnavailable", "25%"), replicas, False)
        if max_surge == 0 and max_unavailable == 0:
            max_unavailable = 1
        if not old_rs or all(not int((rs.get("spec") or {}).get("replicas", 0)) for rs in old_rs):
            self._scale(new_rs, replicas, deployment)
            return
        # reconcileNewReplicaSet: scale up within maxSurge
        current_total = sum(int((rs.get("spec") or {}).get("replicas", 0)) for rs in old_rs + [new_rs])
        new_replicas = int((new_rs.get("spec") or {}).get("replicas", 0))
        if new_replicas < replicas:
            room = replicas + max_surge - current_total
            if room > 0:
                self._scale(new_rs, min(replicas, new_replicas + room), deployment)
                new_rs = self.cluster.store.get(REPLICASETS, new_rs["metadata"]["namespace"], new_rs["metadata"]["name"])
        elif new_replicas > replicas:
            self._scale(new_rs, replicas, deployment)
        # reconcileOldReplicaSets: scale down while keeping replicas - maxUnavailable available
        min_available = replicas - max_unavailable
        all_rs = old_rs + [new_rs]
        all_pods = sum(int((rs.get("status") or {}).get("replicas", 0)) for rs in all_rs)
        new_unavailable = int((new_rs.get("spec") or {}).get("replicas", 0)) - int(
            (new_rs.get("status") or {}).get("availableReplicas", 0))
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return
        available = sum(int((rs.get("status") or {}).get("availableReplicas", 0)) for rs in all_rs)
        budget = min(max_scaled_down, max(0, available - min_available))
        # unhealthy old replicas go first (cleanupUnhealthyReplicas), then the oldest ReplicaSets
        for rs in sorted(old_rs, key=lambda r: r["metadata"].get("creationTimestamp") or ""):
            current = int((rs.get("spec") or {}).get("replicas", 0))
            unhealthy = current - int((rs.get("status") or {}).get("availableReplicas", 0))
            cut = min(current, max(0, unhealthy) + budget)
            if cut <= 0:
                continue
            self._scale(rs, current - cut, deployment)
            budget -= max(0, cut - max(0, unhealthy))

    def _cleanup(self, deployment, old_rs):
        limit = int((deployment.get("spec") or {}).get("revisionHistoryLimit", 10))
        idle = [rs for rs in old_rs if not int((rs.get("spec") or {}).get("replicas", 0))
                and not int((rs.get("status") or {}).get("replicas", 0))]
        idle.sort(key=lambda rs: int((rs["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision", "0")))
        for rs in idle[:max(0, len(idle) - limit)]:
            delete_quietly(self.cluster, self.resource(REPLICASETS), rs["metadata"]["namespace"], rs["metadata"]["name"])

    # -- status ----------------------------------------------------------------------------
    def _status(self, ref, deployment, new_rs, old_rs, created, pod_hash):
        spec = deployment.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        all_rs = [rs for rs in old_rs + [new_rs] if rs is not None]

        def total(field, sets=all_rs):
            return sum(int((rs.get("status") or {}).get(field, 0)) for rs in sets)
        status_replicas = total("replicas")
        updated = int(((new_rs or {}).get("status") or {}).get("replicas", 0))
        ready = total("readyReplicas")
        available = total("availableReplicas")
        spec_total = sum(int((rs.get("spec") or {}).get("replicas", 0)) for rs in all_rs)
        max_unavailable = _int_or_percent(((spec.get("strategy") or {}).get("rollingUpdate") or {}).get(
            "maxUnavailable", "25%"), replicas, False) if (spec.get("strategy") or {}).get("type") != "Recreate" else 0
        now = self.clock.timestamp()
        deadline = spec.get("progressDeadlineSeconds", 600)
        rs_name = (new_rs or {}).get("metadata", {}).get("name", "")
        failure = next((c for rs in all_rs for c in (rs.get("status") or {}).get("conditions") or ()
                        if c.get("type") == "ReplicaFailure" and c.get("status") == "True"), None)
        old_status = deployment.get("status") or {}
        complete = (updated == replicas and status_replicas == replicas and available == replicas
                    and new_rs is not None)
        progressed = (updated > old_status.get("updatedReplicas", 0) or ready > old_status.get("readyReplicas", 0)
                      or available > old_status.get("availableReplicas", 0)
                      or status_replicas < old_status.get("replicas", status_replicas))
        requeue = [None]

        def write(obj):
            status = obj.setdefault("status", {})
            status.update(observedGeneration=obj["metadata"].get("generation", 1), replicas=status_replicas,
                          updatedReplicas=updated, readyReplicas=ready, availableReplicas=available,
                          unavailableReplicas=max(0, spec_total - available))
            for key in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"):
                if not status[key]:
                    del status[key]
            conditions = status.get("conditions") or []
            # Deployment conventions (pkg/controller/deployment/util): Available iff available >= replicas - maxUnavailable
            if available >= replicas - (max_unavailable or 0):
                conditions = set_condition(conditions, "Available", "True", "MinimumReplicasAvailable",
                                           "Deployment has minimum availability.", now, lastUpdateTime=now)
            else:
                conditions = set_condition(conditions, "Available", "False", "MinimumReplicasUnavailable",
                                           "Deployment does not have minimum availability.", now, lastUpdateTime=now)
            progressing = next((c for c in conditions if c.get("type") == "Progressing"), None)
            if spec.get("paused"):
                conditions = set_condition(conditions, "Progressing", "Unknown", "DeploymentPaused",
                                           "Deployment is paused", now, lastUpdateTime=now)
            elif complete:
                if not progressing or progressing.get("reason") != "NewReplicaSetAvailable":
                    conditions = set_condition(conditions, "Progressing", "True", "NewReplicaSetAvailable",
                                               'ReplicaSet "%s" has successfully progressed.' % rs_name, now,
                                               lastUpdateTime=now)
            elif created:
                conditions = set_condition(conditions, "Progressing", "True", "NewReplicaSetCreated",
                                           'Created new replica set "%s"' % rs_name, now, lastUpdateTime=now)
            elif progressed or progressing is None or progressing.get("reason") in ("NewReplicaSetAvailable",
                                                                                    "DeploymentPaused"):
                conditions = set_condition(conditions, "Progressing", "True", "ReplicaSetUpdated",
                                           'ReplicaSet "%s" is progressing.' % rs_name, now, lastUpdateTime=now)
            elif deadline is not None and progressing.get("status") == "True":
                stalled = since(progressing.get("lastUpdateTime"), self.clock)
                if stalled >= deadline:
                    conditions = set_condition(conditions, "Progressing", "False", "ProgressDeadlineExceeded",
                                               'ReplicaSet "%s" has timed out progressing.' % rs_name, now,
                                               lastUpdateTime=now)
                else:
                    requeue[0] = deadline - stalled
            conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
            if failure:
                conditions = set_condition(conditions, "ReplicaFailure", "True", failure.get("reason"),
                                           failure.get("message"), now, lastUpdateTime=now)
            status["conditions"] = sorted(conditions, key=lambda c: ["Available", "Progressing",
                                                                     "ReplicaFailure"].index(c["type"])
                                          if c["type"] in ("Available", "Progressing", "ReplicaFailure") else 9)
            # SetDeploymentCondition leaves a condition alone when its status and reason did not change; only
            # Progressing gets a new lastUpdateTime when progress was made (syncRolloutStatus)
            for cond in status["conditions"]:
                if cond["type"] == "Progressing" and (progressed or created):
                    continue
                before = next((c for c in old_status.get("conditions") or () if c.get("type") == cond["type"]), None)
                if before and all(before.get(k) == cond.get(k) for k in ("status", "reason", "message")):
                    cond["lastUpdateTime"] = before.get("lastUpdateTime", cond.get("lastUpdateTime"))
        self.cluster.mutate(self.resource(DEPLOYMENTS), ref.namespace, ref.name, write, subresource="status")
        if not complete and deadline is not None and requeue[0] is None and not spec.get("paused"):
            return float(deadline)
        return requeue[0]


class StatefulSetController(OwnerOfChildren):
    name = "statefulset"
    watches = (STATEFULSETS, PODS)
    owner_key = STATEFULSETS
    owner_kind = "StatefulSet"

    def reconcile(self, ref):
        cluster = self.cluster
        sts = cluster.store.get(STATEFULSETS, ref.namespace, ref.name)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return None
        spec = sts.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        template = spec.get("template") or {}
        revision = "%s-%s" % (ref.name, template_hash(template))
        self._ensure_revision(sts, template, revision)
        pods = {p["metadata"]["name"]: p for p in self.children.children(sts)}
        parallel = spec.get("podManagementPolicy") == "Parallel"
        pod_resource = self.resource(PODS)
        for pod in list(pods.values()):
            if pod_phase(pod) in ("Failed", "Succeeded"):  # the StatefulSet controller recreates terminated pods
                delete_quietly(cluster, pod_resource, ref.namespace, pod["metadata"]["name"])
                del pods[pod["metadata"]["name"]]
        for ordinal in range(replicas):
            name = "%s-%d" % (ref.name, ordinal)
            if name in pods:
                continue
            if not parallel and not all(pod_ready(pods.get("%s-%d" % (ref.name, i)) or {}) for i in range(ordinal)):
                break
            self._create_pod(sts, ordinal, revision)
            cluster.record_event(sts, "SuccessfulCreate", "create Pod %s in StatefulSet %s successful" % (name, ref.name),
                                 component="statefulset-controller")
            if not parallel:
                break
        extra = sorted((p for n, p in pods.items() if int(n.rsplit("-", 1)[-1]) >= replicas),
                       key=lambda p: -int(p["metadata"]["name"].rsplit("-", 1)[-1]))
        for pod in extra[:len(extra) if parallel else 1]:
            delete_quietly(cluster, pod_resource, ref.namespace, pod["metadata"]["name"])
            cluster.record_event(sts, "SuccessfulDelete", "delete Pod %s in StatefulSet %s successful"
                                 % (pod["metadata"]["name"], ref.name), component="statefulset-controller")
        pods = {p["metadata"]["name"]: p for p in self.children.children(sts)}
        update = spec.get("updateStrategy") or {}
        partition = int((update.get("rollingUpdate") or {}).get("partition") or 0)
        if update.get("type", "RollingUpdate") == "RollingUpdate" and all(pod_ready(p) for p in pods.values()):
            for ordinal in range(min(replicas, len(pods)) - 1, partition - 1, -1):
                pod = pods.get("%s-%d" % (ref.name, ordinal))
                if pod is not None and (pod["metadata"].get("labels") or {}).get("controller-revision-hash") != revision:
                    delete_quietly(cluster, pod_resource, ref.namespace, pod["metadata"]["name"])
                    break
        pods = [p for p in self.children.children(sts) if pod_active(p)]
        min_ready = int(spec.get("minReadySeconds") or 0)
        ready = sum(1 for p in pods if pod_ready(p))
        available = sum(1 for p in pods if _available(p, min_ready, self.clock))
        updated = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get("controller-revision-hash") == revision)
        current_revision = (sts.get("status") or {}).get("currentRevision") or revision
        if updated == replicas and len(pods) == replicas:
            current_revision = revision
        current = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get("controller-revision-hash") == current_revision)

        def write(obj):
            status = obj.setdefault("status", {})
            status.update(observedGeneration=obj["metadata"].get("generation", 1), replicas=len(pods),
                          readyReplicas=ready, currentReplicas=current, updatedReplicas=updated,
                          availableReplicas=available, currentRevision=current_revision, updateRevision=revision,
                          collisionCount=status.get("collisionCount", 0))
        cluster.mutate(self.resource(STATEFULSETS), ref.namespace, ref.name, write, subresource="status")
        return float(min_ready) if min_ready and ready > available else None

    def _ensure_revision(self, sts, template, revision):
        if self.cluster.store.get(REVISIONS, sts["metadata"]["namespace"], revision) is not None:
            return
        existing = [r for r in self.cluster.store.list(REVISIONS, sts["metadata"]["namespace"])[0]
                    if (controller_of(r) or {}).get("uid") == sts["metadata"]["uid"]]
        create_or_skip(self.cluster, self.resource(REVISIONS), {
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": revision, "namespace": sts["metadata"]["namespace"],
                         "labels": dict((template.get("metadata") or {}).get("labels") or {},
                                        **{"controller.kubernetes.io/hash": revision.rsplit("-", 1)[-1]}),
                         "ownerReferences": [owner_reference(sts)]},
            "data": {"spec": {"template": copy.deepcopy(template)}},
            "revision": len(existing) + 1}, sts["metadata"]["namespace"])

    def _create_pod(self, sts, ordinal, revision):
        spec = sts.get("spec") or {}
        namespace = sts["metadata"]["namespace"]
        name = "%s-%d" % (sts["metadata"]["name"], ordinal)
        claims = []
        for claim_template in spec.get("volumeClaimTemplates") or ():
            claim_name = "%s-%s" % (claim_template["metadata"]["name"], name)
            claims.append((claim_template["metadata"]["name"], claim_name))
            if self.cluster.store.get(PVCS, namespace, claim_name) is None:
                body = copy.deepcopy(claim_template)
                body["apiVersion"], body["kind"] = "v1", "PersistentVolumeClaim"
                body["metadata"] = {"name": claim_name, "namespace": namespace,
                                    "labels": dict(((spec.get("selector") or {}).get("matchLabels")) or {})}
                body.pop("status", None)
                create_or_skip(self.cluster, self.resource(PVCS), body, namespace)

        def change(pod_spec):
            pod_spec.setdefault("hostname", name)
            if spec.get("serviceName"):
                pod_spec.setdefault("subdomain", spec["serviceName"])
            volumes = [v for v in pod_spec.get("volumes") or () if v.get("name") not in dict(claims)]
            volumes += [{"name": volume, "persistentVolumeClaim": {"claimName": claim}} for volume, claim in claims]
            if volumes:
                pod_spec["volumes"] = volumes
        body = new_pod(spec.get("template"), sts, namespace, name=name,
                       labels={"controller-revision-hash": revision, "statefulset.kubernetes.io/pod-name": name,
                               "apps.kubernetes.io/pod-index": str(ordinal)}, spec_changes=change)
        create_or_skip(self.cluster, self.resource(PODS), body, namespace)


DAEMON_TOLERATIONS = [  # added to every DaemonSet pod by the DaemonSet controller
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


class DaemonSetController(OwnerOfChildren):
    name = "daemonset"
    watches = (DAEMONSETS, PODS, NODES)
    owner_key = DAEMONSETS
    owner_kind = "DaemonSet"

    def on_event(self, event):
        if event.key == NODES:
            if event.old is not None and event.type == "MODIFIED" and \
                    (event.old["metadata"].get("labels"), (event.old.get("spec") or {}).get("taints")) == \
                    (event.obj["metadata"].get("labels"), (event.obj.get("spec") or {}).get("taints")):
                return []
            return [Ref(DAEMONSETS, ds["metadata"]["namespace"], ds["metadata"]["name"])
                    for ds in self.cluster.store.list(DAEMONSETS)[0]]
        return super().on_event(event)

    @staticmethod
    def eligible(node, template_spec):
        """Should a daemon pod run on ``node``? (nodeShouldRunDaemonPod: selector, affinity, taints)."""
        if not scheduling.matches_node_affinity(node, template_spec):
            return False
        tolerations = list(template_spec.get("tolerations") or ()) + DAEMON_TOLERATIONS
        return scheduling.untolerated_taint(node, tolerations) is None

    def reconcile(self, ref):
        cluster = self.cluster
        ds = cluster.store.get(DAEMONSETS, ref.namespace, ref.name)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return None
        spec = ds.get("spec") or {}
        template = spec.get("template") or {}
        template_spec = template.get("spec") or {}
        revision = template_hash(template)
        generation = str(ds["metadata"].get("generation", 1))
        nodes = {n["metadata"]["name"]: n for n in cluster.store.list(NODES)[0]}
        wanted = {name for name, node in nodes.items() if self.eligible(node, template_spec)}
        pods_by_node = {}
        pod_resource = self.resource(PODS)
        misscheduled = 0
        for pod in self.children.children(ds):
            node = self._target_node(pod)
            if pod_phase(pod) == "Failed":  # a failed daemon pod is replaced
                delete_quietly(cluster, pod_resource, ref.namespace, pod["metadata"]["name"])
                continue
            if node not in wanted:
                misscheduled += 1
                delete_quietly(cluster, pod_resource, ref.namespace, pod["metadata"]["name"])
                continue
            pods_by_node.setdefault(node, []).append(pod)
        for node in sorted(wanted - set(pods_by_node)):
            self._create_pod(ds, node, revision, generation)
        pods = [p for p in self.children.children(ds) if pod_active(p)]
        by_node = {}
        for pod in pods:
            by_node.setdefault(self._target_node(pod), []).append(pod)
        min_ready = int(spec.get("minReadySeconds") or 0)
        if all(pod_ready(p) for p in pods):
            for pod in pods:  # RollingUpdate, maxUnavailable 1: one outdated pod at a time
                if (pod["metadata"].get("labels") or {}).get("controller-revision-hash") != revision and \
                        (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate":
                    delete_quietly(cluster, pod_resource, ref.namespace, pod["metadata"]["name"])
                    break
        scheduled = [n for n in wanted if n in by_node]
        ready = sum(1 for n in scheduled if any(pod_ready(p) for p in by_node[n]))
        available = sum(1 for n in scheduled if any(_available(p, min_ready, self.clock) for p in by_node[n]))
        updated = sum(1 for n in scheduled if any((p["metadata"].get("labels") or {}).get("controller-revision-hash")
                                                  == revision for p in by_node[n]))

        def write(obj):
            status = obj.setdefault("status", {})
            status.update(observedGeneration=obj["metadata"].get("generation", 1), desiredNumberScheduled=len(wanted),
                          currentNumberScheduled=len(scheduled), numberMisscheduled=misscheduled, numberReady=ready,
                          numberAvailable=available, numberUnavailable=len(wanted) - available,
                          updatedNumberScheduled=updated)
            for key in ("numberAvailable", "numberUnavailable", "updatedNumberScheduled"):
                if not status[key]:
                    del status[key]
        cluster.mutate(self.resource(DAEMONSETS), ref.namespace, ref.name, write, subresource="status")
        return float(min_ready) if min_ready and ready > available else None

    @staticmethod
    def _target_node(pod):
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            return node
        terms = ((((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {})
                 .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or ()
        for term in terms:
            for field in term.get("matchFields") or ():
                if field.get("key") == "metadata.name" and field.get("values"):
                    return field["values"][0]
        return None

    def _create_pod(self, ds, node, revision, generation):
        def change(pod_spec):
            tolerations = list(pod_spec.get("tolerations") or ())
            tolerations += [t for t in DAEMON_TOLERATIONS if t not in tolerations]
            pod_spec["tolerations"] = tolerations
            affinity = pod_spec.setdefault("affinity", {})
            affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}
        body = new_pod((ds.get("spec") or {}).get("template"), ds, ds["metadata"]["namespace"],
                       labels={"controller-revision-hash": revision, "pod-template-generation": generation},
                       spec_changes=change)
        self.cluster.create(self.resource(PODS), body, ds["metadata"]["namespace"])
        self.cluster.record_event(ds, "SuccessfulCreate", "Created pod on node %s" % node, component="daemonset-controller")
