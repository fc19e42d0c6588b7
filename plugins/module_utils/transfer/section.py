# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model of ``export_artifacts``: where a run's artifact tree is uploaded (``artifact_transfer``).
"""

from __future__ import annotations

import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation


SECTION = "export_artifacts"


@functools.cache
def export_artifacts_model():
    from typing import Optional

    import pydantic

    class ExportArtifacts(pydantic.BaseModel):
        model_config = validation.strict()
        # upload the run's artifact tree at the end of the run
        enabled: bool = False
        bucket: Optional[str] = None
        # objects go to <path_prefix>/<run directory name>-<run id[:8]>/
        path_prefix: str = "perfscale"
        # http(s)://host[:port] of any S3-compatible store (MinIO, Ceph RGW, AWS: https://s3.<region>.amazonaws.com)
        endpoint_url: Optional[str] = None
        region: str = "us-east-1"
        # a file of the secrets directory: YAML with access_key_id and secret_access_key
        credentials_file: Optional[str] = None
        # an upload that fails fails the test (otherwise a warning, and the run's verdict stands)
        fail_test_on_fail: bool = False
        parallel: int = pydantic.Field(default=4, ge=1, le=64)
        # files larger than this go in parts of this size (S3's smallest part is 5 MiB)
        part_size_mib: int = pydantic.Field(default=8, ge=5, le=5120)
        timeout_s: float = pydantic.Field(default=60.0, gt=0, le=validation.MAX_TOOL_TIMEOUT_S)

        @pydantic.model_validator(mode="after")
        def _complete_when_enabled(self):
            if self.enabled:
                missing = [name for name in ("bucket", "endpoint_url", "credentials_file") if not getattr(self, name)]
                if missing:
                    raise ValueError("enabled: true needs %s" % ", ".join(missing))
                if not str(self.endpoint_url).startswith(("http://", "https://")):
                    raise ValueError("endpoint_url %r: expected http(s)://host[:port]" % self.endpoint_url)
            return self

    return ExportArtifacts


def read(config):
    """The validated ``export_artifacts`` section as a plain dict (defaults filled in)."""
    return validation.read_with_model(config, SECTION, export_artifacts_model())
