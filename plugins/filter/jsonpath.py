# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: jsonpath
short_description: Select values of a Kubernetes object with kubectl's JSONPath
version_added: 0.2.0
description:
  - Returns the list of values the expression selects in the object (empty when the path does
    not exist), as C(kubectl get -o jsonpath) and C(kubectl wait --for=jsonpath) do.
  - Supported - C(.field), C([n]), C([*]) and filters C([?(@.key=="value")]) (C(==), C(!=));
    the expression may be wrapped in C({}) and start with C($).
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, expression
options:
  _input:
    description: A Kubernetes object (or any mapping).
    type: dict
    required: true
  expression:
    description: The JSONPath expression, for example C({.status.conditions[?(@.type=="Ready")].status}).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Is the pod ready?
  ansible.builtin.debug:
    msg: "{{ pod | perfscale.topsail.jsonpath('.status.conditions[?(@.type==\"Ready\")].status') }}"
"""

RETURN = r"""
_value:
  description: The values selected, in order.
  type: list
  elements: raw
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import jsonpath as jsonpath_lib


def jsonpath(obj, expression):
    try:
        return jsonpath_lib.evaluate(obj, expression)
    except jsonpath_lib.JsonPathError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"jsonpath": jsonpath}
