#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_read
short_description: Read several kinds of cluster objects in one call
version_added: 0.3.0
description:
  - Reads every query of O(queries) (one object by name, or a list by namespace and selectors, as
    M(kubernetes.core.k8s_info) does) in one module call, with one connection to the API server.
  - A role that looks at several objects before it acts (a namespace, the objects in it, the
    package an operator comes from) reads them together; each M(kubernetes.core.k8s_info) call is
    a Python process of its own that loads the kubernetes client (about a second of CPU), so on a
    small controller or a loaded CI runner the reads of a command cost more than its work.
  - An object that does not exist is an empty list; a kind the cluster does not serve (a CRD not
    installed) is an empty list too, with RV(api_found) false for that query. Any other error of the
    API fails the module with one line naming the query.
  - In the C(perfscale.topsail.k8s) action group (the toolbox sets its connection).
author:
  - perfscale.topsail developers (@perfscale)
options:
  queries:
    description:
      - The reads, by a name of your choosing (the key of its result in RV(resources)).
      - Each is a mapping of C(kind) (required), C(api_version) (default V(v1)), C(name),
        C(namespace), C(label_selectors) and C(field_selectors) (lists of strings), as in
        M(kubernetes.core.k8s_info), and C(logs); another key is refused.
      - C(logs=true) (kind C(Pod) only) also reads the log of every pod the query found, in the
        same call - RV(logs) - instead of one M(kubernetes.core.k8s_log) call (a process) per pod.
    type: dict
    required: true
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
- name: Look at the namespace, its OperatorGroups and the package in the catalog
  perfscale.topsail.k8s_read:
    queries:
      namespace: {kind: Namespace, name: openshift-nfd}
      groups: {api_version: operators.coreos.com/v1, kind: OperatorGroup, namespace: openshift-nfd}
      package:
        api_version: packages.operators.coreos.com/v1
        kind: PackageManifest
        namespace: openshift-marketplace
        label_selectors: [catalog=redhat-operators]
  register: found

- name: Create the namespace when it is missing
  kubernetes.core.k8s:
    kind: Namespace
    name: openshift-nfd
  when: found.resources.namespace | length == 0
"""

RETURN = r"""
resources:
  description: The objects each query found, by the query's name (an empty list when none).
  returned: always
  type: dict
  sample: {"namespace": [{"kind": "Namespace", "metadata": {"name": "openshift-nfd"}}], "groups": []}
api_found:
  description: By the query's name, whether the cluster serves the query's kind.
  returned: always
  type: dict
  sample: {"namespace": true, "groups": true}
logs:
  description:
    - By the name of each query with C(logs=true), the log of each pod it found, by pod name - the
      logs of its containers in the order of its spec, one after the other (as
      M(kubernetes.core.k8s_log) with C(all_containers) gives them).
    - A pod whose log cannot be read (a container that never started) is not there, it is in RV(log_errors).
  returned: always
  type: dict
  sample: {"burners": {"gpu-burn-node-1": "100.0%  proc'd: 2 (25000 Gflop/s)\n"}}
log_errors:
  description: By the name of each query with C(logs=true), why the log of a pod could not be read, by pod name.
  returned: always
  type: dict
  sample: {"burners": {}}
"""

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import tasks


def argspec():
    args = copy.deepcopy(AUTH_ARG_SPEC)
    args.update(copy.deepcopy(tasks.READ_ARGS))
    return args


def run(module_class):
    """The module's work, with the AnsibleModule class given (on the controller, the action plugin of the same
    name does it in Ansible's worker with a stand-in: plugins/plugin_utils/kube_action.py)."""
    module = AnsibleK8SModule(module_class=module_class, argument_spec=argspec(), supports_check_mode=True)
    try:
        module.exit_json(**tasks.read_task(module.params, lambda: K8sService(get_api_client(module=module), module)))
    except CoreException as exc:
        module.fail_from_exception(exc)
    except tasks.TaskFailed as exc:
        module.fail_json(**exc.result)


def main():
    run(AnsibleModule)


if __name__ == "__main__":
    main()
