# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: inference_url
short_description: The URL of an InferenceService or LLMInferenceService a load generator should target
version_added: 0.3.0
description:
  - From inside the cluster, the cluster-internal C(status.address.url) (then C(status.url)); from outside,
    C(status.url) - KServe's external name, or, in OpenShift AI, the internal Service URL unless the service
    is exposed (C(networking.kserve.io/visibility=exposed)) - or an LLMInferenceService's first address.
  - Returns C(url), C(kind) (the field used) and C(note), set when the URL chosen from outside is
    cluster-internal.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, in_cluster
options:
  _input:
    description: The InferenceService or LLMInferenceService object.
    type: dict
    required: true
  in_cluster:
    description: The load runs inside the cluster.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Take the URL to load
  ansible.builtin.set_fact:
    target: "{{ service.resources[0] | perfscale.topsail.inference_url(false) }}"
"""

RETURN = r"""
_value:
  description: C(url), C(kind) and C(note).
  type: dict
"""

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import kserve


def inference_url(obj, in_cluster=False):
    return kserve.inference_url(obj if isinstance(obj, dict) else {}, bool(in_cluster))


class FilterModule:
    def filters(self):
        return {"inference_url": inference_url}
