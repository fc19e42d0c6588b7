# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a point's pods can be placed on the cluster's GPU nodes at all.

The nodes are read as ``kube/environment.node_summary`` gives them (from the GPU operator's labels
``nvidia.com/gpu.product``, ``.count``, ``.memory`` and the allocatable ``nvidia.com/gpu``). A node takes
a GPU pod when it is Ready, schedulable, has the product the point asks for (if it asks for one) and
has no ``NoSchedule``/``NoExecute`` taint the pod does not tolerate. A taint whose key is
``nvidia.com/gpu`` counts as tolerated: Kubernetes' ExtendedResourceToleration admission plugin (on by
default on OpenShift) adds that toleration to every pod that requests ``nvidia.com/gpu``.

A point asks for ``pods`` pods of ``gpus_per_pod`` GPUs each (a tensor-parallel vLLM replica is one
pod; a PyTorchJob's workers are its pods). It fits when every pod fits on one node and all of them fit
together (first-fit decreasing over the nodes' allocatable GPUs). GPUs that other pods use are not
subtracted: this says whether the point can be placed at all, not whether it can be placed now.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import gpus as gpu_table

TOLERATED_KEYS = ("nvidia.com/gpu",)
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def _product(node):
    product = ((node.get("gpu") or {}).get("product")) or ""
    return product[:-len(gpu_table.SHARED_SUFFIX)] if product.endswith(gpu_table.SHARED_SUFFIX) else product


def _tolerates(taint, tolerations):
    if taint.get("key") in TOLERATED_KEYS:
        return True
    for toleration in tolerations or ():
        if toleration.get("operator") == "Exists" and not toleration.get("key"):
            return True
        if toleration.get("key") != taint.get("key"):
            continue
        if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
            continue
        if toleration.get("operator") == "Exists" or toleration.get("value") == taint.get("value"):
            return True
    return False


def gpu_nodes(nodes, tolerations=None):
    """``[{"name", "product", "gpus", "memory_mib", "excluded"}]`` of the nodes with GPUs (``excluded``:
    why a pod cannot go there, or None)."""
    found = []
    for node in nodes:
        gpu = node.get("gpu")
        if not gpu:
            continue
        excluded = None
        if not node.get("ready"):
            excluded = "not Ready"
        elif node.get("unschedulable"):
            excluded = "cordoned (unschedulable)"
        else:
            blocking = [t for t in node.get("taints") or () if t.get("effect") in BLOCKING_EFFECTS
                        and not _tolerates(t, tolerations)]
            if blocking:
                excluded = "taint %s=%s:%s not tolerated" % (blocking[0].get("key"), blocking[0].get("value", ""),
                                                             blocking[0].get("effect"))
        if not excluded and not gpu.get("allocatable"):
            excluded = "no allocatable nvidia.com/gpu (the GPU stack is not ready)"
        found.append({"name": node.get("name"), "product": _product(node), "gpus": int(gpu.get("allocatable") or 0),
                      "memory_mib": gpu.get("memory_mib"), "excluded": excluded})
    return found


def products(nodes):
    """The GPU products of the usable GPU nodes, most GPUs first."""
    totals = {}
    for node in gpu_nodes(nodes):
        if not node["excluded"] and node["product"]:
            totals[node["product"]] = totals.get(node["product"], 0) + node["gpus"]
    return sorted(totals, key=lambda p: (-totals[p], p))


def place(nodes, gpus_per_pod, pods=1, product=None, tolerations=None):
    """``{"placeable", "reason", "nodes"}``: whether ``pods`` pods of ``gpus_per_pod`` GPUs fit."""
    total = gpus_per_pod * pods
    if gpus_per_pod <= 0:
        return {"placeable": True, "reason": "asks for no GPU", "nodes": []}
    candidates = gpu_nodes(nodes, tolerations)
    usable = [n for n in candidates if not n["excluded"] and (not product or n["product"] == product)]
    if not candidates:
        return {"placeable": False, "reason": "the cluster has no GPU node (nvidia.com/gpu)", "nodes": []}
    if not usable:
        if product and not any(n["product"] == product for n in candidates):
            reason = "no node has %s GPUs (the cluster has: %s)" % (product, ", ".join(sorted(
                {n["product"] or "unlabelled" for n in candidates})))
        else:
            reason = "no GPU node can take the pod: %s" % "; ".join(
                "%s %s" % (n["name"], n["excluded"]) for n in candidates if n["excluded"])
        return {"placeable": False, "reason": reason, "nodes": []}
    largest = max(n["gpus"] for n in usable)
    if gpus_per_pod > largest:
        return {"placeable": False, "nodes": [],
                "reason": "a pod asks for %d GPUs on one node; the largest %snode has %d" % (
                    gpus_per_pod, product + " " if product else "", largest)}
    free = sorted(((n["gpus"], n["name"]) for n in usable), reverse=True)
    placed = []
    for _pod in range(pods):
        for index, (count, name) in enumerate(free):
            if count >= gpus_per_pod:
                free[index] = (count - gpus_per_pod, name)
                placed.append(name)
                break
        else:
            return {"placeable": False, "nodes": placed,
                    "reason": "%d pods of %d GPUs (%d in all): only %d fit on the %d usable GPU node(s) (%d GPUs)" % (
                        pods, gpus_per_pod, total, len(placed), len(usable), sum(n["gpus"] for n in usable))}
        free.sort(reverse=True)
    return {"placeable": True, "nodes": placed,
            "reason": "%d pod(s) of %d GPU(s) on %s" % (pods, gpus_per_pod, ", ".join(sorted(set(placed))))}
