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
NOT_PROVIDED = {
    "cluster create_osd": "creates an OpenShift Dedicated cluster: needs a cloud account",
    "cluster destroy_osd": "destroys an OpenShift Dedicated cluster: needs a cloud account",
    "cluster destroy_ocp": "destroys an OpenShift cluster and its cloud resources: needs a cloud account",
    "rhods deploy_addon": "installs RHOAI as an OpenShift Dedicated add-on: needs a cloud account (OCM)",
    "storage download_to_image": "builds an image: needs an image build service this project does not drive",
    "kserve extract_protos": "gRPC protos of a model server: this project's harness speaks the OpenAI HTTP API",
    "kserve extract_protos_grpcurl": "gRPC protos of a model server: this project's harness speaks the OpenAI HTTP API",
}


# groups of the reference toolbox (openshift-psap/topsail cfc3e8a2d, projects/*/toolbox/) this
# collection does not provide, why, and their commands (so that each is "not provided", never
# "unknown"); the groups it provides list their unprovided commands in NOT_PROVIDED above
_DEPRECATED = "a deprecated project of the reference (projects/deprecated/), not carried over"
NOT_PROVIDED_GROUPS = {
    "busy_cluster": (_DEPRECATED + ": it loads a control plane with namespaces, configmaps, deployments and jobs",
                     ("create_namespaces", "create_configmaps", "create_deployments", "create_jobs", "status",
                      "cleanup")),
    "notebooks": (_DEPRECATED + ": RHOAI notebook scale tests (ods-ci, locust)",
                  ("ods_ci_scale_test", "cleanup", "locust_scale_test", "benchmark_performance", "capture_state",
                   "dashboard_scale_test")),
    "codeflare": (_DEPRECATED + ": CodeFlare scale tests (its MCAD commands were in the scheduler group)", ()),
    "scheduler": (_DEPRECATED + ": MCAD load generation", ("generate_load", "cleanup", "deploy_mcad_from_helm",
                                                           "create_mcad_canary")),
    "kepler": (_DEPRECATED + ": Kepler power monitoring", ("deploy_kepler", "undeploy_kepler")),
    "kubemark": (_DEPRECATED + ": hollow nodes", ("deploy_capi_provider", "deploy_nodes")),
    "kwok": (_DEPRECATED + ": simulated nodes", ("deploy_kwok_controller", "set_scale")),
    "load_aware": (_DEPRECATED + ": the Trimaran scheduler", ("deploy_trimaran", "undeploy_trimaran", "scale_test")),
    "wisdom": (_DEPRECATED + ": Lightspeed model tests (llm_load and kserve commands do this here)",
               ("deploy_model", "warmup_model", "run_llm_load_test", "run_llm_load_test_multiplexed")),
    "entitlement": (_DEPRECATED + ": RHEL entitlement for GPU drivers, which the GPU operator no longer needs",
                    ("deploy", "test_in_cluster", "test_in_podman", "test_cluster", "inspect", "undeploy", "wait")),
    "benchmarking": (_DEPRECATED + ": MLPerf SSD (the performance indicators replace it: docs/benchmarking.md)",
                     ("download_coco_dataset", "run_mlperf_ssd")),
    "cpt": (_DEPRECATED + ": the CPT dashboard (this project's reports and results store replace it: "
            "docs/regression.md)", ("deploy_cpt_dashboard",)),
    "container_bench": ("container engines (podman, docker) benchmarked on a remote machine: outside this "
                        "project's AI-platform scope",
                        ("create_container_benchmark", "start_container_benchmark", "remove_container_benchmark",
                         "pull_image_benchmark", "list_images_benchmark", "remove_image_benchmark",
                         "commit_container_benchmark", "load_image_benchmark", "save_image_benchmark",
                         "parallel_remove_image_benchmark", "sysbench_cpu_benchmark", "sysbench_memory_read_benchmark",
                         "sysbench_memory_write_benchmark", "sysbench_fileio_container_benchmark",
                         "sysbench_fileio_mount_benchmark", "iperf_net_bridge_benchmark", "iperf_net_host_benchmark",
                         "iperf_host_to_container_benchmark", "artifact_add_benchmark", "run_container_benchmark",
                         "exec_container_benchmark", "image_build_large_build_context_benchmark",
                         "capture_system_state", "capture_container_engine_info",
                         "prepare_benchmark_script_on_remote")),
    "mac_ai": ("llama.cpp, ollama and ramalama on remote macOS machines: outside this project's scope (its LLM "
               "harness loads any OpenAI-compatible endpoint: docs/llm-load.md)",
               ("remote_ollama_start", "remote_ollama_pull_model", "remote_ollama_run_model",
                "remote_llama_cpp_run_model", "remote_llama_cpp_run_bench", "remote_llama_cpp_pull_model",
                "remote_ramalama_run_model", "remote_ramalama_run_bench", "remote_capture_power_usage",
                "remote_capture_cpu_ram_usage", "remote_capture_virtgpu_memory", "remote_capture_system_state",
                "remote_build_virglrenderer")),
    "crc": ("OpenShift Local (CRC) image timing: outside this project's scope", ("refresh_image",)),
    "jump_ci": ("the reference's CI jump host (its lock and steps): CI systems run the playbooks directly here",
                ("take_lock", "ensure_lock", "release_lock", "prepare_topsail", "prepare_step", "retrieve_artifacts")),
    "remote": ("files on the remote machines of the reference's mac_ai and container_bench projects",
               ("clone", "download", "retrieve", "build_image")),
    "repo": ("the reference repository's own maintenance (file checks, documentation generation, CI "
             "notifications)",
             ("validate_role_files", "validate_role_vars_used", "validate_no_wip", "validate_no_broken_link",
              "generate_ansible_default_settings", "send_job_completion_notification", "send_cpt_notification",
              "generate_middleware_ci_secret_boilerplate", "generate_toolbox_rst_documentation",
              "generate_toolbox_related_files")),
    "configure": ("the reference's configuration editing: here -e preset=, -e overrides= and the "
                  "perfscale.topsail.config playbook (docs/configuration.md)", ("enter", "apply", "get", "name")),
    "from_config": ("here -e from_config=true on the command itself, with -e prefix= and -e suffix=", ("run",)),
}


# commands that reach no cluster (checked by the toolbox playbook before a command that does):
# None, or the parameter whose value makes the command local (llm_load run given a url)
LOCAL_COMMANDS = {
    "host capture_environment": None,
    "capacity plan": None,
    "llm_load_test run": None,
    "llm_load run": "url",
    # given a Prometheus URL, these talk to it directly (else to the cluster's Prometheus pod)
    "cluster reset_prometheus_db": "prometheus_url",
    "cluster query_prometheus_db": "prometheus_url",
    "cluster dump_prometheus_db": "prometheus_url",
}


def needs_cluster(command, params, from_config=False):
    """Whether ``command`` with ``params`` reaches a cluster (a command made local by a parameter
    counts as local when the configuration may supply that parameter)."""
    if command not in LOCAL_COMMANDS:
        return True
    local_when = LOCAL_COMMANDS[command]
    return local_when is not None and not from_config and not (params or {}).get(local_when)


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


def _short_description(role, role_dir):
    from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import markup

    return markup.plain(specs(role_dir).get("short_description", ""), role + "_")


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
            found[command] = {"role": role, "description": _short_description(role, role_dir) if describe else None}
    return dict(sorted(found.items()))


def groups(known):
    """The groups of the provided commands, sorted."""
    return sorted({command.split()[0] for command in known})


def resolve(roles_dir, name, known=None, lister="'-e command=list'"):
    """The command a name designates (aliases followed); an unknown or unprovided one is an error.
    ``known``: ``commands(roles_dir)`` when the caller has it already; ``lister``: what lists the
    commands, in the unknown command's error."""
    name = " ".join(str(name or "").split())
    if known is None:
        known = commands(roles_dir, describe=False)
    if name in known:
        return name
    if name in ALIASES:
        return resolve(roles_dir, ALIASES[name], known, lister)
    if name in NOT_PROVIDED:
        raise CommandArgsError("toolbox command '%s' is not provided: %s" % (name, NOT_PROVIDED[name]))
    group = name.split()[0] if name else ""
    if group in NOT_PROVIDED_GROUPS:
        raise CommandArgsError("toolbox %s '%s' is not provided: %s" % (
            "command" if " " in name else "group", name, NOT_PROVIDED_GROUPS[group][0]))
    if group in groups(known):
        # a typo in a provided group: the closest command of that group
        candidates = [command for command in list(known) + list(ALIASES) + list(NOT_PROVIDED)
                      if command.split()[0] == group]
    else:
        candidates = list(known) + list(ALIASES) + groups(known) + list(NOT_PROVIDED_GROUPS)
    hint = difflib.get_close_matches(name, candidates, n=1)
    raise CommandArgsError("unknown toolbox command %r%s; %s lists the %d commands"
                           % (name, " (did you mean '%s'?)" % hint[0] if hint else "", lister, len(known)))


def listing(roles_dir, group=None):
    """One line per command with its description, then the aliases and what is not provided
    (commands, then groups of the reference); ``group``: that group's lines only."""
    known = commands(roles_dir)

    def wanted(command):
        return group is None or command.split()[0] == group

    width = max((len(c) for c in list(known) + list(ALIASES) + list(NOT_PROVIDED) if wanted(c)), default=0)
    lines = ["%-*s  %s" % (width, command, info["description"]) for command, info in known.items() if wanted(command)]
    lines += ["%-*s  = %s" % (width, alias, target) for alias, target in sorted(ALIASES.items()) if wanted(alias)]
    lines += ["%-*s  not provided: %s" % (width, command, why) for command, why in sorted(NOT_PROVIDED.items())
              if wanted(command)]
    if group is None:
        for name, (why, commands_of) in sorted(NOT_PROVIDED_GROUPS.items()):
            count = " (%d commands)" % len(commands_of) if commands_of else ""
            lines.append("%-*s  not provided%s: %s" % (width, name, count, why))
    return lines


def _sentences(description):
    """A description (a string or a list of paragraphs) as a list of paragraphs."""
    if isinstance(description, list):
        return [str(item) for item in description if item is not None]
    return [str(description)] if description else []


def _value_text(value):
    """A default as the user would type it: ``true``, ``60``, ``[]``, ``''``, ``completions``."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value and not set(value) & set(" ,'\"[]{}#") else json.dumps(value)
    return json.dumps(value, sort_keys=True, default=str)


def _type_text(details):
    kind = str(details.get("type") or "str")
    if kind == "list" and details.get("elements"):
        kind = "list of %s" % details["elements"]
    if details.get("choices"):
        kind += ", one of %s" % "|".join(_value_text(choice) for choice in details["choices"])
    return kind


def _spelling(cli):
    """How the user writes a parameter: ``--name=value`` on run_toolbox.py, ``name=value`` with -e."""
    if cli:
        return lambda name, value: "--%s" % name if value is None else "--%s=%s" % (name, value)
    return lambda name, value: name if value is None else "%s=%s" % (name, value)


def parameter_lines(role, spec, cli=False):
    """One line per parameter: the name as the user types it, its type, whether it is required or
    its default, and its description in plain text (no markup, no role-prefixed names)."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import markup

    prefix = role + "_"
    spelling = _spelling(cli)
    lines = []
    for option, details in sorted((spec.get("options") or {}).items()):
        details = details or {}
        name = option[len(prefix):] if option.startswith(prefix) else option
        description = markup.plain(" ".join(_sentences(details.get("description"))), prefix, spelling)
        if details.get("required"):
            given = "required"
        elif details.get("default") is None:
            given = "optional"
        else:
            given = "default %s" % _value_text(details["default"])
        shown = spelling(name, None)
        if cli and details.get("type") == "bool":
            shown = "%s / --no%s" % (shown, name)
        lines.append("  %s (%s, %s): %s" % (shown, _type_text(details), given, description))
    return lines


def help_lines(roles_dir, command, cli=False, known=None):
    """A command's description and parameters in the user's words (names without the role prefix,
    Ansible's markup as plain text); ``cli``: spelt as run_toolbox.py takes them (``--name``);
    ``known``: ``commands(roles_dir)`` when the caller has it already."""
    import textwrap

    from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import markup

    info = (known or commands(roles_dir, describe=False))[command]
    spec = specs(os.path.join(roles_dir, info["role"]))
    prefix = info["role"] + "_"
    spelling = _spelling(cli)
    lines = ["%s: %s" % (command, markup.plain(spec.get("short_description", ""), prefix, spelling))]
    for paragraph in _sentences(spec.get("description")):
        lines += textwrap.wrap(markup.plain(paragraph, prefix, spelling), width=100, initial_indent="  ",
                               subsequent_indent="  ", break_on_hyphens=False, break_long_words=False)
    options = parameter_lines(info["role"], spec, cli=cli)
    lines.append("parameters:" if options else "parameters: none")
    return lines + options
