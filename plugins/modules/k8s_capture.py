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

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import capture


def argspec():
    args = copy.deepcopy(AUTH_ARG_SPEC)
    args.update(copy.deepcopy(capture.CAPTURE_ARGS))
    return args


def run(module_class):
    """The module's work, with the AnsibleModule class given (on the controller, the action plugin of the same
    name does it in Ansible's worker with a stand-in: plugins/plugin_utils/kube_action.py)."""
    module = AnsibleK8SModule(module_class=module_class, argument_spec=argspec(), supports_check_mode=True)
    try:
        module.exit_json(**capture.capture_task(module.params, lambda: K8sService(get_api_client(module=module), module)))
    except CoreException as exc:
        module.fail_from_exception(exc)


def main():
    run(AnsibleModule)


if __name__ == "__main__":
    main()
