# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the end of a run knows, made into the verdict message: the run's identity and duration
(``run.json``), the test's name (``notifications.test_name``, else the presets applied), the
regression summary, the failed points and the links to the reports and artifacts."""

from __future__ import annotations

import os
import time

from ansible_collections.perfscale.topsail.plugins.module_utils.notify import message as message_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.run import context as run_context
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.base import parse_timestamp


def test_name(section, run_root):
    if section.get("test_name"):
        return section["test_name"]
    try:
        with open(os.path.join(run_root, run_context.PRESETS_FILE), encoding="utf-8") as handle:
            presets = [line.strip() for line in handle if line.strip()]
    except OSError:
        presets = []
    return "+".join(presets) or "default"


def run_message(section, run_root, summary, failed_points=(), points=None, reports=None, artifacts_url=None,
                now=time.time):
    info = run_context.read_run_info(os.path.join(run_root, run_context.RUN_INFO_FILE)) or {}
    duration = None
    if info.get("created"):
        try:
            duration = max(0.0, now() - parse_timestamp(info["created"]))
        except ValueError:
            duration = None
    links = {}
    if reports:
        links["Reports"] = os.path.relpath(reports, run_root) if os.path.isabs(reports) else reports
        if artifacts_url and "://" in artifacts_url and not artifacts_url.startswith("s3://"):
            links["Reports"] = artifacts_url.rstrip("/") + "/" + links["Reports"]
    if artifacts_url:
        links["Artifacts"] = artifacts_url
    return message_lib.verdict_message(test_name(section, run_root),
                                       {"run_id": info.get("run_id"), "duration_s": duration, "points": points},
                                       summary, failed_points, links, section["top_changes"])
