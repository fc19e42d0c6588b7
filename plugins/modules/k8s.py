#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s
short_description: Create, apply, patch or delete cluster objects, as kubernetes.core.k8s does
version_added: 0.4.0
description:
  - M(kubernetes.core.k8s) - the same options, the same results, done by kubernetes.core's own code
    (its C(module_utils/k8s/runner.py)) - with one difference, where it runs.
  - On the controller itself (the C(local) connection, no C(become), no C(async)) the task runs in the
    worker process Ansible forks for it, rather than in a process of its own that starts Python and
    imports the kubernetes client at every call (about a second of CPU a task). Anywhere else, or with the
    variable C(perfscale_kube_tasks_in_controller) false, this module runs as M(kubernetes.core.k8s) would.
  - The roles of this collection create and delete objects with it; see M(kubernetes.core.k8s) for the
    meaning of each option and what it returns.
  - In the C(perfscale.topsail.k8s) action group (the toolbox sets its connection).
author:
  - perfscale.topsail developers (@perfscale)
options:
  resource_definition:
    description:
      - The object or objects to act upon - a mapping, a list of them, or their YAML as a string - as in
        M(kubernetes.core.k8s) (which types it with a function; here it is V(raw), checked the same way).
    type: raw
  state:
    description:
      - V(present) creates the object when it does not exist (or updates it), V(absent) deletes it,
        V(patched) changes an existing object and never creates one.
    type: str
    default: present
    choices: [present, absent, patched]
  force:
    description:
      - With O(state=present), replace the existing object with the definition rather than patching it.
    type: bool
    default: false
  merge_type:
    description:
      - The patch strategies to try, in order, when an existing object is patched (not with O(apply)).
    type: list
    elements: str
    choices: [merge, strategic-merge]
  validate:
    description:
      - Validate the definitions against the Kubernetes schema first (needs the C(kubernetes-validate) library).
    type: dict
    suboptions:
      fail_on_error:
        description: Fail on a validation error rather than warn.
        type: bool
      version:
        description: The Kubernetes version whose schema to use (default the server's).
        type: str
      strict:
        description: Refuse properties the schema does not know.
        type: bool
        default: true
  append_hash:
    description:
      - Append a hash of a ConfigMap's or Secret's data to its name.
    type: bool
    default: false
  apply:
    description:
      - Client-side apply, as C(kubectl apply) (the last-applied-configuration annotation).
    type: bool
    default: false
  template:
    description:
      - A Jinja2 template file (or files) on the controller, rendered into the definition, as in M(kubernetes.core.k8s).
    type: raw
  continue_on_error:
    description:
      - With several definitions, go on after one fails and report each one's error in its result.
    type: bool
    default: false
  label_selectors:
    description:
      - Only the definitions whose labels match these selectors are acted upon.
    type: list
    elements: str
  generate_name:
    description:
      - A prefix for the API server to complete into a unique name (not with O(name)).
    type: str
  server_side_apply:
    description:
      - Server-side apply, with the field manager given.
    type: dict
    suboptions:
      field_manager:
        description: The name of the manager of the fields applied.
        type: str
        required: true
      force_conflicts:
        description: Take over the fields other managers own.
        type: bool
        default: false
  delete_all:
    description:
      - With O(state=absent) and O(kind) alone, delete every object of that kind in the namespace (or of the selectors).
    type: bool
    default: false
    aliases: [all]
  hidden_fields:
    description:
      - Fields left out of the returned objects (dotted paths).
    type: list
    elements: str
extends_documentation_fragment:
  - kubernetes.core.k8s_name_options
  - kubernetes.core.k8s_resource_options
  - kubernetes.core.k8s_auth_options
  - kubernetes.core.k8s_wait_options
  - kubernetes.core.k8s_delete_options
  - perfscale.topsail.action_attributes.module
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
requirements:
  - kubernetes >= 24.2.0
  - PyYAML >= 3.11
  - jsonpatch
"""

EXAMPLES = r"""
- name: Create the namespace and apply the rendered objects in one call
  perfscale.topsail.k8s:
    definition: "{{ [namespace] + rendered.objects }}"
    apply: true

- name: Delete the Job and wait until it is gone
  perfscale.topsail.k8s:
    api_version: batch/v1
    kind: Job
    name: fine-tuning
    namespace: ft
    state: absent
    wait: true
"""

RETURN = r"""
result:
  description:
    - The object as the API server returned it (with several definitions, C(results), one result each), as
      M(kubernetes.core.k8s) returns it.
  returned: success
  type: complex
  contains: {}
method:
  description: What was done (C(create), C(update), C(apply), C(replace), C(patch) or C(delete)), as M(kubernetes.core.k8s) says.
  returned: success
  type: str
  sample: create
"""

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.runner import run_module

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import objects


def run(module_class):
    """kubernetes.core.k8s's main(), with the AnsibleModule class given (on the controller, the action plugin
    of the same name does this in Ansible's worker with a stand-in: plugins/plugin_utils/kube_action.py)."""
    module = AnsibleK8SModule(module_class=module_class, argument_spec=objects.argument_spec(),
                              mutually_exclusive=objects.MUTUALLY_EXCLUSIVE, supports_check_mode=True)
    error = objects.definition_type_error(module.params)
    if error:
        module.fail_json(msg=error)
    try:
        run_module(module)
    except CoreException as exc:
        module.fail_from_exception(exc)


def main():
    run(AnsibleModule)


if __name__ == "__main__":
    main()
