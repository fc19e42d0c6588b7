"""Make ``ansible_collections.perfscale.topsail`` importable for the tests.

In a checkout the collection appears under ``.venv/collections`` (made by
``make setup``); in an installed tree (ansible-test) the repository already
sits at ``.../ansible_collections/perfscale/topsail``.
"""

import os
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _collections_root():
    parts = REPO_ROOT.split(os.sep)
    if parts[-3:] == ["ansible_collections", "perfscale", "topsail"]:
        return os.sep.join(parts[:-3])
    return os.path.join(REPO_ROOT, ".venv", "collections")


COLLECTIONS_ROOT = _collections_root()
if COLLECTIONS_ROOT not in sys.path:
    sys.path.insert(0, COLLECTIONS_ROOT)


@pytest.fixture
def ascii_locale():
    """LC_CTYPE set to C for the test (ASCII, as in a bare container): a file read or written without an
    explicit encoding then fails on any non-ASCII text."""
    import locale

    previous = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    yield
    locale.setlocale(locale.LC_CTYPE, previous)
