# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model of ``regression``: the method (from ``methods``' registry) and its options, the baseline
policy (``baselines``), noise thresholds, failing the test.
"""

from __future__ import annotations

import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError


SECTION = "regression"


@functools.cache
def regression_model():
    from typing import Any, Dict, List, Optional

    import pydantic

    from ansible_collections.perfscale.topsail.plugins.module_utils.regression import methods
    from ansible_collections.perfscale.topsail.plugins.module_utils.regression.baselines import BASELINE_POLICIES

    class Noise(pydantic.BaseModel):
        model_config = validation.strict()
        # a test whose repetitions spread more than this (the workload's measure, e.g. the CV of
        # the repetition times) is noisy; None: never flagged for spread
        max_spread: Optional[float] = pydantic.Field(default=0.10, gt=0, le=1000)
        # ... or whose host was this loaded (1-minute load average per CPU) while it ran
        max_load_per_cpu: Optional[float] = pydantic.Field(default=0.75, gt=0, le=1000)
        # which history runs a baseline is made of (regression/verdicts.py, BASELINE_POLICIES)
        baseline: validation.choice(BASELINE_POLICIES) = "prefer_quiet"
        # the older spelling: true is baseline: all, false is baseline: quiet_only
        keep_in_baseline: Optional[bool] = None

        @pydantic.model_validator(mode="after")
        def _older_spelling(self):
            if self.keep_in_baseline is not None:
                meant = "all" if self.keep_in_baseline else "quiet_only"
                # the configuration file spells the default out: only another choice can disagree
                if self.baseline not in ("prefer_quiet", meant):
                    raise ValueError("keep_in_baseline (%s) and baseline (%s) disagree: give baseline only"
                                     % (self.keep_in_baseline, self.baseline))
                self.baseline = meant
            return self

    class Regression(pydantic.BaseModel):
        model_config = validation.strict()
        enabled: bool = True
        method: validation.choice(methods.method_names()) = methods.DEFAULT_METHOD
        fail_test_on_regression: bool = False
        fail_on_persisting: bool = False
        fail_on_drift: bool = False
        require_history: bool = False
        compare_across_machines: bool = False
        machine_keys: Optional[List[str]] = None
        noise: Noise = Noise()
        short_history_threshold: float = pydantic.Field(default=0.10, gt=0, le=1000)
        # ... and is told apart from the history's own spread at this p-value (else: inconclusive)
        short_history_max_pvalue: float = pydantic.Field(default=0.01, gt=0, lt=1)
        options: Dict[str, Dict[str, Any]] = {}
        comparison_keys: Optional[List[str]] = None
        ignored_keys: Optional[List[str]] = None
        sorting_keys: Optional[List[str]] = None
        ignored_entries: Optional[Dict[str, List[Any]]] = None

        @pydantic.field_validator("options")
        @classmethod
        def _options(cls, value):
            for method, options in value.items():
                try:
                    methods.resolve_options(method, options)
                except PerfscaleError as exc:
                    raise ValueError(str(exc)) from None
            return value

    return Regression


def read(config):
    """The validated ``regression`` section as a plain dict (defaults filled in)."""
    return validation.read_with_model(config, SECTION, regression_model())
