# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: object_refs
short_description: Turn names into Kubernetes object references
version_added: 0.2.0
description:
  - Returns one reference (C(apiVersion), C(kind), C(metadata.name), C(metadata.namespace)) per name, the form
    M(perfscale.topsail.k8s_capture) takes in its C(objects) option (what a command's
    C(on_failure.yml) captures).
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, kind, api_version, namespace
options:
  _input:
    description: Object names.
    type: list
    elements: str
    required: true
  kind:
    description: Their kind.
    type: str
    required: true
  api_version:
    description: Their apiVersion.
    type: str
    default: v1
  namespace:
    description: Their namespace (empty for cluster-scoped kinds).
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Capture the namespaces that would not go
  perfscale.topsail.k8s_capture:
    objects: "{{ ['team-a', 'team-b'] | perfscale.topsail.object_refs('Namespace') }}"
"""

RETURN = r"""
_value:
  description: The references, in the order of the names.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError


def object_refs(names, kind, api_version="v1", namespace=""):
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise AnsibleFilterError("object_refs: expected a list of names, got %s" % type(names).__name__)
    metadata = {"namespace": namespace} if namespace else {}
    return [{"apiVersion": api_version, "kind": kind, "metadata": dict(metadata, name=str(name))} for name in names]


class FilterModule:
    def filters(self):
        return {"object_refs": object_refs}
