# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Limits on structured data that comes from outside (YAML and JSON documents: configuration,
overrides, matrix plans, manifests, servers' answers): how big, how deep, and whether a number
may be infinite or not a number; and the one reader of the files of an artifact tree
(:func:`read_file`): inside the tree, a regular file, bounded in size.

Python's parsers recurse: a document nested a few thousand levels deep ends in a
``RecursionError`` traceback, and YAML's ``.inf``/``.nan`` (JSON's ``Infinity``/``NaN``) pass as
floats until a timeout overflows much later. Every check here answers in one line naming the input
and the limit (``InputError``, a ``ValueError`` too). The walk is iterative: it never recurses.
"""

from __future__ import annotations

import json
import math
import os
import stat

from ansible_collections.perfscale.topsail.plugins.module_utils import safe_paths
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

# deeper than any document this collection writes or reads (a configuration is < 10 levels)
MAX_DEPTH = 64
# deeper than this, a document is refused before any parser builds it (libyaml's composer recurses on the
# C stack and dies at some 20,000 levels; PyYAML's and json's raise RecursionError near 1,000)
PARSER_DEPTH = 500
# the largest configuration, overrides or plan document read whole into memory
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024
# the largest answer of a server (a Prometheus range query over a long window is tens of MiB)
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
# the largest file of an artifact tree read whole (a Prometheus range query a capture saved, a parse cache)
MAX_TREE_FILE_BYTES = MAX_RESPONSE_BYTES
# what one read() asks for at a time
READ_CHUNK = 1024 * 1024


class InputError(PerfscaleError, ValueError):
    """Structured input past a limit (size, depth) or with a number that is not finite."""


class NotJSON(InputError):
    """Text that is not JSON at all (a caller may try another format)."""


class FileRefused(InputError):
    """A file of an artifact tree that is not read: missing (``missing`` is true), a link out of the
    tree, not a regular file, bigger than its limit, unreadable or not UTF-8 text."""

    def __init__(self, message, missing=False):
        super().__init__(message)
        self.missing = missing


def _key_path(path):
    return ".".join(str(part) for part in path) or "(top level)"


def check_tree(value, source, max_depth=MAX_DEPTH, finite=True):
    """Refuse a tree of dicts/lists nested deeper than ``max_depth`` or (``finite``) holding a NaN or
    an infinity; the message names ``source`` and the key. Returns ``value``."""
    stack = [(value, ())]
    # the deepest level each container was checked at: YAML aliases share one container in many
    # places (a "billion laughs" document is a few lines), checked once per level, not once per place
    checked = {}
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and finite and not math.isfinite(item):
            raise InputError("%s: key %s: %s is not a finite number; expected a finite number"
                             % (source, _key_path(path), item))
        if isinstance(item, (dict, list, tuple)):
            if checked.get(id(item), -1) >= len(path):
                continue   # already checked as deep or deeper: nothing new below it
            checked[id(item)] = len(path)
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


# the characters that open a nesting level, as text and as bytes
_OPENERS = ("[", "{")
# a line's block-nesting prefix: spaces, tabs and the indicators of sequence entries and complex keys
_BLOCK_PREFIX = r"^[ \t?:-]*"


def check_nesting(text, source, max_depth=MAX_DEPTH, parser_depth=None):
    """Refuse a YAML or JSON text nested deeper than ``parser_depth`` (default: PARSER_DEPTH, where a
    parser is still safe; ``check_tree`` then names the key of anything past ``max_depth``), before any
    parser builds it.

    libyaml's composer (PyYAML's ``CSafeLoader``) recurses on the C stack: a document nested some
    20,000 levels deep (60 KB of brackets) kills the process with a segmentation fault, which no
    ``except`` can catch. An upper bound first (every bracket nested, plus the longest block prefix of
    a line): most documents stop there; past it, libyaml's event stream (a parser without recursion)
    counts the real depth. Text libyaml cannot read is left to the caller's parser to refuse."""
    import re

    binary = isinstance(text, bytes)
    opened = sum(text.count(c.encode() if binary else c) for c in _OPENERS)
    pattern = re.compile(_BLOCK_PREFIX.encode() if binary else _BLOCK_PREFIX, re.M)
    prefix = max((len(m) for m in pattern.findall(text)), default=0)
    limit = PARSER_DEPTH if parser_depth is None else parser_depth
    if opened + prefix + 1 <= limit:
        return
    import yaml  # pylint: disable=import-outside-toplevel

    depth = 0
    try:
        for event in yaml.parse(text, Loader=safe_yaml_loader()):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > limit:
                    raise InputError("%s: nested too deeply to read; expected at most %d levels" % (source, max_depth))
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return


def parse(parser, text, source, max_bytes=MAX_DOCUMENT_BYTES, max_depth=MAX_DEPTH, finite=True):
    """``parser(text)`` bounded: size first, the nesting before any parser builds the document
    (``check_nesting``), a parser that recurses too deep as one line, then the tree's depth and
    numbers (``check_tree``)."""
    check_size(text, source, max_bytes)
    if isinstance(text, (str, bytes)):
        check_nesting(text, source, max_depth)
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


# --------------------------------------------------------------------------
# the files of an artifact tree

_NOT_REGULAR = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(mode):
    """What a file of this ``st_mode`` is when it is not a regular file, else None."""
    if stat.S_ISREG(mode):
        return None
    return next((label for test, label in _NOT_REGULAR if test(mode)), "a special file")


def _unreadable(name, exc):
    return FileRefused("%s: unreadable (%s); expected a readable regular file"
                       % (name, " ".join(str(exc.strerror or exc).split())))


def read_file(path, root, max_bytes=MAX_DOCUMENT_BYTES, name=None):
    """The bytes of ``path``, a file of the artifact tree under ``root``: the one reader of such files.

    The path, links resolved, must be inside ``root`` (a link out of it is not followed; ``root``
    None: a file the user named, anywhere); it must be a regular file (a FIFO, a device, a socket or
    a directory is never opened for reading, and what is opened is opened non-blocking: nothing
    waits for a writer); at most ``max_bytes`` are
    read (``max_bytes + 1`` at most are asked for). Anything else is a :class:`FileRefused`, one
    line naming the file (``name``, else the path) and what was expected."""
    name = name or path
    real = os.path.realpath(path)
    if root is not None and not safe_paths.within(real, os.path.realpath(root)):
        raise FileRefused("%s: a link out of the results directory (to %s), not followed; expected a file inside %s"
                          % (name, real, root))
    try:
        status = os.stat(real)
    except FileNotFoundError:
        raise FileRefused("%s: missing (%s)" % (name, path), missing=True) from None
    except OSError as exc:
        raise _unreadable(name, exc) from None
    _check_status(name, status, max_bytes)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(real, flags)
    except FileNotFoundError:
        raise FileRefused("%s: missing (%s)" % (name, path), missing=True) from None
    except OSError as exc:
        raise _unreadable(name, exc) from None
    try:
        # what was opened may not be what was looked at (replaced in between): look again
        _check_status(name, os.fstat(descriptor), max_bytes)
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(descriptor, min(READ_CHUNK, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise _unreadable(name, exc) from None
    finally:
        os.close(descriptor)
    if size > max_bytes:
        raise FileRefused("%s: more than %d bytes, more than its size said; expected at most %d"
                          % (name, max_bytes, max_bytes))
    return b"".join(chunks)


def _check_status(name, status, max_bytes):
    kind = _not_regular(status.st_mode)
    if kind:
        raise FileRefused("%s: %s, not a regular file; expected a regular file" % (name, kind))
    if status.st_size > max_bytes:
        raise FileRefused("%s: %d bytes, more than the limit of %d; expected at most %d"
                          % (name, status.st_size, max_bytes, max_bytes))


def read_text(path, root, max_bytes=MAX_DOCUMENT_BYTES, name=None, errors="strict"):
    """The UTF-8 text of a file of the tree (:func:`read_file`); with ``errors="strict"`` bytes that
    are not UTF-8 are a :class:`FileRefused` naming where they are."""
    name = name or path
    data = read_file(path, root, max_bytes, name)
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise FileRefused("%s: not UTF-8 text (byte %d); expected UTF-8" % (name, exc.start)) from None


def read_json_file(path, root, max_bytes=MAX_DOCUMENT_BYTES, name=None, finite=True):
    """The JSON document of a file of the tree: read by :func:`read_file`, parsed by :func:`load_json`
    (malformed JSON is a :class:`NotJSON`, a NaN or too deep an :class:`InputError`)."""
    name = name or path
    return load_json(read_text(path, root, max_bytes, name), name, max_bytes=max_bytes, finite=finite)
