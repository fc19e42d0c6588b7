# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a run's results store is, in one line for the console: the play names the store it used."""

from __future__ import annotations

import os

from ansible_collections.perfscale.topsail.plugins.module_utils import display_text
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import sqlite as sqlite_store


def one_line(value):
    """``value`` as one line of text (control characters escaped, cut), as the console shows names."""
    return display_text.escape(value).strip()


SHARED_STORE_NOTE = "shared by every checkout of this account; set export.sqlite.path for one per project"


def store_line(export, environ=None):
    """The line naming the results store an ``export`` section (``stores.export.read_export``'s,
    the environment's overrides applied) resolves to, None when it names none.

    A SQLite store at its default place is shared by every checkout of the account (every run of
    every project compares with the others): the line says so, and how to keep one per project."""
    environ = os.environ if environ is None else environ
    if not isinstance(export, dict):
        return None
    backend = export.get("backend")
    settings = export.get(backend) if isinstance(backend, str) else None
    settings = settings if isinstance(settings, dict) else {}
    if backend == "sqlite":
        path = settings.get("path")
        if path:
            return "results store: sqlite %s (export.sqlite.path)" % one_line(
                os.path.abspath(os.path.expanduser(str(path))))
        where = one_line(sqlite_store.default_sqlite_path(environ))
        return "results store: sqlite %s (%s)" % (where, SHARED_STORE_NOTE)
    if backend == "opensearch":
        hosts = settings.get("hosts") if isinstance(settings.get("hosts"), list) else []
        return "results store: opensearch %s" % (
            ", ".join(one_line(secret_refs.redact_url(host)) for host in hosts) or "(no hosts)")
    if isinstance(backend, str) and backend:
        return "results store: %s" % one_line(backend)
    return None
