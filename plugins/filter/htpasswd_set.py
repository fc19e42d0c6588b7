# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: htpasswd_set
short_description: An htpasswd file with one user's bcrypt entry set
version_added: 0.2.0
description:
  - Returns the htpasswd text with the entry of O(username) for O(password) (bcrypt, C($2y$) as
    C(htpasswd -B) writes it); the other users' lines are kept. An entry that already matches the
    password is kept, so that a second run changes nothing.
  - The tasks that use it must set C(no_log) to true.
  - Needs the Python package C(bcrypt) on the controller.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input, username, password
options:
  _input:
    description: The current htpasswd text (empty for none).
    type: str
    required: true
  username:
    description: The user.
    type: str
    required: true
  password:
    description: The user's password.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Add the admin user to the htpasswd secret
  kubernetes.core.k8s:
    definition:
      apiVersion: v1
      kind: Secret
      metadata: {name: htpass-secret, namespace: openshift-config}
      stringData:
        htpasswd: "{{ (current | perfscale.topsail.htpasswd_set('kubeadmin2', password)).text }}"
  no_log: true
"""

RETURN = r"""
_value:
  description: C(text) (the new htpasswd file) and C(updated) (false when the entry already matched).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import htpasswd
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError


def htpasswd_set(text, username, password):
    try:
        new_text, changed = htpasswd.set_user(text or "", username, password)
    except ConfigError as exc:
        raise AnsibleFilterError(str(exc)) from None
    return {"text": new_text, "updated": changed}


class FilterModule:
    def filters(self):
        return {"htpasswd_set": htpasswd_set}
