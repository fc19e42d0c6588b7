# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The toolbox commands of the collection: names, descriptions, options, aliases.

A toolbox command ``group command`` is the role ``group_command``; its
``tasks/main.yml`` hands that name to the ``toolbox_command`` skeleton, and its
``meta/argument_specs.yml`` documents it. The names follow the reference
toolbox, so a team's ``command_args.yml.j2`` entries work unchanged. A few
commands of the reference exist under another name (``ALIASES``); a few are not
provided, with the reason (``NOT_PROVIDED``).
"""

from __future__ import annotations

import difflib
import os

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CommandArgsError

# roles that are machinery, not toolbox commands
INFRASTRUCTURE_ROLES = ("toolbox_command", "toolbox_from_config", "test_flow")

# names under which the reference's documents also know a command
ALIASES = {
    "cluster download_to_pvc": "storage download_to_pvc",
}

# commands of the reference toolbox this collection does not provide, and why
_NOT_YET = "not provided yet in this version (planned: see docs/toolbox.md)"
NOT_PROVIDED = {
    "cluster create_osd": "creates an OpenShift Dedicated cluster: needs a cloud account",
    "cluster destroy_osd": "destroys an OpenShift Dedicated cluster: needs a cloud account",
    "cluster destroy_ocp": "destroys an OpenShift cluster and its cloud resources: needs a cloud account",
    "rhods deploy_addon": "installs RHOAI as an OpenShift Dedicated add-on: needs a cloud account (OCM)",
    "storage deploy_aws_efs": "needs an AWS account",
    "storage download_to_image": "builds an image: needs an image build service this project does not drive",
    "kserve extract_protos": "gRPC protos of a model server: this project's harness speaks the OpenAI HTTP API",
    "kserve extract_protos_grpcurl": "gRPC protos of a model server: this project's harness speaks the OpenAI HTTP API",
    "fine_tuning ray_fine_tuning_job": "needs the Ray operator (KubeRay), which this project does not drive",
    "pipelines deploy_application": "Data Science Pipelines (Kubeflow Pipelines) are not driven by this project",
    "pipelines run_kfp_notebook": "Data Science Pipelines (Kubeflow Pipelines) are not driven by this project",
    "pipelines capture_state": "Data Science Pipelines (Kubeflow Pipelines) are not driven by this project",
    "pipelines capture_notebooks_state": "Data Science Pipelines (Kubeflow Pipelines) are not driven by this project",
}
# commands of the reference planned here and not written yet: said so, rather than "unknown"
NOT_PROVIDED.update({name: _NOT_YET for name in (
    "rhods reset_prometheus_db", "rhods dump_prometheus_db",
    "local_ci run",
    "server deploy_opensearch", "server deploy_nginx_server", "server deploy_ldap",
    "server undeploy_ldap",
)})


def _load_yaml(path):
    import yaml

    # libyaml's loader when PyYAML has it: every toolbox run reads each role's tasks/main.yml
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=bounded_input.safe_yaml_loader())  # nosec B506 - a safe loader


def command_of_role(role_dir):
    """The ``group command`` a toolbox role runs as (from its tasks/main.yml), or None."""
    try:
        tasks = _load_yaml(os.path.join(role_dir, "tasks", "main.yml"))
    except (OSError, ValueError):
        return None
    for task in tasks or []:
        if isinstance(task, dict) and isinstance(task.get("vars"), dict) and task["vars"].get("toolbox_command_name"):
            return task["vars"]["toolbox_command_name"]
    return None


def specs(role_dir):
    """The ``main`` entry point of a role's argument specs (short_description, options...)."""
    try:
        spec = _load_yaml(os.path.join(role_dir, "meta", "argument_specs.yml")) or {}
    except (OSError, ValueError):
        return {}
    return (spec.get("argument_specs") or {}).get("main") or {}


def commands(roles_dir, describe=True):
    """Every toolbox command: {command: {role, description}}, sorted by command (``describe=False``:
    without reading the argument specs for the description, which is then None)."""
    found = {}
    for role in sorted(os.listdir(roles_dir)):
        role_dir = os.path.join(roles_dir, role)
        if role in INFRASTRUCTURE_ROLES or not os.path.isdir(role_dir):
            continue
        command = command_of_role(role_dir)
        if command:
            found[command] = {"role": role,
                              "description": specs(role_dir).get("short_description", "") if describe else None}
    return dict(sorted(found.items()))


def resolve(roles_dir, name, known=None):
    """The command a name designates (aliases followed); an unknown or unprovided one is an error.
    ``known``: ``commands(roles_dir)`` when the caller has it already."""
    name = " ".join(str(name or "").split())
    if known is None:
        known = commands(roles_dir, describe=False)
    if name in known:
        return name
    if name in ALIASES:
        return resolve(roles_dir, ALIASES[name], known)
    if name in NOT_PROVIDED:
        raise CommandArgsError("toolbox command '%s' is not provided: %s" % (name, NOT_PROVIDED[name]))
    hint = difflib.get_close_matches(name, list(known) + list(ALIASES), n=1)
    raise CommandArgsError("unknown toolbox command %r%s; '-e command=list' lists the %d commands"
                           % (name, " (did you mean '%s'?)" % hint[0] if hint else "", len(known)))


def listing(roles_dir):
    """One line per command with its description, then the aliases and what is not provided."""
    known = commands(roles_dir)
    width = max((len(c) for c in known), default=0)
    lines = ["%-*s  %s" % (width, command, info["description"]) for command, info in known.items()]
    lines += ["%-*s  = %s" % (width, alias, target) for alias, target in sorted(ALIASES.items())]
    lines += ["%-*s  not provided: %s" % (width, command, why) for command, why in sorted(NOT_PROVIDED.items())]
    return lines


def help_lines(roles_dir, command):
    """A command's description and options (names without the role prefix), from its specs."""
    info = commands(roles_dir)[command]
    spec = specs(os.path.join(roles_dir, info["role"]))
    lines = ["%s: %s" % (command, spec.get("short_description", ""))]
    prefix = info["role"] + "_"
    for option, details in sorted((spec.get("options") or {}).items()):
        details = details or {}
        description = details.get("description") or ""
        if isinstance(description, list):
            description = " ".join(description)
        required = "required" if details.get("required") else "default %r" % (details.get("default"),)
        name = option[len(prefix):] if option.startswith(prefix) else option
        lines.append("  %s (%s, %s): %s" % (name, details.get("type", "str"), required, " ".join(description.split())))
    return lines
