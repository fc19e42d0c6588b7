#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_metrics_capture
short_description: Scrape what a ServiceMonitor or PodMonitor points at, from a pod, while a test runs
version_added: 0.2.0
description:
  - The machinery of C(cluster capture_servicemonitor_metrics).
  - O(finalize=false) reads the monitor (C(monitoring.coreos.com/v1) ServiceMonitor, or PodMonitor with
    O(is_podmonitor)), resolves its targets as the Prometheus Operator does (a ServiceMonitor - the
    Services its selector picks, their Running pods, each endpoint's service port to the container
    port; a PodMonitor - the Running pods its selector picks and their C(podMetricsEndpoints)), and
    starts a capture pod in O(namespace) that fetches every target each O(capture_frequency) seconds
    into its log. A capture pod of the same monitor left from before is replaced.
  - O(finalize=true) reads the capture pod's log, splits it per target, and deletes the pod.
  - Returns the files for M(perfscale.topsail.write_artifacts) - the monitor, its Services, pods and
    targets at the start; C(metrics/<target>.txt), C(scrapes.json) and the log at the finalize.
  - In the C(perfscale.topsail.k8s) action group (the toolbox sets its connection).
author:
  - perfscale.topsail developers (@perfscale)
options:
  service_name:
    description: Name of the ServiceMonitor (or PodMonitor).
    type: str
    required: true
  namespace:
    description: Namespace of the monitor and of the capture pod; empty - the kubeconfig context's namespace, else C(default).
    type: str
    default: ""
  capture_frequency:
    description: Seconds between two scrapes of the targets.
    type: int
    default: 60
  is_podmonitor:
    description: The monitor is a PodMonitor.
    type: bool
    default: false
  finalize:
    description: Collect the capture pod's scrapes and delete it, instead of starting it.
    type: bool
    default: false
  capture_image:
    description: Image of the capture pod (it needs C(sh), C(curl) and C(date)).
    type: str
    default: registry.access.redhat.com/ubi9/ubi-minimal:latest
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - perfscale.topsail.action_attributes.module
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
"""

EXAMPLES = r"""
- name: Start scraping what the vLLM PodMonitor scrapes
  perfscale.topsail.k8s_metrics_capture:
    service_name: vllm
    namespace: llm-serving
    is_podmonitor: true
    capture_frequency: 15
  register: started

- name: Keep what was resolved
  perfscale.topsail.write_artifacts:
    files: "{{ started.files }}"
"""

RETURN = r"""
files:
  description: Relative path to content, for M(perfscale.topsail.write_artifacts).
  returned: always
  type: dict
pod:
  description: The capture pod (namespace/name).
  returned: always
  type: str
targets:
  description: The targets scraped (name, pod, port, url).
  returned: always
  type: list
  elements: dict
scrapes:
  description:
    - With O(finalize), per target - whole scrapes, first and last time, errors, and scrapes left out
      as incomplete (still being written when the log was read).
  returned: when finalize
  type: dict
"""

import copy
import os
import time

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import metrics_capture as capture

try:
    from kubernetes.dynamic.exceptions import DynamicApiError, NotFoundError
except ImportError:  # reported by AnsibleK8SModule (the kubernetes library is required)
    DynamicApiError = NotFoundError = Exception

POD_GONE_TIMEOUT_S = 60


def argspec():
    args = copy.deepcopy(AUTH_ARG_SPEC)
    args.update(
        service_name=dict(type="str", required=True),
        namespace=dict(type="str", default=""),
        capture_frequency=dict(type="int", default=60),
        is_podmonitor=dict(type="bool", default=False),
        finalize=dict(type="bool", default=False),
        capture_image=dict(type="str", default="registry.access.redhat.com/ubi9/ubi-minimal:latest"),
    )
    return args


def current_namespace(params):
    """The kubeconfig context's namespace (the context given, else the current one), else default."""
    from kubernetes import config as kube_config

    kubeconfig = params.get("kubeconfig") or os.environ.get("K8S_AUTH_KUBECONFIG") or None
    try:
        contexts, active = kube_config.list_kube_config_contexts(
            config_file=kubeconfig if isinstance(kubeconfig, str) else None)
    except (kube_config.ConfigException, OSError, TypeError):
        return "default"
    chosen = next((c for c in contexts if c.get("name") == params.get("context")), active) if params.get("context") \
        else active
    return ((chosen or {}).get("context") or {}).get("namespace") or "default"


def _items(resource, namespace):
    return resource.get(namespace=namespace).to_dict()["items"]


def start(svc, params, namespace, name):
    kind = capture.MONITOR_KINDS[params["is_podmonitor"]]
    monitors = svc.find_resource(kind, "monitoring.coreos.com/v1", fail=False)
    if monitors is None:
        raise capture.CaptureError("the cluster does not serve %s (monitoring.coreos.com/v1): is the Prometheus "
                                   "Operator installed?" % kind)
    try:
        monitor = monitors.get(name=params["service_name"], namespace=namespace).to_dict()
    except NotFoundError:
        raise capture.CaptureError("%s %s not found in namespace %s" % (kind, params["service_name"], namespace)) from None
    pods_api = svc.find_resource("Pod", "v1", fail=True)
    namespaces = capture.monitor_namespaces(monitor)
    pods = [pod for ns in namespaces for pod in _items(pods_api, ns)]
    services = []
    if params["is_podmonitor"]:
        targets = capture.pod_monitor_targets(monitor, pods)
    else:
        services_api = svc.find_resource("Service", "v1", fail=True)
        services = [service for ns in namespaces for service in _items(services_api, ns)]
        targets = capture.service_monitor_targets(monitor, services, pods)
    if not targets:
        raise capture.CaptureError("%s %s/%s: no target (no Running pod behind its selector and ports)"
                                   % (kind, namespace, params["service_name"]))
    _delete_pod(pods_api, namespace, name)
    manifest = capture.capture_pod(name, namespace, params["service_name"], targets, params["capture_frequency"],
                                   params["capture_image"])
    pods_api.create(body=manifest, namespace=namespace)
    files = {"%s.yaml" % kind.lower(): [monitor], "targets.yaml": targets, "capture_pod.yaml": [manifest]}
    if services:
        files["services.yaml"] = services
    return {"changed": True, "files": files, "targets": targets,
            "msg": "capturing %d target(s) of %s %s/%s every %d s in pod %s" % (
                len(targets), kind, namespace, params["service_name"], params["capture_frequency"], name)}


def finalize(svc, module, params, namespace, name):
    pods_api = svc.find_resource("Pod", "v1", fail=True)
    try:
        pod = pods_api.get(name=name, namespace=namespace).to_dict()
    except NotFoundError:
        raise capture.CaptureError("no capture pod %s in namespace %s: was capture_servicemonitor_metrics started "
                                   "(finalize=false) for %s?" % (name, namespace, params["service_name"])) from None
    from kubernetes import client as kube_client

    core = kube_client.CoreV1Api(svc.client.client.client)
    try:
        log = core.read_namespaced_pod_log(name, namespace, container="capture")
    except kube_client.exceptions.ApiException as exc:
        module.warn("capture pod %s/%s: its log cannot be read (%s %s)" % (namespace, name, exc.status, exc.reason))
        log = ""
    targets = capture.targets_of_pod(pod)
    files, index = capture.finalize_files(log, targets)
    _delete_pod(pods_api, namespace, name)
    scraped = sum(item["scrapes"] for item in index.values())
    return {"changed": True, "files": files, "targets": targets, "scrapes": index,
            "msg": "%d scrape(s) of %d target(s) from pod %s/%s; pod deleted" % (scraped, len(index), namespace, name)}


def _delete_pod(pods_api, namespace, name):
    try:
        pods_api.delete(name=name, namespace=namespace)
    except NotFoundError:
        return
    deadline = time.monotonic() + POD_GONE_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            pods_api.get(name=name, namespace=namespace)
        except NotFoundError:
            return
        time.sleep(0.5)
    raise capture.CaptureError("capture pod %s/%s still there %d s after its deletion"
                               % (namespace, name, POD_GONE_TIMEOUT_S))


def run(module_class):
    """The module's work, with the AnsibleModule class given (on the controller, the action plugin of the same
    name does it in Ansible's worker with a stand-in: plugins/plugin_utils/kube_action.py)."""
    module = AnsibleK8SModule(module_class=module_class, argument_spec=argspec())
    params = module.params
    if params["capture_frequency"] <= 0:
        module.fail_json(msg="capture_frequency %s: expected a number of seconds > 0" % params["capture_frequency"])
    namespace = params["namespace"] or current_namespace(params)
    name = capture.capture_pod_name(params["service_name"], params["is_podmonitor"])
    try:
        svc = K8sService(get_api_client(module=module), module)
        result = finalize(svc, module, params, namespace, name) if params["finalize"] else start(svc, params, namespace, name)
    except CoreException as exc:
        module.fail_from_exception(exc)
    except capture.CaptureError as exc:
        module.fail_json(msg=str(exc))
    except DynamicApiError as exc:
        module.fail_json(msg="%s %s: %s" % (exc.status, exc.reason, exc.summary() if hasattr(exc, "summary") else exc))
    result["pod"] = "%s/%s" % (namespace, name)
    module.exit_json(**result)


def main():
    run(AnsibleModule)


if __name__ == "__main__":
    main()
