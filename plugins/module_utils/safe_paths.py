# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one rule for file names that come from outside (a bucket's manifest, a pod's log archive, a
host's or a MinIO tar): what they may name, checked before anything is written.

A name from outside is a ``/``-separated path relative to a destination directory. It is refused
when it is empty or not text, is absolute, starts with a drive prefix (``C:``), holds a backslash or
a NUL, has a ``..``, ``.`` or empty segment (``a//b``, ``a/``), or, joined to the destination and
resolved through the symlinks already there, lands outside it. A set of names is refused as a whole
when one of them is refused, or when one names a file that another needs as a directory (``a`` and
``a/b``), or that the destination already holds as the other type: nothing of the set is written.
Plain Python, no I/O beyond ``os.path`` look-ups.
"""

import collections
import os
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

DRIVE_PREFIX = re.compile(r"^[A-Za-z]:")
# a manifest or archive holding more names than this is refused before they are looked at one by one
MAX_NAMES = 1000000
MAX_NAME_LENGTH = 4096
SHOWN = 3


class UnsafeName(PerfscaleError, ValueError):
    """One or more names from outside that would write elsewhere than inside their destination (a
    ``ValueError`` too: the callers that report a damaged archive report this the same way)."""


def name_problem(name):
    """Why ``name`` may not be written under a destination, or ``None`` when it may."""
    if not isinstance(name, str):
        return "not text"
    if not name:
        return "empty"
    if len(name) > MAX_NAME_LENGTH:
        return "longer than %d characters" % MAX_NAME_LENGTH
    if "\x00" in name:
        return "holds a NUL"
    if "\\" in name:
        return "holds a backslash"
    if name.startswith("/"):
        return "absolute"
    if DRIVE_PREFIX.match(name):
        return "has a drive prefix"
    for segment in name.split("/"):
        if segment == "":
            return "has an empty segment"
        if segment in (".", ".."):
            return "has a %r segment" % segment
    return None


def _inside(root, path):
    return path == root or path.startswith(root + os.sep)


def within(path, root_real):
    """Whether ``path``, links resolved, is ``root_real`` (a resolved directory, ``/`` too) or inside it."""
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def _shown(name):
    text = repr(name)
    return text if len(text) <= 80 else text[:77] + "..."


def check_names(root, names, what="name"):
    """``{name: absolute target}`` for names to write under the directory ``root``; raises
    :class:`UnsafeName` (one line naming the first refused names and why) when any is refused."""
    if len(names) > MAX_NAMES:
        raise UnsafeName("%d %ss: more than %d; nothing was written" % (len(names), what, MAX_NAMES))
    real_root = os.path.realpath(root)
    problems, targets = [], {}
    for name in sorted(names, key=str):
        problem = name_problem(name)
        if problem is None:
            target = os.path.realpath(os.path.join(real_root, name))
            if target == real_root or not _inside(real_root, target):
                problem = "resolves outside %s" % root
            elif os.path.isdir(target):
                problem = "is a directory there"
            else:
                parent = os.path.dirname(os.path.join(real_root, name))
                blocking = _existing_file_above(real_root, parent)
                if blocking:
                    problem = "needs %s as a directory, it is a file there" % os.path.relpath(blocking, real_root)
        if problem is None:
            targets[name] = target
        else:
            problems.append("%s (%s)" % (_shown(name), problem))
    files = set(targets)
    for name in targets:
        head = name
        while "/" in head:
            head = head.rsplit("/", 1)[0]
            if head in files:
                problems.append("%s (needs %s as a directory, another %s names it as a file)"
                                % (_shown(name), _shown(head), what))
                break
    if problems:
        more = " and %d more" % (len(problems) - SHOWN) if len(problems) > SHOWN else ""
        raise UnsafeName("%d %s(s) refused: %s%s; expected relative names of files inside %s; nothing was written"
                         % (len(problems), what, ", ".join(problems[:SHOWN]), more, root))
    return targets


def _existing_file_above(root, directory):
    """The first existing non-directory on the way from ``root`` down to ``directory``, if any."""
    path = root
    for segment in os.path.relpath(directory, root).split(os.sep):   # "." for root itself: a directory
        path = os.path.join(path, segment)
        if not os.path.lexists(path):
            return None
        if not os.path.isdir(path):
            return path
    return None


def check_tar_members(root, members, what="archive member"):
    """The members of a ``tarfile`` to extract under ``root``: every one a regular file with a safe
    name (see :func:`check_names`); raises :class:`UnsafeName` otherwise."""
    not_files = ["%s (a %s, not a regular file)" % (_shown(m.name), _member_type(m)) for m in members if not m.isfile()]
    if not_files:
        more = " and %d more" % (len(not_files) - SHOWN) if len(not_files) > SHOWN else ""
        raise UnsafeName("%d %s(s) refused: %s%s; expected regular files only; nothing was written"
                         % (len(not_files), what, ", ".join(not_files[:SHOWN]), more))
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        twice = sorted(name for name, count in collections.Counter(names).items() if count > 1)
        raise UnsafeName("%s %s appears more than once; nothing was written" % (what, _shown(twice[0])))
    return check_names(root, names, what)


def _member_type(member):
    for test, label in ((member.isdir, "directory"), (member.issym, "symlink"), (member.islnk, "hard link"),
                        (member.isdev, "device")):
        if test():
            return label
    return "special file"


def write_files(root, files, what="archive member"):
    """Write ``{name: bytes}`` under ``root`` once every name passed :func:`check_names`."""
    targets = check_names(root, list(files), what)
    for name, data in files.items():
        os.makedirs(os.path.dirname(targets[name]), exist_ok=True)
        with open(targets[name], "wb") as handle:
            handle.write(data)
    return sorted(targets.values())
