# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Text from outside (names read from a cluster, a store, an answer) made safe to print on one line.

A Lease holder identity, an annotation or an object name is any string its writer chose: an ANSI
escape sequence in it would recolour, move or clear the user's terminal, a CR or LF would forge
another line of output. ``escape`` shows every control character - C0 (``\\x00``-``\\x1f``), DEL,
C1 (``\\x80``-``\\x9f``), the Unicode line and paragraph separators and the bidirectional overrides -
as a Python-style escape (``\\x1b``, ``\\x0a``, ``\\u202e``) and cuts what is too long to read.

Standard library only, no import of the collection: the cluster lease's renewer (a process run by
path) loads this file by its path too.
"""

from __future__ import annotations

import re

# the longest piece of outside text printed whole (a run id is 32 characters, a URL rarely 200)
MAX_CHARS = 256

# C0, DEL, C1; U+2028/U+2029 (line and paragraph separators); the bidirectional embeddings,
# overrides and isolates (U+202A-U+202E, U+2066-U+2069) that make text display in another order
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(match):
    code = ord(match.group(0))
    return "\\x%02x" % code if code < 0x100 else "\\u%04x" % code


def escape(value, max_chars=MAX_CHARS):
    """``value`` (any object; a non-string is shown by its ``str``) with its control characters
    escaped and cut after ``max_chars`` characters (``...(N more characters)``)."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = str(value)
        except ValueError:  # an int past Python's limit of digits converted to text
            text = "(a number too long to show)"
    rest = len(text) - max_chars
    if rest > 0:
        text = text[:max_chars]
    text = _CONTROL.sub(_escaped, text)
    return text + "...(%d more characters)" % rest if rest > 0 else text
