# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names of Kubernetes objects: what a Job, a PipelineRun or a label made from free text may be called."""

from __future__ import annotations

import re


def dns_label(text, limit, fallback="point"):
    """``text`` as a DNS-1123 label of at most ``limit`` characters (``fallback`` when nothing is left)."""
    label = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return label[:limit].rstrip("-") or fallback
