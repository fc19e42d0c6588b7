"""ClusterPolicy (nvidia.com/v1): the NVIDIA GPU operator.

GPU nodes are those NFD labelled ``feature.node.kubernetes.io/pci-10de.present=true``;
the operator labels them (``nvidia.com/gpu.present``, ``nvidia.com/gpu.deploy.<operand>``)
and deploys its operands as DaemonSets on them, in its own namespace (the
namespace of its ``gpu-operator`` Deployment, else ``nvidia-gpu-operator``):
driver, container toolkit, device plugin, DCGM, DCGM exporter, GPU feature
discovery, node status exporter and operator validator (each unless
``spec.<operand>.enabled: false``). When they are all Ready and the delay passed
(``kubesim.perfscale.io/delay-s``, default 10 s), the device plugin advertises
``nvidia.com/gpu`` in the nodes' capacity and allocatable and GFD adds its labels
(``nvidia.com/gpu.product``, ``.count``, ``.memory``, ``.family``, ``.replicas``,
``.sharing-strategy``). Time-slicing (``spec.devicePlugin.config``: a ConfigMap
in the operator namespace, key ``default`` or the node's ``nvidia.com/device-plugin.config``
label) multiplies the advertised GPUs by ``replicas`` (``renameByDefault: true``:
the resource is ``nvidia.com/gpu.shared``; otherwise the product label ends in ``-SHARED``).

Status as the operator writes it: ``state`` ``ready``/``notReady``, ``namespace``
and the conditions ``Ready``/``Error`` (``Reconciled``, ``OperandNotReady``,
``NoGPUNodes`` with ``state: ready`` when no node has an NVIDIA GPU,
``NFDLabelsMissing`` when no node has NFD labels, ``ReconcileFailed`` for
``kubesim.perfscale.io/fail`` or an injected ``clusterpolicy`` fault; no GPU is
advertised then).
"""

import yaml

from kubesim.controllers.nfd import LABEL_PREFIX, node_devices
from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import create_or_skip, ensure_namespace, owner_reference, set_condition
from kubesim.scheduling import format_quantity

CLUSTER_POLICIES = ("nvidia.com", "clusterpolicies")
NODES = ("", "nodes")
DAEMONSETS = ("apps", "daemonsets")
DEPLOYMENTS = ("apps", "deployments")
CONFIGMAPS = ("", "configmaps")
GPU = "nvidia.com/gpu"
GPU_PRESENT_NFD = LABEL_PREFIX + "pci-10de.present"
DEFAULT_NAMESPACE = "nvidia-gpu-operator"
# operand: (spec key, DaemonSet name, deploy label, app label)
OPERANDS = [
    ("driver", "nvidia-driver-daemonset", "driver", "nvidia-driver-daemonset"),
    ("toolkit", "nvidia-container-toolkit-daemonset", "container-toolkit", "nvidia-container-toolkit-daemonset"),
    ("devicePlugin", "nvidia-device-plugin-daemonset", "device-plugin", "nvidia-device-plugin-daemonset"),
    ("dcgm", "nvidia-dcgm", "dcgm", "nvidia-dcgm"),
    ("dcgmExporter", "nvidia-dcgm-exporter", "dcgm-exporter", "nvidia-dcgm-exporter"),
    ("gfd", "gpu-feature-discovery", "gpu-feature-discovery", "gpu-feature-discovery"),
    ("nodeStatusExporter", "nvidia-node-status-exporter", "node-status-exporter", "nvidia-node-status-exporter"),
    ("validator", "nvidia-operator-validator", "operator-validator", "nvidia-operator-validator"),
]
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
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": str(count),
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
    """The device plugin is gone: no GPU resource, no GFD labels (the operator's deploy labels stay)."""
    def change(obj):
        labels = obj["metadata"].get("labels") or {}
        gone = [k for k in labels if k.startswith("nvidia.com/gpu.") and k not in ("nvidia.com/gpu.present",)
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


class ClusterPolicyController(OperatorReconciler):
    name = "clusterpolicy"
    key = CLUSTER_POLICIES
    default_delay = 10.0
    extra_watches = (NODES, DAEMONSETS, CONFIGMAPS)

    def related(self, event):
        if event.key == NODES:
            old_labels = ((event.old or {}).get("metadata") or {}).get("labels") or {}
            new_labels = event.obj["metadata"].get("labels") or {}
            if event.type == "MODIFIED" and old_labels.get(GPU_PRESENT_NFD) == new_labels.get(GPU_PRESENT_NFD) and \
                    old_labels.get("nvidia.com/device-plugin.config") == new_labels.get("nvidia.com/device-plugin.config"):
                return []
            return self.all_refs()
        if event.key == DAEMONSETS:
            return self.all_refs() if event.obj["metadata"]["name"] in {o[1] for o in OPERANDS} else []
        names = {((p.get("spec") or {}).get("devicePlugin") or {}).get("config", {}).get("name")
                 for p in self.cluster.store.list(CLUSTER_POLICIES)[0]}
        return self.all_refs() if event.obj["metadata"]["name"] in names else []

    def operator_namespace(self):
        for deployment in self.cluster.store.list(DEPLOYMENTS)[0]:
            if deployment["metadata"]["name"] == "gpu-operator":
                return deployment["metadata"]["namespace"]
        return DEFAULT_NAMESPACE

    def _operands(self, policy, namespace):
        spec = policy.get("spec") or {}
        cluster = self.cluster
        for key, name, deploy, app in OPERANDS:
            if (spec.get(key) or {}).get("enabled") is False:
                continue
            labels = {"app": app, "app.kubernetes.io/part-of": "gpu-operator"}
            create_or_skip(cluster, cluster.resource_for_key(DAEMONSETS), {
                "apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": {"name": name, "namespace": namespace, "labels": dict(labels),
                             "ownerReferences": [owner_reference(policy)]},
                "spec": {"selector": {"matchLabels": {"app": app}}, "template": {
                    "metadata": {"labels": dict(labels)},
                    "spec": {"nodeSelector": {"nvidia.com/gpu.deploy.%s" % deploy: "true"},
                             "tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}],
                             "priorityClassName": "system-node-critical",
                             "containers": [{"name": app, "image": "nvcr.io/nvidia/%s:kubesim" % app}]}}}}, namespace)

    def _label_gpu_nodes(self, gpu_nodes, policy):
        spec = policy.get("spec") or {}
        wanted = {"nvidia.com/gpu.present": "true"}
        for key, _, deploy, _ in OPERANDS:
            if (spec.get(key) or {}).get("enabled") is not False:
                wanted["nvidia.com/gpu.deploy.%s" % deploy] = "true"
        for node in gpu_nodes:
            labels = node["metadata"].get("labels") or {}
            if all(labels.get(k) == v for k, v in wanted.items()):
                continue
            self.cluster.mutate(self.cluster.resource_for_key(NODES), "", node["metadata"]["name"],
                                lambda obj: obj["metadata"].setdefault("labels", {}).update(wanted))

    def sync(self, ref, policy):
        cluster = self.cluster
        now = self.clock.timestamp()
        namespace = self.operator_namespace()
        nodes = cluster.store.list(NODES)[0]
        gpu_nodes = [n for n in nodes if (n["metadata"].get("labels") or {}).get(GPU_PRESENT_NFD) == "true"]
        has_nfd = any(k.startswith(LABEL_PREFIX) for n in nodes for k in n["metadata"].get("labels") or {})
        failure = self.fail_message(policy)
        requeue = None
        if failure:
            state, ready, reason, message = "notReady", False, "ReconcileFailed", failure
            for node in gpu_nodes:
                withdraw_gpus(cluster, node["metadata"]["name"])
        elif not has_nfd:
            state, ready, reason, message = ("notReady", False, "NFDLabelsMissing",
                                             "NFD labels missing in the cluster, GPU nodes cannot be discovered.")
            requeue = 5.0
        elif not gpu_nodes:
            state, ready, reason, message = ("ready", True, "NoGPUNodes",
                                             "No GPU node found, watching for new nodes to join the cluster.")
        else:
            ensure_namespace(cluster, namespace)
            self._label_gpu_nodes(gpu_nodes, policy)
            self._operands(policy, namespace)
            pending = []
            for _, name, _, _ in OPERANDS:
                ds = cluster.store.get(DAEMONSETS, namespace, name)
                if ds is None:
                    continue
                status = ds.get("status") or {}
                if not status.get("desiredNumberScheduled") or status.get("numberReady", 0) < status["desiredNumberScheduled"]:
                    pending.append("state-" + name.replace("nvidia-", "").replace("-daemonset", ""))
            left = self.delay_left(policy)
            if pending or left > 0:
                state, ready, reason = "notReady", False, "OperandNotReady"
                message = "ClusterPolicy is not ready, states not ready: [%s]" % " ".join(pending or ["state-validation"])
                requeue = left if not pending else None
            else:
                for node in gpu_nodes:
                    replicas, rename = time_slicing(cluster, namespace, policy, node)
                    advertise_gpus(cluster, node["metadata"]["name"], replicas,
                                   "time-slicing" if replicas > 1 else "none", rename)
                state, ready, reason = "ready", True, "Reconciled"
                message = "ClusterPolicy is ready as all resources have been successfully reconciled"

        def change(status, obj):
            generation = obj["metadata"].get("generation", 1)
            conditions = status.get("conditions") or []
            # the GPU operator's conditions: Ready=True forces Error=False (reason Ready) and the reverse
            if ready:
                conditions = set_condition(conditions, "Ready", "True", reason, message, now, observedGeneration=generation)
                conditions = set_condition(conditions, "Error", "False", "Ready", "", now, observedGeneration=generation)
            else:
                conditions = set_condition(conditions, "Ready", "False", "Error" if failure else reason, message, now,
                                           observedGeneration=generation)
                conditions = set_condition(conditions, "Error", "True" if failure or reason == "NFDLabelsMissing" else "False",
                                           reason, message, now, observedGeneration=generation)
            status.update(state=state, namespace=namespace, conditions=conditions)
        self.write_status(ref, change)
        return requeue

    def deleted(self, ref):
        for node in self.cluster.store.list(NODES)[0]:
            withdraw_gpus(self.cluster, node["metadata"]["name"])
        return None
