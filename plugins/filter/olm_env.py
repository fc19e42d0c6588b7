# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: olm_env
short_description: A Subscription's spec.config.env from the reference's config_env_names
version_added: 0.2.0
description:
  - Each name becomes an environment variable of the operator - C(NAME) with the value C("true"),
    or C(NAME=value).
author:
  - perfscale.topsail developers (@perfscale)
positional: _input
options:
  _input:
    description: The names.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Tell the RHOAI operator not to create its DSCInitialization
  ansible.builtin.set_fact:
    env: "{{ ['DISABLE_DSC_CONFIG'] | perfscale.topsail.olm_env }}"
"""

RETURN = r"""
_value:
  description: A list of C({name, value}).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import OlmError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import olm


def olm_env(names):
    try:
        return olm.subscription_env(names)
    except OlmError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"olm_env": olm_env}
