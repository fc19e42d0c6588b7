# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: kserve_deployment_mode
short_description: The deployment mode KServe gives an InferenceService on this cluster, or why it cannot serve it
version_added: 0.3.0
description:
  - C(RawDeployment) or C(Serverless), as KServe resolves it - the annotation when O(raw_deployment) is
    given, else the cluster's default (C(deploy.defaultDeploymentMode) of KServe's C(inferenceservice-config),
    which OpenShift AI sets to C(RawDeployment) when KServe's serving is Removed), else KServe's own default.
  - Serverless where the cluster serves no Knative Service is one error line naming the mode, where it comes
    from and what is missing (KServe itself would only emit a C(ServerlessModeRejected) event).
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, knative_served
options:
  _input:
    description: C(raw_deployment) - true, false, or null for the cluster's default.
    type: raw
    required: true
  knative_served:
    description: Whether the cluster serves C(serving.knative.dev/v1) C(Service).
    type: bool
    required: true
  configmaps:
    description: KServe's C(inferenceservice-config) ConfigMaps found on the cluster.
    type: list
    elements: dict
    default: []
"""

EXAMPLES = r"""
- name: Resolve the deployment mode
  ansible.builtin.set_fact:
    mode: "{{ raw_deployment | perfscale.topsail.kserve_deployment_mode(knative.api_found, configmaps=found.resources) }}"
"""

RETURN = r"""
_value:
  description: C(mode), C(annotation) (null when the cluster's default is used) and C(source).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import kserve


def kserve_deployment_mode(raw_deployment, knative_served, configmaps=None):
    if raw_deployment is not None and not isinstance(raw_deployment, bool):
        raw_deployment = str(raw_deployment).strip().lower() in ("true", "yes", "1")
    try:
        return kserve.resolve_deployment_mode(raw_deployment, list(configmaps or []), bool(knative_served))
    except kserve.KServeError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"kserve_deployment_mode": kserve_deployment_mode}
