# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Base of this collection's action plugins (controller side).

Every action validates its arguments against ``ARGUMENT_SPEC`` (which matches
the documentation stub in plugins/modules, a unit test checks it) and, unless
``NEEDS_CONFIG`` is false, needs the effective configuration that
perfscale.topsail.resolve_config set as the fact ``perfscale_config``.

A domain error (``module_utils.errors.PerfscaleError``) or a file-system error
becomes a failed task with its one-line message, here and only here; a Python
package the collection needs but the controller lacks is one line naming it and
the requirements file; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import os
import sys

from ansible import context
from ansible.plugins.action import ActionBase

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError


# the Python packages the collection needs (what its execution environment installs)
REQUIREMENTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            "meta", "ee-requirements.txt")


def missing_package_message(exc):
    """One line for a third-party package the collection imports and the controller lacks."""
    return ("the Python package %r is missing in %s: install the collection's requirements with "
            "%s -m pip install -r %s" % (exc.name, sys.executable, sys.executable, REQUIREMENTS))


def raw_extra_var(name):
    """The literal text of ``-e name=...`` as typed on the command line.

    Ansible splits ``key=value`` extra-vars at whitespace, so
    ``-e overrides='{"a.b": 3}'`` reaches the play truncated to ``{"a.b":``.
    The command-line arguments still hold the whole text; the last one wins,
    as it does for Ansible.
    """
    found = None
    for entry in (context.CLIARGS.get("extra_vars") or ()):
        if isinstance(entry, str) and entry.startswith(name + "="):
            found = entry[len(name) + 1:]
    return found


def os_error_message(exc):
    """One line for an OSError: the file and the reason."""
    where = exc.filename if getattr(exc, "filename", None) else ""
    return "%s%s" % ("%s: " % where if where else "", exc.strerror or exc)


class PerfscaleAction(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    NAME = "action"
    ARGUMENT_SPEC = {}
    VALIDATION = {}
    NEEDS_CONFIG = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(self.ARGUMENT_SPEC, **self.VALIDATION)
        config = task_vars.get("perfscale_config")
        if self.NEEDS_CONFIG and config is None:
            result.update(failed=True, msg="%s: no effective configuration; run perfscale.topsail.resolve_config first"
                          % self.NAME)
            return result
        try:
            return self.execute(result, args, task_vars, config)
        except PerfscaleError as exc:
            result.update(failed=True, msg=str(exc))
        except OSError as exc:
            result.update(failed=True, msg="%s: %s" % (self.NAME, os_error_message(exc)))
        except ModuleNotFoundError as exc:
            if not exc.name or exc.name.split(".")[0] in ("ansible_collections", "ansible"):
                raise
            result.update(failed=True, msg="%s: %s" % (self.NAME, missing_package_message(exc)))
        return result

    def execute(self, result, args, task_vars, config):
        raise NotImplementedError
