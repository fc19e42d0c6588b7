# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ansible's documentation markup, in the words a toolbox user reads.

A role's ``meta/argument_specs.yml`` is written for ``ansible-doc``: ``C(code)``,
``O(option)`` (the role-prefixed variable), ``V(value)``, ``I()``, ``B()``, ``M()``,
``U()``, ``L(text,url)``, ``E()``, ``RV()``, ``P()``. The toolbox's help shows it as
plain text: code, values and module names in backticks, an option under the name the
user types (``O(llm_load_run_url)`` is ``url`` for ``-e url=``, ``--url`` for
``run_toolbox.py``), links as ``text (url)``.
"""

from __future__ import annotations

import re

# a markup function's name, not preceded by a letter, digit or underscore (``AC(x)`` is text)
_START = re.compile(r"(?<![A-Za-z0-9_])(RV|[CIBMUVOELP])\(")
_HORIZONTAL_LINE = re.compile(r"\bHORIZONTALLINE\b")


def _closing(text, start):
    """The index of the ``)`` closing the parenthesis opened just before ``start`` (nested pairs
    balanced, ``\\)`` escaped), or None."""
    depth = 0
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            index += 2
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return index
            depth -= 1
        index += 1
    return None


def _unescape(text):
    return re.sub(r"\\(.)", r"\1", text)


def _option(content, role_prefix, spelling):
    """``O(name)``, ``O(name=value)``, ``O(fqcn#role:entry:name)``: the name as the user types it."""
    name, equals, value = content.partition("=")
    name = name.rsplit(":", 1)[-1] if "#" in name else name
    if role_prefix and name.startswith(role_prefix) and len(name) > len(role_prefix):
        name = name[len(role_prefix):]
    return "`%s`" % spelling(name, value if equals else None)


def _default_spelling(name, value):
    return name if value is None else "%s=%s" % (name, value)


def plain(text, role_prefix="", spelling=None):
    """``text`` with its markup rendered as plain text; ``role_prefix`` (``llm_load_run_``) is dropped
    from the options named; ``spelling(name, value)`` writes an option as the user types it (default
    ``name`` and ``name=value``). Text that only looks like markup (an unclosed parenthesis) stays."""
    spelling = spelling or _default_spelling
    text = _HORIZONTAL_LINE.sub("", str(text))
    out = []
    position = 0
    while True:
        match = _START.search(text, position)
        if not match:
            break
        end = _closing(text, match.end())
        if end is None:
            break
        out.append(text[position:match.start()])
        kind, content = match.group(1), _unescape(text[match.end():end])
        if kind == "O":
            out.append(_option(content, role_prefix, spelling))
        elif kind in ("I", "B", "U"):
            out.append(content)
        elif kind == "L":
            label, _comma, url = content.partition(",")
            out.append("%s (%s)" % (label.strip(), url.strip()) if url.strip() else label.strip())
        elif kind == "P":
            out.append("`%s`" % content.split("#", 1)[0])
        else:
            # C, V, E, RV, M: code, a value, an environment variable, a return value, a module
            out.append("`%s`" % content)
        position = end + 1
    out.append(text[position:])
    return " ".join("".join(out).split())
