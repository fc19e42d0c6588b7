#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One toolbox command as the reference toolbox runs it:

    ./run_toolbox.py cluster capture_state --namespaces=my-ns
    ./run_toolbox.py --help | ./run_toolbox.py cluster --help | ./run_toolbox.py cluster capture_state --help

It runs ``ansible-playbook perfscale.topsail.toolbox`` with the command and its parameters
(plugins/module_utils/toolbox/cli.py translates the command line; docs/toolbox.md). It works
from a checkout (after ``make setup``: the checkout's .venv and ansible.cfg, also as
``.venv/bin/run_toolbox``), from an installed collection (this file is then
``.../ansible_collections/perfscale/topsail/run_toolbox.py``) and, copied elsewhere, with the
collection ``ansible-galaxy collection list`` finds.
"""

from __future__ import annotations

import json
import os
import subprocess  # nosec B404 - fixed programs, no shell
import sys

COLLECTION = ("ansible_collections", "perfscale", "topsail")
# the exit code of a command line refused before the playbook runs (ansible-playbook's for a failed task)
REFUSED = 2
# set when this script runs itself again with the checkout's python
_REEXEC = "PERFSCALE_RUN_TOOLBOX_REEXEC"


def _tree_root(directory):
    """The collections root holding ``directory`` as ansible_collections/perfscale/topsail, or None."""
    parts = directory.split(os.sep)
    if tuple(parts[-3:]) == COLLECTION:
        return os.sep.join(parts[:-3]) or os.sep
    return None


def _galaxy_root(tools_dir):
    """The collections root where ``ansible-galaxy collection list`` finds perfscale.topsail, or None."""
    galaxy = os.path.join(tools_dir, "ansible-galaxy")
    command = [galaxy if os.path.exists(galaxy) else "ansible-galaxy", "collection", "list", "perfscale.topsail",
               "--format", "json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)  # nosec B603
        found = json.loads(done.stdout) if done.returncode == 0 else {}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    for path, collections in (found.items() if isinstance(found, dict) else ()):
        if isinstance(collections, dict) and "perfscale.topsail" in collections:
            return os.path.dirname(path.rstrip(os.sep))
    return None


def locate(script, tools_dir):
    """(collections root, the checkout's directory or None): a checkout set up by ``make setup``, else the
    installed collection this file is part of, else the one ansible-galaxy finds (root None: not found)."""
    real = os.path.dirname(os.path.realpath(script))
    if os.path.isdir(os.path.join(real, ".venv", "collections", *COLLECTION)):
        return os.path.join(real, ".venv", "collections"), real
    for directory in (os.path.dirname(os.path.abspath(script)), real):
        root = _tree_root(directory)
        if root:
            return root, None
    return _galaxy_root(tools_dir), None


def main(argv):
    tools_dir = os.path.dirname(os.path.abspath(sys.executable))
    root, checkout = locate(__file__, tools_dir)
    if checkout:
        venv = os.path.join(checkout, ".venv")
        python = os.path.join(venv, "bin", "python")
        if (os.path.realpath(sys.prefix) != os.path.realpath(venv) and os.access(python, os.X_OK)
                and not os.environ.get(_REEXEC)):
            # the checkout's pinned ansible, whichever python started this script (once)
            os.environ[_REEXEC] = "1"
            os.execv(python, [python, os.path.realpath(__file__)] + list(argv))
        os.environ.setdefault("ANSIBLE_CONFIG", os.path.join(checkout, "ansible.cfg"))
    if root is None:
        sys.stderr.write("run_toolbox.py: the collection perfscale.topsail is not found: this file is neither in a "
                         "checkout set up with 'make setup' nor in an installed collection, and 'ansible-galaxy "
                         "collection list perfscale.topsail' finds none\n")
        return REFUSED
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import cli
    except ImportError as exc:
        sys.stderr.write("run_toolbox.py: %s (run it with the Python that runs ansible-playbook)\n" % exc)
        return REFUSED

    def tool(name):
        path = os.path.join(tools_dir, name)
        return path if os.path.exists(path) else name

    def execute(plan):
        # ansible-playbook in this process's place: its output, its exit code, its signals
        argv_ = plan.playbook_argv(tool("ansible-playbook"))
        sys.stdout.flush()
        try:
            os.execvp(argv_[0], argv_)
        except OSError as exc:
            sys.stderr.write("run_toolbox.py: cannot run %s: %s\n" % (argv_[0], exc.strerror or exc))
        return REFUSED

    return cli.main(argv, os.path.join(root, *COLLECTION, "roles"), execute,
                    host_variables=lambda passthrough: cli.inventory_variables(tool("ansible-inventory"), passthrough))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
