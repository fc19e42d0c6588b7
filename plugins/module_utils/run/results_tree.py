# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The results tree: walk an artifact tree, parse its test roots, cache what was parsed.

A *test root* is a directory holding both ``settings.yaml`` and ``exit_code``.
Its settings are merged from the ``settings.yaml`` files of the directories
between the results directory and the test root (the deeper wins). A
directory holding a ``skip`` file is skipped with everything below it; a test
root nested inside another test root is not a second test.

A *workload* (see ``workload.py``) parses a test root in two steps:
``parse_once`` (expensive, cached in the test directory) and ``parse_always``
(cheap, run every time, for what depends on the current environment). Parsers
read files through a ``ParseContext``: a missing or malformed file gives
``None`` and a warning naming it, never an exception; every file read is
recorded, so the cache invalidates itself when one changes, as it does when
the workload's code changes. ``PERFSCALE_STORE_IGNORE_CACHE=1`` forces a full
re-parse; an unreadable cache is ignored and rebuilt, with a warning.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.run.artifacts import EXIT_CODE_FILE, SETTINGS_FILE, UUID_FILE

SKIP_FILE = "skip"
CACHE_FILE = ".perfscale_parse_cache.json"
CACHE_FORMAT = 2
IGNORE_CACHE_ENV = "PERFSCALE_STORE_IGNORE_CACHE"
PRUNED_DIRS = ("_previous", "__pycache__")


# the key of a test's parse results that holds its point's resource usage (point.json ``resources``)
RESOURCES_KEY = "point_resources"
POINT_FILE = "point.json"


def point_resources(test_dir):
    """The ``resources`` of a point's ``point.json`` (numbers only), or None (none measured, no file)."""
    try:
        with open(os.path.join(test_dir, POINT_FILE), encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError):
        return None
    resources = document.get("resources") if isinstance(document, dict) else None
    if not isinstance(resources, dict):
        return None
    return {key: value for key, value in resources.items()
            if isinstance(value, (int, float)) and not isinstance(value, bool)} or None


def load_yaml_file(path):
    """YAML of a file; malformed YAML is a ValueError (like malformed JSON)."""
    import yaml

    with open(path, encoding="utf-8") as handle:
        try:
            return yaml.load(handle, Loader=bounded_input.safe_yaml_loader())  # nosec B506 - a SafeLoader
        except yaml.YAMLError as exc:
            raise ValueError("malformed YAML: %s" % " ".join(str(exc).split())) from None


def within(path, root_real):
    """Whether ``path``, links resolved, is ``root_real`` or inside it."""
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real + os.sep)


def _link_out(label, path):
    return "%s: a link out of the results directory (to %s), not followed" % (label, os.path.realpath(path))


# --------------------------------------------------------------------------
# discovery


def find_test_roots(results_dir, walk=os.walk):
    """Test root directories below ``results_dir``, in sorted walk order. ``walk`` is
    ``os.walk`` or one with its contract over another tree (the files of a bucket)."""
    roots = []
    for directory, dirnames, filenames in walk(results_dir):
        dirnames.sort()
        if SKIP_FILE in filenames:
            dirnames[:] = []
            continue
        if SETTINGS_FILE in filenames and EXIT_CODE_FILE in filenames:
            roots.append(directory)
            dirnames[:] = []  # nested test roots are part of this test
            continue
        dirnames[:] = [d for d in dirnames if d not in PRUNED_DIRS and not d.startswith(".")]
    return roots


class SettingsReader:
    """Merged settings of a test root; parent settings files are read once per walk."""

    def __init__(self, results_dir, warnings):
        self.results_dir = os.path.abspath(results_dir)
        self.results_real = os.path.realpath(results_dir)
        self.warnings = warnings
        self._cache = {}

    def _settings_of(self, directory):
        if directory not in self._cache:
            path = os.path.join(directory, SETTINGS_FILE)
            data = {}
            if os.path.exists(path) and not within(path, self.results_real):
                self.warnings.append(_link_out(path, path))
            elif os.path.exists(path):
                try:
                    data = load_yaml_file(path) or {}
                    if not isinstance(data, dict):
                        self.warnings.append("%s: expected a mapping of settings, ignored" % path)
                        data = {}
                except (OSError, ValueError) as exc:
                    self.warnings.append("%s: unreadable settings, ignored: %s" % (path, " ".join(str(exc).split())))
                    data = {}
            self._cache[directory] = data
        return self._cache[directory]

    def own(self, test_dir):
        """The test directory's own settings.yaml (not merged)."""
        return self._settings_of(os.path.abspath(test_dir))

    def merged(self, test_dir, own=None):
        """Settings from the results dir down to ``test_dir`` (the deeper wins);
        ``own`` replaces reading the test dir's own file (it came from the cache)."""
        test_dir = os.path.abspath(test_dir)
        if own is not None:
            self._cache[test_dir] = own
        chain = []
        current = test_dir
        while True:
            chain.append(current)
            if current == self.results_dir or os.path.dirname(current) == current:
                break
            current = os.path.dirname(current)
        merged = {}
        for directory in reversed(chain):
            merged.update(self._settings_of(directory))
        return merged


def resolve_artifact_paths(test_dir, results_dir, dirnames, memo=None, listdir=None):
    """Resolve globs such as ``*__host__capture_environment`` for one test.

    Each glob is looked up in the test directory, then in each parent up to the
    results directory; at the first level with matches, the last one (highest
    index) wins. No match gives ``None``. ``memo`` (one per walk) keeps the
    result of each (directory, glob), so sibling tests do not list their shared
    parents again: the walk stays linear in the number of tests. ``listdir``
    lists another tree (the files of a bucket, which has no links) instead.
    """
    results_dir = os.path.abspath(results_dir)
    results_real = os.path.realpath(results_dir)
    memo = {} if memo is None else memo
    resolved = {}
    for key, pattern in (dirnames or {}).items():
        found = None
        current = os.path.abspath(test_dir)
        while True:
            if (current, pattern) not in memo:
                try:
                    names = (listdir or os.listdir)(current)
                except OSError:
                    names = []
                # a match that is a link out of the results directory is not one
                matches = sorted((n for n in names if fnmatch.fnmatchcase(n, pattern)
                                  and (listdir or within(os.path.join(current, n), results_real))), key=_index_key)
                memo[(current, pattern)] = os.path.join(current, matches[-1]) if matches else None
            found = memo[(current, pattern)]
            if found or current == results_dir or os.path.dirname(current) == current:
                break
            current = os.path.dirname(current)
        resolved[key] = found
    return resolved


def _index_key(name):
    match = artifacts.INDEXED_NAME.match(name)
    return (int(match.group(1)) if match else -1, name)


# --------------------------------------------------------------------------
# parsing context


def _file_state(path):
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns]


class ParseContext:
    """What a parser sees: paths, artifact dirs, and file readers that degrade."""

    def __init__(self, test_dir, results_dir, artifact_paths, important_files):
        self.test_dir = test_dir
        self.results_dir = results_dir
        self.results_real = os.path.realpath(results_dir)
        self.artifact_paths = artifact_paths
        self.important = set(important_files or ())
        self.files_read = {}
        self.warnings = []

    # -- paths

    def path(self, relative="", artifact=None):
        """Path of ``relative`` in the test dir, or in the resolved artifact ``artifact``
        (a directory, or a file when ``relative`` is empty)."""
        if artifact is None:
            return os.path.join(self.test_dir, relative)
        base = self.artifact_paths.get(artifact)
        if not base:
            return None
        return os.path.join(base, relative) if relative else base

    def _register(self, path, relative, artifact):
        label = ("%s/%s" % (artifact, relative) if relative else artifact) if artifact else relative
        if path is not None:
            self.files_read[os.path.relpath(path, self.test_dir)] = _file_state(path)
        # an important file may be a glob (KEY/*__cluster__deploy_operator/csv_version.txt)
        if self.important and label not in self.important \
                and not any(fnmatch.fnmatchcase(label, pattern) for pattern in self.important):
            self.warnings.append("%s was read but is not listed in the workload's important files" % label)
        return label

    def _open(self, relative, artifact, reader):
        path = self.path(relative, artifact)
        label = self._register(path, relative, artifact)
        if path is None:
            self.warnings.append("%s: no %s directory found for this test" % (label, artifact))
            return None
        if os.path.exists(path) and not within(path, self.results_real):
            self.warnings.append(_link_out(label, path))
            return None
        try:
            return reader(path)
        except FileNotFoundError:
            self.warnings.append("%s: missing (%s)" % (label, path))
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            self.warnings.append("%s: unreadable, ignored: %s" % (label, " ".join(str(exc).split())[:200]))
        return None

    # -- readers

    def read_text(self, relative="", artifact=None):
        def reader(path):
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        return self._open(relative, artifact, reader)

    def read_json(self, relative="", artifact=None):
        def reader(path):
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
        return self._open(relative, artifact, reader)

    def read_yaml(self, relative="", artifact=None):
        return self._open(relative, artifact, load_yaml_file)

    def exists(self, relative="", artifact=None):
        path = self.path(relative, artifact)
        if path is not None:
            self.files_read[os.path.relpath(path, self.test_dir)] = _file_state(path)
        return path is not None and os.path.exists(path) and within(path, self.results_real)


# --------------------------------------------------------------------------
# cache


def workload_fingerprint(workload):
    """Hash of the workload's source (and of this store's cache format)."""
    digest = hashlib.sha256(b"perfscale-store-%d" % CACHE_FORMAT)
    for path in workload.source_files():
        try:
            with open(path, "rb") as handle:
                digest.update(handle.read())
        except OSError:
            digest.update(path.encode())
    return digest.hexdigest()


def _cache_is_fresh(cache, fingerprint, test_dir, stat, local_state=_file_state):
    """Whether a parse cache still holds: same workload code, every file it read in the state it had.
    ``stat`` gives the state of a file shared with other tests, ``local_state`` of the test's own."""
    if cache.get("format") != CACHE_FORMAT or cache.get("fingerprint") != fingerprint:
        return False
    for relative, state in cache.get("files", {}).items():
        if relative.startswith(".."):
            # a file shared with other tests (environment capture...): stat it once per walk
            current = stat(os.path.normpath(os.path.join(test_dir, relative)))
        else:
            current = local_state(test_dir + os.sep + relative)
        if current != state:
            return False
    return True


class Walk:
    """State shared by the tests of one walk: parent settings, glob results, stats
    of shared files (nothing changes the tree during a walk)."""

    def __init__(self, results_dir, workload, environ=None, write_cache=True):
        self.results_dir = os.path.abspath(results_dir)
        self.write_cache = write_cache
        self.workload = workload
        self.environ = os.environ if environ is None else environ
        self.warnings = []
        self.settings = SettingsReader(self.results_dir, self.warnings)
        self.fingerprint = workload_fingerprint(workload)
        self.globs = {}
        self._stats = {}
        self.left_remote = files_left_remote(self.results_dir)

    def local_state(self, path):
        """State of a file; one a partial download left in its bucket has the state recorded there."""
        state = _file_state(path)
        if state is None and self.left_remote:
            return self.left_remote.get(os.path.normpath(path))
        return state

    def stat(self, path):
        if path not in self._stats:
            self._stats[path] = self.local_state(path)
        return self._stats[path]


# written by a partial download (see artifact_transfer.py) at the root of what it downloaded
DOWNLOAD_RECORD = ".perfscale_download.json"


def files_left_remote(results_dir):
    """{absolute path: [size, mtime_ns]} of the files a partial download of this tree (or of a tree
    holding it) left in the bucket; a parse cache that read them stays fresh. Empty otherwise."""
    current = os.path.abspath(results_dir)
    while True:
        path = os.path.join(current, DOWNLOAD_RECORD)
        if os.path.exists(path):
            try:
                with open(path, encoding="utf-8") as handle:
                    left = json.load(handle).get("left_remote") or {}
                return {os.path.normpath(os.path.join(current, relative)): list(state)
                        for relative, state in left.items()}
            except (OSError, ValueError, AttributeError, TypeError):
                return {}
        if os.path.dirname(current) == current:
            return {}
        current = os.path.dirname(current)


def load_cache(test_dir, fingerprint, warnings, stat=None, local_state=None):
    path = os.path.join(test_dir, CACHE_FILE)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            cache = json.load(handle)
        if not isinstance(cache, dict) or not isinstance(cache.get("files"), dict) or not all(
                key in cache for key in ("results", "settings", "exit_code", "uuid")):
            raise ValueError("unexpected structure")
    except (OSError, ValueError) as exc:
        warnings.append("%s: corrupt parse cache ignored and rebuilt (%s)" % (path, " ".join(str(exc).split())[:120]))
        return None
    return cache if _cache_is_fresh(cache, fingerprint, test_dir, stat or _file_state, local_state or _file_state) else None


def save_cache(test_dir, record):
    try:
        artifacts.write_text_atomic(os.path.join(test_dir, CACHE_FILE), json.dumps(
            dict(record, format=CACHE_FORMAT), default=str))
        return True
    except OSError:
        return False


# --------------------------------------------------------------------------
# entries


class Entry:
    """One parsed test."""

    def __init__(self, test_dir, relative, settings, exit_code, uuid, results, warnings, from_cache):
        self.test_dir = test_dir
        self.relative = relative
        self.settings = settings
        self.exit_code = exit_code
        self.uuid = uuid
        self.results = results
        self.warnings = warnings
        self.from_cache = from_cache

    @property
    def failed(self):
        return self.exit_code != 0

    def as_dict(self):
        return {"test_dir": self.test_dir, "relative": self.relative, "settings": self.settings,
                "exit_code": self.exit_code, "uuid": self.uuid, "results": self.results, "warnings": self.warnings}


def _read_small(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _parse_identity(test_dir, warnings):
    """Exit code and uuid of a test root (degrading, never raising)."""
    exit_text = _read_small(os.path.join(test_dir, EXIT_CODE_FILE))
    try:
        exit_code = int(exit_text)
    except (TypeError, ValueError):
        warnings.append("exit_code: not an integer (%r), the test counts as failed" % (exit_text,))
        exit_code = None
    uuid = _read_small(os.path.join(test_dir, UUID_FILE))
    if not uuid:
        warnings.append(".uuid: missing; an id is derived from the test path")
        uuid = hashlib.sha256(os.path.abspath(test_dir).encode()).hexdigest()[:32]
    return exit_code, uuid


def parse_test(test_dir, walk):
    """One test root: from its fresh cache, or parsed (and cached)."""
    ignore_cache = walk.environ.get(IGNORE_CACHE_ENV, "").lower() in ("1", "true", "yes", "y")
    warnings, cache_warnings = [], []
    cache = None if ignore_cache else load_cache(test_dir, walk.fingerprint, cache_warnings, walk.stat, walk.local_state)
    if cache is not None:
        own, exit_code, uuid = cache["settings"], cache["exit_code"], cache["uuid"]
        settings = walk.settings.merged(test_dir, own)
        results = cache["results"]
        warnings.extend(cache.get("warnings", []))
        from_cache = True
    else:
        own = walk.settings.own(test_dir)
        settings = walk.settings.merged(test_dir, own)
        exit_code, uuid = _parse_identity(test_dir, warnings)
        workload = walk.workload
        context = ParseContext(test_dir, walk.results_dir,
                               resolve_artifact_paths(test_dir, walk.results_dir, workload.artifact_dirnames, walk.globs),
                               workload.important_files)
        results = workload.parse_once(context, settings) or {}
        # what the point's processes used travels with the cache: a replot from the cache alone has it too
        results.setdefault(RESOURCES_KEY, point_resources(test_dir))
        warnings.extend(context.warnings)
        for name in (SETTINGS_FILE, EXIT_CODE_FILE, UUID_FILE):
            context.files_read[name] = _file_state(os.path.join(test_dir, name))
        record = {"fingerprint": walk.fingerprint, "files": context.files_read, "settings": own,
                  "exit_code": exit_code, "uuid": uuid, "results": results, "warnings": list(warnings)}
        if walk.write_cache and not save_cache(test_dir, record):
            warnings.append("%s: parse cache could not be written (read-only tree?)" % test_dir)
        from_cache = False
    warnings = cache_warnings + warnings
    entry = Entry(test_dir, os.path.relpath(test_dir, walk.results_dir), settings, exit_code, uuid, results, warnings,
                  from_cache)
    walk.workload.parse_always(entry)
    return entry


def parse_results(results_dir, workload, environ=None, write_cache=True):
    """Parse every test root below ``results_dir``; returns (entries, warnings).
    With ``write_cache=False`` fresh caches are used but nothing is written."""
    walk = Walk(results_dir, workload, environ, write_cache)
    entries = [parse_test(root, walk) for root in find_test_roots(walk.results_dir)]
    return entries, walk.warnings
