# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading GitHub's and Slack's answers defensively: the words that say what a value was, one-line text
from a server, whole numbers that are numbers (not ``true``), ``Link`` headers read without a regular
expression that could backtrack on a long header."""

from __future__ import annotations

import urllib.parse

MAX_REASON = 300


def kind(value):
    """What a JSON value is, in words: ``null``, ``a string``, ``an object``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "a %s" % type(value).__name__


def one_line(text, limit=MAX_REASON):
    """``text`` on one line (every run of whitespace one space), cut at ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def whole_number(value):
    """``value`` when it is a JSON whole number (``true`` is not one), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def text(value):
    """``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None


def link_url(value):
    """A URL worth recording (``http(s)://``, one line, at most 2 000 characters), else None."""
    if isinstance(value, str) and value.startswith(("https://", "http://")) and len(value) <= 2000 \
            and value == "".join(value.split()):
        return value
    return None


def header(headers, name):
    """The value of header ``name`` whatever its case, or ''."""
    wanted = name.lower()
    for key, value in (headers or {}).items():
        if isinstance(key, str) and key.lower() == wanted and isinstance(value, str):
            return value
    return ""


def next_link(value):
    """The URL of the ``rel="next"`` entry of a ``Link`` header, or None (RFC 8288, split by hand)."""
    for entry in value.split(","):
        target, _sep, params = entry.partition(";")
        target = target.strip()
        if not (target.startswith("<") and target.endswith(">")):
            continue
        rels = [p.strip() for p in params.split(";")]
        if any(p.replace(" ", "").lower() in ('rel="next"', "rel=next") for p in rels):
            return target[1:-1]
    return None


def page_of(url):
    """The ``page`` query parameter of ``url`` as written (a string), or None."""
    try:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    except ValueError:
        return None
    pages = query.get("page")
    return pages[0] if pages else None
