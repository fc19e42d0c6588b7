# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: dotted_settings
short_description: Set values given as dotted keys in an object
version_added: 0.2.0
description:
  - Returns a copy of the object with each C(dotted.key) of O(settings) set to its value, missing levels created,
    as the reference's C(rhods update_datasciencecluster --extra_settings) takes them. A key that goes through a
    value that is not a mapping fails in one line naming it.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, settings
options:
  _input:
    description: The object (a Kubernetes manifest, for example).
    type: dict
    required: true
  settings:
    description: Dotted keys and their values.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Remove KServe's serverless mode from a DataScienceCluster
  ansible.builtin.set_fact:
    dsc: "{{ dsc | perfscale.topsail.dotted_settings({'spec.components.kserve.serving.managementState': 'Removed'}) }}"
"""

RETURN = r"""
_value:
  description: The object with the settings applied.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.config import dotted
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError


def dotted_settings(obj, settings):
    try:
        return dotted.apply(obj or {}, settings)
    except ConfigError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"dotted_settings": dotted_settings}
