# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``cluster set_scale`` changes so that a cluster has exactly N nodes of an instance type.

The reference's rule, on OpenShift's Machine API:

- the MachineSets *of the instance type* are those whose provider spec names it (or, with
  ``name``, the one MachineSet of that name);
- when their replicas already add up to ``scale``, nothing changes;
- when there is none, one is created from a base MachineSet (``base_machineset``, else the
  first worker MachineSet) with the instance type, ``scale`` replicas, the optional taint,
  spot market options and root disk size;
- when there is one, its replicas become ``scale``; when there are several, the first one
  (by name) gets ``scale`` and the others must already be at 0 - unless ``force``, which
  sets them to 0.

Plain data in, plain data out: the role reads the MachineSets, this module plans, the role
applies the plan and waits for the nodes.
"""

from __future__ import annotations

import copy
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError

TAINT = re.compile(r"^(?P<key>[^=:\s]+)(?:=(?P<value>[^:\s]*))?:(?P<effect>NoSchedule|PreferNoSchedule|NoExecute)$")
ROLE_LABEL = "machine.openshift.io/cluster-api-machine-role"
MACHINESET_LABEL = "machine.openshift.io/cluster-api-machineset"
# set by the API server or the machine controllers: never copied into a new MachineSet
SERVER_FIELDS = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink",
                 "ownerReferences", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers")


def parse_taint(text):
    """``key=value:Effect`` (value optional) as a taint; an empty text is no taint."""
    if not text:
        return None
    match = TAINT.match(text.strip())
    if not match:
        raise ClusterError("cluster set_scale: taint %r: expected key=value:Effect with Effect NoSchedule, "
                           "PreferNoSchedule or NoExecute" % text)
    taint = {"key": match.group("key"), "effect": match.group("effect")}
    if match.group("value"):
        taint["value"] = match.group("value")
    return taint


def instance_type(machineset):
    provider = (((machineset.get("spec") or {}).get("template") or {}).get("spec") or {}).get("providerSpec") or {}
    return ((provider.get("value") or {}).get("instanceType")) or ""


def replicas(machineset):
    return int((machineset.get("spec") or {}).get("replicas") or 0)


def _name(machineset):
    return machineset["metadata"]["name"]


def _new_name(base, wanted_type, name):
    if name:
        return name
    labels = (base.get("metadata") or {}).get("labels") or {}
    infra = labels.get("machine.openshift.io/cluster-api-cluster")
    provider = ((base["spec"]["template"].get("spec") or {}).get("providerSpec") or {}).get("value") or {}
    zone = (provider.get("placement") or {}).get("availabilityZone")
    suffix = wanted_type.replace(".", "-")
    if infra and zone:
        return "%s-%s-%s" % (infra, suffix, zone)
    return "%s-%s" % (_name(base), suffix)


def _new_machineset(base, wanted_type, scale, name, taint, spot, disk_size):
    body = copy.deepcopy(base)
    body.pop("status", None)
    metadata = body["metadata"]
    for field in SERVER_FIELDS:
        metadata.pop(field, None)
    new_name = _new_name(base, wanted_type, name)
    metadata["name"] = new_name
    spec = body["spec"]
    spec["replicas"] = scale
    spec.setdefault("selector", {}).setdefault("matchLabels", {})[MACHINESET_LABEL] = new_name
    template = spec["template"]
    template.setdefault("metadata", {}).setdefault("labels", {})[MACHINESET_LABEL] = new_name
    provider = template.setdefault("spec", {}).setdefault("providerSpec", {}).setdefault("value", {})
    provider["instanceType"] = wanted_type
    if taint:
        template["spec"]["taints"] = [taint]
    else:
        template["spec"].pop("taints", None)
    if spot:
        provider["spotMarketOptions"] = {}
    else:
        provider.pop("spotMarketOptions", None)
    if disk_size:
        devices = provider.get("blockDevices") or [{"ebs": {}}]
        devices[0].setdefault("ebs", {})["volumeSize"] = int(disk_size)
        provider["blockDevices"] = devices
    return body


def plan_scale(machinesets, wanted_type, scale, name="", base_machineset="", force=False, taint="", spot=False,
               disk_size=None):
    """The changes for ``scale`` nodes of ``wanted_type``:
    ``{"create": MachineSet body or None, "replicas": {name: replicas}, "machinesets": [names of the type],
    "unchanged": bool}``. Raises ClusterError (one line) when the rule forbids it."""
    if not wanted_type:
        raise ClusterError("cluster set_scale: instance_type: expected an instance type such as m6i.2xlarge")
    try:
        scale = int(scale)
    except (TypeError, ValueError):
        raise ClusterError("cluster set_scale: scale: expected a number of nodes, got %r" % (scale,)) from None
    if scale < 0:
        raise ClusterError("cluster set_scale: scale: expected 0 or more nodes, got %d" % scale)
    parsed_taint = parse_taint(taint)
    machinesets = sorted(machinesets, key=_name)
    if name:
        matching = [ms for ms in machinesets if _name(ms) == name]
        if matching and instance_type(matching[0]) != wanted_type:
            raise ClusterError("cluster set_scale: MachineSet %s has instance type %s, not %s"
                               % (name, instance_type(matching[0]) or "(none)", wanted_type))
    else:
        matching = [ms for ms in machinesets if instance_type(ms) == wanted_type]
    plan = {"create": None, "replicas": {}, "machinesets": [_name(ms) for ms in matching], "unchanged": False}
    if not matching:
        base = _base(machinesets, base_machineset)
        plan["create"] = _new_machineset(base, wanted_type, scale, name, parsed_taint, spot, disk_size)
        plan["machinesets"] = [plan["create"]["metadata"]["name"]]
        return plan
    if sum(replicas(ms) for ms in matching) == scale:
        plan["unchanged"] = True
        return plan
    first, others = matching[0], matching[1:]
    busy = [_name(ms) for ms in others if replicas(ms) > 0]
    if busy and not force:
        raise ClusterError("cluster set_scale: MachineSet(s) %s of %s also have replicas: set force: true to set them to 0"
                           % (", ".join(busy), wanted_type))
    for other in busy:
        plan["replicas"][other] = 0
    plan["replicas"][_name(first)] = scale
    return plan


def _base(machinesets, base_machineset):
    if base_machineset:
        for machineset in machinesets:
            if _name(machineset) == base_machineset:
                return machineset
        raise ClusterError("cluster set_scale: base_machineset %s: no such MachineSet (there are: %s)"
                           % (base_machineset, ", ".join(_name(ms) for ms in machinesets) or "none"))
    workers = [ms for ms in machinesets
               if (((ms["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}).get(ROLE_LABEL) == "worker"]
    if not workers:
        raise ClusterError("cluster set_scale: no worker MachineSet to copy: give base_machineset")
    return workers[0]
