"""ClusterPolicy (nvidia.com/v1): the NVIDIA GPU operator.

Upstream: NVIDIA/gpu-operator @ a22dbf671f2e26f9a1e342f8eea28e196235e110 -
controllers/clusterpolicy_controller.go (Reconcile), controllers/state_manager.go (GPU nodes:
``gpuNodeLabels``/``hasGPULabels``, ``gpuStateLabels``), controllers/nodelabeling_controller.go,
controllers/object_controls.go (``isDaemonSetReady``, no DaemonSet without GPU nodes),
internal/conditions/clusterpolicy.go (the Ready/Error pair); GPU feature discovery's labels and the
device plugin's resource are NVIDIA/k8s-device-plugin's.

- No node with any NFD label: ``state: ready``, ``Ready=True`` reason ``NFDLabelsMissing`` "No NFD
  labels found", ``Error=False`` (reason ``Ready``), no operand; looked at again every 45 s.
- A node is a GPU node when NFD labelled it ``pci-10de.present``, ``pci-0302_10de.present`` or
  ``pci-0300_10de.present``; the node labelling then sets ``nvidia.com/gpu.present=true`` and the
  ``nvidia.com/gpu.deploy.<operand>`` labels (``mig-manager`` only on MIG-capable products). The
  ClusterPolicy counts GPU nodes by ``nvidia.com/gpu.present``, and the labelling runs beside it: its
  first reconcile on a fresh GPU cluster writes ``ready`` / ``NoGPUNodes`` "No GPU node found, watching
  for new nodes to join the cluster." (transient ``clusterpolicy-no-gpu-nodes-at-start``), as with
  NFD labels but no GPU node at all.
- Operands, in the operator's namespace (its ``gpu-operator`` Deployment's, else
  ``nvidia-gpu-operator``), each a DaemonSet on its ``gpu.deploy`` label unless
  ``spec.<operand>.enabled: false``: driver, container toolkit, operator validator, device plugin,
  MPS control daemon (only on ``nvidia.com/mps.capable=true`` nodes), DCGM, DCGM exporter, GPU
  feature discovery, MIG manager, and the node status exporter (off unless enabled). Their pods take
  a while to be Ready, the driver longest (transient ``gpu-operands-start-in-order``: ready delays of
  the driver 20 s, toolkit 6 s, validator 12 s, the others 4 s after start). A DaemonSet is ready
  with 0 desired pods, or when updated and available equal desired (``isDaemonSetReady``).
- Not all ready: ``state: notReady``, ``Ready=False`` reason ``Error`` (no message), ``Error=True``
  reason ``OperandNotReady`` "ClusterPolicy is not ready; states not ready: [state-driver ...]";
  looked at again every 5 s. All ready: ``ready``, ``Ready=True`` / ``Reconciled`` "ClusterPolicy is
  ready as all resources have been successfully reconciled".
- On a node whose device plugin and GPU feature discovery pods are Ready, after the policy's
  ``delay-s`` (default 10 s): ``nvidia.com/gpu`` capacity and allocatable (times the time-slicing
  ``replicas`` of the ConfigMap ``spec.devicePlugin.config`` names, key ``default`` or the node's
  ``nvidia.com/device-plugin.config``; ``renameByDefault``: ``nvidia.com/gpu.shared``) and GFD's
  labels (``nvidia.com/gpu.product`` (``-SHARED`` when shared), ``.count``, ``.memory``, ``.family``,
  ``.replicas``, ``.sharing-strategy``, ...).
- ``kubesim.perfscale.io/fail`` (or a ``clusterpolicy`` fault): ``notReady``, ``Error=True``
  ``ReconcileFailed`` "Failed to reconcile state-driver: <message>", retried as upstream (never
  final), the GPUs withdrawn. Deleting the policy withdraws the GPUs.
"""

import yaml

from kubesim.controllers.nfd import LABEL_PREFIX, node_devices
from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import create_or_skip, ensure_namespace, owner_reference, pod_ready, set_condition
from kubesim.scheduling import format_quantity

CLUSTER_POLICIES = ("nvidia.com", "clusterpolicies")
NODES = ("", "nodes")
PODS = ("", "pods")
DAEMONSETS = ("apps", "daemonsets")
DEPLOYMENTS = ("apps", "deployments")
CONFIGMAPS = ("", "configmaps")
GPU = "nvidia.com/gpu"
GPU_PRESENT = "nvidia.com/gpu.present"
# the NFD labels by which the operator recognises an NVIDIA GPU (state_manager.go gpuNodeLabels)
GPU_PCI_LABELS = (LABEL_PREFIX + "pci-10de.present", LABEL_PREFIX + "pci-0302_10de.present",
                  LABEL_PREFIX + "pci-0300_10de.present")
DEFAULT_NAMESPACE = "nvidia-gpu-operator"
# operand: (spec key, DaemonSet, state name, deploy label, enabled by default, ready delay s, extra node selector)
OPERANDS = [
    ("driver", "nvidia-driver-daemonset", "state-driver", "driver", True, 20.0, None),
    ("toolkit", "nvidia-container-toolkit-daemonset", "state-container-toolkit", "container-toolkit", True, 6.0, None),
    ("validator", "nvidia-operator-validator", "state-operator-validation", "operator-validator", True, 12.0, None),
    ("devicePlugin", "nvidia-device-plugin-daemonset", "state-device-plugin", "device-plugin", True, 4.0, None),
    ("mps", "nvidia-device-plugin-mps-control-daemon", "state-mps-control-daemon", "device-plugin", True, 4.0,
     {"nvidia.com/mps.capable": "true"}),
    ("dcgm", "nvidia-dcgm", "state-dcgm", "dcgm", True, 4.0, None),
    ("dcgmExporter", "nvidia-dcgm-exporter", "state-dcgm-exporter", "dcgm-exporter", True, 4.0, None),
    ("gfd", "gpu-feature-discovery", "gpu-feature-discovery", "gpu-feature-discovery", True, 4.0, None),
    ("migManager", "nvidia-mig-manager", "state-mig-manager", "mig-manager", True, 4.0, None),
    ("nodeStatusExporter", "nvidia-node-status-exporter", "state-node-status-exporter", "node-status-exporter",
     False, 4.0, None),
]
DEPLOY_LABELS = ("driver", "gpu-feature-discovery", "container-toolkit", "device-plugin", "dcgm", "dcgm-exporter",
                 "node-status-exporter", "operator-validator", "client")
MIG_CAPABLE = ("a100", "a30", "h100", "h200")
FAMILIES = {"A10G": "ampere", "A100": "ampere", "L40S": "ada-lovelace", "H100": "hopper", "H200": "hopper"}


def node_gpus(node):
    """``(count, product, memory MiB)`` of a node's NVIDIA GPUs (from its PCI devices)."""
    count, product, memory = 0, None, 0
    for device in node_devices(node):
        if device.get("vendor") == "10de" and str(device.get("class", "")).startswith("03"):
            count += int(device.get("count", 1))
            product = product or device.get("product")
            memory = memory or int(device.get("memoryMiB", 0))
    return count, product, memory


def has_gpu_labels(node):
    labels = node["metadata"].get("labels") or {}
    return any(labels.get(key) == "true" for key in GPU_PCI_LABELS)


def has_nfd_labels(node):
    return any(key.startswith(LABEL_PREFIX) for key in node["metadata"].get("labels") or {})


def advertise_gpus(cluster, node_name, replicas=1, sharing="none", rename=False):
    """The device plugin's and GFD's result on a node: ``nvidia.com/gpu`` capacity and the GPU labels."""
    node = cluster.store.get(NODES, "", node_name)
    if node is None:
        return False
    count, product, memory = node_gpus(node)
    if not count:
        return False
    resource = GPU + ".shared" if rename and replicas > 1 else GPU
    family = next((f for key, f in FAMILIES.items() if key in (product or "")), "unknown")
    labels = {GPU_PRESENT: "true", "nvidia.com/gpu.count": str(count),
              "nvidia.com/gpu.product": (product or "NVIDIA-GPU") + ("-SHARED" if replicas > 1 and not rename else ""),
              "nvidia.com/gpu.memory": str(memory), "nvidia.com/gpu.family": family,
              "nvidia.com/gpu.replicas": str(replicas), "nvidia.com/gpu.sharing-strategy": sharing,
              "nvidia.com/gpu.machine": (node["metadata"].get("labels") or {}).get("node.kubernetes.io/instance-type", ""),
              "nvidia.com/mig.capable": "false", "nvidia.com/cuda.driver.major": "580",
              "nvidia.com/cuda.runtime.major": "13"}

    def change(obj):
        obj["metadata"].setdefault("labels", {}).update(labels)
        status = obj.setdefault("status", {})
        for field in ("capacity", "allocatable"):
            values = status.setdefault(field, {})
            values.pop(GPU if resource != GPU else GPU + ".shared", None)
            values[resource] = format_quantity(count * replicas)
    cluster.mutate(cluster.resource_for_key(NODES), "", node_name, change)
    cluster.mutate(cluster.resource_for_key(NODES), "", node_name, change, subresource="status")
    return True


def withdraw_gpus(cluster, node_name):
    """The device plugin is gone: no GPU resource, no GFD labels (the operator's labels stay)."""
    def change(obj):
        labels = obj["metadata"].get("labels") or {}
        gone = [k for k in labels if k.startswith("nvidia.com/gpu.") and k != GPU_PRESENT
                and not k.startswith("nvidia.com/gpu.deploy.")]
        status = obj.get("status") or {}
        has = any(r in (status.get(f) or {}) for f in ("capacity", "allocatable") for r in (GPU, GPU + ".shared"))
        if not gone and not has:
            return False
        for key in gone:
            del labels[key]
        for field in ("capacity", "allocatable"):
            for name in (GPU, GPU + ".shared"):
                (status.get(field) or {}).pop(name, None)
        return True
    cluster.mutate(cluster.resource_for_key(NODES), "", node_name, change)
    cluster.mutate(cluster.resource_for_key(NODES), "", node_name, change, subresource="status")


def time_slicing(cluster, namespace, policy, node):
    """``(replicas, rename)`` from the device plugin's config for ``node``."""
    config_ref = ((policy.get("spec") or {}).get("devicePlugin") or {}).get("config") or {}
    if not config_ref.get("name"):
        return 1, False
    configmap = cluster.store.get(CONFIGMAPS, namespace, config_ref["name"])
    if configmap is None:
        return 1, False
    key = (node["metadata"].get("labels") or {}).get("nvidia.com/device-plugin.config") or config_ref.get("default")
    data = configmap.get("data") or {}
    text = data.get(key) if key else (next(iter(data.values())) if len(data) == 1 else None)
    try:
        config = yaml.safe_load(text or "") or {}
    except yaml.YAMLError:
        return 1, False
    slicing = ((config.get("sharing") or {}).get("timeSlicing") or {}) if isinstance(config, dict) else {}
    for entry in slicing.get("resources") or ():
        if entry.get("name") == GPU:
            return max(1, int(entry.get("replicas") or 1)), bool(slicing.get("renameByDefault"))
    return 1, False


def daemonset_ready(ds):
    """``isDaemonSetReady``: 0 desired pods, or every pod updated and available for this generation."""
    if ds is None:
        return False
    status = ds.get("status") or {}
    if "observedGeneration" not in status:
        return False   # the DaemonSet controller has not looked at it yet (upstream: not in the cache yet)
    desired = status.get("desiredNumberScheduled", 0)
    if not desired:
        return True
    if status.get("numberUnavailable", 0):
        return False
    return (status.get("observedGeneration", 0) >= ds["metadata"].get("generation", 1)
            and status.get("updatedNumberScheduled", 0) == desired and status.get("numberAvailable", 0) == desired)


class ClusterPolicyController(OperatorReconciler):
    name = "clusterpolicy"
    key = CLUSTER_POLICIES
    default_delay = 10.0
    extra_watches = (NODES, DAEMONSETS, CONFIGMAPS, PODS)
    transients = {
        "clusterpolicy-no-gpu-nodes-at-start": "the first reconcile on a fresh GPU cluster runs before the node labelling "
                                               "and writes ready/NoGPUNodes",
        "gpu-operands-start-in-order": "the operands' pods take a while to be Ready (the driver longest): "
                                       "notReady/OperandNotReady names them meanwhile"}

    def related(self, event):
        if event.key == NODES:
            old_labels = ((event.old or {}).get("metadata") or {}).get("labels") or {}
            new_labels = event.obj["metadata"].get("labels") or {}
            watched = GPU_PCI_LABELS + ("nvidia.com/device-plugin.config", GPU_PRESENT)
            if event.type == "MODIFIED" and all(old_labels.get(k) == new_labels.get(k) for k in watched) and \
                    any(k.startswith(LABEL_PREFIX) for k in old_labels) == any(k.startswith(LABEL_PREFIX) for k in new_labels):
                return []
            return self.all_refs()
        if event.key == DAEMONSETS:
            return self.all_refs() if event.obj["metadata"]["name"] in {o[1] for o in OPERANDS} else []
        if event.key == PODS:
            app = (event.obj["metadata"].get("labels") or {}).get("app")
            return self.all_refs() if app in ("nvidia-device-plugin-daemonset", "gpu-feature-discovery") else []
        names = {((p.get("spec") or {}).get("devicePlugin") or {}).get("config", {}).get("name")
                 for p in self.cluster.store.list(CLUSTER_POLICIES)[0]}
        return self.all_refs() if event.obj["metadata"]["name"] in names else []

    def operator_namespace(self):
        for deployment in self.cluster.store.list(DEPLOYMENTS)[0]:
            if deployment["metadata"]["name"] == "gpu-operator":
                return deployment["metadata"]["namespace"]
        return DEFAULT_NAMESPACE

    @staticmethod
    def enabled(policy, key, default):
        value = ((policy.get("spec") or {}).get(key) or {}).get("enabled")
        return default if value is None else bool(value)

    def _operands(self, policy, namespace):
        cluster = self.cluster
        staged = self.transient("gpu-operands-start-in-order")
        names = []
        created = set()
        for key, name, state, deploy, default, delay, extra in OPERANDS:
            spec_key = "devicePlugin" if key == "mps" else key
            if not self.enabled(policy, spec_key, default):
                continue
            names.append((name, state))
            labels = {"app": name, "app.kubernetes.io/part-of": "gpu-operator"}
            selector = {"nvidia.com/gpu.deploy.%s" % deploy: "true"}
            selector.update(extra or {})
            annotations = {"kubesim.perfscale.io/ready-delay-s": str(delay)} if staged else {}
            if cluster.store.get(DAEMONSETS, namespace, name) is None:
                created.add(name)
            create_or_skip(cluster, cluster.resource_for_key(DAEMONSETS), {
                "apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": {"name": name, "namespace": namespace, "labels": dict(labels),
                             "ownerReferences": [owner_reference(policy)]},
                "spec": {"selector": {"matchLabels": {"app": name}}, "template": {
                    "metadata": {"labels": dict(labels), "annotations": annotations},
                    "spec": {"nodeSelector": selector,
                             "tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}],
                             "priorityClassName": "system-node-critical",
                             "containers": [{"name": name, "image": "nvcr.io/nvidia/%s:kubesim" % name}]}}}}, namespace)
        return names, created

    def _label_gpu_nodes(self, nodes):
        """The node labelling: gpu.present and the deploy labels on the nodes with NVIDIA PCI labels;
        returns how many nodes it changed."""
        changed = 0
        for node in nodes:
            if not has_gpu_labels(node):
                continue
            labels = node["metadata"].get("labels") or {}
            wanted = {GPU_PRESENT: "true"}
            for deploy in DEPLOY_LABELS:
                wanted["nvidia.com/gpu.deploy.%s" % deploy] = labels.get("nvidia.com/gpu.deploy.%s" % deploy) or "true"
            product = (node_gpus(node)[1] or "").lower()
            if labels.get("nvidia.com/mig.capable") == "true" or any(m in product for m in MIG_CAPABLE):
                wanted["nvidia.com/gpu.deploy.mig-manager"] = "true"
            if all(labels.get(k) == v for k, v in wanted.items()):
                continue
            changed += 1
            self.cluster.mutate(self.cluster.resource_for_key(NODES), "", node["metadata"]["name"],
                                lambda obj, wanted=wanted: obj["metadata"].setdefault("labels", {}).update(wanted))
        return changed

    def _ready_on(self, namespace, app, node_name):
        return any(pod_ready(p) and (p.get("spec") or {}).get("nodeName") == node_name
                   for p in self.cluster.store.list(PODS, namespace)[0]
                   if (p["metadata"].get("labels") or {}).get("app") == app)

    def sync(self, ref, policy):
        cluster = self.cluster
        namespace = self.operator_namespace()
        nodes = cluster.store.list(NODES)[0]
        failure = self.fail_message(policy)
        requeue = None
        if failure:
            state, ready, reason, message = "notReady", False, "ReconcileFailed", \
                "Failed to reconcile state-driver: %s" % failure
            for node in nodes:
                withdraw_gpus(cluster, node["metadata"]["name"])
            requeue = 3.0
        elif not any(has_nfd_labels(n) for n in nodes):
            state, ready, reason, message = "ready", True, "NFDLabelsMissing", "No NFD labels found"
            requeue = 45.0
        else:
            present = [n for n in nodes if (n["metadata"].get("labels") or {}).get(GPU_PRESENT) == "true"]
            # the node labelling runs beside this reconcile: what it labels now is seen next time
            labelled = self._label_gpu_nodes(nodes)
            if labelled and not self.transient("clusterpolicy-no-gpu-nodes-at-start"):
                present = [n for n in cluster.store.list(NODES)[0]
                           if (n["metadata"].get("labels") or {}).get(GPU_PRESENT) == "true"]
            if not present:
                state, ready, reason, message = ("ready", True, "NoGPUNodes",
                                                 "No GPU node found, watching for new nodes to join the cluster.")
                requeue = 1.0 if labelled else None
            else:
                ensure_namespace(cluster, namespace)
                operands, created = self._operands(policy, namespace)
                pending = [state_name for name, state_name in operands
                           if name in created or not daemonset_ready(cluster.store.get(DAEMONSETS, namespace, name))]
                left = self.delay_left(policy)
                for node in present:
                    node_name = node["metadata"]["name"]
                    if left <= 0 and self._ready_on(namespace, "nvidia-device-plugin-daemonset", node_name) and \
                            self._ready_on(namespace, "gpu-feature-discovery", node_name):
                        replicas, rename = time_slicing(cluster, namespace, policy, node)
                        advertise_gpus(cluster, node_name, replicas, "time-slicing" if replicas > 1 else "none", rename)
                if pending:
                    state, ready, reason = "notReady", False, "OperandNotReady"
                    message = "ClusterPolicy is not ready; states not ready: [%s]" % " ".join(pending)
                    requeue = 5.0
                else:
                    state, ready, reason = "ready", True, "Reconciled"
                    message = "ClusterPolicy is ready as all resources have been successfully reconciled"
                    requeue = left if left > 0 else None
        now = self.clock.timestamp()

        def change(status, obj):
            conditions = status.get("conditions") or []
            # internal/conditions/clusterpolicy.go: SetConditionsReady / SetConditionsError
            if ready:
                conditions = set_condition(conditions, "Ready", "True", reason, message, now)
                conditions = set_condition(conditions, "Error", "False", "Ready", "", now)
            else:
                conditions = set_condition(conditions, "Ready", "False", "Error", "", now)
                conditions = set_condition(conditions, "Error", "True", reason, message, now)
            status.update(state=state, namespace=namespace, conditions=conditions)
        self.write_status(ref, change)
        return requeue

    def deleted(self, ref):
        for node in self.cluster.store.list(NODES)[0]:
            withdraw_gpus(self.cluster, node["metadata"]["name"])
        return None
