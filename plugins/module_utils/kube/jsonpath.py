# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The part of kubectl's JSONPath a wait needs: ``{.status.phase}``,
``.status.conditions[?(@.type=="Ready")].status``, ``.items[0].metadata.name``,
``.spec.containers[*].name``.

``evaluate(obj, expression)`` returns the list of matches (empty when the path
does not exist); a malformed expression is a one-line JsonPathError naming it.
"""

from __future__ import annotations

import json
import re

_STEP = re.compile(r"""
    \.(?P<name>[A-Za-z0-9_\-/]+)                 # .field
  | \[(?P<index>-?\d+)\]                          # [0]
  | \[(?P<all>\*)\]                               # [*]
  | \[\?\(@\.(?P<key>[A-Za-z0-9_.\-/]+)\s*(?P<op>==|!=)\s*(?P<value>"[^"]*"|'[^']*'|[^)\s]+)\)\]   # [?(@.type=="Ready")]
""", re.VERBOSE)


from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError


class JsonPathError(PerfscaleError):
    """A malformed expression (one line)."""


def _steps(expression):
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    if text and not text.startswith((".", "[")):
        text = "." + text
    steps, position = [], 0
    while position < len(text):
        match = _STEP.match(text, position)
        if not match:
            raise JsonPathError("jsonpath %r: cannot read it at %r (supported: .field, [n], [*], "
                                "[?(@.key==\"value\")])" % (expression, text[position:]))
        steps.append(match)
        position = match.end()
    return steps


def _literal(text):
    if text[:1] in ("'", '"'):
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text


def _get(node, dotted):
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def evaluate(obj, expression):
    """Every value ``expression`` selects in ``obj``."""
    current = [obj]
    for step in _steps(expression):
        following = []
        for node in current:
            if step.group("name") is not None:
                if isinstance(node, dict) and step.group("name") in node:
                    following.append(node[step.group("name")])
            elif step.group("index") is not None:
                index = int(step.group("index"))
                if isinstance(node, list) and -len(node) <= index < len(node):
                    following.append(node[index])
            elif step.group("all"):
                if isinstance(node, list):
                    following.extend(node)
                elif isinstance(node, dict):
                    following.extend(node.values())
            else:
                wanted, equal = _literal(step.group("value")), step.group("op") == "=="
                for item in node if isinstance(node, list) else []:
                    value = _get(item, step.group("key"))
                    if (str(value) == str(wanted)) == equal:
                        following.append(item)
        current = following
    return current


def matches(obj, expression, value):
    """Whether ``expression`` selects ``value`` (compared as text, like kubectl wait --for=jsonpath)."""
    return any(str(found) == str(value) for found in evaluate(obj, expression))
