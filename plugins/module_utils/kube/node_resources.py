# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How much of a node is free: allocatable minus what its running pods request (what the
scheduler's NodeResourcesFit counts), for ``cluster fill_workernodes``."""

from __future__ import annotations

import math
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError

QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
SUFFIXES = {"": 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
            "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
FINISHED_PHASES = ("Succeeded", "Failed")


def parse_quantity(value):
    """A Kubernetes quantity as a number (``500m`` -> 0.5, ``64Gi`` -> 68719476736)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        amount = float(value)
    else:
        match = QUANTITY.match(str(value if value is not None else "").strip())
        amount = float(match.group(1)) * SUFFIXES[match.group(2)] if match and match.group(2) in SUFFIXES else None
    if amount is None or not math.isfinite(amount):
        raise ClusterError("quantity %r: expected a Kubernetes quantity such as 500m, 4 or 16Gi" % (value,))
    return amount


def _container_requests(container):
    resources = container.get("resources") or {}
    requests = dict(resources.get("limits") or {})   # a request defaults to its limit
    requests.update(resources.get("requests") or {})
    return {name: parse_quantity(amount) for name, amount in requests.items()}


def pod_requests(pod):
    """What a pod requests: its containers summed, the largest init container's when larger, its overhead."""
    spec = pod.get("spec") or {}
    total = {}
    for container in spec.get("containers") or ():
        for name, amount in _container_requests(container).items():
            total[name] = total.get(name, 0.0) + amount
    for container in spec.get("initContainers") or ():
        for name, amount in _container_requests(container).items():
            total[name] = max(total.get(name, 0.0), amount)
    for name, amount in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, 0.0) + parse_quantity(amount)
    return total


def free_resources(nodes, pods, resources=("cpu", "memory")):
    """Per node (in the order given): ``{"node", "cpu_millicores", "memory_bytes", ...}``, the allocatable
    amount of each resource minus the requests of the node's pods that have not finished (never below 0)."""
    requested = {}
    for pod in pods:
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name or (pod.get("status") or {}).get("phase") in FINISHED_PHASES:
            continue
        totals = requested.setdefault(node_name, {})
        for name, amount in pod_requests(pod).items():
            totals[name] = totals.get(name, 0.0) + amount
    free = []
    for node in nodes:
        name = node["metadata"]["name"]
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        if not isinstance(allocatable, dict):
            raise ClusterError("node %s: status.allocatable: expected a mapping of resources to quantities" % name)
        entry = {"node": name}
        for resource in resources:
            amount = parse_quantity(allocatable.get(resource, 0)) - requested.get(name, {}).get(resource, 0.0)
            amount = max(amount, 0.0)
            if resource == "cpu":
                entry["cpu_millicores"] = int(amount * 1000)
            elif resource == "memory":
                entry["memory_bytes"] = int(amount)
            else:
                entry[resource] = int(amount)
        free.append(entry)
    return free
