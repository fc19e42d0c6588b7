# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A test flow: cleanup_before → prepare → test → cleanup_after, from the configuration.

A flow is the ``steps`` mapping of a ``tests.<flow>`` section; each step is a list
of items run in order:

- ``"[prefix/]group command[/suffix]"``: one toolbox command, its arguments from
  ``command_args.yml.j2`` (the reference's ``run_toolbox_from_config``);
- ``{command: ..., args: {...}, from_config: bool}``: the same with arguments of
  its own;
- ``{parallel: [commands...], max_parallel: N, timeout: S}``: independent commands
  side by side, all finishing before the first error is raised;
- ``{matrix: tests.<flow>.benchmark}``: the points of that matrix section, each in its
  own directory (with the ``toolbox_flow`` harness, each point runs toolbox commands);
  failed points do not stop the flow: the playbook post-processes, then judges;
- ``{tasks: file.yml}``: a tasks file of the playbook (a check a command cannot express).

``plan`` checks the definition (one line naming the key and what was expected)
and decides which steps run: ``-e steps=prepare,test`` runs only those,
``-e skip=cleanup_before`` leaves those out, and ``keep`` (``clusters.keep`` or
``-e keep=true``) leaves out ``cleanup_after``, which otherwise runs even when an
earlier step failed. Item kinds are a registry (``ITEM_KINDS``).
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args as command_args_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError, PerfscaleError

STEPS = ("cleanup_before", "prepare", "test", "cleanup_after")
FINAL_STEP = "cleanup_after"


def _command(where, item):
    if isinstance(item, str):
        item = {"command": item}
    unknown = set(item) - {"command", "args", "from_config"}
    if unknown:
        raise ConfigError("%s: unknown key(s) %s (a command item has command, args, from_config)"
                          % (where, ", ".join(sorted(unknown))))
    try:
        prefix, group, command, suffix = command_args_lib.parse_entry_key(item.get("command"))
    except PerfscaleError as exc:
        raise ConfigError("%s: %s" % (where, exc)) from None
    if not isinstance(item.get("args", {}) if item.get("args") is not None else {}, dict):
        raise ConfigError("%s: args must be a mapping of the command's parameters" % where)
    return {"kind": "command", "command": item["command"], "name": "%s %s" % (group, command),
            "prefix": prefix or "", "suffix": suffix or "", "args": dict(item.get("args") or {}),
            "from_config": bool(item.get("from_config", True))}


def _parallel(where, item):
    unknown = set(item) - {"parallel", "max_parallel", "timeout"}
    if unknown:
        raise ConfigError("%s: unknown key(s) %s (a parallel item has parallel, max_parallel, timeout)"
                          % (where, ", ".join(sorted(unknown))))
    commands = item["parallel"]
    if not isinstance(commands, list) or not commands:
        raise ConfigError("%s.parallel: expected a non-empty list of commands" % where)
    for key in ("max_parallel", "timeout"):
        value = item.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError("%s.%s: expected a whole number, 0 or more (0: no limit), got %r" % (where, key, value))
    checked = [_command("%s.parallel[%d]" % (where, i), c if isinstance(c, (str, dict)) else {"command": c})
               for i, c in enumerate(commands)]
    return {"kind": "parallel", "commands": [{"command": c["command"], "args": c["args"], "from_config": c["from_config"]}
                                             for c in checked],
            "max_parallel": item.get("max_parallel", 0), "timeout": item.get("timeout", 0)}


def _tasks(where, item):
    if set(item) != {"tasks"} or not isinstance(item["tasks"], str) or not item["tasks"].strip():
        raise ConfigError("%s: a tasks item is {tasks: <tasks file of the playbook>} and nothing else" % where)
    return {"kind": "tasks", "tasks": item["tasks"]}


def _matrix(where, item):
    key = item.get("matrix")
    if set(item) != {"matrix"} or not isinstance(key, str) or len(key.split(".")) != 3 or not key.startswith("tests."):
        raise ConfigError("%s: a matrix item is {matrix: tests.<flow>.benchmark} (the matrix section whose points run)"
                          % where)
    return {"kind": "matrix", "matrix": key}


# the key that tells an item's kind -> its checker
ITEM_KINDS = {"command": _command, "parallel": _parallel, "tasks": _tasks, "matrix": _matrix}


def check_item(where, item):
    if isinstance(item, str):
        return _command(where, item)
    if isinstance(item, dict):
        kinds = [kind for kind in ITEM_KINDS if kind in item]
        if len(kinds) == 1:
            return ITEM_KINDS[kinds[0]](where, item)
    raise ConfigError("%s: expected 'group command', or a mapping with one of %s, got %r"
                      % (where, ", ".join(ITEM_KINDS), item))


def check_definition(steps, where):
    """The flow's steps, every item checked: ``{step: [item, ...]}`` in step order."""
    if not isinstance(steps, dict):
        raise ConfigError("%s: expected a mapping of steps (%s)" % (where, ", ".join(STEPS)))
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise ConfigError("%s: unknown step(s) %s (the steps are %s)"
                          % (where, ", ".join(map(str, unknown)), ", ".join(STEPS)))
    checked = {}
    for step in STEPS:
        items = steps.get(step) or []
        if not isinstance(items, list):
            raise ConfigError("%s.%s: expected a list of commands" % (where, step))
        checked[step] = [check_item("%s.%s[%d]" % (where, step, i), item) for i, item in enumerate(items)]
    return checked


def _step_list(value, option):
    if value in (None, "", []):
        return []
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [str(n).strip() for n in names if str(n).strip()]
    unknown = [n for n in names if n not in STEPS]
    if unknown:
        raise ConfigError("-e %s: unknown step(s) %s (the steps are %s)" % (option, ", ".join(unknown), ", ".join(STEPS)))
    return names


def plan(steps, where, only=None, skip=None, keep=False):
    """Which steps run, in order: ``[{step, items, run, reason}]``."""
    checked = check_definition(steps, where)
    only, skip = _step_list(only, "steps"), _step_list(skip, "skip")
    planned = []
    for step in STEPS:
        reason = None
        if only and step not in only:
            reason = "not in -e steps"
        elif step in skip:
            reason = "skipped with -e skip"
        elif step == FINAL_STEP and keep:
            reason = "kept (clusters.keep / -e keep=true)"
        elif not checked[step]:
            reason = "nothing to do"
        planned.append({"step": step, "items": checked[step], "run": reason is None, "reason": reason})
    return planned


def outcome_lines(planned, outcomes):
    """The summary: one line per step with its outcome."""
    lines = []
    for entry in planned:
        outcome = outcomes.get(entry["step"])
        if not entry["run"]:
            outcome = "not run (%s)" % entry["reason"]
        elif outcome is None:
            outcome = "not run (an earlier step failed)"
        lines.append("%-15s %s" % (entry["step"], outcome))
    return lines
