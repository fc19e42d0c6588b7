# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Toolbox commands side by side (the reference's ``run.Parallel`` + ``run_and_catch``).

Each command runs as its own ``ansible-playbook perfscale.topsail.toolbox`` child,
in the same run: the parent numbers the commands' directories in their order
before starting any (``NNN__group__command[_suffix]``, each child opens the one
made for it), hands every child the parent's resolved configuration and
inventory, and waits for **all** of them before reporting: a failure never
leaves a sibling running or unreported. The children run inside the parent's
run lock (``run_lock`` lets a descendant of the holder in).

``run_all`` is plain Python over ``subprocess`` (argument lists, never a shell);
the ``toolbox_parallel`` action is its adapter.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args as command_args_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CommandArgsError

OUTPUT_FILE = "_toolbox_run.log"
POLL_S = 0.2


class Command:
    """One command to run: its entry key (``[prefix/]group command[/suffix]``), its own
    arguments (on top of the configuration's, or alone), its reserved directory."""

    def __init__(self, key, args=None, from_config=True):
        prefix, group, command, suffix = command_args_lib.parse_entry_key(key)
        self.key = key
        self.prefix, self.group, self.command, self.suffix = prefix, group, command, suffix
        self.args = dict(args or {})
        self.from_config = from_config
        self.directory = None
        self.process = None
        self.returncode = None
        self.started = self.ended = None

    @property
    def name(self):
        return "%s %s" % (self.group, self.command)

    @property
    def dir_name(self):
        return "%s__%s" % (self.group, self.command) + ("_" + self.suffix if self.suffix else "")

    @classmethod
    def from_item(cls, item):
        """A command from a flow item: a key, or ``{command: key, args: {...}, from_config: bool}``."""
        if isinstance(item, str):
            return cls(item)
        if isinstance(item, dict) and isinstance(item.get("command"), str):
            unknown = set(item) - {"command", "args", "from_config"}
            if unknown:
                raise CommandArgsError("parallel command %s: unknown key(s) %s (expected command, args, from_config)"
                                       % (item["command"], ", ".join(sorted(unknown))))
            if item.get("args") is not None and not isinstance(item["args"], dict):
                raise CommandArgsError("parallel command %s: args must be a mapping" % item["command"])
            return cls(item["command"], item.get("args"), bool(item.get("from_config", True)))
        raise CommandArgsError("parallel command %r: expected 'group command' or {command: ..., args: {...}}" % (item,))


def reserve_directories(parent, commands):
    """Make each command's numbered directory, in the commands' order."""
    for command in commands:
        command.directory = artifacts.allocate_artifact_dir(parent, command.dir_name)
    return commands


def child_argv(playbook_command, command, config_file, run_root, inventories=(), cluster=None, verbosity=0):
    """The argument list of one child ``ansible-playbook``."""
    extra = {
        "command": command.name,
        "from_config": command.from_config,
        "args": command.args,
        "config_file": config_file,
        "artifact_dir": run_root,
        "perfscale_reserved_artifact_dir": command.directory,
        # the configuration file is the parent's resolved one: the inventory's presets and
        # overrides are already in it
        "perfscale_presets": [],
        "perfscale_overrides": {},
    }
    if command.prefix:
        extra["prefix"] = command.prefix
    if command.suffix:
        extra["suffix"] = command.suffix
    if cluster:
        extra["cluster"] = cluster
    argv = list(playbook_command)
    for inventory in inventories:
        argv += ["-i", inventory]
    if verbosity:
        argv.append("-" + "v" * min(int(verbosity), 4))
    return argv + ["-e", json.dumps(extra), "perfscale.topsail.toolbox"]


def write_config(path, config):
    """The parent's resolved configuration, readable by the user only (it is not an artifact)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(artifacts.dump_yaml(config))
    return path


def _first_line(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    return line.strip()
    except OSError:
        return None
    return None


def run_all(commands, argv_of, max_parallel=0, timeout_s=0, env=None, cwd=None):
    """Run every command (at most ``max_parallel`` at once, 0: all), each child's output to
    ``<its directory>/_toolbox_run.log``; wait for all of them (a command still running at
    ``timeout_s`` is stopped and counted as failed). Returns one result per command."""
    waiting = list(commands)
    running = []
    limit = max_parallel if max_parallel and max_parallel > 0 else len(commands) or 1
    deadline = time.monotonic() + timeout_s if timeout_s else None
    timed_out = set()
    while waiting or running:
        while waiting and len(running) < limit:
            command = waiting.pop(0)
            with open(os.path.join(command.directory, OUTPUT_FILE), "wb") as output:
                command.process = subprocess.Popen(argv_of(command), stdout=output, stderr=subprocess.STDOUT,
                                                   stdin=subprocess.DEVNULL, env=env, cwd=cwd)
            command.started = time.monotonic()
            running.append(command)
        for command in list(running):
            if command.process.poll() is not None:
                command.returncode = command.process.returncode
                command.ended = time.monotonic()
                running.remove(command)
        if deadline and time.monotonic() > deadline:
            for command in running:
                timed_out.add(command.key)
                command.process.terminate()
            for command in running:
                try:
                    command.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    command.process.kill()
                    command.process.wait()
                command.returncode = command.process.returncode
                command.ended = time.monotonic()
            running = []
            for command in waiting:  # never started
                timed_out.add(command.key)
                command.returncode = None
            waiting = []
        if running:
            time.sleep(POLL_S)
    return [result_of(command, command.key in timed_out, timeout_s) for command in commands]


def result_of(command, timed_out=False, timeout_s=0):
    failure = None
    if command.directory:
        failure = _first_line(os.path.join(command.directory, artifacts.FAILURE_FILE))
    if timed_out:
        failure = "not finished after %ss (stopped)" % timeout_s if command.started else \
            "not started before the %ss timeout" % timeout_s
    elif command.returncode and not failure:
        log = os.path.join(command.directory, OUTPUT_FILE)
        failure = "ansible-playbook exited with %s; see %s" % (command.returncode, log)
    return {
        "command": command.key,
        "artifact_dir": command.directory,
        "rc": command.returncode,
        "ok": command.returncode == 0 and not timed_out,
        "failure": failure,
        "duration_s": round(command.ended - command.started, 3) if command.started and command.ended else None,
    }


def summary(results):
    """One line per command, then the verdict."""
    lines = ["%s: %s (%s)" % (r["command"], "ok" if r["ok"] else "FAILED: %s" % r["failure"],
                              os.path.basename(r["artifact_dir"] or "")) for r in results]
    failed = [r for r in results if not r["ok"]]
    return lines, ("%d of %d command(s) failed: %s" % (len(failed), len(results), "; ".join(
        "%s: %s" % (r["command"], r["failure"]) for r in failed)) if failed else None)
