#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_wait
short_description: Wait for cluster objects as their upstream controllers report them
version_added: 0.3.0
description:
  - Reads the objects a O(judge) is about every O(delay) seconds until the judge says they are
    ready, or that they failed in a way their controller will not recover from, or O(timeout)
    seconds passed. Between two looks it watches the object waited for, so that a change is seen at
    once rather than at the next look (at most one look every half second).
  - The judges (C(plugins/module_utils/kube/waits/)) know the states each upstream controller
    writes, including the transient ones a real rollout passes through - a CatalogSource in
    C(TRANSIENT_FAILURE) while its registry pod starts, a C(Degraded) NodeFeatureDiscovery before its
    workers run, a C(Failed) CSV that OLM retries. Those are waited through, never taken as the end.
  - A failure or a timeout is one line naming the object, its condition, reason and message (the
    last state seen); RV(states) lists every distinct state seen, with when.
  - With O(waits), several waits (each its own judge and objects) run in one call and one look loop,
    with one connection to the API server, instead of a module call (a Python process loading the
    kubernetes client) each. A wait that is ready is no longer read; the first wait that fails ends
    them all; O(timeout) is for them all. RV(waits) holds each wait's own result.
  - In the C(perfscale.topsail.k8s) action group (the toolbox sets its connection).
author:
  - perfscale.topsail developers (@perfscale)
options:
  judge:
    description:
      - What to wait for, by name (e.g. V(csv), V(catalogsource), V(subscription), V(nodefeaturediscovery),
        V(gpu_stack), V(inferenceservice), V(job), V(deployment), V(pods_ready), V(pipelinerun)); an unknown
        name fails with the list of known ones.
      - With O(waits), the judge of the waits that do not name their own.
    type: str
  namespace:
    description:
      - The namespace of the objects (when namespaced).
      - With O(waits), that of the waits that do not name their own.
    type: str
  name:
    description: The name of the object (the judges of one object need it). Not with O(waits).
    type: str
  label_selectors:
    description: Label selectors of the objects (judges of several objects). Not with O(waits).
    type: list
    elements: str
    default: []
  options:
    description:
      - The judge's own options (e.g. C(csv_prefix) for V(csv), C(label) for V(node_labels)); others are refused.
      - With O(waits), options every wait gets (a wait's own O(options) are added to them).
    type: dict
    default: {}
  waits:
    description:
      - Several waits at once, each a mapping of C(judge), C(namespace), C(name), C(label_selectors) and
        C(options) (as the options of the same names; another key is refused); at most 50.
      - A malformed wait is refused, by its place (C(waits[1])), before anything is read.
    type: list
    elements: dict
  timeout:
    description: Seconds to wait at most (0 - look once).
    type: float
    default: 600
  delay:
    description: Seconds between two looks at most (a change of the object waited for brings the next look forward).
    type: float
    default: 5
  fail_on_timeout:
    description: Fail when the objects are not ready in time or failed (V(false) - return the state; the caller judges).
    type: bool
    default: true
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
- name: Wait for the exported PVC to be Bound and the provisioner to be rolled out
  perfscale.topsail.k8s_wait:
    namespace: nfs-provisioner
    waits:
      - {judge: pvc_bound, name: nfs-provisioner-export}
      - {judge: deployment, name: nfs-provisioner}
    timeout: 300
    fail_on_timeout: false
  register: provisioner

- name: Fail when the PVC is not Bound
  ansible.builtin.fail:
    msg: "{{ provisioner.waits[0].msg }}"
  when: provisioner.waits[0].state != 'ready'

- name: Wait for the operator's CSV (OLM's retries waited through)
  perfscale.topsail.k8s_wait:
    judge: csv
    namespace: openshift-nfd
    name: nfd.4.19.0-202509021800
    timeout: 900
    delay: 10
"""

RETURN = r"""
state:
  description: C(ready), C(failed) or C(waiting) (time ran out).
  returned: always
  type: str
summary:
  description: The last state seen, one line (object, condition, reason, message).
  returned: always
  type: str
states:
  description: Every distinct state seen, in order - C(after_s), C(state), C(summary).
  returned: always
  type: list
  elements: dict
elapsed_s:
  description: Seconds waited.
  returned: always
  type: float
timed_out:
  description: True when the wait ended on its timeout.
  returned: always
  type: bool
resources:
  description: The objects last read, by query (C(subject) is the one the judge is about); empty with O(waits).
  returned: always
  type: dict
waits:
  description:
    - With O(waits), each wait's result in their order - C(judge), C(state), C(summary), C(msg) (its one
      line), C(states), C(elapsed_s), C(timed_out) and C(resources), as a wait of its own returns them. A
      wait still waiting when another failed is C(waiting), not C(timed_out).
  returned: when O(waits) is given
  type: list
  elements: dict
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
    args.update(copy.deepcopy(tasks.WAIT_ARGS))
    return args


def run(module_class):
    """The module's work, with the AnsibleModule class given (on the controller, the action plugin of the same
    name does it in Ansible's worker with a stand-in: plugins/plugin_utils/kube_action.py)."""
    module = AnsibleK8SModule(module_class=module_class, argument_spec=argspec(), supports_check_mode=True)
    try:
        module.exit_json(**tasks.wait_task(module.params, lambda: K8sService(get_api_client(module=module), module)))
    except CoreException as exc:
        module.fail_from_exception(exc)
    except tasks.TaskFailed as exc:
        module.fail_json(**exc.result)


def main():
    run(AnsibleModule)


if __name__ == "__main__":
    main()
