# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model of ``tests.capture_environment``: what the environment capture of a run records
(``host_environment``).
"""

from __future__ import annotations

import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation


SECTION = "tests.capture_environment"


@functools.cache
def capture_environment_model():
    from typing import List, Optional

    import pydantic

    class CaptureEnvironment(pydantic.BaseModel):
        model_config = validation.strict()
        enabled: bool = True
        gpu: bool = True
        nvidia_smi_timeout: int = pydantic.Field(default=30, gt=0, le=validation.MAX_TOOL_TIMEOUT_S)
        # None: the collection's default list (host_environment.DEFAULT_PACKAGES)
        packages: Optional[List[str]] = None

    return CaptureEnvironment


def read(config):
    """The validated ``tests.capture_environment`` section as a plain dict (defaults filled in)."""
    return validation.read_with_model(config, SECTION, capture_environment_model())
