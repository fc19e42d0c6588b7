# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start of a run: resolve the configuration and record it in the run root.

This is what every playbook does first (through the ``resolve_config``
action): the effective configuration goes to ``<run root>/config.yaml``, the
applied presets to ``<run root>/presets_applied``, the ``-e overrides`` to
``config_overrides.yaml`` and what the inventory set (``perfscale_presets``,
``perfscale_overrides``) to ``config_inventory.yaml``. When resolution fails,
nothing is written.
"""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.module_utils import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils import secret_refs as secrets_lib

CONFIG_FILE = "config.yaml"
PRESETS_FILE = "presets_applied"
OVERRIDES_FILE = "config_overrides.yaml"
INVENTORY_FILE = "config_inventory.yaml"


def masked_config(config):
    """The configuration as written to artifacts or shown: sensitive-looking leaves masked.
    Every copy of the configuration goes through here."""
    return secrets_lib.mask_params(config)


def record_run_config(run_root, resolved):
    """Write config.yaml, presets_applied (and overrides) into the run root."""
    artifacts.ensure_dir(run_root)
    written = {}
    written["config"] = artifacts.write_yaml_atomic(os.path.join(run_root, CONFIG_FILE), masked_config(resolved.config))
    written["presets_applied"] = artifacts.write_text_atomic(
        os.path.join(run_root, PRESETS_FILE), "".join(name + "\n" for name in resolved.presets_applied)
    )
    if resolved.overrides:
        written["overrides"] = artifacts.write_yaml_atomic(
            os.path.join(run_root, OVERRIDES_FILE), masked_config(resolved.overrides)
        )
    if resolved.inventory["presets"] or resolved.inventory["overrides"]:
        written["inventory"] = artifacts.write_yaml_atomic(
            os.path.join(run_root, INVENTORY_FILE), masked_config({
                "perfscale_presets": resolved.inventory["presets"],
                "perfscale_overrides": resolved.inventory["overrides"]})
        )
    return written
