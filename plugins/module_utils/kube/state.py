# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a post-mortem needs from a cluster, laid out as files (standard library only).

``capture_files`` turns what ``k8s_capture`` read (objects by kind, events, pod
logs) into ``{relative path: content}`` for ``write_artifacts``: one YAML file per
namespace and kind, ``events.yaml`` per namespace (oldest first), one log file per
container (``.previous.log`` for the container's previous instance), and
``conditions.txt``: every object's conditions on one line each, the first thing
to read. ``managedFields`` are dropped; a Secret's values are masked, always.
"""

from __future__ import annotations

import re

MASK = "********"
CLUSTER_SCOPE = "cluster-scoped"
# kinds a capture takes when none are named
DEFAULT_KINDS = ("Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "Service", "PersistentVolumeClaim")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def parse_kind(spec):
    """``(api_version or None, kind)`` of ``Pod``, ``apps/v1/Deployment`` or ``v1/Pod``."""
    spec = str(spec).strip()
    if "/" not in spec:
        return None, spec
    api_version, _sep, kind = spec.rpartition("/")
    return api_version, kind


def clean(obj):
    """An object as captured: no managedFields, a Secret's data and stringData masked."""
    obj = dict(obj)
    metadata = dict(obj.get("metadata") or {})
    metadata.pop("managedFields", None)
    annotations = dict(metadata.get("annotations") or {})
    # kubectl keeps the last applied configuration: a Secret's values would be there too
    if obj.get("kind") == "Secret":
        annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None)
        for field in ("data", "stringData"):
            if isinstance(obj.get(field), dict):
                obj[field] = {key: MASK for key in obj[field]}
    if "annotations" in metadata:
        metadata["annotations"] = annotations
    obj["metadata"] = metadata
    return obj


def conditions_line(obj):
    """``Kind/name -n ns: Ready=False (Reason: message); ...`` or the phase when no conditions."""
    metadata = obj.get("metadata") or {}
    name = "%s/%s" % (obj.get("kind"), metadata.get("name"))
    if metadata.get("namespace"):
        name += " -n %s" % metadata["namespace"]
    status = obj.get("status") or {}
    parts = []
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    if conditions and all("type" not in c and "phase" in c for c in conditions):
        # a phase history (ClusterServiceVersion): the last entry says where it is
        conditions = [dict(conditions[-1], type="last", status=conditions[-1].get("phase"))]
    for condition in conditions:
        text = "%s=%s" % (condition.get("type"), condition.get("status"))
        detail = ": ".join(p for p in (condition.get("reason"), condition.get("message")) if p)
        parts.append("%s (%s)" % (text, detail) if detail else text)
    if isinstance(status.get("replicas"), int):
        parts.insert(0, "ready=%s/%s" % (status.get("readyReplicas") or 0, status["replicas"]))
    elif isinstance(status.get("desiredNumberScheduled"), int):   # a DaemonSet
        parts.insert(0, "ready=%s/%s" % (status.get("numberReady") or 0, status["desiredNumberScheduled"]))
    connection = status.get("connectionState")
    if isinstance(connection, dict) and connection.get("lastObservedState"):   # a CatalogSource
        parts.insert(0, "connection=%s" % connection["lastObservedState"])
    for key in ("phase", "state"):
        if isinstance(status.get(key), str):
            parts.insert(0, "%s=%s" % (key, status[key]))
    return "%s: %s" % (name, "; ".join(parts) if parts else "no status")


def log_tail(text, lines=2, separator=" / "):
    """The last ``lines`` non-blank lines of a log, stripped and joined on one line ("" for an empty log)."""
    kept = [line.strip() for line in str(text or "").splitlines() if line.strip()]
    return separator.join(kept[-int(lines):]) if int(lines) > 0 else ""


def _file_name(text):
    return _SAFE.sub("_", str(text)).strip("_") or "_"


def capture_files(objects, events=(), logs=()):
    """Files of a capture: ``objects`` is {kind: [objects]}, ``events`` a list of Event
    objects, ``logs`` a list of {namespace, pod, container, previous, text}."""
    files = {}
    lines = []
    for kind, items in sorted(objects.items()):
        by_namespace = {}
        for obj in items:
            namespace = (obj.get("metadata") or {}).get("namespace") or CLUSTER_SCOPE
            by_namespace.setdefault(namespace, []).append(clean(obj))
            lines.append(conditions_line(obj))
        for namespace, cleaned in by_namespace.items():
            files["%s/%s.yaml" % (_file_name(namespace), _file_name(kind.lower()))] = cleaned
    by_namespace = {}
    for event in events:
        by_namespace.setdefault((event.get("metadata") or {}).get("namespace") or CLUSTER_SCOPE, []).append(event)
    for namespace, items in by_namespace.items():
        items.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime")
                                     or (e.get("metadata") or {}).get("creationTimestamp") or ""))
        files["%s/events.yaml" % _file_name(namespace)] = [
            {key: event.get(key) for key in ("lastTimestamp", "type", "reason", "involvedObject", "message", "count")}
            for event in items]
    for log in logs:
        name = "%s__%s%s.log" % (_file_name(log["pod"]), _file_name(log["container"]),
                                 ".previous" if log.get("previous") else "")
        files["%s/logs/%s" % (_file_name(log["namespace"]), name)] = log.get("text") or ""
    files["conditions.txt"] = "\n".join(lines)
    return files
