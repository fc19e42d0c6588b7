# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Artifact directories: ``NNN__name/`` allocated atomically, files written whole.

Every toolbox command and every named orchestration step gets its own
directory ``NNN__<name>`` below the current artifact directory. The index is
allocated under an exclusive ``flock`` on the parent directory, so that two
steps started at the same time (threads or processes) never get the same
index. Files are written to a temporary name and renamed, so a reader never
sees half a file. Nothing is ever deleted here: post-mortem analysis depends
on the artifacts of failed steps.
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
import re
import tempfile

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ArtifactError

INDEX_DIGITS = 3
INDEXED_NAME = re.compile(r"^(\d+)__(.+)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=@-]+")

# toolbox directories
FAILURE_FILE = "FAILURE"
PARAMS_FILE = "_params.yaml"
LOG_FILE = "_ansible.log"
# a test root (a matrix point): its settings, its exit code, its identity
SETTINGS_FILE = "settings.yaml"
EXIT_CODE_FILE = "exit_code"
UUID_FILE = ".uuid"


def sanitize_name(name):
    """A filesystem-safe directory name: keeps letters, digits and ``._+=@-``."""
    if not isinstance(name, str) or not name.strip():
        raise ArtifactError("artifact directory name %r: expected a non-empty string" % (name,))
    cleaned = _UNSAFE.sub("_", name.strip()).strip("_")
    if not cleaned or cleaned in (".", ".."):
        raise ArtifactError("artifact directory name %r: nothing usable remains after sanitizing" % (name,))
    return cleaned[:200]


def default_run_root(base_dir=".", now=None):
    """``<base_dir>/artifacts/<YYYYMMDD-HHMMSS>``; a suffix keeps it unused."""
    now = now or datetime.datetime.now()
    root = os.path.join(base_dir, "artifacts", now.strftime("%Y%m%d-%H%M%S"))
    candidate, count = root, 1
    while os.path.exists(candidate):
        count += 1
        candidate = "%s-%d" % (root, count)
    return os.path.abspath(candidate)


def resolve_run_root(explicit=None, environ=None, base_dir=".", now=None):
    """The run root: explicit ``artifact_dir``, else ``$ARTIFACT_DIR``, else a timestamped default."""
    environ = os.environ if environ is None else environ
    for candidate in (explicit, environ.get("ARTIFACT_DIR")):
        if candidate:
            return os.path.abspath(os.path.expanduser(str(candidate)))
    return default_run_root(base_dir, now)


def ensure_dir(path):
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise ArtifactError("artifact directory %s: cannot be created: %s" % (path, exc.strerror or exc)) from None
    if not os.access(path, os.W_OK):
        raise ArtifactError("artifact directory %s: is not writable" % path)
    return path


class _DirectoryLock:
    """Exclusive flock on a directory (held across scan + mkdir)."""

    def __init__(self, path):
        self.path = path
        self.fd = None

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDONLY)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)


class ExclusiveLock:
    """An flock on ``path`` held for a ``with`` block; taken at once or a one-line
    RunLockError saying what is busy (``what``) and which process holds it."""

    def __init__(self, path, what):
        self.path = path
        self.what = what
        self.handle = None

    def __enter__(self):
        from ansible_collections.perfscale.topsail.plugins.module_utils.errors import RunLockError

        handle = open(self.path, "a+", encoding="utf-8")  # pylint: disable=consider-using-with
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise RunLockError("%s is in use by %s" % (self.what, holder)) from None
        handle.seek(0)
        handle.truncate()
        handle.write("pid %d\n" % os.getpid())
        handle.flush()
        self.handle = handle
        return self

    def __exit__(self, *exc):
        try:
            os.unlink(self.path)
        except OSError:
            pass
        self.handle.close()


def index_digits(count):
    """Digits of the indexes of ``count`` directories made at once (at least ``INDEX_DIGITS``)."""
    return max(INDEX_DIGITS, len(str(max(count - 1, 0))))


def next_index(parent):
    highest = -1
    for entry in os.listdir(parent):
        match = INDEXED_NAME.match(entry)
        if match:
            highest = max(highest, int(match.group(1)))
    return highest + 1


def allocate_artifact_dir(parent, name, digits=INDEX_DIGITS):
    """Create and return ``parent/NNN__name`` with the next free index."""
    ensure_dir(parent)
    name = sanitize_name(name)
    with _DirectoryLock(parent):
        index = next_index(parent)
        path = os.path.join(parent, "%0*d__%s" % (digits, index, name))
        os.mkdir(path)
    return path


def find_artifact_dirs(parent, pattern):
    """Directories of ``parent`` matching a glob such as ``*__host__capture_environment``, in index order."""
    import fnmatch

    if not os.path.isdir(parent):
        return []
    found = []
    for entry in os.listdir(parent):
        if fnmatch.fnmatchcase(entry, pattern) and os.path.isdir(os.path.join(parent, entry)):
            match = INDEXED_NAME.match(entry)
            found.append(((int(match.group(1)) if match else -1, entry), os.path.join(parent, entry)))
    return [path for _key, path in sorted(found)]


def write_text_atomic(path, text, mode=0o644):
    """Write ``text`` to ``path`` via a temporary file and rename."""
    directory = os.path.dirname(os.path.abspath(path))
    ensure_dir(directory)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_text_if_changed(path, text):
    """Write ``text`` to ``path`` (whole) unless the file already holds it; the path when written."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return None
    except OSError:
        pass
    return write_text_atomic(path, text)


def to_plain(data):
    """Plain builtin types (Ansible wraps values in tagged subclasses that
    ``yaml.safe_dump`` refuses); unknown objects become their ``str``."""
    if data is None or type(data) in (str, int, float, bool):
        return data
    if isinstance(data, bool):
        return bool(data)
    if isinstance(data, int):
        return int(data)
    if isinstance(data, float):
        return float(data)
    if isinstance(data, str):
        return str(data)
    if isinstance(data, dict):
        return {to_plain(k): to_plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple, set, frozenset)):
        return [to_plain(v) for v in data]
    return str(data)


def dump_yaml(data):
    """YAML text of ``data``, with libyaml's emitter when PyYAML has it: five times less CPU than the
    pure-Python one on a list of pods, the artifacts of a capture (benchmarks/yaml_emitters.py), and
    it reads back to the same data (tests/unit/module_utils/test_artifacts.py); the text may differ in
    line folding, and a lone scalar has no ``...`` end marker."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(to_plain(data), Dumper=dumper, default_flow_style=False, sort_keys=False, allow_unicode=True)


def write_json_atomic(path, data):
    """Standard JSON only: NaN and Infinity are refused (ArtifactError), never written."""
    try:
        text = json.dumps(to_plain(data), indent=2, sort_keys=False, allow_nan=False)
    except ValueError as exc:
        raise ArtifactError("%s: not written: %s (use null for a missing number)" % (path, exc)) from None
    return write_text_atomic(path, text + "\n")


def write_yaml_atomic(path, data):
    return write_text_atomic(path, dump_yaml(data))


def serialize(relpath, content):
    """Text of a file: mappings/lists as JSON (``.json``) or YAML (``.yaml``/``.yml``)."""
    extension = os.path.splitext(relpath)[1].lower()
    if extension == ".json":
        return json.dumps(to_plain(content), indent=2) + "\n"
    if extension in (".yaml", ".yml"):
        return dump_yaml(content)
    if isinstance(content, (dict, list)):
        raise ArtifactError("file %s: structured content needs a .json, .yaml or .yml name" % relpath)
    text = "" if content is None else str(content)
    return text if text.endswith("\n") or not text else text + "\n"


def plan_files(dest, files):
    """Validate names and serialize every file before anything is written: [(path, text)]."""
    root = os.path.abspath(dest)
    planned = []
    for relpath, content in files.items():
        relpath = str(relpath)
        target = os.path.abspath(os.path.join(root, relpath))
        if os.path.isabs(relpath) or not target.startswith(root + os.sep):
            raise ArtifactError("file name %r must be a relative path inside %s" % (relpath, root))
        planned.append((target, serialize(relpath, content)))
    return planned


def write_planned(planned):
    """Write what ``plan_files`` planned (each file whole, via a temporary name)."""
    for target, text in planned:
        write_text_atomic(target, text)
    return [target for target, _text in planned]


def write_failure(directory, message):
    """Record a failure in ``directory/FAILURE`` (appends if already failed)."""
    path = os.path.join(directory, FAILURE_FILE)
    text = (message or "failed").rstrip() + "\n"
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            text = handle.read() + text
    return write_text_atomic(path, text)
