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
- MIG: NVIDIA/k8s-device-plugin @ 1b826acc6af3079d8923bac395c3124b8861a9a6 (internal/lm/mig-strategy.go,
  internal/lm/resource.go, docs/gpu-feature-discovery/README.md "MIG 'single' strategy", "MIG 'mixed'
  strategy") and gpu-operator's validator (cmd/nvidia-validator/main.go: GPU resources are ``nvidia.com/gpu*``
  and ``nvidia.com/mig-*``). ``nvidia.com/mig.strategy=single``: the slices are ``nvidia.com/gpu``,
  ``nvidia.com/gpu.product`` is ``<GPU>-MIG-<profile>`` and ``gpu.count`` the slices; a node whose GPUs are not
  all cut into one profile is labelled ``<GPU>-MIG-INVALID`` with count 0 (``newInvalidMigStrategyLabeler``):
  nothing is advertised until the MIG configuration or the strategy changes. ``mixed``: one
  ``nvidia.com/mig-<profile>`` resource per profile, with ``nvidia.com/mig-<profile>.count``; the full GPUs'
  ``gpu.replicas`` is 0 (no sharing of MIG-enabled GPUs). NVIDIA/mig-parted @
  bd7160f43f16462eeb21e1eda5e67b5b6b03fd7d (pkg/mig/reconfigure/reconfigure.go): the MIG manager labels
  ``nvidia.com/mig.config.state`` ``pending``/``rebooting`` while it applies ``nvidia.com/mig.config``, then
  ``success`` or ``failed`` (kept until the configuration label changes).
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    Judge, Query, condition, condition_text, describe, failed, is_true, quantity_count, ready, short, status_of, to_int,
    waiting)
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
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
MIG_STRATEGY = "nvidia.com/mig.strategy"
MIG_CONFIG = "nvidia.com/mig.config"
MIG_CONFIG_STATE = "nvidia.com/mig.config.state"
MIG_CONFIG_BUSY = ("pending", "rebooting")
MIG_INVALID = "-MIG-INVALID"
VALIDATOR = "nvidia-operator-validator"


def labels_of(node):
    return (node.get("metadata") or {}).get("labels") or {}


def has_nfd_labels(node):
    return any(key.startswith(NFD_PREFIX) for key in labels_of(node))


def has_gpu(node):
    """As the GPU operator judges it: one of NFD's NVIDIA PCI labels is "true"."""
    labels = labels_of(node)
    return any(str(labels.get(key)) == "true" for key in GPU_PCI_LABELS)


def _count(value):
    try:
        return max(quantity_count(value), 0)
    except (OverflowError, TypeError):   # "inf", or a value that is not a quantity at all
        return 0


def is_gpu_resource(name):
    """A resource the NVIDIA device plugin advertises: ``nvidia.com/gpu``, ``nvidia.com/gpu.shared`` (time-slicing
    renamed) or a MIG profile's ``nvidia.com/mig-<profile>`` (its ``.shared`` too)."""
    return isinstance(name, str) and (name in GPU_RESOURCES or name.startswith(MIG_RESOURCE_PREFIX))


def gpu_resources(node):
    """``{resource: allocatable count}`` of the node's NVIDIA GPU resources (those above 0)."""
    allocatable = status_of(node).get("allocatable") or {}
    if not isinstance(allocatable, dict):
        return {}
    found = {name: _count(value) for name, value in allocatable.items() if is_gpu_resource(name)}
    return {name: count for name, count in found.items() if count > 0}


def allocatable_gpus(node):
    """The GPU devices a node offers: full GPUs, time-sliced replicas or MIG slices, whatever the MIG strategy."""
    return sum(gpu_resources(node).values())


def mig_strategy(node):
    """GFD's ``nvidia.com/mig.strategy`` (``single``, ``mixed``), else ``none``."""
    return str(labels_of(node).get(MIG_STRATEGY) or "none")


def mig_profiles(node):
    """``{nvidia.com/mig-<profile>: count}`` GFD labelled (``nvidia.com/mig-<profile>.count``, mixed strategy)."""
    found = {}
    for key, value in labels_of(node).items():
        if isinstance(key, str) and key.startswith(MIG_RESOURCE_PREFIX) and key.endswith(".count"):
            found[key[:-len(".count")]] = _count(value)
    return found


def mig_problem(node):
    """``(state, why)`` of a node's MIG set-up - ``("failed", ...)`` for a state no controller leaves by itself,
    ``("waiting", ...)`` while the MIG manager works - or ``(None, None)``."""
    labels = labels_of(node)
    config, state = labels.get(MIG_CONFIG), str(labels.get(MIG_CONFIG_STATE) or "")
    if state == "failed":
        return "failed", "%s: the MIG manager could not apply %s=%s (%s=failed)" % (
            node_name(node), MIG_CONFIG, config, MIG_CONFIG_STATE)
    if state in MIG_CONFIG_BUSY:
        return "waiting", "%s: the MIG manager is applying %s=%s (%s=%s)" % (
            node_name(node), MIG_CONFIG, config, MIG_CONFIG_STATE, state)
    product = str(labels.get("nvidia.com/gpu.product") or "")
    if product.endswith(MIG_INVALID):
        return "failed", ("%s: nvidia.com/gpu.product %s - MIG strategy %s needs every GPU cut into one MIG profile "
                          "(%s=%s): choose a single-profile configuration or the mixed strategy" % (
                              node_name(node), short(product), mig_strategy(node), MIG_CONFIG, config))
    return None, None


def gpu_resource_text(node):
    """The node's MIG resources as ``mig-1g.10gb=16,mig-2g.20gb=8`` (empty without MIG resources)."""
    return ",".join("%s=%d" % (name[len("nvidia.com/"):], count) for name, count in sorted(gpu_resources(node).items())
                    if name.startswith(MIG_RESOURCE_PREFIX))


def node_name(node):
    return (node.get("metadata") or {}).get("name")


def gpu_inventory(nodes):
    """One line per node the GPU operator labelled ``nvidia.com/gpu.present=true``, sorted by name:
    ``<node> <allocatable GPUs> <nvidia.com/gpu.product>`` (time-sliced GPUs and MIG slices count as allocatable),
    followed on a MIG mixed node by its MIG resources (``mig-1g.10gb=16,mig-2g.20gb=8``)."""
    lines = []
    for node in nodes or ():
        if not isinstance(node, dict) or str(labels_of(node).get("nvidia.com/gpu.present")) != "true":
            continue
        lines.append("%s %d %s %s" % (node_name(node), allocatable_gpus(node),
                                      labels_of(node).get("nvidia.com/gpu.product", ""), gpu_resource_text(node)))
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


def node_advertising(node):
    """Why a GPU node does not yet advertise what GFD says it has (None when it does): allocatable GPU resources
    and ``nvidia.com/gpu.count``, and on a MIG mixed node every ``nvidia.com/mig-<profile>.count`` profile."""
    labels = labels_of(node)
    total = allocatable_gpus(node)
    if total <= 0 or not labels.get("nvidia.com/gpu.count"):
        return "%s (allocatable %d, gpu.count %s)" % (node_name(node), total,
                                                      labels.get("nvidia.com/gpu.count", "absent"))
    if mig_strategy(node) == "mixed":
        advertised = gpu_resources(node)
        short_of = ["%s %d of %d" % (name, advertised.get(name, 0), count)
                    for name, count in sorted(mig_profiles(node).items()) if count and advertised.get(name, 0) < count]
        if short_of:
            return "%s (MIG mixed: %s)" % (node_name(node), ", ".join(short_of))
    return None


class GpuStackReady(Judge):
    """The GPU stack as the GPU operator's own tests verify it: the ClusterPolicy ``Reconciled``, NFD's
    GPU labels on at least one node, the ``nvidia-operator-validator`` DaemonSet running on every GPU
    node (its pods are Ready once driver, toolkit, CUDA and device plugin are validated), and every GPU
    node advertising allocatable GPUs with GPU feature discovery's ``nvidia.com/gpu.count`` label - whatever the
    MIG strategy: MIG slices count (``nvidia.com/mig-<profile>``, every profile GFD counted), the MIG manager's
    ``pending``/``rebooting`` is waited through, its ``failed`` and GFD's ``-MIG-INVALID`` end the wait."""

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
        problems = [mig_problem(n) for n in gpu_nodes]
        broken = [why for state, why in problems if state == "failed"]
        if broken:
            return failed("; ".join(broken))
        busy = [why for state, why in problems if state == "waiting"]
        if busy:
            return waiting("; ".join(busy))
        missing = [node_advertising(n) for n in gpu_nodes]
        missing = [why for why in missing if why]
        if missing:
            return waiting("GPU node(s) without allocatable GPUs or GPU feature discovery labels: %s" % ", ".join(missing))
        total = sum(allocatable_gpus(n) for n in gpu_nodes)
        strategies = sorted({mig_strategy(n) for n in gpu_nodes} - {"none"})
        return ready("GPU stack ready: %d GPU node(s), %d allocatable GPU(s)%s, %s validated on each" % (
            len(gpu_nodes), total, " (MIG strategy %s)" % "/".join(strategies) if strategies else "", VALIDATOR))


class GpuTimeSlicing(Judge):
    """Every GPU node (``nvidia.com/gpu.present=true``) advertises ``gpu.count`` x ``replicas`` GPUs (with MIG
    single, ``gpu.count`` is the slices; a MIG mixed node whose GPUs are all MIG-enabled has nothing to share)."""

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
            if mig_strategy(node) == "mixed" and str(labels_of(node).get("nvidia.com/gpu.replicas")) == "0":
                # GFD labels MIG-enabled GPUs without sharing (replicas 0): their slices are not nvidia.com/gpu
                return failed("%s: MIG strategy mixed, its GPUs are MIG slices (%s) that time-slicing of "
                              "nvidia.com/gpu does not share"
                              % (node_name(node), gpu_resource_text(node) or "none advertised"))
            count = to_int(labels_of(node).get("nvidia.com/gpu.count"))
            if count == 0 or allocatable_gpus(node) != count * replicas:
                pending.append("%s (%d of %d)" % (node_name(node), allocatable_gpus(node), count * replicas))
        if pending:
            return waiting("GPU node(s) not advertising their GPUs x %d: %s" % (replicas, ", ".join(pending)))
        return ready("%d GPU node(s) advertise their GPUs x %d" % (len(nodes), replicas))


JUDGES = (NodeFeatureDiscoveryAvailable, GpuNodesDiscovered, ClusterPolicyReconciled, GpuStackReady, GpuTimeSlicing)
