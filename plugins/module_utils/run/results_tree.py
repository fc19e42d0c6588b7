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
the workload's code changes. Every file of the tree (settings, ``exit_code``,
``.uuid``, ``point.json``, parse caches, what parsers read) is read by the one
bounded reader, ``bounded_input.read_file``: inside the results directory,
links resolved; a regular file (a FIFO or a device is never read, nothing
blocks); at most a size limit. ``PERFSCALE_STORE_IGNORE_CACHE=1`` forces a full
re-parse; an unreadable cache is ignored and rebuilt, with a warning.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import os

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input, safe_paths
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
# exit_code and .uuid: a number and an id; anything longer is not one
SMALL_FILE_BYTES = 4096
# how much of a reason a warning quotes
REASON_CHARS = 300


def _finite_number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:   # an integer too large for a float
        return False


def point_resources(test_dir, results_dir=None, warnings=None):
    """The ``resources`` of a point's ``point.json`` (finite numbers only), or None: none measured, no
    file, or a file that is not read (a link out of ``results_dir``, which defaults to ``test_dir``,
    not a regular file, too big, not JSON), whose one-line reason goes to ``warnings`` (once: a
    workload that read the file already gave it)."""
    path = os.path.join(test_dir, POINT_FILE)
    reason = None
    try:
        document = bounded_input.read_json_file(path, results_dir or test_dir, bounded_input.MAX_TREE_FILE_BYTES,
                                                POINT_FILE, finite=False)
    except bounded_input.FileRefused as exc:
        reason = None if exc.missing else _one_line(exc)
        document = None
    except ValueError as exc:
        # worded as a parse context words it: a workload that read point.json too gave the same warning
        reason = _unreadable(POINT_FILE, exc)
        document = None
    if reason and warnings is not None and reason not in warnings:
        warnings.append(reason)
    resources = document.get("resources") if isinstance(document, dict) else None
    if not isinstance(resources, dict):
        return None
    return {key: value for key, value in resources.items() if _finite_number(value)} or None


def _one_line(exc):
    return " ".join(str(exc).split())[:REASON_CHARS]


def _unreadable(label, exc):
    """``label: unreadable, ignored: why`` for a file that was read but could not be parsed."""
    text, prefix = _one_line(exc), label + ": "
    return "%s: unreadable, ignored: %s" % (label, text[len(prefix):] if text.startswith(prefix) else text)


def load_yaml_file(path, results_dir=None, name=None):
    """YAML of a file of the tree under ``results_dir`` (default: the file's directory), read by the
    bounded reader; malformed YAML is a ValueError (like malformed JSON)."""
    import yaml

    text = bounded_input.read_text(path, results_dir or os.path.dirname(os.path.abspath(path)), name=name)
    loader = bounded_input.safe_yaml_loader()
    try:
        return bounded_input.parse(lambda document: yaml.load(document, Loader=loader),  # nosec B506 - a SafeLoader
                                   text, name or path, finite=False)
    except yaml.YAMLError as exc:
        raise ValueError("malformed YAML: %s" % " ".join(str(exc).split())) from None


# whether a path, links resolved, is inside a resolved directory (the one rule, in safe_paths)
within = safe_paths.within


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
            if os.path.lexists(path):
                try:
                    data = load_yaml_file(path, self.results_real, name=path) or {}
                    if not isinstance(data, dict):
                        self.warnings.append("%s: expected a mapping of settings, ignored" % path)
                        data = {}
                except bounded_input.FileRefused as exc:
                    if not exc.missing:   # a dangling link inside the tree is no settings, as before
                        self.warnings.append(_one_line(exc))
                    data = {}
                except ValueError as exc:
                    self.warnings.append("%s: unreadable settings, ignored: %s" % (path, _one_line(exc)))
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
        """``reader(path, label)`` of a file of the test, or None with a warning naming it: the file
        is read by the bounded reader (inside the results directory, a regular file, at most
        ``bounded_input.MAX_TREE_FILE_BYTES``), and what is wrong with it is that warning."""
        path = self.path(relative, artifact)
        label = self._register(path, relative, artifact)
        if path is None:
            self.warnings.append("%s: no %s directory found for this test" % (label, artifact))
            return None
        try:
            return reader(path, label)
        except bounded_input.FileRefused as exc:
            self.warnings.append(_one_line(exc))
        except ValueError as exc:
            self.warnings.append(_unreadable(label, exc))
        return None

    # -- readers

    def read_text(self, relative="", artifact=None):
        return self._open(relative, artifact, lambda path, label: bounded_input.read_text(
            path, self.results_real, bounded_input.MAX_TREE_FILE_BYTES, label, errors="replace"))

    def read_json(self, relative="", artifact=None):
        return self._open(relative, artifact, lambda path, label: bounded_input.read_json_file(
            path, self.results_real, bounded_input.MAX_TREE_FILE_BYTES, label, finite=False))

    def read_yaml(self, relative="", artifact=None):
        return self._open(relative, artifact, lambda path, label: load_yaml_file(path, self.results_real, label))

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
        if os.path.lexists(path):
            try:
                left = bounded_input.read_json_file(path, current, bounded_input.MAX_TREE_FILE_BYTES).get(
                    "left_remote") or {}
                return {os.path.normpath(os.path.join(current, relative)): list(state)
                        for relative, state in left.items()}
            except (ValueError, AttributeError, TypeError):
                return {}
        if os.path.dirname(current) == current:
            return {}
        current = os.path.dirname(current)


def load_cache(test_dir, fingerprint, warnings, stat=None, local_state=None, results_dir=None):
    """The parse cache of a test, when it is fresh; None otherwise (an unusable one with a warning).
    It is read by the bounded reader, inside ``results_dir`` (default: the test directory)."""
    path = os.path.join(test_dir, CACHE_FILE)
    if not os.path.lexists(path):
        return None
    try:
        cache = bounded_input.read_json_file(path, results_dir or test_dir, bounded_input.MAX_TREE_FILE_BYTES,
                                             CACHE_FILE, finite=False)
        if not isinstance(cache, dict) or not isinstance(cache.get("files"), dict) or not all(
                key in cache for key in ("results", "settings", "exit_code", "uuid")):
            raise ValueError("unexpected structure")
    except ValueError as exc:
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

    def __init__(self, test_dir, relative, settings, exit_code, uuid, results, warnings, from_cache,
                 results_dir=None):
        self.test_dir = test_dir
        self.results_dir = results_dir
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


def _read_small(test_dir, name, results_dir, warnings):
    """The stripped text of a small file of the test (``exit_code``, ``.uuid``), or None: missing,
    or not read (its reason goes to ``warnings``)."""
    try:
        return bounded_input.read_text(os.path.join(test_dir, name), results_dir or test_dir, SMALL_FILE_BYTES,
                                       name, errors="replace").strip()
    except bounded_input.FileRefused as exc:
        if not exc.missing:
            warnings.append(_one_line(exc))
        return None


def _parse_identity(test_dir, warnings, results_dir=None):
    """Exit code and uuid of a test root (degrading, never raising)."""
    exit_text = _read_small(test_dir, EXIT_CODE_FILE, results_dir, warnings)
    try:
        exit_code = int(exit_text)
    except (TypeError, ValueError):
        warnings.append("exit_code: not an integer (%r), the test counts as failed" % (exit_text,))
        exit_code = None
    uuid = _read_small(test_dir, UUID_FILE, results_dir, warnings)
    if not uuid:
        warnings.append(".uuid: missing; an id is derived from the test path")
        uuid = hashlib.sha256(os.path.abspath(test_dir).encode()).hexdigest()[:32]
    return exit_code, uuid


def parse_test(test_dir, walk):
    """One test root: from its fresh cache, or parsed (and cached)."""
    ignore_cache = walk.environ.get(IGNORE_CACHE_ENV, "").lower() in ("1", "true", "yes", "y")
    warnings, cache_warnings = [], []
    cache = None if ignore_cache else load_cache(test_dir, walk.fingerprint, cache_warnings, walk.stat,
                                                 walk.local_state, walk.results_dir)
    if cache is not None:
        own, exit_code, uuid = cache["settings"], cache["exit_code"], cache["uuid"]
        settings = walk.settings.merged(test_dir, own)
        results = cache["results"]
        warnings.extend(cache.get("warnings", []))
        from_cache = True
    else:
        own = walk.settings.own(test_dir)
        settings = walk.settings.merged(test_dir, own)
        exit_code, uuid = _parse_identity(test_dir, warnings, walk.results_dir)
        workload = walk.workload
        context = ParseContext(test_dir, walk.results_dir,
                               resolve_artifact_paths(test_dir, walk.results_dir, workload.artifact_dirnames, walk.globs),
                               workload.important_files)
        results = workload.parse_once(context, settings) or {}
        # what the point's processes used travels with the cache: a replot from the cache alone has it too
        warnings.extend(context.warnings)
        if RESOURCES_KEY not in results:
            results[RESOURCES_KEY] = point_resources(test_dir, walk.results_dir, warnings)
        for name in (SETTINGS_FILE, EXIT_CODE_FILE, UUID_FILE):
            context.files_read[name] = _file_state(os.path.join(test_dir, name))
        record = {"fingerprint": walk.fingerprint, "files": context.files_read, "settings": own,
                  "exit_code": exit_code, "uuid": uuid, "results": results, "warnings": list(warnings)}
        if walk.write_cache and not save_cache(test_dir, record):
            warnings.append("%s: parse cache could not be written (read-only tree?)" % test_dir)
        from_cache = False
    warnings = cache_warnings + warnings
    entry = Entry(test_dir, os.path.relpath(test_dir, walk.results_dir), settings, exit_code, uuid, results, warnings,
                  from_cache, walk.results_dir)
    walk.workload.parse_always(entry)
    return entry


def parse_results(results_dir, workload, environ=None, write_cache=True):
    """Parse every test root below ``results_dir``; returns (entries, warnings).
    With ``write_cache=False`` fresh caches are used but nothing is written."""
    walk = Walk(results_dir, workload, environ, write_cache)
    entries = [parse_test(root, walk) for root in find_test_roots(walk.results_dir)]
    return entries, walk.warnings
