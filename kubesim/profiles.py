"""Cluster profiles: the nodes and objects a fresh kubesim starts with.

``vanilla``: one control-plane node and three workers, two of them with an
NVIDIA GPU (NFD label ``feature.node.kubernetes.io/pci-10de.present=true`` and
``nvidia.com/gpu`` capacity); namespaces ``default``, ``kube-system``,
``kube-public``, ``kube-node-lease`` and the user namespaces; a default
StorageClass. ``openshift``: the same (OpenShift kinds come later; the profile
marks its nodes with the OpenShift node-role labels).
"""

PROFILES = ("vanilla", "openshift")


def _node(name, roles, gpus=0, cpu="16", memory="64Gi", extra_labels=None, taints=None):
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}
    for role in roles:
        labels["node-role.kubernetes.io/%s" % role] = ""
    capacity = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"}
    if gpus:
        labels.update({"feature.node.kubernetes.io/pci-10de.present": "true",
                       "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
                       "nvidia.com/gpu.count": str(gpus)})
        capacity["nvidia.com/gpu"] = str(gpus)
    labels.update(extra_labels or {})
    node = {"metadata": {"name": name, "labels": labels},
            "spec": {"podCIDR": "10.128.0.0/24"},
            "status": {"capacity": capacity, "allocatable": dict(capacity),
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "kubelet is posting ready status"}],
                       "addresses": [{"type": "InternalIP", "address": "192.168.0.%d" % (10 + hash(name) % 200)},
                                     {"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v1.35.0-kubesim", "kubeProxyVersion": "v1.35.0-kubesim",
                                    "containerRuntimeVersion": "kubesim://1.0", "operatingSystem": "linux",
                                    "architecture": "amd64", "osImage": "kubesim", "kernelVersion": "6.1.0",
                                    "machineID": name, "systemUUID": name, "bootID": name}}}
    if taints:
        node["spec"]["taints"] = taints
    return node


def nodes_for(profile):
    if profile not in PROFILES:
        raise ValueError("unknown profile %r (known: %s)" % (profile, ", ".join(PROFILES)))
    worker_role = ["worker"]
    extra = {"node.openshift.io/os_id": "rhcos"} if profile == "openshift" else {}
    return [
        _node("control-plane-0", ["control-plane", "master"] if profile == "openshift" else ["control-plane"],
              cpu="8", memory="32Gi", extra_labels=extra,
              taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
        _node("worker-0", worker_role, extra_labels=extra),
        _node("worker-gpu-0", worker_role, gpus=4, cpu="64", memory="512Gi", extra_labels=extra),
        _node("worker-gpu-1", worker_role, gpus=4, cpu="64", memory="512Gi", extra_labels=extra),
    ]


def bootstrap(cluster, profile, user_namespaces=()):
    """Create the profile's objects (once: a reloaded state already has them)."""
    from kubesim.errors import ApiError

    def ensure(api_version, kind, body, namespace=None, keep_status=False):
        resource = cluster.resource(api_version, kind)
        try:
            cluster.create(resource, body, namespace, keep_status=keep_status)
        except ApiError as exc:
            if exc.code != 409:
                raise

    for name in ("default", "kube-system", "kube-public", "kube-node-lease") + tuple(user_namespaces):
        ensure("v1", "Namespace", {"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}})
    for node in nodes_for(profile):
        ensure("v1", "Node", node, keep_status=True)
    ensure("storage.k8s.io/v1", "StorageClass", {
        "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "kubesim.perfscale.io/hostpath", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"})
