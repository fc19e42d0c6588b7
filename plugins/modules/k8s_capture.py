#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_capture
short_description: Read what a post-mortem needs from a cluster - objects, events, pod logs
version_added: 0.2.0
description:
  - Reads, in one call, the objects of the chosen kinds in the chosen namespaces, the events
    of those namespaces and the logs of their pods' containers (and of the previous instance
    of a container that restarted), through the C(kubernetes.core) client (same connection
    options and environment as the C(kubernetes.core) modules; in the
    C(perfscale.topsail.k8s) action group).
  - Returns them laid out as files for M(perfscale.topsail.write_artifacts) - one YAML file
    per namespace and kind, C(events.yaml) per namespace, one log file per container, and
    C(conditions.txt) with every object's conditions on one line each. C(managedFields) are
    dropped; a Secret's values are always masked.
  - A kind the cluster does not serve is skipped and named in RV(missing_kinds).
  - Makes no change to the cluster.
author:
  - perfscale.topsail developers (@perfscale)
options:
  namespaces:
    description:
      - Namespaces to capture. Empty - every namespace.
    type: list
    elements: str
    default: []
  kinds:
    description:
      - Kinds to capture - a core kind name (C(Pod), C(Deployment)) or C(apiVersion/Kind)
        (C(serving.kserve.io/v1beta1/InferenceService)). Cluster-scoped kinds (C(Node)) are
        captured once.
    type: list
    elements: str
    default: [Pod, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, Service, PersistentVolumeClaim]
  label_selectors:
    description:
      - Only the objects (and pods) matching these selectors.
    type: list
    elements: str
    default: []
  objects:
    description:
      - Manifests (or references with C(apiVersion), C(kind), C(metadata.name) and
        C(metadata.namespace)) of objects to capture by name - what a command was handling when
        it failed - with the pods and events of their namespaces. Their conditions are in
        RV(conditions). When given, O(namespaces) defaults to their namespaces and O(kinds) to
        C(Pod).
    type: list
    elements: dict
    default: []
  events:
    description:
      - Capture the events of the namespaces.
    type: bool
    default: true
  logs:
    description:
      - Capture the logs of the pods' containers (and of their previous instance after a restart).
    type: bool
    default: true
  tail_lines:
    description:
      - The last lines of each log (0 - all).
    type: int
    default: 2000
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - perfscale.topsail.action_attributes.module
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
"""

EXAMPLES = r"""
- name: Capture the serving namespace
  perfscale.topsail.k8s_capture:
    namespaces: [llm-serving]
    kinds: [Pod, Deployment, serving.kserve.io/v1beta1/InferenceService]
  register: capture

- name: Write it into the command's artifact directory
  perfscale.topsail.write_artifacts:
    files: "{{ capture.files }}"
"""

RETURN = r"""
files:
  description: Relative path to content (lists of objects for C(.yaml), text for C(.log) and C(.txt)).
  returned: always
  type: dict
counts:
  description: Number of objects captured per kind, events and logs.
  returned: always
  type: dict
missing_kinds:
  description: Kinds the cluster does not serve (skipped).
  returned: always
  type: list
  elements: str
conditions:
  description: With O(objects), one line per object - its conditions, or that it does not exist.
  returned: always
  type: list
  elements: str
"""

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import reads, state
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.query import FetchError

try:
    from kubernetes.dynamic.exceptions import DynamicApiError
except ImportError:  # AnsibleK8SModule reports the missing kubernetes library
    DynamicApiError = OSError

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


def argspec():
    args = copy.deepcopy(AUTH_ARG_SPEC)
    args.update(
        namespaces=dict(type="list", elements="str", default=[]),
        kinds=dict(type="list", elements="str", default=list(state.DEFAULT_KINDS)),
        label_selectors=dict(type="list", elements="str", default=[]),
        objects=dict(type="list", elements="dict", default=[]),
        events=dict(type="bool", default=True),
        logs=dict(type="bool", default=True),
        tail_lines=dict(type="int", default=2000),
    )
    return args


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


def execute_module(svc, params):
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


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=True)
    try:
        svc = K8sService(get_api_client(module=module), module)
        module.exit_json(**execute_module(svc, module.params))
    except CoreException as exc:
        module.fail_from_exception(exc)


if __name__ == "__main__":
    main()
