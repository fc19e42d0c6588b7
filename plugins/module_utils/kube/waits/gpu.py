# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judges of the GPU stack: Node Feature Discovery and the NVIDIA GPU operator.

Upstream:
- openshift/cluster-nfd-operator @ 0e25cc101cfcb83719d64deef8184b320100c3c6, internal/status/status.go:
  a fresh NodeFeatureDiscovery is ``Degraded=True`` (``NFDWorkerDaemonSetDegraded``, "number of
  desired nodes for scheduling is 0") before its worker pods are scheduled, then ``Progressing``,
  possibly ``Degraded`` again while nfd-master or nfd-gc start, then ``Available``. Degraded is
  recomputed on every reconcile and is never final: only ``Available=True`` means ready.
- NVIDIA/gpu-operator @ a22dbf671f2e26f9a1e342f8eea28e196235e110: a node has a GPU when NFD labelled
  it ``feature.node.kubernetes.io/pci-10de.present``, ``pci-0302_10de.present`` or
  ``pci-0300_10de.present`` (controllers/state_manager.go ``gpuNodeLabels``, ``hasGPULabels``); the
  ClusterPolicy is ``state: ready`` with ``Ready=True`` and reason ``NFDLabelsMissing`` when no node
  has NFD labels and ``NoGPUNodes`` when none has a GPU - with no operand deployed
  (controllers/clusterpolicy_controller.go 237-275, object_controls.go 4661-4668). Only reason
  ``Reconciled`` says the operands are ready; ``OperandNotReady`` and ``ReconcileFailed`` are retried
  (internal/conditions/clusterpolicy.go). The GPU stack is verified by its operands: the
  ``nvidia-operator-validator`` DaemonSet (driver, toolkit, CUDA and device-plugin validations) and
  the GPUs the device plugin advertises (tests/e2e/helpers, tests/scripts/verify-operator.sh).
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    Judge, Query, condition, condition_text, describe, is_true, quantity_count, ready, status_of, to_int, waiting)
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.core import rollout

NFD_UPSTREAM = ("https://github.com/openshift/cluster-nfd-operator",
                "internal/status/status.go, internal/controllers/nodefeaturediscovery_reconciler.go")
GPU_UPSTREAM = ("https://github.com/NVIDIA/gpu-operator",
                "controllers/clusterpolicy_controller.go, controllers/state_manager.go, "
                "internal/conditions/clusterpolicy.go, controllers/object_controls.go")
NFD_PREFIX = "feature.node.kubernetes.io/"
# the NFD labels by which the GPU operator recognises an NVIDIA GPU (state_manager.go gpuNodeLabels)
GPU_PCI_LABELS = (NFD_PREFIX + "pci-10de.present", NFD_PREFIX + "pci-0302_10de.present",
                  NFD_PREFIX + "pci-0300_10de.present")
GPU_RESOURCES = ("nvidia.com/gpu", "nvidia.com/gpu.shared")
VALIDATOR = "nvidia-operator-validator"


def labels_of(node):
    return (node.get("metadata") or {}).get("labels") or {}


def has_nfd_labels(node):
    return any(key.startswith(NFD_PREFIX) for key in labels_of(node))


def has_gpu(node):
    """As the GPU operator judges it: one of NFD's NVIDIA PCI labels is "true"."""
    labels = labels_of(node)
    return any(str(labels.get(key)) == "true" for key in GPU_PCI_LABELS)


def allocatable_gpus(node):
    allocatable = status_of(node).get("allocatable") or {}
    return max(quantity_count(allocatable.get(r)) for r in GPU_RESOURCES)


def node_name(node):
    return (node.get("metadata") or {}).get("name")


def gpu_inventory(nodes):
    """One line per node the GPU operator labelled ``nvidia.com/gpu.present=true``, sorted by name:
    ``<node> <allocatable GPUs> <nvidia.com/gpu.product>`` (time-sliced GPUs count as allocatable)."""
    lines = []
    for node in nodes or ():
        if not isinstance(node, dict) or str(labels_of(node).get("nvidia.com/gpu.present")) != "true":
            continue
        lines.append("%s %d %s" % (node_name(node), allocatable_gpus(node),
                                   labels_of(node).get("nvidia.com/gpu.product", "")))
    return "".join(line.rstrip() + "\n" for line in sorted(lines))


class NodeFeatureDiscoveryAvailable(Judge):
    """A NodeFeatureDiscovery ``Available=True``; Degraded and Progressing are how its rollout starts."""

    name = "nodefeaturediscovery"
    description = "a NodeFeatureDiscovery Available"
    api_version = "nfd.openshift.io/v1"
    kind = "NodeFeatureDiscovery"
    upstream = NFD_UPSTREAM

    def observe(self, found, target):
        nfd = self.subject(found, target)
        if nfd is None:
            return self.absent(target)
        if is_true(nfd, "Available"):
            return ready("%s: %s" % (describe(nfd), condition_text(condition(nfd, "Available"))))
        for ctype in ("Degraded", "Progressing"):
            if is_true(nfd, ctype):
                return waiting("%s: %s" % (describe(nfd), condition_text(condition(nfd, ctype))))
        return waiting("%s: %s" % (describe(nfd), "no status yet" if not status_of(nfd) else
                                   condition_text(condition(nfd, "Available"))))


class GpuNodesDiscovered(Judge):
    """At least ``minimum`` nodes with an NVIDIA GPU as the GPU operator recognises one (NFD's
    ``pci-10de.present``, ``pci-0302_10de.present`` or ``pci-0300_10de.present``)."""

    name = "gpu_nodes"
    description = "nodes with an NVIDIA GPU (NFD labels)"
    api_version = "v1"
    kind = "Node"
    upstream = GPU_UPSTREAM
    options = ("minimum",)
    needs_name = False

    def observe(self, found, target):
        nodes = found.get("subject") or []
        gpus = sorted(node_name(n) for n in nodes if has_gpu(n))
        minimum = to_int(target.option("minimum", 1), 1)
        if len(gpus) >= minimum:
            return ready("%d node(s) with an NVIDIA GPU: %s" % (len(gpus), ", ".join(gpus)))
        labelled = sum(1 for n in nodes if has_nfd_labels(n))
        return waiting("%d of %d node(s) have an NVIDIA GPU label (%s), %d have NFD labels" % (
            len(gpus), len(nodes), " or ".join(k[len(NFD_PREFIX):] for k in GPU_PCI_LABELS), labelled))


def policy_state(policy):
    """``(reconciled, summary)`` of a ClusterPolicy: reconciled only with ``Ready=True`` reason ``Reconciled``."""
    status = status_of(policy)
    ready_condition = condition(policy, "Ready")
    error = condition(policy, "Error")
    text = "%s: state %s" % (describe(policy), status.get("state") or "none yet")
    if ready_condition is not None and str(ready_condition.get("status")) == "True":
        reason = ready_condition.get("reason")
        if reason == "Reconciled":
            return True, "%s, %s" % (text, condition_text(ready_condition))
        return False, "%s, %s (no operand is deployed in this state)" % (text, condition_text(ready_condition))
    if error is not None and str(error.get("status")) == "True":
        return False, "%s, %s" % (text, condition_text(error))
    return False, "%s, %s" % (text, condition_text(ready_condition))


class ClusterPolicyReconciled(Judge):
    """A ClusterPolicy ``Ready=True`` with reason ``Reconciled`` (``state: ready`` alone also means
    "no NFD label" or "no GPU node", with nothing deployed); OperandNotReady and ReconcileFailed are
    retried by the operator and waited through."""

    name = "clusterpolicy"
    description = "a ClusterPolicy reconciled"
    api_version = "nvidia.com/v1"
    kind = "ClusterPolicy"
    upstream = GPU_UPSTREAM
    needs_name = False

    def observe(self, found, target):
        policy = self.subject(found, target)
        if policy is None:
            return waiting("no ClusterPolicy (gpu_operator deploy_cluster_policy creates it)")
        reconciled, summary = policy_state(policy)
        return ready(summary) if reconciled else waiting(summary)


class GpuStackReady(Judge):
    """The GPU stack as the GPU operator's own tests verify it: the ClusterPolicy ``Reconciled``, NFD's
    GPU labels on at least one node, the ``nvidia-operator-validator`` DaemonSet running on every GPU
    node (its pods are Ready once driver, toolkit, CUDA and device plugin are validated), and every GPU
    node advertising allocatable GPUs with GPU feature discovery's ``nvidia.com/gpu.count`` label."""

    name = "gpu_stack"
    description = "the GPU stack deployed and validated"
    api_version = "nvidia.com/v1"
    kind = "ClusterPolicy"
    upstream = GPU_UPSTREAM
    options = ("operator_namespace",)
    needs_name = False

    def queries(self, target):
        return {"subject": Query(self.api_version, self.kind, None, target.name),
                "nodes": Query("v1", "Node"),
                "validator": Query("apps/v1", "DaemonSet", target.option("operator_namespace"), None,
                                   ("app=%s" % VALIDATOR,))}

    def observe(self, found, target):
        policy = self.subject(found, target)
        if policy is None:
            return waiting("no ClusterPolicy (gpu_operator deploy_cluster_policy creates it)")
        nodes = found.get("nodes") or []
        if not any(has_nfd_labels(n) for n in nodes):
            return waiting("no node has NFD labels (%s*): deploy NFD first; %s" % (NFD_PREFIX, policy_state(policy)[1]))
        gpu_nodes = [n for n in nodes if has_gpu(n)]
        if not gpu_nodes:
            return waiting("no node has an NVIDIA GPU label (%s); %s" % (
                " or ".join(k[len(NFD_PREFIX):] for k in GPU_PCI_LABELS), policy_state(policy)[1]))
        reconciled, summary = policy_state(policy)
        if not reconciled:
            return waiting(summary)
        validators = found.get("validator") or []
        if not validators:
            return waiting("%s; no %s DaemonSet yet" % (summary, VALIDATOR))
        validator = validators[0]
        done, why = rollout(validator)
        desired = to_int(status_of(validator).get("desiredNumberScheduled"))
        if not done or desired < len(gpu_nodes):
            return waiting("%s: %s (%d GPU node(s))" % (describe(validator), why, len(gpu_nodes)))
        missing = ["%s (allocatable %d, gpu.count %s)"
                   % (node_name(n), allocatable_gpus(n), labels_of(n).get("nvidia.com/gpu.count", "absent"))
                   for n in gpu_nodes
                   if allocatable_gpus(n) <= 0 or not labels_of(n).get("nvidia.com/gpu.count")]
        if missing:
            return waiting("GPU node(s) without allocatable GPUs or GPU feature discovery labels: %s" % ", ".join(missing))
        total = sum(allocatable_gpus(n) for n in gpu_nodes)
        return ready("GPU stack ready: %d GPU node(s), %d allocatable GPU(s), %s validated on each" % (
            len(gpu_nodes), total, VALIDATOR))


class GpuTimeSlicing(Judge):
    """Every GPU node (``nvidia.com/gpu.present=true``) advertises ``gpu.count`` x ``replicas`` GPUs."""

    name = "gpu_time_slicing"
    description = "GPUs shared by time-slicing"
    api_version = "v1"
    kind = "Node"
    upstream = ("https://github.com/NVIDIA/k8s-device-plugin", "README.md (Shared Access to GPUs with CUDA Time-Slicing)")
    options = ("replicas",)
    needs_name = False

    def queries(self, target):
        return {"subject": Query("v1", "Node", label_selectors=("nvidia.com/gpu.present=true",))}

    def observe(self, found, target):
        replicas = to_int(target.option("replicas", 1), 1)
        nodes = found.get("subject") or []
        if not nodes:
            return waiting("no node is labelled nvidia.com/gpu.present=true")
        pending = []
        for node in nodes:
            count = to_int(labels_of(node).get("nvidia.com/gpu.count"))
            if count == 0 or allocatable_gpus(node) != count * replicas:
                pending.append("%s (%d of %d)" % (node_name(node), allocatable_gpus(node), count * replicas))
        if pending:
            return waiting("GPU node(s) not advertising their GPUs x %d: %s" % (replicas, ", ".join(pending)))
        return ready("%d GPU node(s) advertise their GPUs x %d" % (len(nodes), replicas))


JUDGES = (NodeFeatureDiscoveryAvailable, GpuNodesDiscovered, ClusterPolicyReconciled, GpuStackReady, GpuTimeSlicing)
