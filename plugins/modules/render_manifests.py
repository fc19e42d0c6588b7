#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: render_manifests
short_description: Render Kubernetes manifests and validate them strictly, offline, before anything is applied
version_added: 0.2.0
description:
  - Renders a Jinja template of the role (O(template), found in its C(templates/)) or a file
    (O(src), which may hold Jinja too) with the task's variables, parses its YAML documents
    and validates each one strictly against its schema - core kinds from the
    C(kubernetes-validate) package, custom resources from the CRD schemas the collection ships
    (C(schemas/crds/), see its C(PROVENANCE.md)) or from a CRD among the rendered documents.
    An unknown key, a wrong type, a value outside an enum, a missing required field fails
    with one line naming the object, the key path and the schema path; nothing has been
    sent to a cluster.
  - Writes the rendered text to C(src/<dest>) in the current artifact directory (a toolbox
    command's own) and returns its path for C(kubernetes.core.k8s) to apply, with the
    objects.
  - Runs on the controller (action plugin); touches no cluster.
author:
  - perfscale.topsail developers (@perfscale)
options:
  template:
    description:
      - Template name, looked up in the role's C(templates/) (as the template module does).
    type: str
  src:
    description:
      - A manifest file (YAML, may hold Jinja) to render and validate instead of a template. A relative
        path is looked up from the current directory, then in the C(files/) of the playbook or role.
    type: path
  dest:
    description:
      - File name of the rendered manifests in C(src/) of the current artifact directory.
        Defaults to the template's name without C(.j2).
    type: str
  variables:
    description:
      - Variables added to the task's for rendering (a role passes its own, such as C(template_vars)).
    type: dict
    default: {}
  validate:
    description:
      - Validate the documents strictly (turn off only for kinds no schema describes).
    type: bool
    default: true
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: full
    details: In check mode the manifests are rendered and validated, not written.
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Render and validate the operator's Subscription
  perfscale.topsail.render_manifests:
    template: subscription.yaml.j2
  register: cluster_deploy_operator_manifests

- name: Apply it
  kubernetes.core.k8s:
    src: "{{ cluster_deploy_operator_manifests.path }}"
"""

RETURN = r"""
path:
  description: The rendered file in the artifact directory (null in check mode).
  returned: success
  type: str
objects:
  description: The rendered documents.
  returned: success
  type: list
  elements: dict
resources:
  description: C(Kind/name -n namespace) of each document.
  returned: success
  type: list
  elements: str
"""
