# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Executors: the registry (``tests.benchmark.executor`` names one of them).

An executor is an ``executors.base.Executor`` subclass; adding one is a module
in this package and one entry in ``EXECUTORS`` (its module and class, imported on use). The matrix engine only calls
the interface of ``executors/base.py``.

Which one runs a matrix is ``select_executor``: the configured name, except that the
inventory group ``benchmark_hosts`` has a say (``inventory_hosts.select``: the default
``local`` with hosts in the group is ``inventory_hosts``; ``inventory_hosts`` without
hosts, or ``kubernetes``/``tekton`` with hosts, is one error line).
"""

from __future__ import annotations

import importlib

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ExecutorError

# name -> (module of this package, class): imported when asked for, so that importing one executor
# module (or executors.base) never imports the others (the tekton and inventory hosts executors
# import the matrix engine, and kubernetes' modules: only the executor asked for loads them)
EXECUTORS = {
    "local": ("local", "LocalExecutor"),
    "kubernetes": ("kubernetes", "KubernetesExecutor"),
    "tekton": ("tekton", "TektonExecutor"),
    "inventory_hosts": ("inventory_hosts", "InventoryHostsExecutor"),
}


def executor_names():
    return sorted(EXECUTORS)


def executor_class(name):
    try:
        module, class_name = EXECUTORS[name]
    except (KeyError, TypeError):
        raise ExecutorError("tests.benchmark.executor %r: expected one of %s"
                            % (name, ", ".join(executor_names()))) from None
    return getattr(importlib.import_module("%s.%s" % (__name__, module)), class_name)


def create_executor(name, section=None, base_env=None, connections=None):
    """The executor ``name`` for the benchmark ``section`` (``connections``: cluster role ->
    connection options, for the executors that run points on a cluster)."""
    return executor_class(name).from_section(section or {}, base_env=base_env, connections=connections or {})


def select_executor(configured, groups=None):
    """The name of the executor that runs the matrix: ``configured`` (``tests.benchmark.executor``)
    given the inventory's ``groups`` (name -> hosts; ``benchmark_hosts`` is the one that counts).
    Raises ExecutorError (one line) for an unknown name, ``inventory_hosts`` without hosts in the
    group, and ``kubernetes``/``tekton`` with hosts in it."""
    executor_class(configured)
    inventory_hosts = importlib.import_module(__name__ + ".inventory_hosts")
    return inventory_hosts.select(configured, inventory_hosts.group_hosts(groups))
