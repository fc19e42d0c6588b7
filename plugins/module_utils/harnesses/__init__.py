# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Harnesses: the registry (``tests.benchmark.harness`` names one of them).

A harness is a ``harnesses.base.Harness`` subclass; adding one is a module in
this package and one entry in ``HARNESSES``. The matrix planner asks the
harness which settings a point may have and what command runs it; the
configuration schema reads the names from here.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.harness import LlmLoadHarness
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.perf_indicator import PerfIndicatorHarness
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.toolbox_flow import ToolboxFlowHarness

HARNESSES = {harness.name: harness for harness in (PerfIndicatorHarness(), LlmLoadHarness(), ToolboxFlowHarness())}


def harness_names():
    return sorted(HARNESSES)


def get_harness(name):
    try:
        return HARNESSES[name]
    except KeyError:
        raise HarnessError("tests.benchmark.harness %r: expected one of %s" % (name, ", ".join(harness_names()))) from None
