# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A model's ``config.json``: from a file, from the shipped table (offline), or from the Hugging Face Hub.

``model_config(model=..., path=...)`` returns ``(config, provenance)``. A model id is looked up in
``model_table.MODELS`` first (offline, with where each config was copied from), then fetched from the
Hub (``https://huggingface.co/<id>/resolve/main/config.json``, ``HF_TOKEN`` from the environment for a
gated model, never logged) when ``online``. An id the table lacks and the Hub cannot give is one line
naming it and saying to pass ``model_config``.
"""

from __future__ import annotations

import json
import os

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import model_table
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

HUB_URL = "https://huggingface.co/%s/resolve/main/config.json"
HUB_TIMEOUT_S = 10
TOKEN_ENV = "HF_TOKEN"
# a URI scheme a configuration may put before the id (the flows' model sources: hf://org/name)
ID_PREFIXES = ("hf://", "https://huggingface.co/")


def model_id(text):
    """``org/name`` of ``hf://org/name``, ``https://huggingface.co/org/name`` or ``org/name``; None for a
    source that is not a Hub id (s3://, a path)."""
    if not isinstance(text, str) or not text:
        return None
    for prefix in ID_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    else:
        if "://" in text or text.startswith(("/", ".")):
            return None
    parts = [p for p in text.strip("/").split("/") if p]
    return "/".join(parts[:2]) if len(parts) >= 2 else None


def read_config_file(path):
    """A model's ``config.json`` at ``path`` (the user's: anywhere, links followed), read by the bounded
    reader: a regular file (a FIFO never blocks), at most ``bounded_input.MAX_DOCUMENT_BYTES``, UTF-8
    JSON without NaN or infinity; one line naming the file otherwise."""
    name = "model_config %s" % path
    try:
        text = bounded_input.read_text(path, None, name=name)
    except bounded_input.FileRefused as exc:
        if exc.missing:
            raise CapacityError("%s: no such file; expected a path to a model's config.json" % name) from None
        raise CapacityError(str(exc)) from None
    try:
        config = bounded_input.parse(json.loads, text, name)
    except ValueError as exc:
        why = " ".join(str(exc).split())
        why = why[len(name) + 2:] if why.startswith(name + ": ") else why
        raise CapacityError("%s: not a JSON config.json (%s)" % (name, why)) from None
    if not isinstance(config, dict):
        raise CapacityError("model_config %s: expected a JSON object (a model's config.json)" % path)
    return config


def fetch_from_hub(identifier, environ=None, opener=None):
    """The Hub's config.json of ``identifier``; CapacityError with the reason when it cannot be had.
    ``opener(url, headers=..., timeout=...)`` defaults to Ansible's ``open_url``."""
    import urllib.error

    environ = os.environ if environ is None else environ
    headers = {"User-Agent": "perfscale.topsail"}
    if environ.get(TOKEN_ENV):
        headers["Authorization"] = "Bearer %s" % environ[TOKEN_ENV]
    if opener is None:
        from ansible.module_utils.urls import open_url as opener
    try:
        with opener(HUB_URL % identifier, headers=headers, timeout=HUB_TIMEOUT_S) as response:
            text = response.read(bounded_input.MAX_DOCUMENT_BYTES + 1).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        raise CapacityError("HTTP %d%s" % (exc.code, " (a gated model: set HF_TOKEN)" if exc.code in (401, 403) else
                                           "")) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise CapacityError("the Hub is not reachable (%s)" % (getattr(exc, "reason", None) or exc)) from None
    try:
        config = bounded_input.parse(json.loads, text, "config.json of %s" % identifier)
    except ValueError as exc:
        raise CapacityError("not a JSON config.json (%s)" % exc) from None
    if not isinstance(config, dict):
        raise CapacityError("not a JSON object")
    return config


def model_config(model=None, path=None, online=True, environ=None, opener=None):
    """``(config, provenance)`` of a model: ``path`` (a config.json) wins over ``model`` (an id)."""
    if path:
        return read_config_file(path), "file %s" % path
    identifier = model_id(model)
    if not identifier:
        raise CapacityError("model %r: expected a Hugging Face model id (org/name or hf://org/name), or give "
                            "model_config (a path to its config.json)" % (model,))
    entry = model_table.lookup(identifier)
    if entry is not None:
        return entry["config"], "shipped table (%s)" % entry["source"]
    if not online:
        raise CapacityError("model %s: not in the shipped table (plugins/module_utils/capacity/model_table.py) and "
                            "online look-ups are off; give model_config (a path to its config.json)" % identifier)
    try:
        return fetch_from_hub(identifier, environ, opener), "Hugging Face Hub (%s)" % (HUB_URL % identifier)
    except CapacityError as exc:
        raise CapacityError("model %s: not in the shipped table and its config.json could not be fetched: %s; give "
                            "model_config (a path to its config.json)" % (identifier, exc)) from None
