# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model of ``postprocess``: the workload, its reports and report sets, the filters of the points.
"""

from __future__ import annotations

import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation


SECTION = "postprocess"


@functools.cache
def postprocess_model():
    from typing import Any, List, Optional

    import pydantic

    class ReportSet(pydantic.BaseModel):
        """A named list of reports (MatrixBenchmarking's plots.yaml ``- id: ... generate: [...]``)."""
        model_config = validation.strict()
        id: str = pydantic.Field(min_length=1)
        generate: List[str] = pydantic.Field(min_length=1)

    class Postprocess(pydantic.BaseModel):
        model_config = validation.strict()
        workload: str = pydantic.Field(default="perf_indicators", min_length=1)
        # None: the generic reports then the workload's own (see reports.py and the workload)
        reports: Optional[List[str]] = None
        # named report lists, and the one to draw (instead of ``reports``)
        report_sets: List[ReportSet] = []
        report_set: Optional[str] = None
        # post-process only the points whose settings match (MatrixBenchmarking's --filters):
        # {setting: value or [values]}, or "key=value,key2=value2"
        filters: Optional[Any] = None

        @pydantic.model_validator(mode="after")
        def _known_set(self):
            ids = [item.id for item in self.report_sets]
            duplicated = sorted({name for name in ids if ids.count(name) > 1})
            if duplicated:
                raise ValueError("report_sets: id %s defined twice" % ", ".join(duplicated))
            if self.report_set is not None and self.report_set not in ids:
                raise ValueError("report_set %r: expected one of the report_sets ids (%s)"
                                 % (self.report_set, ", ".join(ids) or "none defined"))
            if self.report_set is not None and self.reports is not None:
                raise ValueError("report_set and reports: give one of them")
            self.filters = parse_filters(self.filters)
            return self
        # the workload of the Prometheus captures (workloads/prom.py); None: not post-processed
        prom_workload: Optional[str] = pydantic.Field(default="prom", min_length=1)
        strict: bool = False
        title: str = "perfscale.topsail results"

    return Postprocess


def parse_filters(value):
    """``{setting: [values]}`` of ``postprocess.filters``: a mapping (a value or a list of values per
    setting) or MatrixBenchmarking's ``key=value,key2=value2`` text; ValueError naming what is wrong."""
    if value in (None, "", {}):
        return {}
    pairs = []
    if isinstance(value, str):
        for item in value.split(","):
            key, sep, text = item.partition("=")
            if not sep or not key.strip():
                raise ValueError("filters %r: expected key=value[,key=value...]" % value)
            pairs.append((key.strip(), text.strip()))
    elif isinstance(value, dict):
        for key, wanted in value.items():
            for item in wanted if isinstance(wanted, list) else [wanted]:
                pairs.append((str(key), item))
    else:
        raise ValueError("filters: expected a mapping of settings or key=value,... text, got %s"
                         % type(value).__name__)
    filters = {}
    for key, wanted in pairs:
        filters.setdefault(key, []).append(wanted)
    return filters


def read(config):
    """The validated ``postprocess`` section as a plain dict (defaults filled in)."""
    return validation.read_with_model(config, SECTION, postprocess_model())
