# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model of ``export``: the results store the KPIs go to (its backend from this package's registry, and
each backend's own sub-section, ``export.<backend>``).
"""

from __future__ import annotations

import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation


SECTION = "export"


@functools.cache
def export_model():
    import pydantic

    from ansible_collections.perfscale.topsail.plugins.module_utils import stores

    fields = {
        "enabled": (bool, True),
        # a play-end export that leaves documents undelivered fails the test (otherwise a warning; the spool keeps them)
        "fail_test_on_fail": (bool, False),
        # post-processing a tree again (a replot: it has a finished plots directory already) exports again
        "enabled_on_replot": (bool, False),
        "backend": (validation.choice(stores.backend_names()), "sqlite"),
        "timeout_s": (float, pydantic.Field(default=10.0, gt=0, le=validation.MAX_TOOL_TIMEOUT_S)),
    }
    # each backend brings the model of its own sub-section (export.<backend>)
    for name, backend in stores.BACKENDS.items():
        model = backend.settings_model()
        fields[name] = (model, pydantic.Field(default_factory=model))
    return pydantic.create_model("Export", __config__=validation.strict(), **fields)


def read(config):
    """The validated ``export`` section as a plain dict (defaults filled in)."""
    return validation.read_with_model(config, SECTION, export_model())
