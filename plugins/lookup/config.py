# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: config
short_description: Read the effective configuration by dotted key
version_added: 0.1.0
description:
  - Returns the value of each dotted key (for example C(tests.benchmark.timeout_s))
    in the effective configuration that M(perfscale.topsail.resolve_config) set as the
    fact C(perfscale_config).
  - A missing key is an error naming the key and the closest existing keys, unless
    O(default) is given.
  - Values of the form C(secret:NAME) are returned as they are; read the secret with
    the P(perfscale.topsail.secret#lookup) lookup when it is used.
author:
  - perfscale.topsail developers (@perfscale)
options:
  _terms:
    description: Dotted keys to read.
    required: true
    type: list
    elements: str
  default:
    description: Value returned for a key that does not exist (instead of failing).
    type: raw
"""

EXAMPLES = r"""
- name: Read a setting
  ansible.builtin.debug:
    msg: "timeout is {{ lookup('perfscale.topsail.config', 'tests.benchmark.timeout_s') }}"

- name: Read an optional setting
  ansible.builtin.debug:
    msg: "{{ lookup('perfscale.topsail.config', 'tests.not_there', default='unset') }}"
"""

RETURN = r"""
_raw:
  description: The value of each key, in order.
  type: list
  elements: raw
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib

_NO_DEFAULT = object()


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        default = kwargs.pop("default", _NO_DEFAULT)
        self.set_options(var_options=variables, direct=kwargs)
        config = (variables or {}).get("perfscale_config")
        if config is None:
            raise AnsibleLookupError(
                "perfscale.topsail.config: no effective configuration; run perfscale.topsail.resolve_config first"
            )
        values = []
        for term in terms:
            try:
                if default is _NO_DEFAULT:
                    values.append(config_lib.get_dotted(config, term))
                else:
                    values.append(config_lib.get_dotted(config, term, default))
            except config_lib.ConfigError as exc:
                raise AnsibleLookupError(str(exc)) from None
        return values
