# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Results stores: the registry of backends and ``open_store``.

A backend is a ``stores.base.ResultsStore`` subclass; adding one is a module in
this package and one entry in ``BACKENDS``. The ``export.backend`` choices, the
``export.<backend>`` sections of the configuration schema and ``open_store``
all read this registry.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import StoreConfigError
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.horreum import HorreumStore
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.opensearch import OpenSearchStore
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.sqlite import SQLiteStore

# every target a spool can be delivered to; export.backend offers those that keep a history
BACKENDS = {backend.name: backend for backend in (SQLiteStore, OpenSearchStore, HorreumStore)}


def backend_names():
    """The stores ``export.backend`` may name: those the regression step reads a history from."""
    return sorted(name for name, backend in BACKENDS.items() if getattr(backend, "keeps_history", True))


def open_store(export, secrets_config=None, environ=None):
    """A store from a validated ``export`` section; ``secrets_config`` resolves credential references."""
    try:
        backend = BACKENDS[export["backend"]]
    except KeyError:
        raise StoreConfigError("export.backend %r: expected one of %s"
                               % (export.get("backend"), ", ".join(backend_names()))) from None
    return backend.from_settings(export, secrets_config, environ)
