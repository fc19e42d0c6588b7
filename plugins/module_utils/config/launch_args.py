# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Launch arguments from a CI comment, as the reference's users write them on a pull request::

    /test llm_serving cpu_smoke cpt
    /var tests.benchmark.timeout_s: 1200
    /var tests.benchmark.matrix.factors: {size: [256, 512]}
    /only prepare,test
    /skip cleanup_before
    /pr team/project#123

``/test <job> [preset...]`` names the CI job and the presets (in order); ``/var key: value``
sets one configuration key (the value is YAML); ``/only`` and ``/skip`` select the steps of a
test flow (comma- or space-separated); ``/pr [owner/name#]N`` names the pull request the verdict is
posted to (``notifications.github.pr_number`` and ``repo``). Lines that do not start with ``/`` are prose and
ignored; an unknown directive, a second ``/test``, a ``/var`` without ``key: value`` or with a
value that is not YAML is one error naming the line. Keys and presets are then checked by the
configuration's resolution exactly as ``-e preset`` / ``-e overrides`` are.
"""

from __future__ import annotations

import re

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError


class LaunchArgs:
    def __init__(self, source):
        self.source = source
        self.job = None
        self.presets = []
        self.overrides = {}
        self.only = []
        self.skip = []

    def as_dict(self):
        return {"source": self.source, "job": self.job, "presets": list(self.presets),
                "overrides": dict(self.overrides), "steps": list(self.only), "skip": list(self.skip)}

    def empty(self):
        return not (self.job or self.presets or self.overrides or self.only or self.skip)


def _names(rest):
    return [name for name in rest.replace(",", " ").split() if name]


def _test(args, where, rest):
    if args.job is not None:
        raise ConfigError("%s: a second /test line (one job per launch)" % where)
    words = rest.split()
    if not words:
        raise ConfigError("%s: /test needs a job name, then presets: /test <job> [preset ...]" % where)
    args.job, args.presets = words[0], words[1:]


def _var(args, where, rest):
    import yaml

    key, sep, value = rest.partition(":")
    key = key.strip()
    if not sep or not key or " " in key:
        raise ConfigError("%s: expected /var dotted.key: value, got %r" % (where, "/var " + rest))
    try:
        args.overrides[key] = bounded_input.parse(yaml.safe_load, value, "%s: /var %s" % (where, key)) \
            if value.strip() else None
    except bounded_input.InputError as exc:
        raise ConfigError(str(exc)) from None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError("%s: /var %s: the value is not valid YAML (%s)" % (where, key, problem)) from None


def _only(args, where, rest):
    if not _names(rest):
        raise ConfigError("%s: /only needs step names" % where)
    args.only.extend(_names(rest))


def _skip(args, where, rest):
    if not _names(rest):
        raise ConfigError("%s: /skip needs step names" % where)
    args.skip.extend(_names(rest))


PULL_REQUEST = re.compile(r"^(?:(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#)?#?(?P<number>[1-9][0-9]*)$")


def _pr(args, where, rest):
    """``/pr 123`` or ``/pr owner/name#123``: the pull request the verdict is posted to (notifications)."""
    match = PULL_REQUEST.match(rest.strip())
    if not match:
        raise ConfigError("%s: expected /pr <number> or /pr owner/name#<number>, got %r" % (where, "/pr " + rest))
    args.overrides["notifications.github.pr_number"] = int(match.group("number"))
    if match.group("repo"):
        args.overrides["notifications.github.repo"] = match.group("repo")


# directive -> what it does to the launch arguments
DIRECTIVES = {"test": _test, "var": _var, "only": _only, "skip": _skip, "pr": _pr}


def parse(text, source="launch text"):
    """The launch arguments of ``text`` (a LaunchArgs); ConfigError naming the line otherwise."""
    if not isinstance(text, str):
        raise ConfigError("%s: expected text (lines such as '/test <job> <preset>'), got %s"
                          % (source, type(text).__name__))
    args = LaunchArgs(source)
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line.startswith("/"):
            continue
        directive, _sep, rest = line[1:].partition(" ")
        handler = DIRECTIVES.get(directive)
        where = "%s line %d" % (source, number)
        if handler is None:
            raise ConfigError("%s: unknown directive /%s (expected one of %s)"
                              % (where, directive, ", ".join("/" + d for d in DIRECTIVES)))
        handler(args, where, rest.strip())
    return args
