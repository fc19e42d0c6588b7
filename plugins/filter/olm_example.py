# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: olm_example
short_description: Pick the custom resource to create from a CSV's alm-examples
version_added: 0.2.0
description:
  - The reference's C(deploy_cr) - C(true) takes the first example, a kind name takes the example of
    that kind, C(false) takes none (returns null). No example of that kind is one error line listing the kinds.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, deploy_cr
options:
  _input:
    description: The examples (C(alm_examples) of M(perfscale.topsail.olm_bundle#filter)).
    type: list
    elements: dict
    required: true
  deploy_cr:
    description: C(true), C(false) or a kind.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: The ClusterPolicy example
  ansible.builtin.set_fact:
    policy: "{{ bundle.alm_examples | perfscale.topsail.olm_example('ClusterPolicy') }}"
"""

RETURN = r"""
_value:
  description: The example (a Kubernetes object), or null.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import OlmError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import olm


def olm_example(examples, deploy_cr):
    try:
        return olm.pick_example(list(examples or []), deploy_cr)
    except OlmError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"olm_example": olm_example}
