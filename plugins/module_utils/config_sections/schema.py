# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The schema of the configuration: every section's model, assembled from the domains that own them.

Each section the collection reads has a pydantic model (unknown keys are errors, types and ranges
are checked), owned by its domain: ``secrets`` by ``config/validation.py``,
``tests.capture_environment`` by ``run/section.py``, ``tests.benchmark`` (and a test flow's
``tests.<flow>.benchmark``) by ``benchmark/section.py``, ``postprocess`` by ``analysis/section.py``,
``export`` by ``stores/section.py``, ``export_artifacts`` by ``transfer/section.py``, ``regression`` by
``regression/section.py``, ``clusters`` by ``kube/section.py``, ``notifications`` by
``notify/section.py``. The values a key may take come from the domains' registries
(``export.backend`` from ``stores``, ``regression.method`` and its options from
``regression.methods``, ``tests.benchmark.harness`` from ``harnesses``,
``tests.benchmark.executor`` from ``executors``), never from a list written here.

``SECTIONS`` is the explicit list of them, assembled here, above every domain: the configuration
package below (``config/``: the document, presets, overrides, how a section is validated) never
imports a domain, and a domain reads its own section (or one below it) through its own model.
What stands above the domains (the action plugins, ``checks``) reads any section here. Sections the
collection does not read (a project's own, used by its command-arguments template) are left alone.
The registries a model reads are complete at import time (nothing registers later).
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import section as postprocess_section
from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import section as benchmark_section
from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import section as clusters_section
from ansible_collections.perfscale.topsail.plugins.module_utils.notify import section as notifications_section
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import section as regression_section
from ansible_collections.perfscale.topsail.plugins.module_utils.run import section as capture_environment_section
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import section as export_section
from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import section as export_artifacts_section

# a test flow's matrix: tests.<flow>.benchmark, validated as tests.benchmark is
FLOW_BENCHMARK = benchmark_section.FLOW_BENCHMARK
flow_benchmark_keys = benchmark_section.flow_benchmark_keys

# dotted section key -> model factory (each domain's)
SECTIONS = {
    "secrets": validation.secrets_model,
    "tests.capture_environment": capture_environment_section.capture_environment_model,
    "tests.benchmark": benchmark_section.benchmark_model,
    "postprocess": postprocess_section.postprocess_model,
    "export": export_section.export_model,
    "export_artifacts": export_artifacts_section.export_artifacts_model,
    "regression": regression_section.regression_model,
    "clusters": clusters_section.clusters_model,
    "notifications": notifications_section.notifications_model,
}


def _model_of(section):
    if section in SECTIONS:
        return SECTIONS[section]
    parts = section.split(".")
    if len(parts) == 3 and parts[0] == "tests" and parts[2] == FLOW_BENCHMARK:
        return benchmark_section.benchmark_model
    raise ConfigError("config section '%s' has no schema; sections with one: %s, tests.<flow>.%s"
                      % (section, ", ".join(SECTIONS), FLOW_BENCHMARK))


def read_section(config, section):
    """The validated section as a plain dict (defaults filled in)."""
    return validation.read_with_model(config, section, _model_of(section)())
