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


# seconds each test file took in a recorded run (tools/slowest_tests.py --file-times writes it from the
# JUnit records of `make test`); absent or unreadable: the collection order stays as it is
FILE_TIMES = os.path.join(REPO_ROOT, "tests", "file_times.json")


def longest_files_first(items, seconds_by_file):
    """``items`` with the files that took longest first (longest processing time first: on xdist workers with
    ``--dist loadfile``, the long files start early instead of being the tail of the step). A file with no
    recorded time (a new one) counts as the longest; the order inside a file is kept."""
    def path_of(item):
        return item.nodeid.split("::", 1)[0]
    longest = max(seconds_by_file.values(), default=0.0)
    return sorted(items, key=lambda item: -seconds_by_file.get(path_of(item), longest + 1.0))


def pytest_collection_modifyitems(config, items):
    # only on xdist workers, whose collection order the loadfile scheduler follows (run with
    # --no-loadscope-reorder, which otherwise orders files by their number of tests)
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return
    import json

    try:
        with open(FILE_TIMES, encoding="utf-8") as handle:
            seconds_by_file = {str(path): float(seconds) for path, seconds in json.load(handle).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return
    items[:] = longest_files_first(items, seconds_by_file)
