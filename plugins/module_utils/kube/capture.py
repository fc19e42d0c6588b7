# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ``k8s_capture`` task does, wherever it runs (its module, or its action plugin on the controller:
module_utils/kube/tasks.py): the objects of some kinds in some namespaces, named objects with a line of
their conditions, the events and the pods' logs, as the files ``state.capture_files`` lays out."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import reads, state
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.query import FetchError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.reads import DynamicApiError

# a core kind named without its apiVersion
CORE_API_VERSIONS = {
    "Pod": "v1", "Service": "v1", "ConfigMap": "v1", "Secret": "v1", "Namespace": "v1", "Node": "v1",
    "Event": "v1", "PersistentVolumeClaim": "v1", "PersistentVolume": "v1", "ServiceAccount": "v1",
    "Endpoints": "v1", "Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1", "Job": "batch/v1", "CronJob": "batch/v1", "StorageClass": "storage.k8s.io/v1",
    "CustomResourceDefinition": "apiextensions.k8s.io/v1", "Role": "rbac.authorization.k8s.io/v1",
    "RoleBinding": "rbac.authorization.k8s.io/v1", "ClusterRole": "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
}


# the task's own arguments (its module and action plugin add kubernetes.core's AUTH_ARG_SPEC)
CAPTURE_ARGS = dict(
    namespaces=dict(type="list", elements="str", default=[]),
    kinds=dict(type="list", elements="str", default=list(state.DEFAULT_KINDS)),
    label_selectors=dict(type="list", elements="str", default=[]),
    objects=dict(type="list", elements="dict", default=[]),
    events=dict(type="bool", default=True),
    logs=dict(type="bool", default=True),
    tail_lines=dict(type="int", default=2000),
)


def _items(response):
    return [item.to_dict() if hasattr(item, "to_dict") else item for item in (response.to_dict().get("items") or [])]


def _list(resource, namespaces, selector):
    if not resource.namespaced or not namespaces:
        return _items(resource.get(label_selector=selector or None))
    found = []
    for namespace in namespaces:
        found.extend(_items(resource.get(namespace=namespace, label_selector=selector or None)))
    return found


def _logs(svc, pods, tail_lines):
    pod_resource = svc.find_resource("Pod", "v1", fail=True)
    logs = []
    for pod in pods:
        metadata, status = pod.get("metadata") or {}, pod.get("status") or {}
        statuses = (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or [])
        for container in statuses:
            instances = [False] + ([True] if container.get("restartCount") else [])
            for previous in instances:
                try:
                    text = reads.container_log(pod_resource, metadata["namespace"], metadata["name"], container["name"],
                                               previous=previous, tail_lines=tail_lines)
                except FetchError as exc:
                    # a log that cannot be read (a container that never started) is said, not fatal
                    text = "(log not available: %s)" % exc
                logs.append({"namespace": metadata["namespace"], "pod": metadata["name"],
                             "container": container["name"], "previous": previous, "text": text})
    return logs


def _named(svc, references):
    """The named objects ({kind: [objects]}) and a line of conditions for each."""
    found, lines = {}, []
    for reference in references:
        metadata = reference.get("metadata") or {}
        resource = svc.find_resource(reference.get("kind"), reference.get("apiVersion"), fail=False)
        described = "%s/%s%s" % (reference.get("kind"), metadata.get("name"),
                                 " -n %s" % metadata["namespace"] if metadata.get("namespace") else "")
        if resource is None:
            lines.append("%s: the cluster does not serve this kind" % described)
            continue
        try:
            obj = resource.get(name=metadata.get("name"), namespace=metadata.get("namespace") if resource.namespaced
                               else None).to_dict()
        except DynamicApiError as exc:
            lines.append("%s: not found (%s)" % (described, getattr(exc, "reason", None) or exc.__class__.__name__))
            continue
        found.setdefault(obj.get("kind"), []).append(obj)
        lines.append(state.conditions_line(obj))
    return found, lines


def capture(svc, params):
    selector = ",".join(params["label_selectors"])
    objects, missing = {}, []
    named, conditions = _named(svc, params["objects"])
    if params["objects"]:
        namespaces = params["namespaces"] or sorted({(o.get("metadata") or {}).get("namespace")
                                                     for o in params["objects"]} - {None, ""})
        params = dict(params, namespaces=namespaces, kinds=params["kinds"] if params["kinds"] != list(
            state.DEFAULT_KINDS) else ["Pod"])
    for spec in params["kinds"]:
        api_version, kind = state.parse_kind(spec)
        api_version = api_version or CORE_API_VERSIONS.get(kind)
        resource = svc.find_resource(kind, api_version, fail=False) if api_version else None
        if resource is None:
            missing.append(spec)
            continue
        objects[kind] = _list(resource, params["namespaces"], selector)
    events = []
    if params["events"]:
        events = _list(svc.find_resource("Event", "v1", fail=True), params["namespaces"], "")
    logs = _logs(svc, objects.get("Pod", []), params["tail_lines"]) if params["logs"] else []
    for kind, items in named.items():
        known = {(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects.get(kind, [])}
        objects.setdefault(kind, []).extend(o for o in items
                                            if (o["metadata"].get("namespace"), o["metadata"]["name"]) not in known)
    counts = {kind: len(items) for kind, items in objects.items()}
    counts.update(events=len(events), logs=len(logs))
    return {"changed": False, "files": state.capture_files(objects, events, logs), "counts": counts,
            "missing_kinds": missing, "conditions": conditions}


def capture_task(params, make_service):
    """k8s_capture: what ``capture`` finds, through the service ``make_service`` makes."""
    return capture(make_service(), params)
