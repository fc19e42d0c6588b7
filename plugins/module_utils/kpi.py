# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Forwarding module: the KPI decorators moved to ``analysis/kpi.py``.

A team's own workload module imports the decorators by path (docs/post-processing.md); this
keeps ``from ...plugins.module_utils.kpi import HigherBetter, KPIMetadata, ...`` working. New code
imports ``...plugins.module_utils.analysis.kpi``.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis.kpi import (  # noqa: F401
    ErrorBar, Format, FormatDivisor, HigherBetter, IgnoredForRegression, KPIDefinition, KPIMetadata, LowerBetter,
    MayBeNull, ViewOf)

__all__ = ["ErrorBar", "Format", "FormatDivisor", "HigherBetter", "IgnoredForRegression", "KPIDefinition",
           "KPIMetadata", "LowerBetter", "MayBeNull", "ViewOf"]
