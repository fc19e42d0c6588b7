"""NodeFeatureDiscovery (nfd.openshift.io/v1): the NFD operator and its workers.

The operator deploys ``nfd-master`` (Deployment) and ``nfd-worker`` (DaemonSet on
the schedulable worker nodes) in the CR's namespace. Once every worker pod is
Ready and the CR's delay passed (``kubesim.perfscale.io/delay-s``, default 5 s),
each node running a worker gets NFD's labels: ``feature.node.kubernetes.io/pci-<vendor>.present``
(or ``pci-<class>_<vendor>`` per ``deviceLabelFields``) for the PCI devices of
its ``kubesim.perfscale.io/pci-devices`` annotation whose class is in
``deviceClassWhitelist`` (defaults ``["03", "0b40", "12"]``, as NFD; both read
from ``spec.workerConfig.configData``), plus kernel, CPU and OS labels. Status:
the operator's ``conditions`` ``Available``, ``Upgradeable``, ``Progressing``,
``Degraded``. ``kubesim.perfscale.io/fail`` (or an injected ``nodefeaturediscovery``
fault): ``Degraded=True``, ``Available=False``, no labels.
"""

import json

import yaml

from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import (create_or_skip, owner_reference, pod_ready, set_condition)
from kubesim.profiles import PCI_DEVICES

NFD = ("nfd.openshift.io", "nodefeaturediscoveries")
NODES = ("", "nodes")
DAEMONSETS = ("apps", "daemonsets")
LABEL_PREFIX = "feature.node.kubernetes.io/"
DEFAULT_CLASSES = ("03", "0b40", "12")
DEFAULT_FIELDS = ("vendor",)


def node_devices(node):
    try:
        return json.loads((node["metadata"].get("annotations") or {}).get(PCI_DEVICES) or "[]")
    except ValueError:
        return []


def feature_labels(node, classes=DEFAULT_CLASSES, fields=DEFAULT_FIELDS):
    """The labels NFD's worker publishes for ``node``."""
    labels = {LABEL_PREFIX + "kernel-version.full": "6.1.0", LABEL_PREFIX + "kernel-version.major": "6",
              LABEL_PREFIX + "kernel-version.minor": "1", LABEL_PREFIX + "cpu-cpuid.AVX512F": "true",
              LABEL_PREFIX + "cpu-model.vendor_id": "Intel",
              LABEL_PREFIX + "system-os_release.ID": (node["metadata"].get("labels") or {}).get(
                  "node.openshift.io/os_id", "kubesim")}
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
    text = ((nfd.get("spec") or {}).get("workerConfig") or {}).get("configData") or ""
    try:
        config = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        config = {}
    pci = ((config.get("sources") or {}).get("pci") or {}) if isinstance(config, dict) else {}
    return tuple(pci.get("deviceClassWhitelist") or DEFAULT_CLASSES), tuple(pci.get("deviceLabelFields") or DEFAULT_FIELDS)


class NodeFeatureDiscoveryController(OperatorReconciler):
    name = "nodefeaturediscovery"
    key = NFD
    default_delay = 5.0
    extra_watches = (NODES, DAEMONSETS)

    def related(self, event):
        if event.key == NODES:
            if event.type == "MODIFIED" and (event.old or {}).get("metadata", {}).get("annotations") == \
                    event.obj["metadata"].get("annotations"):
                return []
            return self.all_refs()
        if event.obj["metadata"]["name"] == "nfd-worker":
            return self.all_refs(event.obj["metadata"]["namespace"])
        return []

    def _operands(self, nfd):
        cluster = self.cluster
        namespace = nfd["metadata"]["namespace"]
        image = ((nfd.get("spec") or {}).get("operand") or {}).get("image") or \
            "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:latest"
        for kind, name, extra in (("Deployment", "nfd-master", {"replicas": 1}), ("DaemonSet", "nfd-worker", {}),
                                  ("Deployment", "nfd-gc", {"replicas": 1})):
            labels = {"app": name}
            spec = dict(extra, selector={"matchLabels": labels}, template={
                "metadata": {"labels": labels},
                "spec": {"serviceAccountName": name, "containers": [{
                    "name": name, "image": image, "command": ["nfd-" + name.split("-", 1)[1]],
                    "resources": {"requests": {"cpu": "5m", "memory": "64Mi"}}}]}})
            create_or_skip(cluster, cluster.resource("apps/v1", kind), {
                "apiVersion": "apps/v1", "kind": kind,
                "metadata": {"name": name, "namespace": namespace, "labels": labels,
                             "ownerReferences": [owner_reference(nfd)]}, "spec": spec}, namespace)

    def sync(self, ref, nfd):
        cluster = self.cluster
        now = self.clock.timestamp()
        self._operands(nfd)
        failure = self.fail_message(nfd)
        worker = cluster.store.get(DAEMONSETS, ref.namespace, "nfd-worker") or {}
        worker_status = worker.get("status") or {}
        desired = worker_status.get("desiredNumberScheduled", 0)
        ready = desired > 0 and worker_status.get("numberReady", 0) == desired
        left = self.delay_left(nfd)
        if failure:
            conditions = [("Available", "False", "Failed", failure), ("Upgradeable", "False", "Failed", failure),
                          ("Progressing", "False", "Failed", failure), ("Degraded", "True", "Failed", failure)]
        elif not ready or left > 0:
            message = "waiting for nfd-worker pods to become ready" if not ready else "labelling nodes"
            conditions = [("Available", "False", "Progressing", message), ("Upgradeable", "False", "Progressing", message),
                          ("Progressing", "True", "Progressing", message), ("Degraded", "False", "Progressing", message)]
        else:
            classes, fields = _worker_config(nfd)
            for pod in cluster.store.list(("", "pods"), ref.namespace)[0]:
                if (pod["metadata"].get("labels") or {}).get("app") == "nfd-worker" and pod_ready(pod):
                    label_node_features(cluster, pod["spec"].get("nodeName"), classes, fields)
            conditions = [("Available", "True", "Available", "NFD is available"),
                          ("Upgradeable", "True", "Upgradeable", "NFD can be upgraded"),
                          ("Progressing", "False", "Available", "NFD is not progressing"),
                          ("Degraded", "False", "Available", "NFD is not degraded")]

        def change(status, obj):
            current = status.get("conditions") or []
            for ctype, value, reason, message in conditions:
                current = set_condition(current, ctype, value, reason, message, now, lastHeartbeatTime=now)
                current = [dict(c, lastHeartbeatTime=next((o.get("lastHeartbeatTime") for o in status.get("conditions") or ()
                                                           if o.get("type") == c["type"] and o.get("status") == c["status"]
                                                           and o.get("message") == c.get("message")),
                                                          c.get("lastHeartbeatTime"))) for c in current]
            status["conditions"] = current
        self.write_status(ref, change)
        if failure:
            return None
        if not ready:
            return 2.0
        return left or None
