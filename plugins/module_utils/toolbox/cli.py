# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``run_toolbox.py``: the reference toolbox's command line over the toolbox playbook.

The reference runs a command as ``./run_toolbox.py cluster capture_state --namespaces=my-ns``
(python-fire: ``--name=value``, ``--name value``, a boolean as ``--flag`` / ``--noflag``, names
with ``-`` or ``_``). ``plan(argv, roles_dir)`` turns such a command line into what the
toolbox playbook takes - one extra-var ``{"command": "group command", "params": {...}}``, so
that no parameter name (``namespace``, ``name``, ``timeout``...) reaches Ansible as an
extra-var of its own and draws its "reserved name" warning - or into the lines of a help
text. Values stay the text typed (``[...]`` and ``{...}`` are JSON/YAML): the role's declared
type converts them as it does for ``-e name=value`` (``a,b`` is a list of two). The command
and its parameters are checked here, before Ansible starts, and a mistake is one line; the
playbook checks them again (the same functions) and runs the command, in its own
``NNN__group__command`` directory, with ansible-playbook's exit code.
"""

from __future__ import annotations

import json
import os
import textwrap

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CommandArgsError, PerfscaleError
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args as command_args_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import commands as toolbox

PROGRAM = "run_toolbox.py"
PLAYBOOK = "perfscale.topsail.toolbox"
# the exit code of a command line refused before the playbook runs: ansible-playbook's for a failed
# task, which the same mistake gives in the playbook form (-e command=... -e name=...)
REFUSED = 2
LISTER = "'%s --help'" % PROGRAM
HELP_FLAGS = ("--help", "-h")
_BOOLEAN_WORDS = ("true", "false", "yes", "no", "on", "off", "1", "0", "y", "n")
# the reference's from_config command (run_toolbox.py from_config group command --prefix ...)
FROM_CONFIG = "from_config"
_FROM_CONFIG_OPTIONS = ("prefix", "suffix", "extra")

USAGE = [
    "usage: %s GROUP COMMAND [--PARAMETER=VALUE ...] [-- ANSIBLE-PLAYBOOK OPTIONS]" % PROGRAM,
    "       %s GROUP --help             the group's commands" % PROGRAM,
    "       %s GROUP COMMAND --help     the command's parameters" % PROGRAM,
    "       %s from_config GROUP COMMAND [--prefix=P] [--suffix=S] [--extra='{NAME: VALUE}']" % PROGRAM,
    "       %s list                     every command, and what is not provided" % PROGRAM,
    "",
    "Runs one toolbox command (the playbook %s) in its own NNN__group__command directory of" % PLAYBOOK,
    "the run's artifact directory, with ansible-playbook's exit code. A parameter is --name=value or",
    "--name value (- or _ in the name); a boolean --flag, --noflag or --flag=false; a list a,b or",
    "'[a, b]'; a mapping '{key: value}'. After --, options for ansible-playbook: -e cluster=driver,",
    "-e artifact_dir=DIR (else $ARTIFACT_DIR), -e preset=NAME, -i INVENTORY, -v.",
]


class Plan:
    """What a command line asks: ``lines`` to show (help), or ``extra_vars`` and ``passthrough``
    (ansible-playbook's own options, after ``--``) to run the toolbox playbook with."""

    def __init__(self, lines=None, extra_vars=None, passthrough=()):
        self.lines = lines
        self.extra_vars = extra_vars
        self.passthrough = list(passthrough)

    def playbook_argv(self, ansible_playbook):
        """The ansible-playbook command line of this plan."""
        return [ansible_playbook, PLAYBOOK, "-e", json.dumps(self.extra_vars, sort_keys=True)] + self.passthrough


def _split(argv):
    """(words before the first option, the options, ansible-playbook's options after ``--``,
    whether help was asked). ``-- --help`` is the reference's (python-fire's) way to ask for help."""
    argv = list(argv)
    passthrough = []
    if "--" in argv:
        at = argv.index("--")
        argv, passthrough = argv[:at], argv[at + 1:]
    wants_help = any(arg in HELP_FLAGS for arg in argv) or passthrough in (["--help"], ["-h"])
    if passthrough in (["--help"], ["-h"]):
        passthrough = []
    argv = [arg for arg in argv if arg not in HELP_FLAGS]
    words = []
    while argv and not argv[0].startswith("-"):
        words.append(argv.pop(0))
    return words, argv, passthrough, wants_help


def parse_options(command, tokens, known, booleans):
    """``--name=value``, ``--name value``, ``--flag`` / ``--noflag`` (``booleans``: the names of the
    boolean parameters) -> {name: text}; ``known``: the command's parameter names. A name not
    known is kept (the check that follows names it with the closest one); a name given twice, a
    value without its ``--name``, a parameter without its value are one line each."""
    given = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token.startswith("--") or len(token) == 2:
            raise CommandArgsError("toolbox command '%s': unexpected argument %r (a parameter is --name=value; "
                                   "options for ansible-playbook go after --)" % (command, token))
        name, equals, value = token[2:].partition("=")
        name = name.replace("-", "_")
        if not equals:
            following = tokens[index] if index < len(tokens) else None
            takes_following = following is not None and not following.startswith("--")
            if name in booleans:
                # --flag, or --flag false as python-fire reads it
                value = True
                if takes_following and following.lower() in _BOOLEAN_WORDS:
                    value, index = following, index + 1
            elif name not in known and name[:2] == "no" and name[2:].lstrip("_") in booleans:
                name, value = name[2:].lstrip("_"), False
            elif takes_following:
                value, index = following, index + 1
            elif name in known:
                raise CommandArgsError("toolbox command '%s': parameter '%s' needs a value (--%s=VALUE)"
                                       % (command, name, name))
            else:
                value = True
        if name in given:
            raise CommandArgsError("toolbox command '%s': parameter '%s' given twice" % (command, name))
        given[name] = command_args_lib.typed_text(command, "--%s" % name, value)
    return given


def _parameter_names(role, options):
    """(every name the command takes, aliases included; the boolean ones)."""
    known = set(command_args_lib.known_parameters(role, options))
    prefix = role + "_"
    aliases = {alias[len(prefix):]: name for alias, name in command_args_lib.REFERENCE_ALIASES.items()
               if name in options}
    booleans = set()
    for name in known:
        option = options.get(aliases.get(name, prefix + name)) or {}
        if option.get("type") == "bool":
            booleans.add(name)
    return known, booleans


def _top_help(known):
    lines = list(USAGE) + ["", "groups (%s GROUP --help for their commands):" % PROGRAM]
    for group in toolbox.groups(known):
        names = ", ".join(command.split()[1] for command in known if command.split()[0] == group)
        lines += textwrap.wrap(names, width=100, initial_indent="  %-14s " % group, subsequent_indent=" " * 17,
                               break_on_hyphens=False)
    lines += textwrap.wrap("not provided here (%s GROUP says why): %s" % (
        PROGRAM, ", ".join(sorted(toolbox.NOT_PROVIDED_GROUPS))), width=100, subsequent_indent="  ")
    return lines


def _command_help(roles_dir, command, known):
    role = known[command]["role"]
    spec = toolbox.specs(os.path.join(roles_dir, role))
    required = sorted(name[len(role) + 1:] for name, option in (spec.get("options") or {}).items()
                      if (option or {}).get("required"))
    usage = "usage: %s %s%s [--PARAMETER=VALUE ...]" % (
        PROGRAM, command, "".join(" --%s=..." % name for name in required))
    return [usage] + toolbox.help_lines(roles_dir, command, cli=True, known=known)


def _command_word(words):
    """The group and command of the words (``cluster capture_state``), at most two words."""
    if len(words) > 2:
        raise CommandArgsError("%s: unexpected argument %r after the command %r (a parameter is --name=value)"
                               % (PROGRAM, words[2], " ".join(words[:2])))
    return " ".join(words)


def plan(argv, roles_dir, host_variables=None):
    """The plan of a ``run_toolbox.py`` command line. ``host_variables(passthrough)``: the names of
    the variables the inventory sets for localhost (None when unknown), asked only when a required
    parameter is missing - a role variable the inventory sets counts as given, as in the playbook."""
    words, tokens, passthrough, wants_help = _split(argv)
    if not words:
        if wants_help or not tokens:
            return Plan(lines=_top_help(toolbox.commands(roles_dir, describe=False)))
        raise CommandArgsError("%s: expected GROUP COMMAND before %r; %s lists the groups"
                               % (PROGRAM, tokens[0], LISTER))
    if words[0] == FROM_CONFIG:
        return _from_config_plan(words[1:], tokens, passthrough, wants_help, roles_dir)
    if words == ["list"] and not tokens:
        # every command, the aliases and what is not provided (-e command=list)
        return Plan(lines=toolbox.listing(roles_dir))
    known = toolbox.commands(roles_dir, describe=False)
    name = _command_word(words)
    if name in toolbox.groups(known):
        # run_toolbox.py cluster [--help]: the group's commands
        if tokens and not wants_help:
            raise CommandArgsError("%s: expected a command of the group '%s' before %r; %s %s --help lists them"
                                   % (PROGRAM, name, tokens[0], PROGRAM, name))
        return Plan(lines=toolbox.listing(roles_dir, group=name))
    command = toolbox.resolve(roles_dir, name, known, lister=LISTER)
    if wants_help:
        return Plan(lines=_command_help(roles_dir, command, known))
    role = known[command]["role"]
    options = command_args_lib.role_argument_options(roles_dir, role)
    parameters = parse_options(command, tokens, *_parameter_names(role, options))
    # the names and the values first; a required parameter missing then, unless the inventory sets it
    command_args_lib.check_parameters(command, role, parameters, options, check_required=False)
    if command_args_lib.missing_required(role, parameters, options) and not _may_set(passthrough, role):
        defined = host_variables(passthrough) if host_variables else ()
        if defined is not None:
            command_args_lib.check_parameters(command, role, parameters, options, defined=defined,
                                              spelling="--%s=...")
    return Plan(extra_vars={"command": command, "params": parameters}, passthrough=passthrough)


def _may_set(passthrough, role):
    """Whether ansible-playbook's extra-vars may set a variable of the role (``-e role_name=...``, a
    file ``-e @vars.yml``, a mapping ``-e '{...}'``): the playbook then decides whether a required
    parameter is missing."""
    values = []
    for index, arg in enumerate(passthrough):
        if arg in ("-e", "--extra-vars") and index + 1 < len(passthrough):
            values.append(passthrough[index + 1])
        elif arg.startswith("--extra-vars="):
            values.append(arg[len("--extra-vars="):])
        elif arg.startswith("-e") and len(arg) > 2:
            values.append(arg[2:])
    for value in values:
        value = value.strip()
        if value[:1] in ("@", "{", "["):
            return True
        if any(word.startswith(role + "_") for word in value.split()):
            return True
    return False


def _from_config_plan(words, tokens, passthrough, wants_help, roles_dir):
    """``run_toolbox.py from_config GROUP COMMAND [--prefix=P] [--suffix=S] [--extra={...}]``: the
    parameters from the configuration's command_args entry, ``extra`` on top."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError

    if wants_help or not words:
        return Plan(lines=[USAGE[3].strip(),
                           "Runs GROUP COMMAND with its parameters from the configuration's command_args.yml.j2",
                           "entry [PREFIX/]GROUP COMMAND[/SUFFIX], the mapping --extra on top (JSON/YAML)."])
    known = toolbox.commands(roles_dir, describe=False)
    command = toolbox.resolve(roles_dir, _command_word(words), known, lister=LISTER)
    given = parse_options("%s %s" % (FROM_CONFIG, command), tokens, set(_FROM_CONFIG_OPTIONS), set())
    unknown = sorted(set(given) - set(_FROM_CONFIG_OPTIONS))
    if unknown:
        raise CommandArgsError("%s from_config %s: unknown option '--%s'; its options: --prefix, --suffix, --extra "
                               "(the command's parameters go in --extra='{name: value}')"
                               % (PROGRAM, command, unknown[0]))
    try:
        extra = config_lib.parse_overrides(given.get("extra"), source="--extra")
    except ConfigError as exc:
        raise CommandArgsError(str(exc)) from None
    role = known[command]["role"]
    options = command_args_lib.role_argument_options(roles_dir, role)
    command_args_lib.check_parameters(command, role, extra, options, check_required=False)
    extra_vars = {"command": command, "params": extra, "from_config": True}
    for option in ("prefix", "suffix"):
        if given.get(option) not in (None, ""):
            extra_vars[option] = str(given[option])
    return Plan(extra_vars=extra_vars, passthrough=passthrough)


def inventory_variables(ansible_inventory, passthrough, env=None):
    """The names of the variables the inventory sets for localhost (``ansible-inventory --host
    localhost``, with the inventories of ``passthrough``), or None when it cannot say."""
    import subprocess  # nosec B404 - a fixed program, no shell

    inventories = []
    for index, arg in enumerate(passthrough):
        if arg in ("-i", "--inventory", "--inventory-file") and index + 1 < len(passthrough):
            inventories += ["-i", passthrough[index + 1]]
        elif arg.startswith("--inventory="):
            inventories.append(arg)
        elif arg.startswith("-i") and len(arg) > 2:
            inventories += ["-i", arg[2:]]
    try:
        done = subprocess.run([ansible_inventory] + inventories + ["--host", "localhost"],  # nosec B603
                              capture_output=True, text=True, check=False, env=env, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    try:
        found = json.loads(done.stdout)
    except ValueError:
        return None
    return set(found) if isinstance(found, dict) else None


def main(argv, roles_dir, execute, host_variables=None, out=None, err=None):
    """Run a ``run_toolbox.py`` command line: show the help asked, or ``execute(plan)`` (which runs the
    playbook and returns its exit code). A command line refused is one line on ``err``, exit code 2."""
    import sys

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        found = plan(argv, roles_dir, host_variables=host_variables)
    except PerfscaleError as exc:
        err.write(" ".join(str(exc).split()) + "\n")
        return REFUSED
    if found.lines is not None:
        out.write("\n".join(found.lines) + "\n")
        return 0
    return execute(found)
