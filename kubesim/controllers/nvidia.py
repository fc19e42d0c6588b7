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
- MIG (NVIDIA/mig-parted @ bd7160f43f16462eeb21e1eda5e67b5b6b03fd7d deployments/systemd/config-default.yaml,
  pkg/mig/reconfigure/reconfigure.go; NVIDIA/k8s-device-plugin @ 1b826acc6af3079d8923bac395c3124b8861a9a6
  internal/lm/mig-strategy.go, internal/lm/resource.go, internal/rm/nvml_manager.go,
  docs/gpu-feature-discovery/README.md; gpu-operator object_controls.go ``applyMIGConfiguration``): a
  GPU node labelled ``nvidia.com/mig.config`` (the profile's ``mig.config``: ``all-1g.10gb``,
  ``all-balanced``, ``all-1g.5gb``, ``all-disabled``) is partitioned by the MIG manager once its pod is
  Ready there: ``nvidia.com/mig.config.state`` ``pending`` until then, ``success`` after, ``failed`` for a
  configuration that has no entry for the node's GPU (nothing partitioned). The strategy is the policy's
  ``spec.mig.strategy`` (empty: ``none``, the device plugin's default). ``single``: the slices are
  ``nvidia.com/gpu`` (time-slicing applies to them), GFD's ``nvidia.com/gpu.product``
  ``<GPU>-MIG-<profile>``, ``gpu.count`` the slices, ``gpu.memory`` a slice's, ``gpu.slices.gi/ci``; a
  node with several MIG profiles gets ``<GPU>-MIG-INVALID``, count 0 and no resource. ``mixed``: one
  ``nvidia.com/mig-<profile>`` resource per profile with ``nvidia.com/mig-<profile>.count``, ``.product``,
  ``.memory``, ``.replicas``, ``.sharing-strategy``, ``.slices.gi/ci`` labels, no ``nvidia.com/gpu``
  (the device plugin registers no resource without devices), the full GPUs' ``gpu.count``/``gpu.product``
  with ``gpu.replicas`` 0. Both add ``nvidia.com/mig.strategy``; ``nvidia.com/mig.capable`` is true on
  A100/A30/H100/H200. Not modelled: the multiprocessors and engines labels, the MIG manager pausing the
  operands while it repartitions, configurations beyond the table.
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
MIG_CONFIG = "nvidia.com/mig.config"
MIG_CONFIG_STATE = "nvidia.com/mig.config.state"
MIG_STRATEGY = "nvidia.com/mig.strategy"
MIG_PREFIX = "nvidia.com/mig-"
MIG_STRATEGIES = ("none", "single", "mixed")
# mig-parted's config-default.yaml: configuration -> {PCI device id: {MIG profile: slices per GPU}}
# (2330 H100-80GB, 20b0 A100-40GB; {} is MIG enabled with no slice, None MIG disabled)
MIG_LAYOUTS = {
    "all-disabled": {"2330": None, "20b0": None},
    "all-enabled": {"2330": {}, "20b0": {}},
    "all-1g.5gb": {"20b0": {"1g.5gb": 7}},
    "all-1g.10gb": {"2330": {"1g.10gb": 7}, "20b0": {"1g.10gb": 4}},
    "all-balanced": {"2330": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
                     "20b0": {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}},
}
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


def gpu_device_id(node):
    return next((str(d.get("device", "")) for d in node_devices(node)
                 if d.get("vendor") == "10de" and str(d.get("class", "")).startswith("03")), "")


def mig_capable(product):
    return any(m in (product or "").lower() for m in MIG_CAPABLE)


def mig_layout(node):
    """``(state, slices)`` of the MIG configuration the node's ``nvidia.com/mig.config`` label asks for:
    ``(None, None)`` without the label or with MIG disabled, ``("failed", None)`` when the configuration has
    no entry for the node's GPU (mig-parted: nothing applied), else ``("success", {profile: slices per GPU})``."""
    name = (node["metadata"].get("labels") or {}).get(MIG_CONFIG)
    if not name:
        return None, None
    layouts = MIG_LAYOUTS.get(name) or {}
    device = gpu_device_id(node)
    if device not in layouts:
        return "failed", None
    slices = layouts[device]
    return ("success", dict(slices)) if slices is not None else ("success", None)


def slice_memory(profile):
    """A MIG slice's memory in MiB from its profile name (``1g.10gb`` -> 10240), as GFD's README shows it
    (``1g.5gb``: 5120)."""
    size = profile.split(".", 1)[1].split("+", 1)[0]
    return int(size[:-2]) * 1024 if size.endswith("gb") and size[:-2].isdigit() else 0


def slice_labels(resource, profile, product, count, replicas=1, sharing="none", rename=False):
    """GFD's labels of a MIG resource (internal/lm/resource.go ``NewMIGResourceLabeler``)."""
    compute = profile.split("g.", 1)[0]
    shared = replicas > 1
    return {resource + ".product": "%s-MIG-%s%s" % (product, profile, "-SHARED" if shared and not rename else ""),
            resource + ".count": str(count), resource + ".replicas": str(replicas),
            resource + ".sharing-strategy": sharing if shared else "none",
            resource + ".memory": str(slice_memory(profile)),
            resource + ".slices.gi": compute, resource + ".slices.ci": compute}


def has_gpu_labels(node):
    labels = node["metadata"].get("labels") or {}
    return any(labels.get(key) == "true" for key in GPU_PCI_LABELS)


def has_nfd_labels(node):
    return any(key.startswith(LABEL_PREFIX) for key in node["metadata"].get("labels") or {})


def advertise_gpus(cluster, node_name, replicas=1, sharing="none", rename=False, mig_strategy="none", mig=None):
    """The device plugin's and GFD's result on a node: the GPU resources (``nvidia.com/gpu``, or MIG's) and
    the GPU labels. ``mig``: the MIG profiles of each GPU the MIG manager applied (``mig_layout``), if any."""
    node = cluster.store.get(NODES, "", node_name)
    if node is None:
        return False
    count, product, memory = node_gpus(node)
    if not count:
        return False
    product = product or "NVIDIA-GPU"
    family = next((f for key, f in FAMILIES.items() if key in product), "unknown")
    labels = {GPU_PRESENT: "true", "nvidia.com/gpu.count": str(count),
              "nvidia.com/gpu.product": product + ("-SHARED" if replicas > 1 and not rename else ""),
              "nvidia.com/gpu.memory": str(memory), "nvidia.com/gpu.family": family,
              "nvidia.com/gpu.replicas": str(replicas), "nvidia.com/gpu.sharing-strategy": sharing,
              "nvidia.com/gpu.machine": (node["metadata"].get("labels") or {}).get("node.kubernetes.io/instance-type", ""),
              "nvidia.com/mig.capable": "true" if mig_capable(product) else "false",
              "nvidia.com/cuda.driver.major": "580", "nvidia.com/cuda.runtime.major": "13"}
    resources = {(GPU + ".shared" if rename and replicas > 1 else GPU): count * replicas}
    if mig_strategy in ("single", "mixed"):
        labels[MIG_STRATEGY] = mig_strategy
    if mig is not None and mig_strategy == "single":
        if len(mig) != 1:    # newInvalidMigStrategyLabeler: no resource (the device plugin refuses the node)
            labels.update({"nvidia.com/gpu.product": product + "-MIG-INVALID", "nvidia.com/gpu.count": "0",
                           "nvidia.com/gpu.replicas": "0", "nvidia.com/gpu.sharing-strategy": "",
                           "nvidia.com/gpu.memory": "0"})
            resources = {}
        else:
            (profile, per_gpu), = mig.items()
            slices = count * per_gpu
            labels.update(slice_labels(GPU, profile, product, slices, replicas, sharing, rename))
            resources = {(GPU + ".shared" if rename and replicas > 1 else GPU): slices * replicas}
    elif mig is not None and mig_strategy == "mixed":
        # the MIG-enabled GPUs' labels carry no sharing (NewGPUResourceLabelerWithoutSharing: replicas 0)
        labels.update({"nvidia.com/gpu.product": product, "nvidia.com/gpu.replicas": "0",
                       "nvidia.com/gpu.sharing-strategy": "none"})
        resources = {}
        for profile, per_gpu in sorted(mig.items()):
            resource = MIG_PREFIX + profile
            labels.update(slice_labels(resource, profile, product, count * per_gpu))
            resources[resource] = count * per_gpu

    def change(obj):
        current = obj["metadata"].setdefault("labels", {})
        for key in [k for k in current if _gfd_label(k) and k not in labels]:
            del current[key]
        current.update(labels)
        status = obj.setdefault("status", {})
        for field in ("capacity", "allocatable"):
            values = status.setdefault(field, {})
            for name in [r for r in values if _gpu_resource(r) and r not in resources]:
                del values[name]
            values.update({name: format_quantity(amount) for name, amount in resources.items()})
    cluster.mutate(cluster.resource_for_key(NODES), "", node_name, change)
    cluster.mutate(cluster.resource_for_key(NODES), "", node_name, change, subresource="status")
    return True


def set_up_node(cluster, node_name, mig_strategy="none"):
    """What the GPU operator leaves on a node once its stack runs (the ``gpu-ready`` addon): the MIG manager's
    ``mig.config`` applied (``mig.config.state``), then the device plugin's resources and GFD's labels."""
    node = cluster.store.get(NODES, "", node_name)
    if node is None or not node_gpus(node)[0]:
        return False
    state, mig = mig_layout(node)
    if state and mig_capable(node_gpus(node)[1]):
        cluster.mutate(cluster.resource_for_key(NODES), "", node_name,
                       lambda obj: obj["metadata"].setdefault("labels", {}).update({MIG_CONFIG_STATE: state}))
    else:
        mig = None
    return advertise_gpus(cluster, node_name, replicas=1, sharing="none", mig_strategy=mig_strategy, mig=mig)


def _gpu_resource(name):
    return name in (GPU, GPU + ".shared") or name.startswith(MIG_PREFIX)


def _gfd_label(key):
    """A label GPU feature discovery writes (not the operator's ``gpu.present``/``gpu.deploy.*``, nor the
    admin's ``mig.config`` or the MIG manager's ``mig.config.state``)."""
    if key.startswith("nvidia.com/gpu."):
        return key != GPU_PRESENT and not key.startswith("nvidia.com/gpu.deploy.")
    return key.startswith(MIG_PREFIX) or key in (MIG_STRATEGY, "nvidia.com/mig.capable")


def withdraw_gpus(cluster, node_name):
    """The device plugin is gone: no GPU resource, no GFD labels (the operator's labels stay)."""
    def change(obj):
        labels = obj["metadata"].get("labels") or {}
        gone = [k for k in labels if _gfd_label(k)]
        status = obj.get("status") or {}
        has = any(_gpu_resource(r) for f in ("capacity", "allocatable") for r in (status.get(f) or {}))
        if not gone and not has:
            return False
        for key in gone:
            del labels[key]
        for field in ("capacity", "allocatable"):
            values = status.get(field) or {}
            for name in [r for r in values if _gpu_resource(r)]:
                del values[name]
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
            watched = GPU_PCI_LABELS + ("nvidia.com/device-plugin.config", GPU_PRESENT, MIG_CONFIG)
            if event.type == "MODIFIED" and all(old_labels.get(k) == new_labels.get(k) for k in watched) and \
                    any(k.startswith(LABEL_PREFIX) for k in old_labels) == any(k.startswith(LABEL_PREFIX) for k in new_labels):
                return []
            return self.all_refs()
        if event.key == DAEMONSETS:
            return self.all_refs() if event.obj["metadata"]["name"] in {o[1] for o in OPERANDS} else []
        if event.key == PODS:
            app = (event.obj["metadata"].get("labels") or {}).get("app")
            return self.all_refs() if app in ("nvidia-device-plugin-daemonset", "gpu-feature-discovery",
                                              "nvidia-mig-manager") else []
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

    def _partition(self, namespace, node):
        """The MIG manager on ``node`` (reconfigure.go): ``nvidia.com/mig.config.state`` ``pending`` until its pod
        is Ready, then ``success`` or ``failed``; returns "pending", or the MIG profiles per GPU (None: no MIG)."""
        labels = node["metadata"].get("labels") or {}
        if not labels.get(MIG_CONFIG) or not mig_capable(node_gpus(node)[1]):
            return None
        name = node["metadata"]["name"]
        state, slices = mig_layout(node)
        if not self._ready_on(namespace, "nvidia-mig-manager", name):
            state, slices = "pending", "pending"
        if labels.get(MIG_CONFIG_STATE) != state:
            self.cluster.mutate(self.cluster.resource_for_key(NODES), "", name,
                                lambda obj: obj["metadata"].setdefault("labels", {}).update({MIG_CONFIG_STATE: state}))
        return slices

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
                strategy = ((policy.get("spec") or {}).get("mig") or {}).get("strategy") or "none"
                migrating = self.enabled(policy, "migManager", True)
                for node in present:
                    node_name = node["metadata"]["name"]
                    mig = self._partition(namespace, node) if migrating else None
                    if mig == "pending":
                        continue    # the MIG manager has not applied the node's mig.config yet
                    if left <= 0 and self._ready_on(namespace, "nvidia-device-plugin-daemonset", node_name) and \
                            self._ready_on(namespace, "gpu-feature-discovery", node_name):
                        replicas, rename = time_slicing(cluster, namespace, policy, node)
                        advertise_gpus(cluster, node_name, replicas, "time-slicing" if replicas > 1 else "none", rename,
                                       mig_strategy=strategy, mig=mig)
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
