# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: command_args
short_description: Parameters of a toolbox command, rendered from the configuration
version_added: 0.1.0
description:
  - Renders the command-arguments template (C(config/command_args.yml.j2) of the
    collection, or O(template)) against the effective configuration and returns the
    parameters of the entry C([prefix/]group command[/suffix]), with O(extra) applied
    last (extra wins).
  - The result maps the role-prefixed variables of the toolbox role
    C(<group>_<command>) (for example C(host_capture_environment_gpu)) to their values.
  - An unknown entry is an error listing the known ones; a parameter the role does
    not declare in its C(meta/argument_specs.yml) is an error listing the declared
    ones; a value still equal to C(SET_AT_RUNTIME) after O(extra) is an error.
author:
  - perfscale.topsail developers (@perfscale)
options:
  _terms:
    description: The command, as C(group command), for example C(host capture_environment).
    required: true
    type: list
    elements: str
  prefix:
    description: Entry prefix, as in C(sutest/cluster set_scale).
    type: str
  suffix:
    description: Entry suffix, as in C(cluster set_scale/big).
    type: str
  extra:
    description: Parameters (unprefixed names) that override the template.
    type: dict
    default: {}
  template:
    description:
      - Command-arguments template. Defaults to the variable C(perfscale_command_args_file),
        then to C(config/command_args.yml.j2) of the collection.
    type: path
  prefixed:
    description: Return role-prefixed variable names (C(false) returns the parameter names).
    type: bool
    default: true
  args_only:
    description:
      - Take the parameters from O(extra) only (checked against the role's argument specs),
        without rendering the template - a command run with explicit arguments.
    type: bool
    default: false
  defaults_only:
    description:
      - Return the defaults declared in the role's C(meta/argument_specs.yml) instead of
        rendering the template (used to reset parameters after a command).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Show what 'host capture_environment' would receive
  ansible.builtin.debug:
    msg: "{{ lookup('perfscale.topsail.command_args', 'host capture_environment', extra={'gpu': false}) }}"
"""

RETURN = r"""
_raw:
  description: One mapping of variables to values per command.
  type: list
  elements: dict
"""

import os

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.perfscale.topsail.plugins.module_utils.run import collection_info
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args as command_args_lib

COLLECTION_ROOT = collection_info.collection_root_from(__file__, 3)


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        variables = variables or {}
        self.set_options(var_options=variables, direct=kwargs)
        config = variables.get("perfscale_config")
        if config is None:
            raise AnsibleLookupError(
                "perfscale.topsail.command_args: no effective configuration; run perfscale.topsail.resolve_config first"
            )
        template = (self.get_option("template") or self._templar.template(variables.get("perfscale_command_args_file"))
                    or os.path.join(COLLECTION_ROOT, "config", "command_args.yml.j2"))
        roles_dir = os.path.join(COLLECTION_ROOT, "roles")
        results = []
        try:
            rendered = None
            if not self.get_option("defaults_only") and not self.get_option("args_only"):
                rendered = command_args_lib.load_command_args(template, config)
            for term in terms:
                group, command = command_args_lib.parse_command(term)
                role = "%s_%s" % (group, command)
                options = command_args_lib.role_argument_options(roles_dir, role)
                if self.get_option("defaults_only"):
                    results.append(command_args_lib.role_defaults(options))
                    continue
                if self.get_option("args_only"):
                    rendered = {command_args_lib.entry_key(group, command, self.get_option("prefix"),
                                                           self.get_option("suffix")): {}}
                params = command_args_lib.command_args(
                    rendered, group, command,
                    prefix=self.get_option("prefix"), suffix=self.get_option("suffix"),
                    extra=self.get_option("extra"),
                    known_params=command_args_lib.known_parameters(role, options),
                )
                if self.get_option("prefixed"):
                    params = command_args_lib.role_variables(role, params, options)
                results.append(params)
        except command_args_lib.CommandArgsError as exc:
            raise AnsibleLookupError(str(exc)) from None
        return results
