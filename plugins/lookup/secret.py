# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: secret
short_description: Read a secret from the secrets directory at use time
version_added: 0.1.0
description:
  - Reads the file named by each term from the secrets directory. The directory
    comes from the environment variable named by the configuration key
    C(secrets.dir_env) (default C(PERFSCALE_SECRETS_DIR)).
  - A term may be a file name or a C(secret:NAME) reference taken from the
    configuration.
  - The value is never written anywhere by this lookup; tasks that use it must set
    C(no_log) to true.
  - Names are plain file names; a path or C(..) is refused.
  - The file may hold several lines (a properties file, a kubeconfig); the tokens and keys the
    collection reads itself (notifications, Horreum, Prometheus, C(secret:NAME) settings) must be one
    value on one line.
author:
  - perfscale.topsail developers (@perfscale)
options:
  _terms:
    description: Secret file names or C(secret:NAME) references.
    required: true
    type: list
    elements: str
  strip:
    description: Strip leading and trailing whitespace (a final newline, usually).
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Log in with a token kept in the secrets directory
  ansible.builtin.uri:
    url: https://example.com/api
    headers:
      Authorization: "Bearer {{ lookup('perfscale.topsail.secret', 'api.token') }}"
  no_log: true
"""

RETURN = r"""
_raw:
  description: Content of each secret file.
  type: list
  elements: str
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secrets_lib


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        config = (variables or {}).get("perfscale_config") or {}
        values = []
        for term in terms:
            name = secrets_lib.reference_name(term)
            try:
                # any text (a properties file, a kubeconfig): the one-value rule is for the collection's tokens and keys
                values.append(secrets_lib.read_secret(config, name, strip=self.get_option("strip"), single=False))
            except secrets_lib.SecretError as exc:
                raise AnsibleLookupError(str(exc)) from None
        return values
