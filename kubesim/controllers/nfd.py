"""NodeFeatureDiscovery (nfd.openshift.io/v1): the OpenShift NFD operator and its operands.

Upstream: openshift/cluster-nfd-operator @ 0e25cc101cfcb83719d64deef8184b320100c3c6 -
internal/controllers/nodefeaturediscovery_reconciler.go (reconcile), internal/status/status.go
(conditions); the labels are node-feature-discovery's (source/pci/pci.go: ``deviceClassWhitelist``
``["03", "0b40", "12"]``, ``deviceLabelFields`` ``["class", "vendor"]`` when the configuration has no
``pci`` section).

- The first reconcile only adds the ``nfd-finalizer`` finalizer (no status); the next creates
  ``nfd-master`` (Deployment), ``nfd-worker`` (DaemonSet on the schedulable worker nodes, with its
  ConfigMap ``nfd-worker`` holding ``spec.workerConfig.configData``) and ``nfd-gc`` (Deployment).
- Status, recomputed on every change of them, always five conditions - Available, Upgradeable,
  Progressing, Degraded and ``OperandImagePinned`` - decided by the first component not available,
  in upstream's order: the worker DaemonSet with 0 desired pods -> ``Degraded`` /
  ``NFDWorkerDaemonSetDegraded`` "number of desired nodes for scheduling is 0", 0 scheduled ->
  "0 nodes have pods scheduled", not all ready -> ``Progressing`` / ``NFDWorkerDaemonSetProgressing``
  "ds is progressing"; nfd-master then nfd-gc with no available pod -> ``Degraded`` /
  ``NFDMasterDeploymentDegraded`` / ``NFDGCDegraded`` "number of available pods is 0"; else
  ``Available`` / ``AllInstanceComponentsAreDeployedSuccessfuly`` (upstream's spelling). So a fresh
  install is Degraded first: transient ``nfd-degraded-at-start`` (``--no-transient`` skips straight
  to the worker pods' state). Degraded is never final.
- Once a node's worker pod is Ready and nfd-master is available, after the CR's ``delay-s``
  (default 5 s), the node gets NFD's labels: ``feature.node.kubernetes.io/pci-<fields>.present`` for
  its PCI devices (``kubesim.perfscale.io/pci-devices``) whose class is whitelisted, named by
  ``deviceLabelFields`` joined with ``_`` (``pci-10de.present`` with the OpenShift sample's
  ``["vendor"]``, ``pci-0302_10de.present`` with NFD's default), plus kernel, CPU and OS labels.
- ``kubesim.perfscale.io/fail`` (or a ``nodefeaturediscovery`` fault): the worker never gets a pod
  scheduled (``Degraded``, the message given), and no label - never final, as upstream.
"""

import json

import yaml

from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import (create_or_skip, owner_reference, pod_ready, set_condition)
from kubesim.profiles import PCI_DEVICES

NFD = ("nfd.openshift.io", "nodefeaturediscoveries")
NODES = ("", "nodes")
DAEMONSETS = ("apps", "daemonsets")
DEPLOYMENTS = ("apps", "deployments")
CONFIGMAPS = ("", "configmaps")
LABEL_PREFIX = "feature.node.kubernetes.io/"
FINALIZER = "nfd-finalizer"
# node-feature-discovery's defaults (source/pci/pci.go newDefaultConfig)
DEFAULT_CLASSES = ("03", "0b40", "12")
DEFAULT_FIELDS = ("class", "vendor")
NOT_MET = "ConditionNotBeingMetCurrently"


def node_devices(node):
    try:
        return json.loads((node["metadata"].get("annotations") or {}).get(PCI_DEVICES) or "[]")
    except ValueError:
        return []


def feature_labels(node, classes=DEFAULT_CLASSES, fields=DEFAULT_FIELDS):
    """The labels NFD publishes for ``node``."""
    labels = {LABEL_PREFIX + "kernel-version.full": "6.1.0", LABEL_PREFIX + "kernel-version.major": "6",
              LABEL_PREFIX + "kernel-version.minor": "1", LABEL_PREFIX + "cpu-cpuid.AVX512F": "true",
              LABEL_PREFIX + "cpu-model.vendor_id": "Intel",
              LABEL_PREFIX + "system-os_release.ID": (node["metadata"].get("labels") or {}).get(
                  "node.openshift.io/os_id", "kubesim"),
              LABEL_PREFIX + "system-os_release.VERSION_ID": "9.6"}
    for device in node_devices(node):
        pci_class = str(device.get("class", ""))
        if not any(pci_class.startswith(c) for c in classes):
            continue
        values = {"class": pci_class, "vendor": device.get("vendor", ""), "device": device.get("device", "")}
        name = "_".join(values[f] for f in fields if f in values)
        labels[LABEL_PREFIX + "pci-%s.present" % name] = "true"
    return labels


def label_node_features(cluster, node_name, classes=DEFAULT_CLASSES, fields=DEFAULT_FIELDS):
    """Publish NFD's labels on a node (idempotent); returns True when the node exists."""
    node = cluster.store.get(NODES, "", node_name)
    if node is None:
        return False
    wanted = feature_labels(node, classes, fields)

    def change(obj):
        labels = obj["metadata"].setdefault("labels", {})
        stale = [k for k in labels if k.startswith(LABEL_PREFIX) and k not in wanted]
        if all(labels.get(k) == v for k, v in wanted.items()) and not stale:
            return False
        for key in stale:
            del labels[key]
        labels.update(wanted)
        obj["metadata"].setdefault("annotations", {})["nfd.node.kubernetes.io/feature-labels"] = ",".join(
            sorted(k[len(LABEL_PREFIX):] for k in wanted))
        return True
    cluster.mutate(cluster.resource_for_key(NODES), "", node_name, change)
    return True


def _worker_config(nfd):
    """``(classes, fields)`` of the worker configuration (NFD's defaults where it says nothing)."""
    text = ((nfd.get("spec") or {}).get("workerConfig") or {}).get("configData") or ""
    try:
        config = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        config = {}
    pci = ((config.get("sources") or {}).get("pci") or {}) if isinstance(config, dict) else {}
    return tuple(pci.get("deviceClassWhitelist") or DEFAULT_CLASSES), tuple(pci.get("deviceLabelFields") or DEFAULT_FIELDS)


def conditions_for(state, reason=None, message=None):
    """The four conditions of one of upstream's sets (status.go getAvailableConditions & co)."""
    if state == "available":
        return [("Available", "True", "AllInstanceComponentsAreDeployedSuccessfuly", ""),
                ("Upgradeable", "True", "CanBeUpgraded", ""),
                ("Progressing", "False", NOT_MET, ""), ("Degraded", "False", NOT_MET, "")]
    own = {"degraded": "Degraded", "progressing": "Progressing"}[state]
    return [(ctype, "True" if ctype == own else "False", reason if ctype == own else NOT_MET,
             message if ctype == own else "") for ctype in ("Available", "Upgradeable", "Progressing", "Degraded")]


class NodeFeatureDiscoveryController(OperatorReconciler):
    name = "nodefeaturediscovery"
    key = NFD
    default_delay = 5.0
    extra_watches = (NODES, DAEMONSETS, DEPLOYMENTS)
    transients = {"nfd-degraded-at-start": "a fresh NodeFeatureDiscovery is Degraded (0 desired worker pods) before "
                                           "its worker DaemonSet is scheduled"}

    def related(self, event):
        if event.key == NODES:
            if event.type == "MODIFIED" and (event.old or {}).get("metadata", {}).get("annotations") == \
                    event.obj["metadata"].get("annotations"):
                return []
            return self.all_refs()
        if event.obj["metadata"]["name"] in ("nfd-worker", "nfd-master", "nfd-gc"):
            return self.all_refs(event.obj["metadata"]["namespace"])
        return []

    def _operands(self, nfd, failure):
        cluster = self.cluster
        namespace = nfd["metadata"]["namespace"]
        image = ((nfd.get("spec") or {}).get("operand") or {}).get("image") or \
            "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:latest"
        create_or_skip(cluster, cluster.resource_for_key(CONFIGMAPS), {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "nfd-worker", "namespace": namespace, "ownerReferences": [owner_reference(nfd)]},
            "data": {"nfd-worker-conf": ((nfd.get("spec") or {}).get("workerConfig") or {}).get("configData") or ""}},
            namespace)
        for kind, name, extra in (("Deployment", "nfd-master", {"replicas": 1}), ("DaemonSet", "nfd-worker", {}),
                                  ("Deployment", "nfd-gc", {"replicas": 1})):
            labels = {"app": name}
            pod_spec = {"serviceAccountName": name, "containers": [{
                "name": name, "image": image, "command": ["nfd-" + name.split("-", 1)[1]],
                "resources": {"requests": {"cpu": "5m", "memory": "64Mi"}}}]}
            if kind == "DaemonSet" and failure:
                # a worker that cannot be scheduled anywhere: Degraded for ever, as upstream shows it
                pod_spec["nodeSelector"] = {"kubesim.perfscale.io/no-such-node": "true"}
            spec = dict(extra, selector={"matchLabels": labels}, template={"metadata": {"labels": labels},
                                                                         "spec": pod_spec})
            resource = cluster.resource("apps/v1", kind)
            current = cluster.store.get(DAEMONSETS if kind == "DaemonSet" else DEPLOYMENTS, namespace, name)
            if current is None:
                create_or_skip(cluster, resource, {
                    "apiVersion": "apps/v1", "kind": kind,
                    "metadata": {"name": name, "namespace": namespace, "labels": labels,
                                 "ownerReferences": [owner_reference(nfd)]}, "spec": spec}, namespace)
            elif kind == "DaemonSet" and \
                    current["spec"]["template"]["spec"].get("nodeSelector") != pod_spec.get("nodeSelector"):
                def reschedule(obj, selector=pod_spec.get("nodeSelector")):
                    pod = obj["spec"]["template"]["spec"]
                    if selector:
                        pod["nodeSelector"] = selector
                    else:
                        pod.pop("nodeSelector", None)
                cluster.mutate(resource, namespace, name, reschedule)

    def _state(self, namespace, failure):
        """``(set, reason, message)`` from the operands, checked in upstream's order."""
        store = self.cluster.store
        worker = store.get(DAEMONSETS, namespace, "nfd-worker")
        if worker is None:
            return "degraded", "FailedGettingNFDWorkerDaemonSet", 'daemonsets.apps "nfd-worker" not found'
        status = worker.get("status") or {}
        desired = status.get("desiredNumberScheduled", 0)
        if desired == 0:
            return "degraded", "NFDWorkerDaemonSetDegraded", failure or "number of desired nodes for scheduling is 0"
        if status.get("currentNumberScheduled", 0) == 0:
            return "degraded", "NFDWorkerDaemonSetDegraded", "0 nodes have pods scheduled"
        if status.get("numberReady", 0) != desired:
            return "progressing", "NFDWorkerDaemonSetProgressing", "ds is progressing"
        for name, reason in (("nfd-master", "NFDMasterDeploymentDegraded"), ("nfd-gc", "NFDGCDegraded")):
            deployment = store.get(DEPLOYMENTS, namespace, name)
            if deployment is None:
                return "degraded", "FailedGetting" + ("NFDMasterDeployment" if name == "nfd-master" else "NFDGCDeployment"), \
                    'deployments.apps "%s" not found' % name
            if not (deployment.get("status") or {}).get("availableReplicas"):
                return "degraded", reason, "number of available pods is 0"
        return "available", None, None

    def reconcile(self, ref):
        nfd = self.cluster.store.get(NFD, ref.namespace, ref.name) if ref.key == NFD else None
        if nfd is not None and nfd["metadata"].get("deletionTimestamp") and self.running():
            # the operator's finalizer: its operands go (owner references), then the finalizer
            def release(obj):
                finalizers = obj["metadata"].get("finalizers") or []
                if FINALIZER not in finalizers:
                    return False
                obj["metadata"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
                return True
            self.cluster.mutate(self.resource, ref.namespace, ref.name, release)
            return None
        return super().reconcile(ref)

    def sync(self, ref, nfd):
        cluster = self.cluster
        now = self.clock.timestamp()
        if FINALIZER not in (nfd["metadata"].get("finalizers") or ()):
            def finalize(obj):
                obj["metadata"].setdefault("finalizers", []).append(FINALIZER)
            cluster.mutate(self.resource, ref.namespace, ref.name, finalize)
            return 0.5
        failure = self.fail_message(nfd)
        self._operands(nfd, failure)
        state, reason, message = self._state(ref.namespace, failure)
        if state != "available" and not failure and not self.transient("nfd-degraded-at-start") \
                and reason == "NFDWorkerDaemonSetDegraded":
            state, reason, message = "progressing", "NFDWorkerDaemonSetProgressing", "ds is progressing"
        left = self.delay_left(nfd)
        if state == "available" and left <= 0:
            classes, fields = _worker_config(nfd)
            for pod in cluster.store.list(("", "pods"), ref.namespace)[0]:
                if (pod["metadata"].get("labels") or {}).get("app") == "nfd-worker" and pod_ready(pod):
                    label_node_features(cluster, pod["spec"].get("nodeName"), classes, fields)
        image = ((nfd.get("spec") or {}).get("operand") or {}).get("image")
        pinned = ("OperandImagePinned", "True", "OperandImageSetExplicitly",
                  'spec.operand.image is pinned to "%s" and will not be updated when the operator is upgraded, '
                  'unset it to use the default image' % image) if image else \
            ("OperandImagePinned", "False", "OperandImageManagedByOperator", "")
        conditions = conditions_for(state, reason, message) + [pinned]

        def change(status, obj):
            current = status.get("conditions") or []
            for ctype, value, why, text in conditions:
                current = set_condition(current, ctype, value, why, text, now)
            status["conditions"] = current
        self.write_status(ref, change)
        if state == "available":
            return left or None
        return 2.0
