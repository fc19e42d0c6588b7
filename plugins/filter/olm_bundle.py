# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: olm_bundle
short_description: Choose an operator's channel and CSV from the catalog's PackageManifests
version_added: 0.2.0
description:
  - From the C(PackageManifest) objects of a package (C(packages.operators.coreos.com/v1)), returns
    what a Subscription gets - the channel (the package's default when none is given), the CSV (the
    channel's head, or the entry of the version asked for), its C(alm-examples) and install modes.
  - A package, catalog, channel or version that does not exist is one error line naming what exists.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, package, catalog, channel, version, csv_base_name
options:
  _input:
    description: The PackageManifests (C(resources) of M(kubernetes.core.k8s_info)).
    type: list
    elements: dict
    required: true
  package:
    description: The package (the reference's C(manifest_name)).
    type: str
    required: true
  catalog:
    description: The CatalogSource name.
    type: str
    required: true
  channel:
    description: The channel (empty - the package's default channel).
    type: str
    default: ""
  version:
    description: The version (empty - the channel's head).
    type: str
    default: ""
  csv_base_name:
    description: The CSV name prefix when it is not the package name.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Choose the bundle
  ansible.builtin.set_fact:
    bundle: "{{ manifests.resources | perfscale.topsail.olm_bundle('nfd', 'redhat-operators', 'stable') }}"
"""

RETURN = r"""
_value:
  description: package, catalog, catalog_namespace, channel, csv, csv_prefix, version, alm_examples, install_modes.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import OlmError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import olm


def olm_bundle(manifests, package, catalog, channel="", version="", csv_base_name=""):
    try:
        return olm.select_bundle(list(manifests or []), package, catalog, channel or "", str(version or ""),
                                 csv_base_name or "")
    except OlmError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"olm_bundle": olm_bundle}
