# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Serialize a set of named files into an artifact directory, all or nothing."""

from __future__ import annotations

import json
import os

from ansible_collections.perfscale.topsail.plugins.module_utils import artifacts


def serialize(relpath, content):
    """Text for a file: mappings/lists as JSON (``.json``) or YAML (``.yaml``/``.yml``)."""
    extension = os.path.splitext(relpath)[1].lower()
    if extension == ".json":
        return json.dumps(artifacts.to_plain(content), indent=2) + "\n"
    if extension in (".yaml", ".yml"):
        return artifacts.dump_yaml(content)
    if isinstance(content, (dict, list)):
        raise ValueError("file %s: structured content needs a .json, .yaml or .yml name" % relpath)
    text = "" if content is None else str(content)
    return text if text.endswith("\n") or not text else text + "\n"


def plan_files(dest, files):
    """Validate names and serialize every file before anything is written."""
    root = os.path.abspath(dest)
    planned = []
    for relpath, content in files.items():
        relpath = str(relpath)
        target = os.path.abspath(os.path.join(root, relpath))
        if os.path.isabs(relpath) or not target.startswith(root + os.sep):
            raise ValueError("file name %r must be a relative path inside %s" % (relpath, root))
        planned.append((target, serialize(relpath, content)))
    return planned


def write_planned(planned):
    for target, text in planned:
        artifacts.write_text_atomic(target, text)
    return [target for target, _text in planned]
