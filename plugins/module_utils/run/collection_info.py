# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the collection lives, its version and (in a checkout) its git commit."""

from __future__ import annotations

import json
import os
import subprocess

NAMESPACE = "perfscale"
NAME = "topsail"


def collection_root_from(path, levels):
    """Walk ``levels`` directories up from ``path`` (a plugin file)."""
    root = os.path.realpath(path)
    for _level in range(levels):
        root = os.path.dirname(root)
    return root


def collection_version(root):
    manifest = os.path.join(root, "MANIFEST.json")
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as handle:
            return json.load(handle).get("collection_info", {}).get("version")
    galaxy = os.path.join(root, "galaxy.yml")
    if os.path.exists(galaxy):
        with open(galaxy, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("version:"):
                    return line.split(":", 1)[1].strip().strip("'\"")
    return None


def _git(root, *args):
    try:
        completed = subprocess.run(
            ["git", "-C", root] + list(args), capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return completed.stdout.strip() if completed.returncode == 0 else None


def collection_info(root):
    """Version, install path and, when run from a git checkout, commit and dirty flag."""
    info = {"name": "%s.%s" % (NAMESPACE, NAME), "path": root, "version": collection_version(root),
            "git_commit": None, "git_dirty": None}
    if os.path.exists(os.path.join(root, ".git")):
        info["git_commit"] = _git(root, "rev-parse", "HEAD")
        status = _git(root, "status", "--porcelain", "--untracked-files=no")
        info["git_dirty"] = bool(status) if status is not None else None
    return info
