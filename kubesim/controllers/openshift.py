"""OpenShift's controllers: cluster version, machines, builds, image streams, routes, OAuth, monitoring.

- ClusterVersion: a ``spec.desiredUpdate`` (``version`` and/or ``image``; a version
  is taken from ``availableUpdates`` or the image tag) starts an update:
  ``status.desired`` changes, a ``Partial`` history entry is added and
  ``Progressing=True`` ("Working towards 4.19.10: ..."); after
  ``kubesim.perfscale.io/upgrade-s`` (default 60 simulated seconds) the entry is
  ``Completed``, ``Progressing=False`` ("Cluster version is 4.19.10") and the
  ClusterOperators report the new version; ``Progressing`` reason ``ClusterOperatorsUpdating`` while it
  runs. ``kubesim.perfscale.io/fail``: ``Failing=True`` and the update never completes. A ClusterOperator
  ``Degraded=True`` holds the update, reported ``Failing``/``Progressing`` ``ClusterOperatorsDegraded``
  after 40 simulated minutes (``kubesim.perfscale.io/fail-after-s``); one ``Upgradeable=False`` makes the
  ClusterVersion ``Upgradeable=False`` ``ClusterOperatorsNotUpgradeable``.
- MachineSet -> Machines (``<machineset>-<5 chars>``, newest deleted first) ->
  Nodes: a Machine is ``Provisioning``, ``Provisioned`` after
  ``kubesim.perfscale.io/provision-s`` (default 30 s), its Node (named as the
  Machine, labels of ``spec.template.spec.metadata``, ``node.kubernetes.io/instance-type``,
  taints of ``spec.template.spec.taints``, capacity and PCI devices of the
  instance type) registers NotReady and becomes Ready after
  ``kubesim.perfscale.io/node-ready-s`` (default 20 s): the Machine is ``Running``.
  Deleting a Machine (scale down) deletes its Node. An unknown instance type or
  ``kubesim.perfscale.io/fail`` on the MachineSet: Machines ``Failed``
  (``errorReason: InvalidConfiguration``). MachineSet status: ``replicas``,
  ``fullyLabeledReplicas``, ``readyReplicas``, ``availableReplicas``, ``observedGeneration``.
- BuildConfig: a ``ConfigChange`` trigger starts build 1; ``instantiate``
  (``oc start-build``) starts the next one. Build: ``New`` -> ``Pending`` (build pod
  ``<build>-build``) -> ``Running`` -> ``Complete`` (after the pod's ``duration-s``,
  default 10 s; the output ImageStreamTag gets the image) or ``Failed``
  (``kubesim.perfscale.io/fail`` on the BuildConfig or Build: reason
  ``GenericBuildFailed``, the message in the build log; a git source whose repository is
  ``does-not-exist``: ``FetchSourceFailed`` "Failed to fetch the input source.").
- ImageStream: ``status.dockerImageRepository`` and the tags of ``spec.tags``
  (imported at once) and of completed builds.
- Route: ``spec.host`` defaulted to ``<name>-<namespace>.<apps domain>`` at
  creation; ``status.ingress`` admitted by the ``default`` router, or ``Admitted=False``
  ``HostAlreadyClaimed`` when an older route of another namespace holds the host (admitted once it goes).
- OAuth ``cluster``: a spec change rolls the ``oauth-openshift`` Deployment out and
  makes the ``authentication`` ClusterOperator ``Progressing`` until it is done.
- MachineConfigPool: a KubeletConfig whose ``machineConfigPoolSelector`` matches the pool's
  labels (or its change or deletion) makes the pool ``Updating`` (a new rendered
  configuration) for ``kubesim.perfscale.io/update-s`` (default 120 simulated seconds, on
  the KubeletConfig), then ``Updated`` with every machine counted updated; the nodes of the
  pool (its ``nodeSelector``) then report ``maxPods`` as their ``pods`` capacity and
  allocatable (default 250). Pool conditions as the node controller writes them
  (openshift/machine-config-operator @ 7ff337a4ffac8e7562692181178ede61e4b2eec5 pkg/controller/node/status.go):
  ``Updated``, ``Updating``, ``RenderDegraded``, ``NodeDegraded`` and ``Degraded`` (no reason). The
  KubeletConfig gets ``Accepted`` (``Success``) and the legacy ``Success``
  (pkg/controller/kubelet-config/helpers.go); ``kubesim.perfscale.io/fail`` on it: refused, as a
  validation error is (``Accepted=False`` "Error: <message>" and ``Failure=True``, nothing rendered,
  the pool untouched); ``kubesim.perfscale.io/degrade-node: <message>``: accepted, but a node fails to
  apply it - ``NodeDegraded``/``Degraded`` with "Node <name> is reporting: ..." while the
  machine-config daemon retries (never final).
- ``cluster-monitoring-config`` with ``enableUserWorkload: true`` deploys user
  workload monitoring in ``openshift-user-workload-monitoring``
  (``prometheus-operator``, ``prometheus-user-workload``, ``thanos-ruler-user-workload``) and the
  Prometheus ``user-workload`` whose status follows its StatefulSet (``Available`` NoPodReady,
  Degraded/SomePodsNotReady, True; ``Reconciled``).

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``clusterversion``: openshift/cluster-version-operator @ 6e719331fb5863141397f35b1f47bed42148a6dd; files:
  pkg/cvo/status.go, pkg/cvo/sync_worker.go.
- ``machineset``: openshift/machine-api-operator @ 951196122fe4f1115782da6c14660116905029c4; files:
  pkg/controller/machineset/controller.go, status.go.
- ``machine``: openshift/machine-api-operator @ 951196122fe4f1115782da6c14660116905029c4; files:
  pkg/controller/machine/controller.go.
- ``buildconfig``: openshift/openshift-controller-manager @ 26d20feae8892f648f5b06ed3f5492fe6ffb4532; files:
  pkg/build/controller/buildconfig/buildconfig_controller.go.
- ``build``: openshift/openshift-controller-manager @ 26d20feae8892f648f5b06ed3f5492fe6ffb4532; files:
  pkg/build/controller/build/build_controller.go.
- ``imagestream``: openshift/openshift-apiserver @ 56aa2d96edd725e44ddd7ff13f23e53e6c509828; files:
  pkg/image/apiserver/registry/imagestream.
- ``route``: openshift/router @ 4b401a86dccc657a8a5254c2794a312241f40e87; files:
  pkg/router/controller/status.go.
- ``user-workload-monitoring``: openshift/cluster-monitoring-operator @
  f581865b41267ff23bbf1cb30fbdd2e02cecd42f; files: pkg/tasks/prometheus_user_workload.go,
  pkg/client/client.go.
- ``oauth``: openshift/cluster-authentication-operator @ f3df4f5b26043e7c0f2bc724cd3cbc0a2a6d14f7; files:
  pkg/controllers/deployment/deployment_controller.go,
  vendor/github.com/openshift/library-go/pkg/operator/status/condition.go.
"""

import hashlib
import re
import uuid

import yaml

from kubesim.controllers.base import Controller, Ref
from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import (FAIL, PREFIX, annotation, condition_true, create_or_skip, delete_quietly,
                                      float_annotation, owner_reference, pod_phase, random_suffix, set_condition, since)
from kubesim.errors import ApiError
from kubesim.profiles import INSTANCE_TYPES, node_body
from kubesim.selectors import label_selector_from_dict, matches_labels

RELEASE_IMAGE = "quay.io/openshift-release-dev/ocp-release@sha256:%s"


def release_image(version):
    """The (made-up, stable) release image digest of an OpenShift version."""
    return RELEASE_IMAGE % (uuid.uuid5(uuid.NAMESPACE_URL, version).hex * 2)


VERSION = "4.19.9"
INFRA_NAME = "kubesim-x7k2p"
CLUSTER_VERSIONS = ("config.openshift.io", "clusterversions")
CLUSTER_OPERATORS = ("config.openshift.io", "clusteroperators")
OAUTHS = ("config.openshift.io", "oauths")
MACHINE_SETS = ("machine.openshift.io", "machinesets")
MACHINES = ("machine.openshift.io", "machines")
BUILD_CONFIGS = ("build.openshift.io", "buildconfigs")
BUILDS = ("build.openshift.io", "builds")
IMAGE_STREAMS = ("image.openshift.io", "imagestreams")
ROUTES = ("route.openshift.io", "routes")
# how long the monitoring operator's task waits for the user workload Prometheus before it reports the task
# failed (kubesim's choice: 5 simulated minutes)
UWM_ROLLOUT_TIMEOUT_S = 300.0
MISSING_SOURCE = re.compile(r"(^|/)does-not-exist(\.git)?/?$")
NODES = ("", "nodes")
PODS = ("", "pods")
CONFIGMAPS = ("", "configmaps")
DEPLOYMENTS = ("apps", "deployments")
STATEFULSETS = ("apps", "statefulsets")
MACHINE_FINALIZER = "machine.machine.openshift.io"
REGISTRY = "image-registry.openshift-image-registry.svc:5000"


def _apps_domain(cluster):
    ingress = cluster.store.get(("config.openshift.io", "ingresses"), "", "cluster")
    return ((ingress or {}).get("spec") or {}).get("domain") or "apps.kubesim.example.com"


def route_host_defaulter(cluster, resource, old, new):
    """The route admission: an empty ``spec.host`` becomes ``<name>-<namespace>.<apps domain>``."""
    if resource.storage_key != ROUTES or old is not None:
        return
    spec = new.setdefault("spec", {})
    if not spec.get("host"):
        meta = new["metadata"]
        spec["host"] = "%s-%s.%s" % (meta["name"], meta["namespace"], _apps_domain(cluster))
        spec.setdefault("wildcardPolicy", "None")


# -- cluster version ------------------------------------------------------------------------
class ClusterVersionController(OperatorReconciler):
    name = "clusterversion"
    key = CLUSTER_VERSIONS
    default_delay = 0.0
    extra_watches = (CLUSTER_OPERATORS,)

    def related(self, event):
        return [Ref(CLUSTER_VERSIONS, "", "version")]

    def _target(self, cv):
        wanted = (cv.get("spec") or {}).get("desiredUpdate") or {}
        if not wanted.get("version") and not wanted.get("image"):
            return None
        status = cv.get("status") or {}
        version, image = wanted.get("version"), wanted.get("image")
        # the release's version, as the payload says: from the update list, or from what this
        # cluster already runs or ran (an applied update leaves availableUpdates)
        known = list(status.get("availableUpdates") or ()) + [status.get("desired") or {}] + list(status.get("history") or ())
        for update in known:
            if (version and update.get("version") == version) or (image and update.get("image") == image):
                version, image = update["version"], update["image"]
                break
        if not version:
            match = re.search(r":(\d+\.\d+\.\d+[^@\s]*?)(?:-x86_64|-multi)?$", image or "")
            version = match.group(1) if match else "0.0.0-unknown"
        if not image:
            image = release_image(version)
        return {"version": version, "image": image}

    def sync(self, ref, cv):
        target = self._target(cv)
        status = cv.get("status") or {}
        if target is None:
            return None
        now = self.clock.timestamp()
        history = list(status.get("history") or [])
        current = history[0] if history else {}
        started = current.get("image") == target["image"] and current.get("version") == target["version"]
        failure = self.fail_message(cv)
        duration = float_annotation(cv, "upgrade-s", 60.0)
        if started and current.get("state") == "Completed":
            return None
        operators = self.cluster.store.list(CLUSTER_OPERATORS)[0]
        degraded = sorted(o["metadata"]["name"] for o in operators if condition_true(o, "Degraded"))
        held = sorted(o["metadata"]["name"] for o in operators
                      if any(c.get("type") == "Upgradeable" and c.get("status") == "False"
                             for c in (o.get("status") or {}).get("conditions") or ()))
        if not started:
            entry = {"state": "Partial", "version": target["version"], "image": target["image"], "startedTime": now,
                     "completionTime": None, "verified": False}
            if history and history[0].get("state") == "Partial":
                history[0] = dict(history[0], completionTime=now)
            history.insert(0, entry)
            elapsed = 0.0
        else:
            elapsed = since(current.get("startedTime"), self.clock)
        # a degraded operator blocks the update; it is reported Failing once the CVO's wait for it is over
        # (40 minutes, as tests/fixtures/upstream/openshift/clusterversion-transient-failing.yaml shows; the
        # annotation fail-after-s shortens it)
        blocked = bool(degraded) and elapsed >= float_annotation(cv, "fail-after-s", 2400.0)
        done = not failure and not degraded and elapsed >= duration
        if done:
            history[0] = dict(history[0], state="Completed", completionTime=now)
        total = 829
        progress = min(total, int(total * elapsed / duration)) if duration else total

        def change(status, obj):
            conditions = status.get("conditions") or []
            status["desired"] = dict(status.get("desired") or {}, version=target["version"], image=target["image"])
            status["history"] = history
            status["observedGeneration"] = obj["metadata"].get("generation", 1)
            if held:
                conditions = set_condition(conditions, "Upgradeable", "False", "ClusterOperatorsNotUpgradeable",
                                           "Multiple cluster operators should not be upgraded between minor versions: "
                                           + ", ".join(held), now)
            else:
                conditions = [c for c in conditions if c.get("type") != "Upgradeable"]
            if failure:
                conditions = set_condition(conditions, "Failing", "True", "UpdatePayloadFailed", failure, now)
                conditions = set_condition(conditions, "Progressing", "True", "UpdatePayloadFailed",
                                           "Unable to apply %s: %s" % (target["version"], failure), now)
            elif blocked:
                message = "Cluster operators %s are degraded" % ", ".join(degraded)
                conditions = set_condition(conditions, "Failing", "True", "ClusterOperatorsDegraded", message, now)
                conditions = set_condition(conditions, "Progressing", "True", "ClusterOperatorsDegraded",
                                           "Unable to apply %s: wait has exceeded 40 minutes for these operators: %s"
                                           % (target["version"], ", ".join(degraded)), now)
            elif done:
                conditions = set_condition(conditions, "Failing", "False", None, None, now)
                conditions = set_condition(conditions, "Progressing", "False", None,
                                           "Cluster version is %s" % target["version"], now)
                conditions = set_condition(conditions, "Available", "True", None, "Done applying %s" % target["version"], now)
                status["availableUpdates"] = [u for u in status.get("availableUpdates") or ()
                                              if u.get("version") != target["version"]]
            else:
                conditions = set_condition(conditions, "Progressing", "True", "ClusterOperatorsUpdating",
                                           "Working towards %s: %d of %d done (%d%% complete)" % (
                                               target["version"], progress, total, progress * 100 // total), now)
            status["conditions"] = conditions
        self.write_status(ref, change)
        if done:
            for operator in self.cluster.store.list(CLUSTER_OPERATORS)[0]:
                self.cluster.mutate(self.cluster.resource_for_key(CLUSTER_OPERATORS), "", operator["metadata"]["name"],
                                    lambda obj: obj.setdefault("status", {}).update(
                                        versions=[{"name": "operator", "version": target["version"]}]),
                                    subresource="status")
            return None
        if failure or blocked:
            return None
        if degraded:
            return max(0.1, float_annotation(cv, "fail-after-s", 2400.0) - elapsed)
        return min(duration - elapsed, max(1.0, duration / 10.0))


# -- machines -------------------------------------------------------------------------------
def _machine_conditions(status, now, exists):
    """The Machine's conditions (machine-api-operator pkg/controller/machine/controller.go): Drainable and
    Terminable True (no lifecycle hook), InstanceExists False ``InstanceNotCreated`` until the instance exists."""
    conditions = status.get("conditions") or []
    conditions = set_condition(conditions, "Drainable", "True", None, None, now)
    conditions = set_condition(conditions, "InstanceExists", "True" if exists else "False",
                               None if exists else "InstanceNotCreated",
                               None if exists else "Instance has not been created", now,
                               severity=None if exists else "Warning")
    return set_condition(conditions, "Terminable", "True", None, None, now)


def machine_body(machineset, name=None, phase=None):
    """A Machine of ``machineset`` (``name`` given for the profile's existing nodes)."""
    template = (machineset.get("spec") or {}).get("template") or {}
    provider = ((template.get("spec") or {}).get("providerSpec") or {}).get("value") or {}
    instance_type = provider.get("instanceType", "")
    placement = provider.get("placement") or {}
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels.update({"machine.openshift.io/instance-type": instance_type,
                   "machine.openshift.io/region": placement.get("region", "us-east-1"),
                   "machine.openshift.io/zone": placement.get("availabilityZone", "us-east-1a")})
    annotations = {k: v for k, v in (machineset["metadata"].get("annotations") or {}).items() if k.startswith(PREFIX)}
    body = {"apiVersion": "machine.openshift.io/v1beta1", "kind": "Machine",
            "metadata": {"namespace": machineset["metadata"]["namespace"], "labels": labels,
                         "annotations": annotations, "finalizers": [MACHINE_FINALIZER],
                         "ownerReferences": [owner_reference(machineset)]},
            "spec": {"metadata": (template.get("spec") or {}).get("metadata") or {},
                     "taints": list((template.get("spec") or {}).get("taints") or ()),
                     "providerSpec": (template.get("spec") or {}).get("providerSpec") or {},
                     "lifecycleHooks": {}}}
    if name:
        body["metadata"]["name"] = name
        instance = "i-%s" % hashlib.sha256(name.encode()).hexdigest()[:17]
        body["spec"]["providerID"] = "aws:///us-east-1a/%s" % instance
        body["status"] = {"phase": phase or "Running", "nodeRef": {"kind": "Node", "name": name},
                          "providerStatus": {"instanceState": "running", "instanceId": instance}}
    else:
        body["metadata"]["name"] = "%s-%s" % (machineset["metadata"]["name"], random_suffix())
    return body


class MachineSetController(OperatorReconciler):
    name = "machineset"
    key = MACHINE_SETS
    default_delay = 0.0
    extra_watches = (MACHINES,)

    def related(self, event):
        owner = next((o for o in event.obj["metadata"].get("ownerReferences") or () if o.get("kind") == "MachineSet"), None)
        return [Ref(MACHINE_SETS, event.obj["metadata"]["namespace"], owner["name"])] if owner else []

    def sync(self, ref, machineset):
        cluster = self.cluster
        uid = machineset["metadata"]["uid"]
        machines = [m for m in cluster.store.list(MACHINES, ref.namespace)[0]
                    if any(o.get("uid") == uid for o in m["metadata"].get("ownerReferences") or ())
                    and not m["metadata"].get("deletionTimestamp")]
        replicas = int((machineset.get("spec") or {}).get("replicas", 0))
        resource = cluster.resource_for_key(MACHINES)
        for _ in range(replicas - len(machines)):
            cluster.create(resource, machine_body(machineset), ref.namespace)
        if len(machines) > replicas:
            newest = sorted(machines, key=lambda m: m["metadata"].get("creationTimestamp") or "", reverse=True)
            for machine in newest[:len(machines) - replicas]:
                delete_quietly(cluster, resource, ref.namespace, machine["metadata"]["name"])
        machines = [m for m in cluster.store.list(MACHINES, ref.namespace)[0]
                    if any(o.get("uid") == uid for o in m["metadata"].get("ownerReferences") or ())
                    and not m["metadata"].get("deletionTimestamp")]
        running = sum(1 for m in machines if (m.get("status") or {}).get("phase") == "Running")
        failed = [m for m in machines if (m.get("status") or {}).get("phase") == "Failed"]

        def change(status, obj):
            status.update(replicas=len(machines), fullyLabeledReplicas=len(machines), readyReplicas=running,
                          availableReplicas=running, observedGeneration=obj["metadata"].get("generation", 1),
                          labelSelector=",".join("%s=%s" % kv for kv in sorted(
                              ((obj["spec"].get("selector") or {}).get("matchLabels") or {}).items())))
            if failed:
                status["errorReason"] = "InvalidConfiguration"
                status["errorMessage"] = (failed[0].get("status") or {}).get("errorMessage", "")
            else:
                status.pop("errorReason", None)
                status.pop("errorMessage", None)
        self.write_status(ref, change)
        return None


class MachineController(OperatorReconciler):
    name = "machine"
    key = MACHINES
    default_delay = 0.0
    extra_watches = (NODES,)

    def related(self, event):
        machine = (event.obj["metadata"].get("annotations") or {}).get("machine.openshift.io/machine")
        if not machine or event.type == "DELETED":
            return []
        namespace, _, name = machine.partition("/")
        return [Ref(MACHINES, namespace, name)]

    def reconcile(self, ref):
        if ref.key != MACHINES:
            return None
        machine = self.cluster.store.get(MACHINES, ref.namespace, ref.name)
        if machine is not None and machine["metadata"].get("deletionTimestamp"):
            return self._delete(ref, machine)
        return super().reconcile(ref)

    def _delete(self, ref, machine):
        node = ((machine.get("status") or {}).get("nodeRef") or {}).get("name")
        if node:
            delete_quietly(self.cluster, self.cluster.resource_for_key(NODES), "", node)

        def release(obj):
            obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or () if f != MACHINE_FINALIZER]
        self.cluster.mutate(self.resource, ref.namespace, ref.name, release)
        return None

    def sync(self, ref, machine):
        cluster = self.cluster
        now = self.clock.timestamp()
        status = machine.get("status") or {}
        phase = status.get("phase")
        if phase in ("Failed",):
            return None
        provider = ((machine.get("spec") or {}).get("providerSpec") or {}).get("value") or {}
        instance_type = provider.get("instanceType", "")
        failure = annotation(machine, "fail") or self.failure(machine)
        if not failure and instance_type not in INSTANCE_TYPES:
            failure = "error launching instance: The requested instance type %s is not supported (kubesim knows: %s)" % (
                instance_type, ", ".join(sorted(INSTANCE_TYPES)))
        if failure:
            self.write_status(ref, lambda s, o: s.update(phase="Failed", errorReason="InvalidConfiguration",
                                                         errorMessage=failure, lastUpdated=now,
                                                         conditions=_machine_conditions(s, now, exists=False)))
            return None
        if phase == "Running" and status.get("nodeRef"):
            return None
        provision = float_annotation(machine, "provision-s", 30.0)
        ready_after = float_annotation(machine, "node-ready-s", 20.0)
        age = since(machine["metadata"].get("creationTimestamp"), self.clock)
        node_name = (status.get("nodeRef") or {}).get("name")
        if not phase:
            self.write_status(ref, lambda s, o: s.update(phase="Provisioning", lastUpdated=now,
                                                         conditions=_machine_conditions(s, now, exists=False)))
            return provision
        if age < provision:
            return provision - age
        if phase == "Provisioning":
            def provisioned(s, o):
                s.update(phase="Provisioned", lastUpdated=now, conditions=_machine_conditions(s, now, exists=True),
                         providerStatus={"instanceState": "running",
                                                                               "instanceId": "i-" + o["metadata"]["uid"][:17]},
                         addresses=[{"type": "InternalIP", "address": "10.0.%d.%d" % (age % 250, len(ref.name))},
                                    {"type": "InternalDNS", "address": ref.name}])
            self.write_status(ref, provisioned)
            cluster.mutate(self.resource, ref.namespace, ref.name,
                           lambda o: o["spec"].update(providerID="aws:///us-east-1a/i-%s" % o["metadata"]["uid"][:17]))
        if not node_name:
            self._register_node(machine, instance_type)
            self.write_status(ref, lambda s, o: s.update(nodeRef={"kind": "Node", "name": ref.name}, lastUpdated=now))
            return ready_after
        node = cluster.store.get(NODES, "", node_name)
        if node is None:
            return None
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (node.get("status") or {}).get("conditions") or ())
        if not ready:
            left = provision + ready_after - age
            if left > 0:
                return left

            def mark_ready(obj):
                obj.setdefault("status", {})["conditions"] = [{
                    "type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                    "lastTransitionTime": now, "lastHeartbeatTime": now}]
            cluster.mutate(cluster.resource_for_key(NODES), "", node_name, mark_ready, subresource="status")
        if phase != "Running":
            self.write_status(ref, lambda s, o: s.update(phase="Running", lastUpdated=now))
        return None

    def _register_node(self, machine, instance_type):
        spec = machine.get("spec") or {}
        labels = dict((spec.get("metadata") or {}).get("labels") or {})
        labels["node.openshift.io/os_id"] = "rhcos"
        body = node_body(machine["metadata"]["name"], ["worker"], instance_type, labels, taints=spec.get("taints") or None,
                         ready=False, annotations={"machine.openshift.io/machine": "%s/%s" % (
                             machine["metadata"]["namespace"], machine["metadata"]["name"])})
        try:
            self.cluster.create(self.cluster.resource_for_key(NODES), body, keep_status=True)
        except ApiError as exc:
            if exc.code != 409:
                raise


# -- builds and image streams ---------------------------------------------------------------
def instantiate_build_config(cluster, resource, namespace, name, body):
    """``POST buildconfigs/<name>/instantiate`` (a BuildRequest): start the next build; returns ``(201, Build)``."""
    config = cluster.store.get(BUILD_CONFIGS, namespace, name)
    if config is None:
        raise ApiError.not_found(resource, name)
    return 201, start_build(cluster, config, "Manually triggered")


def start_build(cluster, config, cause):
    meta = config["metadata"]
    version = int((config.get("status") or {}).get("lastVersion") or 0) + 1
    cluster.mutate(cluster.resource_for_key(BUILD_CONFIGS), meta["namespace"], meta["name"],
                   lambda obj: obj.setdefault("status", {}).update(lastVersion=version), subresource="status")
    spec = dict((k, v) for k, v in (config.get("spec") or {}).items() if k not in ("triggers", "runPolicy",
                                                                                  "successfulBuildsHistoryLimit",
                                                                                  "failedBuildsHistoryLimit"))
    spec["triggeredBy"] = [{"message": cause}]
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith(PREFIX)}
    annotations.update({"openshift.io/build-config.name": meta["name"], "openshift.io/build.number": str(version)})
    build = cluster.create(cluster.resource_for_key(BUILDS), {
        "apiVersion": "build.openshift.io/v1", "kind": "Build",
        "metadata": {"name": "%s-%d" % (meta["name"], version), "namespace": meta["namespace"],
                     "labels": {"buildconfig": meta["name"], "openshift.io/build-config.name": meta["name"]},
                     "annotations": annotations, "ownerReferences": [owner_reference(config)]},
        "spec": spec}, meta["namespace"])
    return build


class BuildConfigController(OperatorReconciler):
    name = "buildconfig"
    key = BUILD_CONFIGS

    def sync(self, ref, config):
        triggers = (config.get("spec") or {}).get("triggers") or ()
        if any(t.get("type") == "ConfigChange" for t in triggers) and not (config.get("status") or {}).get("lastVersion"):
            start_build(self.cluster, config, "Build configuration change")
        return None


class BuildController(OperatorReconciler):
    name = "build"
    key = BUILDS
    default_delay = 0.0
    extra_watches = (PODS,)

    def related(self, event):
        build = (event.obj["metadata"].get("annotations") or {}).get("openshift.io/build.name")
        return [Ref(BUILDS, event.obj["metadata"]["namespace"], build)] if build else []

    def sync(self, ref, build):
        cluster = self.cluster
        now = self.clock.timestamp()
        status = build.get("status") or {}
        phase = status.get("phase")
        if phase in ("Complete", "Failed", "Error", "Cancelled"):
            return None
        output = (((build.get("spec") or {}).get("output") or {}).get("to")) or {}
        reference = "%s/%s/%s" % (REGISTRY, ref.namespace, output.get("name") or ref.name) \
            if output.get("kind") == "ImageStreamTag" else output.get("name", "")
        pod_name = "%s-build" % ref.name
        pod = cluster.store.get(PODS, ref.namespace, pod_name)
        failure = annotation(build, "fail") or self.failure(build)
        uri = (((build.get("spec") or {}).get("source") or {}).get("git") or {}).get("uri", "")
        # a repository that does not exist (its path names does-not-exist): the clone fails
        unreachable_source = bool(MISSING_SOURCE.search(uri))
        if not phase:
            # a build is New until its pod is created (openshift-controller-manager build_controller.go)
            self.write_status(ref, lambda s, o: s.update(phase="New", conditions=_build_conditions(s, "New", now)))
            return 0.5
        if pod is None:
            annotations = {k: v for k, v in (build["metadata"].get("annotations") or {}).items() if k.startswith(PREFIX)}
            annotations.pop(FAIL, None)
            log = ["Cloning \"%s\" ..." % ((((build.get("spec") or {}).get("source") or {}).get("git") or {}).get("uri", "")),
                   "STEP 1/3: FROM registry.access.redhat.com/ubi9/ubi", "STEP 2/3: COPY . /src", "STEP 3/3: RUN make"]
            if unreachable_source:
                annotations.update({PREFIX + "outcome": "Failed", PREFIX + "log": "\n".join(log[:1] + [
                    "error: failed to fetch requested repository \"%s\" with provided credentials" % uri])})
            elif failure:
                annotations.update({PREFIX + "outcome": "Failed", PREFIX + "log": "\n".join(log + ["error: " + failure])})
            else:
                annotations[PREFIX + "log"] = "\n".join(log + ["Pushing image %s ..." % reference,
                                                               "Successfully pushed %s" % reference, "Push successful"])
            annotations.setdefault(PREFIX + "duration-s", "10")
            annotations["openshift.io/build.name"] = ref.name
            create_or_skip(cluster, cluster.resource_for_key(PODS), {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": pod_name, "namespace": ref.namespace, "annotations": annotations,
                             "labels": {"openshift.io/build.name": ref.name}, "ownerReferences": [owner_reference(build)]},
                "spec": {"restartPolicy": "Never", "serviceAccountName": "builder",
                         "containers": [{"name": "docker-build", "image": "quay.io/openshift/origin-docker-builder:4.19"}]}},
                ref.namespace)
            self.write_status(ref, lambda s, o: s.update(phase="Pending", conditions=_build_conditions(s, "Pending", now),
                                                         config={"kind": "BuildConfig", "namespace": ref.namespace,
                                                                 "name": (o["metadata"].get("labels") or {}).get(
                                                                     "buildconfig", "")}))
            return None
        pod_status = pod_phase(pod)
        if pod_status == "Running" and phase != "Running":
            self.write_status(ref, lambda s, o: s.update(phase="Running", startTimestamp=now,
                                                         conditions=_build_conditions(s, "Running", now)))
        elif pod_status == "Succeeded":
            digest = "sha256:" + hashlib.sha256((ref.namespace + ref.name).encode()).hexdigest()

            def complete(s, o):
                started = s.get("startTimestamp") or now
                s.update(phase="Complete", startTimestamp=started, completionTimestamp=now,
                         duration=int(since(started, self.clock) * 1e9), outputDockerImageReference=reference,
                         output={"to": {"imageDigest": digest}}, conditions=_build_conditions(s, "Complete", now))
            self.write_status(ref, complete)
            if output.get("kind") == "ImageStreamTag":
                tag_image(cluster, ref.namespace, output["name"], "%s@%s" % (reference.split(":")[0], digest), digest)
        elif pod_status == "Failed":
            # the builder reports why through builds/details (pkg/build/builder/cmd/builder.go): the source
            # clone failing is FetchSourceFailed, anything else GenericBuildFailed
            reason, message = ("FetchSourceFailed", "Failed to fetch the input source.") if unreachable_source else \
                ("GenericBuildFailed", "Generic Build failure - check logs for details.")
            self.write_status(ref, lambda s, o: s.update(
                phase="Failed", reason=reason, message=message, completionTimestamp=now,
                logSnippet=(failure or "")[:1000],
                conditions=_build_conditions(s, "Failed", now, reason, message)))
        return None


def _build_conditions(status, phase, now, reason=None, message=None):
    """One condition per phase the build reached, only the current one True (openshift-apiserver computes
    them from the phase: pkg/build/apiserver/registry/build/strategy.go)."""
    conditions = [dict(c, status="False") for c in status.get("conditions") or () if c.get("type") != phase]
    conditions.append({"type": phase, "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
                       **({"reason": reason} if reason else {}), **({"message": message} if message else {})})
    return conditions


def tag_image(cluster, namespace, stream_tag, reference, digest):
    name, _, tag = stream_tag.partition(":")
    tag = tag or "latest"
    if cluster.store.get(IMAGE_STREAMS, namespace, name) is None:
        create_or_skip(cluster, cluster.resource_for_key(IMAGE_STREAMS), {
            "apiVersion": "image.openshift.io/v1", "kind": "ImageStream",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"lookupPolicy": {"local": False}}}, namespace)
    now = cluster.clock.timestamp()

    def change(obj):
        status = obj.setdefault("status", {})
        status["dockerImageRepository"] = "%s/%s/%s" % (REGISTRY, namespace, name)
        tags = [t for t in status.get("tags") or () if t.get("tag") != tag]
        previous = next((t for t in status.get("tags") or () if t.get("tag") == tag), {"items": []})
        generation = obj["metadata"].get("generation", 1)
        tags.append({"tag": tag, "items": [{"created": now, "dockerImageReference": reference, "image": digest,
                                            "generation": generation}] + list(previous.get("items") or ())})
        status["tags"] = sorted(tags, key=lambda t: t["tag"])
    cluster.mutate(cluster.resource_for_key(IMAGE_STREAMS), namespace, name, change, subresource="status")


class ImageStreamController(OperatorReconciler):
    name = "imagestream"
    key = IMAGE_STREAMS
    default_delay = 0.0

    def sync(self, ref, stream):
        for entry in (stream.get("spec") or {}).get("tags") or ():
            source = entry.get("from") or {}
            known = {t.get("tag") for t in (stream.get("status") or {}).get("tags") or ()}
            if source.get("kind") == "DockerImage" and entry.get("name") not in known:
                digest = "sha256:" + hashlib.sha256(source.get("name", "").encode()).hexdigest()
                tag_image(self.cluster, ref.namespace, "%s:%s" % (ref.name, entry["name"]), source["name"], digest)

        def change(status, obj):
            status["dockerImageRepository"] = "%s/%s/%s" % (REGISTRY, ref.namespace, ref.name)
            status["publicDockerImageRepository"] = "default-route-openshift-image-registry.%s/%s/%s" % (
                _apps_domain(self.cluster), ref.namespace, ref.name)
        self.write_status(ref, change)
        return None


class RouteController(OperatorReconciler):
    name = "route"
    key = ROUTES
    default_delay = 0.0

    def on_event(self, event):
        """The route itself and, when it goes or changes, the routes that share its host (one may be admitted)."""
        refs = super().on_event(event)
        host = (event.obj.get("spec") or {}).get("host")
        if event.type == "DELETED" or event.old is not None:
            refs = list(refs) + [Ref(ROUTES, o["metadata"]["namespace"], o["metadata"]["name"])
                                 for o in self.cluster.store.list(ROUTES)[0]
                                 if host and (o.get("spec") or {}).get("host") == host
                                 and o["metadata"]["uid"] != event.obj["metadata"]["uid"]]
        return refs

    def sync(self, ref, route):
        now = self.clock.timestamp()
        domain = _apps_domain(self.cluster)
        host = (route.get("spec") or {}).get("host") or "%s-%s.%s" % (ref.name, ref.namespace, domain)
        owner = self._host_owner(route, host)
        if owner is None:
            admitted = ("True", None, None)
        else:
            # the oldest route holds a host; a newer one of another namespace is rejected
            # (pkg/router/controller/unique_host.go, status.go RecordRouteRejection)
            admitted = ("False", "HostAlreadyClaimed", "route %s already exposes %s and is older" % (
                owner["metadata"]["name"], host))

        def change(status, obj):
            previous = (status.get("ingress") or [{}])[0]
            status["ingress"] = [{"host": host, "routerName": "default", "routerCanonicalHostname": "router-default." + domain,
                                  "wildcardPolicy": (obj.get("spec") or {}).get("wildcardPolicy") or "None",
                                  "conditions": set_condition(previous.get("conditions"), "Admitted", admitted[0],
                                                              admitted[1], admitted[2], now)}]
        self.write_status(ref, change)
        return None

    def _host_owner(self, route, host):
        """The older route of another namespace that claims ``host``, or None."""
        mine = (route["metadata"].get("creationTimestamp") or "", route["metadata"]["uid"])
        for other in self.cluster.store.list(ROUTES)[0]:
            if other["metadata"].get("namespace") == route["metadata"].get("namespace") or \
                    (other.get("spec") or {}).get("host") != host or other["metadata"].get("deletionTimestamp"):
                continue
            if (other["metadata"].get("creationTimestamp") or "", other["metadata"]["uid"]) < mine:
                return other
        return None


# -- machine config pools -------------------------------------------------------------------
KUBELET_CONFIGS = ("machineconfiguration.openshift.io", "kubeletconfigs")
MACHINE_CONFIG_POOLS = ("machineconfiguration.openshift.io", "machineconfigpools")
DEFAULT_MAX_PODS = 250


def _selects(selector, labels):
    return matches_labels(label_selector_from_dict(selector or {}), labels)


class MachineConfigPoolController(OperatorReconciler):
    """The machine config operator, for KubeletConfigs: pools roll out a new rendered configuration."""

    name = "machineconfigpool"
    key = MACHINE_CONFIG_POOLS
    default_delay = 0.0
    extra_watches = (KUBELET_CONFIGS,)

    def _configs(self, pool):
        labels = pool["metadata"].get("labels") or {}
        return sorted((kc for kc in self.cluster.store.list(KUBELET_CONFIGS)[0]
                       if not kc["metadata"].get("deletionTimestamp")
                       and _selects((kc.get("spec") or {}).get("machineConfigPoolSelector"), labels)),
                      key=lambda kc: kc["metadata"]["name"])

    def _nodes(self, pool):
        selector = (pool.get("spec") or {}).get("nodeSelector")
        return [node for node in self.cluster.store.list(NODES)[0]
                if _selects(selector, node["metadata"].get("labels") or {})]

    def sync(self, ref, pool):
        now = self.clock.timestamp()
        all_configs = self._configs(pool)
        # a KubeletConfig the controller refuses (a validation error) renders nothing: it never reaches the pool
        refused = {kc["metadata"]["name"]: self.fail_message(kc) for kc in all_configs if self.fail_message(kc)}
        configs = [kc for kc in all_configs if kc["metadata"]["name"] not in refused]
        digest = hashlib.sha256(repr([(kc["metadata"]["name"], kc.get("spec")) for kc in configs]).encode()).hexdigest()[:32]
        rendered = "rendered-%s-%s" % (ref.name, digest)
        status = pool.get("status") or {}
        nodes = self._nodes(pool)
        current = (status.get("configuration") or {}).get("name")
        degraded = next((annotation(kc, "degrade-node") for kc in configs if annotation(kc, "degrade-node")), None)
        updating = next((c for c in status.get("conditions") or () if c.get("type") == "Updating"), {})
        started = updating.get("lastTransitionTime") if updating.get("status") == "True" else None
        duration = max((float_annotation(kc, "update-s", 120.0) for kc in configs), default=0.0)
        if current is None:
            done, started = True, None        # a pool's first configuration is there from the start
        elif current == rendered:
            done = True
        else:
            done = not degraded and started is not None and since(started, self.clock) >= duration
        max_pods = DEFAULT_MAX_PODS
        for kc in configs:
            max_pods = int(((kc.get("spec") or {}).get("kubeletConfig") or {}).get("maxPods") or max_pods)

        def change(status, obj):
            # pkg/controller/node/status.go calculateStatus: the pool's conditions and counts
            conditions = status.get("conditions") or []
            count = len(nodes)
            status.update(observedGeneration=obj["metadata"].get("generation", 1), machineCount=count,
                          readyMachineCount=count, unavailableMachineCount=0,
                          degradedMachineCount=1 if degraded and nodes else 0)
            node_message = 'Node %s is reporting: "%s"' % (nodes[0]["metadata"]["name"], degraded) if degraded and nodes \
                else ""
            conditions = set_condition(conditions, "RenderDegraded", "False", "", "", now)
            conditions = set_condition(conditions, "NodeDegraded", "True" if node_message else "False",
                                       "1 nodes are reporting degraded status on sync" if node_message else "",
                                       node_message, now)
            conditions = set_condition(conditions, "Degraded", "True" if node_message else "False", "", node_message, now)
            if done:
                status["configuration"] = {"name": rendered}
                status["updatedMachineCount"] = count
                conditions = set_condition(conditions, "Updated", "True", "",
                                           "All nodes are updated with MachineConfig %s" % rendered, now)
                conditions = set_condition(conditions, "Updating", "False", "", "", now)
            else:
                status["updatedMachineCount"] = 0
                conditions = set_condition(conditions, "Updated", "False", "", "", now)
                conditions = set_condition(conditions, "Updating", "True", "",
                                           "All nodes are updating to MachineConfig %s" % rendered, now)
            status["conditions"] = conditions
        self.write_status(ref, change)

        for kc in all_configs:
            problem = refused.get(kc["metadata"]["name"])

            def report(status, obj, problem=problem):
                # kubelet-config helpers.go: Accepted (True "Success", or False "Error: ..."), then the
                # legacy Success or Failure condition (status True either way), no reason
                message = "Error: %s" % problem if problem else "Success"
                conditions = set_condition(status.get("conditions"), "Accepted", "False" if problem else "True",
                                           None, message, now)
                conditions = [c for c in conditions if c.get("type") not in ("Success", "Failure")]
                conditions = set_condition(conditions, "Failure" if problem else "Success", "True", None, message, now)
                status.update(observedGeneration=obj["metadata"].get("generation", 1), conditions=conditions)
            self.write_status(Ref(KUBELET_CONFIGS, "", kc["metadata"]["name"]), report, key=KUBELET_CONFIGS)
        if not done:
            if degraded:
                return 30.0   # the machine-config daemon retries
            return max(0.5, duration - since(started, self.clock)) if started else 0.5
        for node in nodes if configs else ():
            pods = str(max_pods)
            if ((node.get("status") or {}).get("allocatable") or {}).get("pods") != pods:
                self.cluster.mutate(self.cluster.resource_for_key(NODES), "", node["metadata"]["name"],
                                    lambda obj, pods=pods: [obj.setdefault("status", {}).setdefault(key, {}).update(pods=pods)
                                                           for key in ("capacity", "allocatable")],
                                    subresource="status")
        return None


# -- OAuth and monitoring -------------------------------------------------------------------
class OAuthController(OperatorReconciler):
    name = "oauth"
    key = OAUTHS
    default_delay = 0.0
    extra_watches = (DEPLOYMENTS,)

    def related(self, event):
        meta = event.obj["metadata"]
        if meta.get("namespace") == "openshift-authentication" and meta["name"] == "oauth-openshift":
            return self.all_refs()
        return []

    def sync(self, ref, oauth):
        cluster = self.cluster
        now = self.clock.timestamp()
        digest = hashlib.sha256(repr(oauth.get("spec")).encode()).hexdigest()[:16]
        deployment = cluster.store.get(DEPLOYMENTS, "openshift-authentication", "oauth-openshift")
        if deployment is None:
            return None
        annotations = ((deployment["spec"].get("template") or {}).get("metadata") or {}).get("annotations") or {}
        if annotations.get("operator.openshift.io/spec-hash") != digest:
            cluster.mutate(cluster.resource_for_key(DEPLOYMENTS), "openshift-authentication", "oauth-openshift",
                           lambda obj: obj["spec"]["template"].setdefault("metadata", {}).setdefault(
                               "annotations", {}).update({"operator.openshift.io/spec-hash": digest}))
            deployment = cluster.store.get(DEPLOYMENTS, "openshift-authentication", "oauth-openshift")
        status = deployment.get("status") or {}
        rolled = status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 1) and \
            status.get("updatedReplicas", 0) == deployment["spec"].get("replicas", 1) and \
            status.get("replicas", 0) == deployment["spec"].get("replicas", 1) and condition_true(deployment, "Available")
        if cluster.store.get(CLUSTER_OPERATORS, "", "authentication") is not None:
            def change(obj):
                conditions = (obj.get("status") or {}).get("conditions") or []
                # cluster-authentication-operator's workload controller (library-go status/condition.go):
                # NewGeneration until the Deployment observed the change, PodsUpdating while they roll
                wanted = deployment["spec"].get("replicas", 1)
                observed, generation = status.get("observedGeneration", 0), deployment["metadata"].get("generation", 1)
                where = "OAuthServerDeploymentProgressing: deployment/oauth-openshift.openshift-authentication: "
                if rolled:
                    reason, message = "AsExpected", None
                elif observed < generation:
                    reason = "OAuthServerDeployment_NewGeneration"
                    message = where + "observed generation is %d, desired generation is %d." % (observed, generation)
                else:
                    reason = "OAuthServerDeployment_PodsUpdating"
                    message = where + "%d/%d pods have been updated to the latest generation and %d/%d pods are " \
                        "available" % (status.get("updatedReplicas", 0), wanted, status.get("availableReplicas", 0), wanted)
                conditions = set_condition(conditions, "Progressing", "False" if rolled else "True", reason, message, now)
                obj.setdefault("status", {})["conditions"] = conditions
            cluster.mutate(cluster.resource_for_key(CLUSTER_OPERATORS), "", "authentication", change, subresource="status")
        return None


class UserWorkloadMonitoringController(Controller):
    """``cluster-monitoring-config``'s ``enableUserWorkload`` (the cluster monitoring operator,
    openshift/cluster-monitoring-operator @ f581865b41267ff23bbf1cb30fbdd2e02cecd42f pkg/tasks/prometheus_user_workload.go):
    the Prometheus operator Deployment, the Prometheus ``user-workload`` whose StatefulSet
    ``prometheus-user-workload`` the Prometheus operator runs, and Thanos Ruler. The Prometheus resource's
    status as prometheus-operator writes it (pkg/prometheus/server/operator.go): ``Available`` False
    (``NoPodReady``), ``Degraded`` (``SomePodsNotReady``) or True, ``Reconciled`` True. The ``monitoring``
    ClusterOperator is Available ``RollOutDone``; while the user workload Prometheus is not available for
    5 simulated minutes it reports the task failed: ``Available`` False / ``Degraded`` True
    ``UpdatingUserWorkloadPrometheusFailed``, ``Progressing`` ``RollOutInProgress``, until it is."""

    name = "user-workload-monitoring"
    watches = (CONFIGMAPS, STATEFULSETS)
    namespace = "openshift-user-workload-monitoring"

    def on_event(self, event):
        meta = event.obj["metadata"]
        if event.key == STATEFULSETS:
            if meta.get("namespace") == self.namespace and meta["name"] == "prometheus-user-workload":
                return [Ref(CONFIGMAPS, "openshift-monitoring", "cluster-monitoring-config")]
            return []
        if meta.get("namespace") == "openshift-monitoring" and meta["name"] == "cluster-monitoring-config":
            return [Ref(CONFIGMAPS, "openshift-monitoring", "cluster-monitoring-config")]
        return []

    def _operator(self, failed):
        """The ``monitoring`` ClusterOperator: the user workload Prometheus task failed (its rollout not done in
        time: StatusReporter.ReportState of the run's task errors) or the roll-out done (SetRollOutDone)."""
        now = self.clock.timestamp()
        if failed:
            reason, message = "UpdatingUserWorkloadPrometheusFailed", "UpdatingUserWorkloadPrometheus: " + failed
            wanted = (("Available", "False", reason, message), ("Degraded", "True", reason, message),
                      ("Progressing", "True", "RollOutInProgress", "Rolling out the stack."),
                      ("Upgradeable", "True", None, None))
        else:
            wanted = (("Available", "True", "RollOutDone", "Successfully rolled out the stack."),
                      ("Degraded", "False", None, None), ("Progressing", "False", None, None),
                      ("Upgradeable", "True", None, None))

        def change(obj):
            current = obj.setdefault("status", {})
            before = list(current.get("conditions") or ())
            conditions = before
            for ctype, value, reason, message in wanted:
                conditions = set_condition(conditions, ctype, value, reason, message, now)
            current["conditions"] = conditions
            return conditions != before
        self.cluster.mutate(self.cluster.resource_for_key(CLUSTER_OPERATORS), "", "monitoring", change,
                            subresource="status")

    def _prometheus(self, enabled):
        """The Prometheus ``user-workload``'s status; how long it has not been available (simulated s), or None."""
        cluster = self.cluster
        key = ("monitoring.coreos.com", "prometheuses")
        if cluster.registry.for_storage_key(*key) is None:
            return None
        resource = cluster.resource_for_key(key)
        if not enabled:
            delete_quietly(cluster, resource, self.namespace, "user-workload")
            return None
        create_or_skip(cluster, resource, {
            "apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus",
            "metadata": {"name": "user-workload", "namespace": self.namespace},
            "spec": {"replicas": 2}}, self.namespace)
        prometheus = cluster.store.get(key, self.namespace, "user-workload")
        sts = cluster.store.get(STATEFULSETS, self.namespace, "prometheus-user-workload") or {}
        status = sts.get("status") or {}
        wanted, ready = 2, int(status.get("readyReplicas") or 0)
        generation = prometheus["metadata"].get("generation", 1)
        now = self.clock.timestamp()
        if not sts:
            available = ("False", "StatefulSetNotFound", "statefulset prometheus-user-workload not found")
        elif ready == 0:
            available = ("False", "NoPodReady", "shard 0: pod prometheus-user-workload-0: containers with unready "
                                                "status: [prometheus]")
        elif ready < wanted:
            available = ("Degraded", "SomePodsNotReady", "shard 0: %d of %d pods are not ready" % (wanted - ready, wanted))
        else:
            available = ("True", "", "")

        def change(obj):
            current = obj.setdefault("status", {})
            before = dict(current)
            conditions = set_condition(current.get("conditions"), "Available", available[0], available[1], available[2],
                                       now, observedGeneration=generation)
            conditions = set_condition(conditions, "Reconciled", "True", "", "", now, observedGeneration=generation)
            current.update(conditions=conditions, replicas=int(status.get("replicas") or 0),
                           updatedReplicas=int(status.get("updatedReplicas") or 0), availableReplicas=ready,
                           unavailableReplicas=max(0, wanted - ready), paused=False, shards=1)
            return current != before
        written = cluster.mutate(resource, self.namespace, "user-workload", change, subresource="status")
        if available[0] == "True":
            return None
        conditions = (written or {}).get("status", {}).get("conditions") or ()
        since_when = next((c.get("lastTransitionTime") for c in conditions if c.get("type") == "Available"), None)
        return since(since_when, self.clock), available[1]

    def reconcile(self, ref):
        cluster = self.cluster
        if cluster.store.get(("", "namespaces"), "", self.namespace) is None:
            return None
        configmap = cluster.store.get(CONFIGMAPS, ref.namespace, ref.name)
        try:
            config = yaml.safe_load(((configmap or {}).get("data") or {}).get("config.yaml") or "") or {}
        except yaml.YAMLError:
            config = {}
        enabled = isinstance(config, dict) and config.get("enableUserWorkload") is True
        workloads = [("Deployment", DEPLOYMENTS, "prometheus-operator", 1),
                     ("StatefulSet", STATEFULSETS, "prometheus-user-workload", 2),
                     ("StatefulSet", STATEFULSETS, "thanos-ruler-user-workload", 2)]
        for kind, key, name, replicas in workloads:
            resource = cluster.resource_for_key(key)
            if not enabled:
                delete_quietly(cluster, resource, self.namespace, name)
                continue
            labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "openshift-monitoring"}
            spec = {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                    "template": {"metadata": {"labels": dict(labels)}, "spec": {"containers": [{
                        "name": name.split("-")[0], "image": "quay.io/openshift/origin-%s:4.19" % name.split("-")[0],
                        "resources": {"requests": {"cpu": "1m", "memory": "40Mi"}}}]}}}
            if kind == "StatefulSet":
                spec["serviceName"] = name
            create_or_skip(cluster, resource, {"apiVersion": "apps/v1", "kind": kind,
                                               "metadata": {"name": name, "namespace": self.namespace,
                                                            "labels": dict(labels)}, "spec": spec}, self.namespace)
        waiting = self._prometheus(enabled)
        operator = cluster.store.get(CLUSTER_OPERATORS, "", "monitoring")
        if waiting is None:
            if operator is not None and not condition_true(operator, "Available"):
                self._operator(None)
            return None
        elapsed, why = waiting
        if elapsed >= UWM_ROLLOUT_TIMEOUT_S:
            if operator is not None:
                self._operator("waiting for Prometheus object changes failed: %s" % why)
            return 30.0
        return max(1.0, UWM_ROLLOUT_TIMEOUT_S - elapsed)
