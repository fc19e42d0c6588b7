# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start of a run: resolve the configuration and record it in the run root.

This is what every playbook does first (through the ``resolve_config``
action): the effective configuration goes to ``<run root>/config.yaml`` and
the applied presets to ``<run root>/presets_applied``. When resolution fails,
nothing is written.
"""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.module_utils import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils import config as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils import secret_refs as secrets_lib

CONFIG_FILE = "config.yaml"
PRESETS_FILE = "presets_applied"
OVERRIDES_FILE = "config_overrides.yaml"


def resolve_for_run(config_file, presets=None, overrides=None, overrides_file=None):
    return config_lib.resolve_config(
        config_file, presets=presets, overrides=overrides, overrides_file=overrides_file
    )


def masked_config(config):
    """The configuration as written to artifacts: sensitive-looking leaves masked."""
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
            os.path.join(run_root, OVERRIDES_FILE), secrets_lib.mask_params(resolved.overrides)
        )
    return written
