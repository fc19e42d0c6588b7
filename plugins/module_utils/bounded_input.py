# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Limits on structured data that comes from outside (YAML and JSON documents: configuration,
overrides, matrix plans, manifests, servers' answers): how big, how deep, and whether a number
may be infinite or not a number.

Python's parsers recurse: a document nested a few thousand levels deep ends in a
``RecursionError`` traceback, and YAML's ``.inf``/``.nan`` (JSON's ``Infinity``/``NaN``) pass as
floats until a timeout overflows much later. Every check here answers in one line naming the input
and the limit (``InputError``, a ``ValueError`` too). The walk is iterative: it never recurses.
"""

from __future__ import annotations

import json
import math

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

# deeper than any document this collection writes or reads (a configuration is < 10 levels)
MAX_DEPTH = 64
# the largest configuration, overrides or plan document read whole into memory
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024
# the largest answer of a server (a Prometheus range query over a long window is tens of MiB)
MAX_RESPONSE_BYTES = 256 * 1024 * 1024


class InputError(PerfscaleError, ValueError):
    """Structured input past a limit (size, depth) or with a number that is not finite."""


class NotJSON(InputError):
    """Text that is not JSON at all (a caller may try another format)."""


def _key_path(path):
    return ".".join(str(part) for part in path) or "(top level)"


def check_tree(value, source, max_depth=MAX_DEPTH, finite=True):
    """Refuse a tree of dicts/lists nested deeper than ``max_depth`` or (``finite``) holding a NaN or
    an infinity; the message names ``source`` and the key. Returns ``value``."""
    stack = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and finite and not math.isfinite(item):
            raise InputError("%s: key %s: %s is not a finite number; expected a finite number"
                             % (source, _key_path(path), item))
        if isinstance(item, (dict, list, tuple)):
            if len(path) >= max_depth:
                raise InputError("%s: key %s: nested deeper than %d levels; expected at most %d"
                                 % (source, _key_path(path[:8]) + "...", max_depth, max_depth))
            children = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((child, path + (key,)) for key, child in children)
    return value


def safe_yaml_loader():
    """PyYAML's safe loader, libyaml's (``CSafeLoader``) when PyYAML was built with it: the same
    documents, parsed several times faster (PyYAML imported here, not when this module is)."""
    import yaml  # pylint: disable=import-outside-toplevel

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def check_size(text, source, max_bytes=MAX_DOCUMENT_BYTES):
    if len(text) > max_bytes:
        raise InputError("%s: %d bytes, more than the limit of %d" % (source, len(text), max_bytes))
    return text


def parse(parser, text, source, max_bytes=MAX_DOCUMENT_BYTES, max_depth=MAX_DEPTH, finite=True):
    """``parser(text)`` bounded: size first, a parser that recurses too deep as one line, then the
    tree's depth and numbers (``check_tree``)."""
    check_size(text, source, max_bytes)
    try:
        value = parser(text)
    except RecursionError:
        raise InputError("%s: nested too deeply to read; expected at most %d levels" % (source, max_depth)) from None
    return check_tree(value, source, max_depth, finite)


def load_json(text, source, max_bytes=MAX_DOCUMENT_BYTES, max_depth=MAX_DEPTH, finite=True):
    """JSON, bounded (``parse``); malformed JSON is an ``InputError`` naming ``source`` too."""
    try:
        return parse(json.loads, text, source, max_bytes, max_depth, finite)
    except InputError:
        raise
    except ValueError as exc:
        raise NotJSON("%s: not JSON: %s" % (source, exc)) from None
