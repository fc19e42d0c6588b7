# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the console shows of a run: the lines of the ``perfscale.topsail.steps`` stdout callback, and
the line naming the results store a run used (the ``kpi_export`` callback).

Plain text in, plain text out: the callbacks hand over names, statuses, counts and messages, and print
what these functions return. Every line is one line (a name or a message line cannot forge another:
control characters are shown escaped, ``display_text.escape``), and never empty.
"""

from __future__ import annotations

import json

from ansible_collections.perfscale.topsail.plugins.module_utils import display_text

# "changed " is the longest status a line shows; the names start in one column
STATUS_WIDTH = 8
INDENT = "  "
# the message lines of a task (a debug task's msg) start under the task's name
MESSAGE_INDENT = INDENT + " " * (STATUS_WIDTH + 1)
# a task is timed on its line from this long on (a quick task's time is noise)
SHOWN_SECONDS = 1.0
# a message line longer than this is cut (a summary line is one sentence, a path or two)
MESSAGE_CHARS = 2000
# the host most runs have; its name is left out of the lines
LOCALHOST = "localhost"


def one_line(value, max_chars=display_text.MAX_CHARS):
    """``value`` as one line of text: control characters (line breaks included) escaped, cut after
    ``max_chars``, without the spaces around it."""
    return display_text.escape(value, max_chars=max_chars).strip()


def task_line(status, name, host=LOCALHOST, items=0, retries=0, seconds=None):
    """The line of one task that ran on one host: ``  changed  Run the benchmark matrix (6.2 s)``.

    ``status`` is ``ok`` or ``changed``; ``name`` the task's name (an empty one is said to be);
    ``host`` is shown unless it is localhost; ``items`` (a loop's), ``retries`` and ``seconds``
    (from ``SHOWN_SECONDS`` on) in parentheses when there are any."""
    text = one_line(name) or "(a task without a name)"
    if host and host != LOCALHOST:
        text += " [%s]" % one_line(host)
    notes = []
    if items:
        notes.append("%d item%s" % (items, "" if items == 1 else "s"))
    if retries:
        notes.append("%d retr%s" % (retries, "y" if retries == 1 else "ies"))
    if seconds is not None and seconds >= SHOWN_SECONDS:
        notes.append(duration(seconds))
    if notes:
        text += " (%s)" % ", ".join(notes)
    return "%s%-*s %s" % (INDENT, STATUS_WIDTH, status, text)


def duration(seconds):
    """``6.2 s`` under a minute, ``4 min 05 s`` from a minute on."""
    if seconds < 60:
        return "%.1f s" % seconds
    minutes, rest = divmod(int(round(seconds)), 60)
    return "%d min %02d s" % (minutes, rest)


def message_lines(message):
    """A debug task's ``msg`` as lines under its task: a text is its lines, a list one line per item
    (a list inside it is flattened: a summary is never printed nested), a mapping one ``key: value``
    line per key (the value as JSON); empty lines are left out, a line's indentation is kept (a YAML
    text stays readable)."""
    lines = []
    stack = [message]
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple)):
            stack.extend(reversed(value))
        elif isinstance(value, dict):
            stack.extend(reversed(["%s: %s" % (key, item if isinstance(item, str)
                                               else json.dumps(item, sort_keys=True, default=str))
                                   for key, item in value.items()]))
        elif value is not None:
            for line in str(value).splitlines():
                shown = display_text.escape(line, max_chars=MESSAGE_CHARS).rstrip()
                if shown.strip():
                    lines.append(MESSAGE_INDENT + shown)
    return lines


def play_line(name):
    """The line that opens a play: ``PLAY [name]`` (``PLAY`` for a play without a name)."""
    shown = one_line(name or "")
    return "PLAY [%s]" % shown if shown else "PLAY"


def recap_line(host, counts, seconds=None):
    """The recap of one host: ``PLAY RECAP localhost: ok=23 changed=7 failed=0 skipped=10 (22.4 s)``.

    ``counts`` is Ansible's summary of the host (``ok``, ``changed``, ``failures``, ``unreachable``,
    ``skipped``, ``rescued``, ``ignored``): ok, changed and failed are always shown, the others when
    they are not zero."""
    parts = ["ok=%d" % counts.get("ok", 0), "changed=%d" % counts.get("changed", 0),
             "failed=%d" % counts.get("failures", 0)]
    for key in ("unreachable", "skipped", "rescued", "ignored"):
        if counts.get(key):
            parts.append("%s=%d" % (key, counts[key]))
    line = "PLAY RECAP %s: %s" % (one_line(host), " ".join(parts))
    if seconds is not None:
        line += " (%s)" % duration(seconds)
    return line
