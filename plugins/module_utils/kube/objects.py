# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options of ``perfscale.topsail.k8s``: those of ``kubernetes.core.k8s``, whose work it does with
kubernetes.core's own code (``module_utils/k8s/runner.py``).

kubernetes.core builds the argument spec of its ``k8s`` module in the module file itself, which a module of
another collection cannot import (its AnsiballZ payload carries module_utils only); it is built here from
the same module_utils pieces, and tests/unit/plugins/test_kube_action.py holds it equal to the installed
kubernetes.core's but for one option: ``resource_definition``, whose type there is a function
(``list_dict_str``: a list, a mapping or a string) that no documentation can name - kubernetes.core carries
a sanity-test ignore for it, which ansible-lint's production profile refuses. Here its type is ``raw`` and
``definition_type_error`` makes the same check, with the same message, once the module has its parameters.
"""

from __future__ import annotations

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import (
    AUTH_ARG_SPEC,
    DELETE_OPTS_ARG_SPEC,
    NAME_ARG_SPEC,
    RESOURCE_ARG_SPEC,
    WAIT_ARG_SPEC,
)

# pairs of options that cannot be given together (kubernetes.core.k8s's main())
MUTUALLY_EXCLUSIVE = [
    ("resource_definition", "src"),
    ("merge_type", "apply"),
    ("template", "resource_definition"),
    ("template", "src"),
    ("name", "generate_name"),
]


def argument_spec():
    """kubernetes.core.k8s's argument spec (a new copy each call: AnsibleModule fills it in)."""
    spec = copy.deepcopy(NAME_ARG_SPEC)
    for common in (RESOURCE_ARG_SPEC, AUTH_ARG_SPEC, WAIT_ARG_SPEC):
        spec.update(copy.deepcopy(common))
    spec.update(own_options())
    spec["delete_options"] = dict(type="dict", default=None, options=copy.deepcopy(DELETE_OPTS_ARG_SPEC))
    return spec


def definition_type_error(params):
    """The message AnsibleModule gives when kubernetes.core.k8s's ``resource_definition`` is not a list, a
    mapping or a string (its type function ``list_dict_str`` refuses it), or None."""
    value = params.get("resource_definition")
    if value is None or isinstance(value, (list, dict, str)):
        return None
    return "argument 'resource_definition' is of type %s and we were unable to convert to list_dict_str: " % (
        type(value).__name__)


def own_options():
    """The options the module documents itself: kubernetes.core.k8s's beyond those of kubernetes.core's
    documentation fragments (name, resource, auth, wait and delete options), and ``resource_definition``,
    of type ``raw`` (see above)."""
    return dict(
        resource_definition=dict(type="raw", aliases=["definition", "inline"]),
        merge_type=dict(type="list", elements="str", choices=["merge", "strategic-merge"]),
        validate=dict(type="dict", default=None, options=dict(
            fail_on_error=dict(type="bool"), version=dict(), strict=dict(type="bool", default=True))),
        append_hash=dict(type="bool", default=False),
        apply=dict(type="bool", default=False),
        template=dict(type="raw", default=None),
        continue_on_error=dict(type="bool", default=False),
        state=dict(default="present", choices=["present", "absent", "patched"]),
        force=dict(type="bool", default=False),
        label_selectors=dict(type="list", elements="str"),
        generate_name=dict(),
        server_side_apply=dict(type="dict", default=None, options=dict(
            field_manager=dict(type="str", required=True), force_conflicts=dict(type="bool", default=False))),
        delete_all=dict(type="bool", default=False, aliases=["all"]),
        hidden_fields=dict(type="list", elements="str"),
    )
