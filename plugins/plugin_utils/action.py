# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Base of this collection's action plugins (controller side).

Every action validates its arguments against ``ARGUMENT_SPEC`` (which matches
the documentation stub in plugins/modules, a unit test checks it) and, unless
``NEEDS_CONFIG`` is false, needs the effective configuration that
perfscale.topsail.resolve_config set as the fact ``perfscale_config``.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase


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
        return self.execute(result, args, task_vars, config)

    def execute(self, result, args, task_vars, config):
        raise NotImplementedError
