#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_environment
short_description: Read what a Kubernetes or OpenShift cluster is - version, nodes, GPUs, storage classes
version_added: 0.2.0
description:
  - Reads the server version, every node (roles, instance type, capacity, allocatable, labels,
    taints, readiness), the GPU inventory the GPU operator publishes on the nodes, the storage
    classes and, on OpenShift, the C(ClusterVersion) and C(Infrastructure) objects.
  - Returns them as files for M(perfscale.topsail.write_artifacts) and as O(ignore:labels) - the
    few values KPI payloads carry (platform and version, worker instance types, GPU product,
    count and memory) so that results of different clusters are not compared with each other.
  - The core of C(cluster capture_environment); only reads.
author:
  - perfscale.topsail developers (@perfscale)
options: {}
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - perfscale.topsail.action_attributes.module
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
requirements:
  - kubernetes (Python library)
"""

EXAMPLES = r"""
- name: Read the cluster's environment
  perfscale.topsail.k8s_environment:
  register: cluster_environment

- name: Keep it
  perfscale.topsail.write_artifacts:
    files: "{{ cluster_environment.files }}"
"""

RETURN = r"""
files:
  description: File name to content - version.json, nodes.json, gpus.json, storage_classes.json, labels.json,
    environment.json, and clusterversion.json and infrastructure.json on OpenShift.
  returned: always
  type: dict
labels:
  description: The labels of KPI payloads (platform, kubernetes_version, openshift_version, cloud_platform,
    node_count, worker_count, worker_instance_types, gpu_node_count, gpu_product, gpu_count, gpu_memory_mib).
  returned: always
  type: dict
msg:
  description: One line saying what the cluster is.
  returned: always
  type: str
"""

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import environment

try:
    from kubernetes.dynamic.exceptions import DynamicApiError
except ImportError:  # AnsibleK8SModule reports the missing kubernetes library
    DynamicApiError = OSError


def _items(svc, kind, api_version):
    resource = svc.find_resource(kind, api_version, fail=False)
    if resource is None:
        return None
    return [item if isinstance(item, dict) else item.to_dict() for item in resource.get().to_dict().get("items") or []]


def _named(svc, kind, api_version, name):
    resource = svc.find_resource(kind, api_version, fail=False)
    if resource is None:
        return None
    try:
        return resource.get(name=name).to_dict()
    except DynamicApiError:
        return None


def execute_module(svc, client):
    version = (client.client.version or {}).get("kubernetes") or {}
    summary = environment.summarise(
        version,
        _items(svc, "Node", "v1") or [],
        _items(svc, "StorageClass", "storage.k8s.io/v1") or [],
        _named(svc, "ClusterVersion", "config.openshift.io/v1", "version"),
        _named(svc, "Infrastructure", "config.openshift.io/v1", "cluster"))
    return dict(changed=False, files=summary["files"], labels=summary["labels"],
                msg=environment.labels_line(summary["labels"]))


def run(module_class):
    """The module's work, with the AnsibleModule class given (on the controller, the action plugin of the same
    name does it in Ansible's worker with a stand-in: plugins/plugin_utils/kube_action.py)."""
    module = AnsibleK8SModule(module_class=module_class, argument_spec=copy.deepcopy(AUTH_ARG_SPEC),
                              supports_check_mode=True)
    try:
        client = get_api_client(module=module)
        module.exit_json(**execute_module(K8sService(client, module), client))
    except CoreException as exc:
        module.fail_from_exception(exc)


def main():
    run(AnsibleModule)


if __name__ == "__main__":
    main()
