# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model of ``clusters``: what the test flows leave and one test run at a time per cluster
(``cluster_lease``).
"""

from __future__ import annotations

import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation


SECTION = "clusters"


@functools.cache
def clusters_model():
    import pydantic

    class Lease(pydantic.BaseModel):
        """One test run at a time per cluster (module_utils/kube/cluster_lease.py)."""
        model_config = validation.strict()
        namespace: str = pydantic.Field(default="perfscale-topsail", pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
                                        max_length=63)
        # a holder silent this long is taken over; it renews every third of it
        duration_s: int = pydantic.Field(default=60, ge=3, le=3600)
        # seconds between two looks of a waiting run
        poll_s: float = pydantic.Field(default=5.0, gt=0, le=300)
        # give up waiting after this long (0: wait as long as it takes)
        wait_timeout_s: float = pydantic.Field(default=0, ge=0)

    class Clusters(pydantic.BaseModel):
        model_config = validation.strict()
        # leave what a flow made: its cleanup_after step does not run
        keep: bool = False
        # label of the namespaces a flow creates (its cleanups select them by it)
        owner_label: str = pydantic.Field(default="perfscale.topsail/flow", min_length=1)
        lease: Lease = Lease()

    return Clusters


def read(config):
    """The validated ``clusters`` section as a plain dict (defaults filled in)."""
    return validation.read_with_model(config, SECTION, clusters_model())
