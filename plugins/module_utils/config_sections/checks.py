# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A whole configuration checked before any work starts: every section against its schema
(``config_schema``), the benchmark matrices planned (without creating anything), every test flow's
steps, and the post-processing workload and its reports loaded. Any mistake is one ConfigError.

This module stands above the planners it calls (``benchmark``, ``flows``, ``workload``,
``reports``), as ``config_schema`` stands above the domains whose section models it lists; a domain
reads its own section through its own model (docs/architecture.md).
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError, PerfscaleError


def validate_config(config):
    """Validate every section the configuration has, then plan the benchmark matrix
    and load the post-processing workload: any mistake is one ConfigError, before
    any work starts. Returns the validated sections. Every value of every section (the
    project's own included) is finite and the tree is bounded in depth."""
    try:
        bounded_input.check_tree(config, "configuration")
    except bounded_input.InputError as exc:
        raise ConfigError(str(exc)) from None
    validated = {}
    for section in config_schema.SECTIONS:
        if config_lib.get_dotted(config, section, None) is not None:
            validated[section] = config_schema.read_section(config, section)
    for key in config_schema.flow_benchmark_keys(config):
        validated[key] = config_schema.read_section(config, key)
    for key in ["tests.benchmark"] + config_schema.flow_benchmark_keys(config):
        if key in validated and validated[key]["enabled"]:
            from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark

            try:
                benchmark.plan_benchmark(config, key)
            except PerfscaleError as exc:
                raise ConfigError("%s: %s" % (key, exc)) from None
    for name, section in sorted((config.get("tests") or {}).items()):
        if isinstance(section, dict) and "steps" in section:
            # a test flow (cleanup_before, prepare, test, cleanup_after): every item checked now
            from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import flows

            flows.check_definition(section["steps"], "tests.%s.steps" % name)
    if "postprocess" in validated:
        from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports
        from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib

        try:
            loaded = workload_lib.load_workload(validated["postprocess"]["workload"])
            reports.report_names(validated["postprocess"]["reports"], loaded, validated["postprocess"]["report_sets"],
                                 validated["postprocess"]["report_set"])
            workload_lib.load_prom_workload(validated["postprocess"]["prom_workload"])
        except PerfscaleError as exc:
            raise ConfigError("postprocess: %s" % exc) from None
    return validated
