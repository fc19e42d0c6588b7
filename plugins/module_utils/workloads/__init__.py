# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Built-in post-processing workloads: the registry of short names.

A workload is a module (see ``workload.py`` for what it declares); a built-in
one lives in this package and is registered here by its short name, which
``postprocess.workload`` accepts besides an importable module or a ``.py`` path.
"""

from __future__ import annotations

BUILTIN = {
    "perf_indicators": "ansible_collections.perfscale.topsail.plugins.module_utils.workloads.perf_indicators",
    "llm_load": "ansible_collections.perfscale.topsail.plugins.module_utils.workloads.llm_load",
    "fine_tuning": "ansible_collections.perfscale.topsail.plugins.module_utils.workloads.fine_tuning",
}

# the workloads of the Prometheus captures (``postprocess.prom_workload``)
PROM_BUILTIN = {
    "prom": "ansible_collections.perfscale.topsail.plugins.module_utils.workloads.prom",
}


def builtin_names():
    return sorted(BUILTIN)
