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

import datetime
import json
import os
import uuid

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secrets_lib

RUN_INFO_FILE = "run.json"
CONFIG_FILE = "config.yaml"
PRESETS_FILE = "presets_applied"
OVERRIDES_FILE = "config_overrides.yaml"
INVENTORY_FILE = "config_inventory.yaml"


def masked_config(config):
    """The configuration as written to artifacts or shown: sensitive-looking leaves masked.
    Every copy of the configuration goes through here."""
    return secrets_lib.mask_params(config)


def run_info(run_root, artifacts_destination=None):
    """The run's identity (``run.json``: ``run_id``, ``created``), made on its first start and
    kept when it resumes; results exported from it carry the run id. ``artifacts_destination``
    (a function of the run id, or None) gives where the run's artifacts will be uploaded
    (``artifacts_url``): recorded at the start, so the KPI documents carry it."""
    path = os.path.join(run_root, RUN_INFO_FILE)
    info, created = read_run_info(path), False
    if not info or not info.get("run_id"):
        info, created = {"run_id": uuid.uuid4().hex,
                         "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}, True
    url = artifacts_destination(info["run_id"]) if artifacts_destination else None
    changed = created or info.get("artifacts_url") != url
    if url:
        info["artifacts_url"] = url
    else:
        info.pop("artifacts_url", None)
    if changed:
        artifacts.write_json_atomic(path, info)
    return info, changed


def read_run_info(path):
    """The mapping of a ``run.json`` file, or None (missing, unreadable or not a mapping)."""
    try:
        with open(path, encoding="utf-8") as handle:
            info = json.load(handle)
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def read_run_id(run_root):
    """The run id of ``run.json`` in ``run_root``, or None (no run there yet, or an older tree)."""
    return (read_run_info(os.path.join(run_root, RUN_INFO_FILE)) or {}).get("run_id")


LAUNCH_FILE = "launch.yaml"
# what record_run_config writes only when the run has it
OPTIONAL_RECORDS = {"overrides": OVERRIDES_FILE, "inventory": INVENTORY_FILE, "launch": LAUNCH_FILE}


def record_run_config(run_root, resolved, launch=None, identity=True, artifacts_destination=None):
    """Write config.yaml, presets_applied (and overrides) into the run root; only what changed
    is written (a resume with the same configuration writes nothing), and the record of overrides
    the run no longer has is removed. Returns what was written or removed.
    ``identity=False`` (a matrix point's own playbook, part of its parent's run) writes no run.json;
    ``artifacts_destination``: as ``run_info``'s (``transfer/artifact_transfer.artifacts_destination``
    of the configuration: this package stands below the transfer of artifacts)."""
    artifacts.ensure_dir(run_root)
    written = {}
    if identity:
        _info, changed = run_info(run_root, artifacts_destination)
        if changed:
            written["run"] = os.path.join(run_root, RUN_INFO_FILE)
    files = {
        "config": (CONFIG_FILE, artifacts.dump_yaml(masked_config(resolved.config))),
        "presets_applied": (PRESETS_FILE, "".join(name + "\n" for name in resolved.presets_applied)),
    }
    if resolved.overrides:
        files["overrides"] = (OVERRIDES_FILE, artifacts.dump_yaml(masked_config(resolved.overrides)))
    if resolved.inventory["presets"] or resolved.inventory["overrides"]:
        files["inventory"] = (INVENTORY_FILE, artifacts.dump_yaml(masked_config({
            "perfscale_presets": resolved.inventory["presets"],
            "perfscale_overrides": resolved.inventory["overrides"]})))
    if launch:
        # the CI comment (or survey field) the run was launched with, and what it meant
        files["launch"] = (LAUNCH_FILE, artifacts.dump_yaml(masked_config(launch)))
    for kind, (name, text) in files.items():
        path = artifacts.write_text_if_changed(os.path.join(run_root, name), text)
        if path:
            written[kind] = path
    # a run re-launched into the same directory without overrides (inventory ones, a launch
    # comment) no longer has them: the record of the earlier launch goes, so that the files
    # beside config.yaml always describe it
    for kind, name in OPTIONAL_RECORDS.items():
        path = os.path.join(run_root, name)
        if kind not in files and os.path.exists(path):
            os.remove(path)
            written[kind] = path
    return written
