# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cluster's environment, summarised for artifacts and KPI labels (standard library only).

``summarise`` takes what ``k8s_environment`` read (the version, nodes, storage
classes and, on OpenShift, ClusterVersion and Infrastructure) and returns the
files of ``cluster capture_environment`` and ``labels``: the few values a KPI
payload carries so that results of different clusters are never mixed (see
``regression.machine_keys``): platform and its version, node instance types, GPU
product, count and memory.

GPUs are read as the GPU operator's GPU feature discovery publishes them
(``nvidia.com/gpu.product``, ``nvidia.com/gpu.count``, ``nvidia.com/gpu.memory``
labels and ``nvidia.com/gpu`` allocatable); a node whose NVIDIA PCI device NFD
found (as the GPU operator recognises one: ``pci-10de.present``, ``pci-0302_10de.present``
or ``pci-0300_10de.present``, see ``kube/waits/gpu.py``) but whose GPUs are not allocatable
yet is listed with ``allocatable: 0``.
"""

from __future__ import annotations

import collections

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import gpu as gpu_waits

GPU_RESOURCE = "nvidia.com/gpu"
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
ROLE_PREFIX = "node-role.kubernetes.io/"


def _int(value):
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def node_summary(node):
    """One node: name, roles, instance type, capacity, allocatable, labels, taints, readiness, GPUs."""
    metadata, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    labels = metadata.get("labels") or {}
    ready = [c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"]
    info = status.get("nodeInfo") or {}
    allocatable = status.get("allocatable") or {}
    gpu = None
    if GPU_RESOURCE in allocatable or gpu_waits.has_gpu(node) or "nvidia.com/gpu.product" in labels:
        gpu = {"product": labels.get("nvidia.com/gpu.product"),
               "count": _int(labels.get("nvidia.com/gpu.count")) or _int((status.get("capacity") or {}).get(GPU_RESOURCE)),
               "allocatable": _int(allocatable.get(GPU_RESOURCE)),
               "memory_mib": _int(labels.get("nvidia.com/gpu.memory")) or None,
               "driver": ".".join(labels[k] for k in ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor",
                                                      "nvidia.com/cuda.driver.rev") if labels.get(k)) or None}
    return {
        "name": metadata.get("name"),
        "roles": sorted(key[len(ROLE_PREFIX):] for key in labels if key.startswith(ROLE_PREFIX)),
        "instance_type": next((labels[k] for k in INSTANCE_TYPE_LABELS if labels.get(k)), None),
        "ready": ready == ["True"],
        "unschedulable": bool(spec.get("unschedulable")),
        "capacity": status.get("capacity") or {},
        "allocatable": allocatable,
        "labels": labels,
        "taints": spec.get("taints") or [],
        "kubelet_version": info.get("kubeletVersion"),
        "os_image": info.get("osImage"),
        "container_runtime": info.get("containerRuntimeVersion"),
        "gpu": gpu,
    }


def _cluster_version(cluster_version):
    """(version, channel) of an OpenShift ClusterVersion: the last completed update."""
    if not cluster_version:
        return None, None
    history = (cluster_version.get("status") or {}).get("history") or []
    completed = [h.get("version") for h in history if h.get("state") == "Completed"]
    desired = ((cluster_version.get("status") or {}).get("desired") or {}).get("version")
    return (completed[0] if completed else desired), (cluster_version.get("spec") or {}).get("channel")


def _counted(values):
    """``{"a": 2, "b": 1}`` as ``"2x a, 1x b"`` (most first), or None."""
    counts = collections.Counter(v for v in values if v)
    return ", ".join("%dx %s" % (n, v) for v, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))) or None


def summarise(version, nodes, storage_classes, cluster_version=None, infrastructure=None):
    """``{"files": {name: content}, "labels": {...}}`` of one cluster."""
    summaries = [node_summary(n) for n in nodes]
    workers = [s for s in summaries if "control-plane" not in s["roles"] and "master" not in s["roles"]]
    gpu_nodes = [s for s in summaries if s["gpu"]]
    openshift_version, channel = _cluster_version(cluster_version)
    infra_status = (infrastructure or {}).get("status") or {}
    platform = "openshift" if cluster_version else "kubernetes"
    default_class = [(sc.get("metadata") or {}).get("name") for sc in storage_classes
                     if ((sc.get("metadata") or {}).get("annotations") or {}).get(
                         "storageclass.kubernetes.io/is-default-class") == "true"]
    gpus = [dict(node=s["name"], instance_type=s["instance_type"], **s["gpu"]) for s in gpu_nodes]
    labels = {
        "platform": platform,
        "kubernetes_version": (version or {}).get("gitVersion"),
        "openshift_version": openshift_version,
        "cloud_platform": infra_status.get("platform") or (infra_status.get("platformStatus") or {}).get("type"),
        "node_count": len(summaries),
        "worker_count": len(workers),
        "worker_instance_types": _counted(s["instance_type"] for s in workers),
        "gpu_node_count": len(gpu_nodes),
        "gpu_product": _counted(g["product"] for g in gpus),
        "gpu_count": sum(g["allocatable"] for g in gpus),
        "gpu_memory_mib": max((g["memory_mib"] or 0 for g in gpus), default=0) or None,
    }
    storage = [{"name": (sc.get("metadata") or {}).get("name"), "provisioner": sc.get("provisioner"),
                "default": (sc.get("metadata") or {}).get("name") in default_class,
                "volume_binding_mode": sc.get("volumeBindingMode"), "reclaim_policy": sc.get("reclaimPolicy")}
               for sc in storage_classes]
    files = {
        "version.json": version or {},
        "nodes.json": summaries,
        "gpus.json": gpus,
        "storage_classes.json": storage,
        "labels.json": labels,
        "environment.json": {"labels": labels, "version": version or {}, "openshift_channel": channel,
                             "nodes": [{k: s[k] for k in ("name", "roles", "instance_type", "ready", "gpu")}
                                       for s in summaries],
                             "storage_classes": storage},
    }
    if cluster_version:
        files["clusterversion.json"] = cluster_version
    if infrastructure:
        files["infrastructure.json"] = infrastructure
    return {"files": files, "labels": labels}


def labels_line(labels):
    """One line for the task output: what the cluster is."""
    parts = [labels.get("platform"), labels.get("openshift_version") or labels.get("kubernetes_version"),
             "%d node(s)" % labels.get("node_count", 0)]
    if labels.get("worker_instance_types"):
        parts.append("workers: %s" % labels["worker_instance_types"])
    parts.append("GPUs: %s" % ("%d (%s)" % (labels["gpu_count"], labels["gpu_product"] or "product unknown")
                               if labels.get("gpu_node_count") else "none"))
    return ", ".join(str(p) for p in parts if p)
