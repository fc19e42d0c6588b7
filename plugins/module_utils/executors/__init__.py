# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Executors: the registry (``tests.benchmark.executor`` names one of them).

An executor is an ``executors.base.Executor`` subclass; adding one is a module
in this package and one entry in ``EXECUTORS``. The matrix engine only calls
the interface of ``executors/base.py``.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ExecutorError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.local import LocalExecutor

EXECUTORS = {executor.name: executor for executor in (LocalExecutor,)}


def executor_names():
    return sorted(EXECUTORS)


def create_executor(name, **options):
    try:
        executor = EXECUTORS[name]
    except KeyError:
        raise ExecutorError("tests.benchmark.executor %r: expected one of %s"
                            % (name, ", ".join(executor_names()))) from None
    return executor(**options)
