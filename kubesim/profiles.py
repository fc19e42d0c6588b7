"""Cluster profiles: the nodes, objects and API bundles a fresh kubesim starts with.

``vanilla``: one control-plane node (tainted ``NoSchedule``) and three workers,
two of them with four NVIDIA GPUs each; namespaces ``default``, ``kube-system``,
``kube-public``, ``kube-node-lease`` and the user namespaces; a default
StorageClass. ``openshift``: the same nodes with OpenShift's labels, plus the
addons ``openshift`` (its APIs and cluster objects), ``olm`` (OLM with the
``redhat-operators``/``certified-operators``/``community-operators`` catalogs)
and ``gateway-api``, and runs OpenShift's gateway controller (``openshift.io/gateway-controller/v1``;
``vanilla`` runs none: a GatewayClass no running controller claims keeps its default status).
``openshift-mig-single`` / ``openshift-mig-mixed``: ``openshift`` with H100 GPU workers labelled
``nvidia.com/mig.config`` ``all-1g.10gb`` / ``all-balanced`` (kubesim.controllers.nvidia partitions them).

GPU nodes do not advertise their GPUs: as on a real node, nothing does until
NFD labels the PCI devices (``feature.node.kubernetes.io/pci-10de.present``)
and the GPU operator's device plugin registers ``nvidia.com/gpu``. A node
declares its hardware in the annotation ``kubesim.perfscale.io/pci-devices``
(a JSON list of ``{"class", "vendor", "device", "count", "product", "memoryMiB"}``);
the ``gpu-ready`` addon applies NFD's and the GPU operator's results at start.
"""

import json

from kubesim.errors import ApiError

PCI_DEVICES = "kubesim.perfscale.io/pci-devices"
MIG_CONFIG = "nvidia.com/mig.config"
OPENSHIFT_GATEWAY_CONTROLLER = "openshift.io/gateway-controller/v1"

# cloud instance types kubesim knows: capacity and PCI devices (MachineSets create nodes of these types)
INSTANCE_TYPES = {
    "m5.xlarge": {"cpu": 4, "memory": "16Gi"},
    "m5.2xlarge": {"cpu": 8, "memory": "32Gi"},
    "m6i.xlarge": {"cpu": 4, "memory": "16Gi"},
    "m6i.2xlarge": {"cpu": 8, "memory": "32Gi"},
    "m6i.4xlarge": {"cpu": 16, "memory": "64Gi"},
    "m6i.8xlarge": {"cpu": 32, "memory": "128Gi"},
    "g5.xlarge": {"cpu": 4, "memory": "16Gi", "gpus": (1, "2237", "NVIDIA-A10G", 23028)},
    "g5.2xlarge": {"cpu": 8, "memory": "32Gi", "gpus": (1, "2237", "NVIDIA-A10G", 23028)},
    "g5.12xlarge": {"cpu": 48, "memory": "192Gi", "gpus": (4, "2237", "NVIDIA-A10G", 23028)},
    "g6e.12xlarge": {"cpu": 48, "memory": "384Gi", "gpus": (4, "26b9", "NVIDIA-L40S", 46068)},
    "p4d.24xlarge": {"cpu": 96, "memory": "1152Gi", "gpus": (8, "20b0", "NVIDIA-A100-SXM4-40GB", 40960)},
    "p5.48xlarge": {"cpu": 192, "memory": "2048Gi", "gpus": (8, "2330", "NVIDIA-H100-80GB-HBM3", 81559)},
}


def pci_devices(instance_type):
    spec = INSTANCE_TYPES.get(instance_type) or {}
    devices = [{"class": "0200", "vendor": "1d0f", "device": "ec20", "count": 1, "product": "ENA"}]
    if spec.get("gpus"):
        count, device, product, memory = spec["gpus"]
        devices.append({"class": "0302", "vendor": "10de", "device": device, "count": count, "product": product,
                        "memoryMiB": memory})
    return devices


def node_body(name, roles, instance_type, extra_labels=None, taints=None, ready=True, annotations=None):
    """A Node as a kubelet registers it (capacity from the instance type, no GPU resource yet)."""
    spec = INSTANCE_TYPES[instance_type]
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
              "node.kubernetes.io/instance-type": instance_type, "beta.kubernetes.io/instance-type": instance_type,
              "topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": "us-east-1a"}
    for role in roles:
        labels["node-role.kubernetes.io/%s" % role] = ""
    labels.update(extra_labels or {})
    capacity = {"cpu": str(spec["cpu"]), "memory": spec["memory"], "pods": "250", "ephemeral-storage": "120Gi",
                "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
    address = "10.0.%d.%d" % (sum(map(ord, name)) % 200, len(name) + 10)
    node = {"metadata": {"name": name, "labels": labels,
                         "annotations": dict({PCI_DEVICES: json.dumps(pci_devices(instance_type))}, **(annotations or {}))},
            "spec": {"podCIDR": "10.128.%d.0/24" % (sum(map(ord, name)) % 250), "providerID": "kubesim:///%s" % name},
            "status": {"capacity": capacity, "allocatable": dict(capacity),
                       "conditions": [_ready_condition(ready)],
                       "addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v1.35.0-kubesim", "kubeProxyVersion": "v1.35.0-kubesim",
                                    "containerRuntimeVersion": "cri-o://1.35.0", "operatingSystem": "linux",
                                    "architecture": "amd64", "osImage": "kubesim", "kernelVersion": "6.1.0",
                                    "machineID": name, "systemUUID": name, "bootID": name}}}
    if taints:
        node["spec"]["taints"] = taints
    return node


def _ready_condition(ready):
    if ready:
        return {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}
    return {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
            "message": "container runtime network not ready: NetworkReady=false"}


class Profile:
    """``platform``: ``vanilla`` or ``openshift`` (default: the name), how the addons lay OLM and KServe out.
    ``gateway_controllers``: the Gateway API implementations running (their ``controllerName``; a
    GatewayClass of any other stays as the API server defaulted it). ``gpu_instance_type``: the two GPU
    workers' instance type. ``mig``: ``None``, or the MIG layout of the GPU workers (kubesim.controllers.nvidia):
    ``{"config": <mig-parted config the node label nvidia.com/mig.config names>, "strategy": <the MIG
    strategy the gpu-ready addon applies: single or mixed>}``."""

    def __init__(self, name, node_labels=None, control_plane_roles=("control-plane",), addons=(),
                 gateway_controllers=(), gpu_instance_type="g6e.12xlarge", mig=None, platform=None):
        self.name = name
        self.platform = platform or name        # vanilla | openshift: how OLM and KServe are laid out (kubesim.addons)
        self.node_labels = dict(node_labels or {})
        self.control_plane_roles = list(control_plane_roles)
        self.addons = tuple(addons)
        self.gateway_controllers = tuple(gateway_controllers)
        self.gpu_instance_type = gpu_instance_type
        self.mig = dict(mig) if mig else None

    def nodes(self):
        extra = self.node_labels
        return [
            node_body("control-plane-0", self.control_plane_roles, "m6i.2xlarge", extra,
                      taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
            node_body("worker-0", ["worker"], "m6i.4xlarge", extra),
            node_body("worker-gpu-0", ["worker"], self.gpu_instance_type, dict(extra, **self.gpu_node_labels())),
            node_body("worker-gpu-1", ["worker"], self.gpu_instance_type, dict(extra, **self.gpu_node_labels())),
        ]

    def gpu_node_labels(self):
        """What the cluster's admin labelled the GPU workers with: the MIG configuration the MIG manager applies."""
        return {MIG_CONFIG: self.mig["config"]} if self.mig else {}


OPENSHIFT = dict(platform="openshift", node_labels={"node.openshift.io/os_id": "rhcos"},
                 control_plane_roles=("control-plane", "master"), addons=("openshift", "olm", "gateway-api"),
                 gateway_controllers=(OPENSHIFT_GATEWAY_CONTROLLER,))
PROFILE_TABLE = {
    "vanilla": Profile("vanilla"),
    "openshift": Profile("openshift", **OPENSHIFT),
    # H100 80GB workers the MIG manager partitions: seven 1g.10gb slices per GPU, one MIG profile (single)...
    "openshift-mig-single": Profile("openshift-mig-single", gpu_instance_type="p5.48xlarge",
                                    mig={"config": "all-1g.10gb", "strategy": "single"}, **OPENSHIFT),
    # ... or 2 x 1g.10gb + 2g.20gb + 3g.40gb per GPU, several MIG profiles (mixed)
    "openshift-mig-mixed": Profile("openshift-mig-mixed", gpu_instance_type="p5.48xlarge",
                                   mig={"config": "all-balanced", "strategy": "mixed"}, **OPENSHIFT),
}
PROFILES = tuple(PROFILE_TABLE)


def profile(name):
    if name not in PROFILE_TABLE:
        raise ValueError("unknown profile %r (known: %s)" % (name, ", ".join(PROFILES)))
    return PROFILE_TABLE[name]


def nodes_for(name):
    return profile(name).nodes()


def ensure(cluster, api_version, kind, body, namespace=None, keep_status=False):
    """Create ``body`` unless it exists (bootstrap objects: a reloaded state already has them)."""
    resource = cluster.resource(api_version, kind)
    try:
        return cluster.create(resource, body, namespace, keep_status=keep_status)
    except ApiError as exc:
        if exc.code != 409:
            raise
        return None


def bootstrap(cluster, name, user_namespaces=()):
    """Create the profile's objects (once: a reloaded state already has them); returns its addons."""
    chosen = profile(name)
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease") + tuple(user_namespaces):
        ensure(cluster, "v1", "Namespace", {"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}})
    for node in chosen.nodes():
        ensure(cluster, "v1", "Node", node, keep_status=True)
    ensure(cluster, "storage.k8s.io/v1", "StorageClass", {
        "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "kubesim.perfscale.io/hostpath", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"})
    return chosen.addons
