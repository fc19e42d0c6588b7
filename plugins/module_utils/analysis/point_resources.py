# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each point's process tree used, gathered by the executor (``point.json`` ``resources``): the
performance-indicator contract's CPU user and kernel time and context switches, and the largest
resident set - in every point's payload (``metadata.resources``) and as KPIs of every workload,
ignored for regression (they describe the harness as much as the system under test).

A point whose executor cannot measure them (a Kubernetes Job, a Tekton task) simply has none: they
are never "missing data", strict mode or not.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import kpi as kpi_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree


def _resource(key):
    def value(payload):
        return payload["metadata"]["resources"][key]
    return value


RESOURCE_KPIS = [
    kpi_lib.declare("point_cpu_user_time", "CPU time the point's processes spent in user mode", "s", "lower",
                    fmt="{:.2f}", ignored=True, value=_resource("cpu_user_s")),
    kpi_lib.declare("point_cpu_system_time", "CPU time the point's processes spent in the kernel", "s", "lower",
                    fmt="{:.2f}", ignored=True, value=_resource("cpu_system_s")),
    kpi_lib.declare("point_voluntary_context_switches",
                    "Voluntary context switches of the point's processes (waits)", "switches", "lower",
                    fmt="{:.0f}", ignored=True, value=_resource("voluntary_context_switches")),
    kpi_lib.declare("point_involuntary_context_switches", "Involuntary context switches of the point's processes "
                    "(preemptions: a busy machine)", "switches", "lower", fmt="{:.0f}", ignored=True,
                    value=_resource("involuntary_context_switches")),
    kpi_lib.declare("point_max_rss", "Largest resident set of the point's processes", "MiB", "lower", fmt="{:.1f}",
                    ignored=True, value=_resource("max_rss_mib")),
]
DEFINITIONS = kpi_lib.collect_kpis(RESOURCE_KPIS)


def read(entry):
    """The resource usage of a parsed test: from its parse results (cached), else from its ``point.json``,
    read by the tree's bounded reader (inside the results directory, a regular file, bounded): a file
    that is not read leaves the test without resources and says why in its warnings."""
    if results_tree.RESOURCES_KEY in (entry.results or {}):
        return entry.results[results_tree.RESOURCES_KEY]
    warnings = entry.warnings if isinstance(getattr(entry, "warnings", None), list) else None
    return results_tree.point_resources(entry.test_dir, getattr(entry, "results_dir", None), warnings)


def add(payload, resources):
    """Record ``resources`` in the payload and add their KPIs (those a workload does not define itself)."""
    if not resources:
        return
    payload["metadata"]["resources"] = dict(resources)
    values, _warnings = kpi_lib.compute_kpis([d for d in DEFINITIONS if d.name not in payload["kpis"]], payload)
    payload["kpis"].update({name: value for name, value in values.items() if value["value"] is not None})
