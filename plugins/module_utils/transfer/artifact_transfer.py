# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run's artifact tree to S3-compatible storage and back.

**Upload** (``export_artifacts``): every file of the run tree goes to
``s3://<bucket>/<path_prefix>/<run name>-<run id[:8]>/`` (the destination is fixed when the run
starts and recorded in ``run.json``, so the KPI documents carry it), in parallel, large files in
parts. It is resumable: the objects already in the bucket are listed and a file whose size and ETag
(its MD5, or the MD5 of its parts' MD5s) match is not sent again. Every request carries the
payload's SHA-256 (signed) and MD5 (checked by the store). A manifest
(``.perfscale_artifacts_manifest.json``: size, modification time and SHA-256 of every file) is
uploaded last: its presence says the upload is complete.

**Download** (``download.yml``): the manifest first, then the files a *mode* selects (a registry:
``all``, ``important``, ``prefer_cache``), each written to a temporary name, checked against the
manifest's SHA-256, given its original modification time and renamed: a file is there whole or not
at all. ``prefer_cache`` fetches the skeleton (the run's own files, every ``settings.yaml``, the
tests' ``exit_code`` and ``.uuid``) and the parse caches; a test whose cache is missing or stale
(another workload code, or a file it read that changed) gets its important files instead. The files
left in the bucket are recorded in ``.perfscale_download.json`` with their state, so the caches
that read them stay fresh (``results_tree.files_left_remote``).
"""

from __future__ import annotations

import concurrent.futures
import datetime
import fnmatch
import hashlib
import json
import os
import posixpath
import threading
import time

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree
from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import s3_client
from ansible_collections.perfscale.topsail.plugins.module_utils import safe_paths
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

MANIFEST_NAME = ".perfscale_artifacts_manifest.json"
MANIFEST_FORMAT = 1
# the local record of the last upload (status, counts): not uploaded itself
EXPORT_RECORD = "artifacts_export.json"
DOWNLOAD_RECORD = results_tree.DOWNLOAD_RECORD
# the local copy of the last manifest: its hashes are reused for files whose size and time did not change
LOCAL_MANIFEST = ".perfscale_artifacts_manifest.local.json"
PARTIAL_SUFFIX = ".perfscale-part"
# never uploaded: the run lock, this module's own records, half-downloaded files
NOT_UPLOADED = (".perfscale-run.lock", EXPORT_RECORD, LOCAL_MANIFEST, MANIFEST_NAME, DOWNLOAD_RECORD)
MIB = 1024 * 1024
# the largest object S3 stores (5 TiB): a manifest entry announcing more is refused
MAX_OBJECT_SIZE = 5 * 1024 * 1024 * MIB
SHA256_HEX = frozenset("0123456789abcdef")
# S3's smallest part (but the last)
MIN_PART_SIZE = 5 * MIB


class TransferError(PerfscaleError):
    """An upload or download that could not be done (one line, no secret in it)."""


class StoreUnreachable(Exception):
    """A file not sent because the store stopped answering for an earlier one."""


# --------------------------------------------------------------------------
# settings, destination, credentials


def run_name(run_root, run_id):
    return "%s-%s" % (artifacts.sanitize_name(os.path.basename(os.path.abspath(run_root))) or "run", (run_id or "")[:8])


def destination_url(section, run_root, run_id):
    """``s3://bucket/prefix/<run name>`` of an enabled ``export_artifacts`` section."""
    prefix = (section.get("path_prefix") or "").strip("/")
    key = posixpath.join(prefix, run_name(run_root, run_id)) if prefix else run_name(run_root, run_id)
    return "s3://%s/%s" % (section["bucket"], key)


def artifacts_destination(run_root, config):
    """None, or the function of the run id giving the run's ``s3://`` destination (export_artifacts):
    what ``run/context.run_info`` records in ``run.json`` as ``artifacts_url``."""
    if not isinstance(config.get("export_artifacts"), dict) or not config["export_artifacts"].get("enabled"):
        return None
    from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import section as export_artifacts_section

    section = export_artifacts_section.read(config)
    return lambda run_id: destination_url(section, run_root, run_id)


def parse_url(url):
    """(bucket, prefix) of ``s3://bucket/prefix``; anything else is one line."""
    text = str(url or "").strip()
    if not text.startswith("s3://") or not text[5:].split("/", 1)[0]:
        raise TransferError("url %r: expected s3://bucket/prefix (the artifacts_url of a run)" % (url,))
    bucket, _slash, prefix = text[5:].partition("/")
    return bucket, prefix.strip("/")


def read_url_file(path):
    """The URL a file holds (its first non-empty line; CI writes one next to its artifacts)."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = [line.strip() for line in handle if line.strip()]
    except OSError as exc:
        raise TransferError("url_file %s: %s" % (path, exc.strerror or exc)) from None
    if not lines:
        raise TransferError("url_file %s: empty; expected a line s3://bucket/prefix" % path)
    return lines[0]


def read_credentials(section, config, environ=None):
    """(access key id, secret access key) from the secrets directory's ``credentials_file``
    (a file name, or a secret reference ``secret:NAME`` as elsewhere in the configuration)."""
    name = section.get("credentials_file")
    if not name:
        raise TransferError("export_artifacts.credentials_file: missing; expected the name of a file of the secrets "
                            "directory holding access_key_id and secret_access_key")
    data = secret_refs.read_secret_mapping(config, name, environ,
                                           one_value_keys=("access_key_id", "secret_access_key")) or {}
    if not data.get("access_key_id") or not data.get("secret_access_key"):
        raise TransferError("secret %s (export_artifacts.credentials_file): expected YAML with access_key_id and "
                            "secret_access_key" % name)
    return str(data["access_key_id"]), str(data["secret_access_key"])


def make_client(section, config, environ=None):
    access_key, secret_key = read_credentials(section, config, environ)
    try:
        return s3_client.S3Client(section.get("endpoint_url"), access_key, secret_key,
                                  region=section.get("region") or "us-east-1", timeout=section.get("timeout_s") or 60)
    except s3_client.S3Error as exc:
        raise TransferError("export_artifacts.endpoint_url: %s" % exc) from None


# --------------------------------------------------------------------------
# hashing


def _hash_file(path, part_size):
    """(sha256, etag) of a file: the ETag S3 gives it when uploaded with ``part_size`` parts."""
    sha, md5, part_md5s, in_part = hashlib.sha256(), hashlib.md5(), [], 0  # nosec B324 - S3's ETag
    size = os.path.getsize(path)
    multipart = size > part_size
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(MIB), b""):
            sha.update(chunk)
            if not multipart:
                md5.update(chunk)
                continue
            while chunk:
                take = chunk[:part_size - in_part]
                md5.update(take)
                in_part += len(take)
                chunk = chunk[len(take):]
                if in_part == part_size:
                    part_md5s.append(md5.digest())
                    md5, in_part = hashlib.md5(), 0  # nosec B324
    if not multipart:
        return sha.hexdigest(), md5.hexdigest()
    if in_part:
        part_md5s.append(md5.digest())
    return sha.hexdigest(), "%s-%d" % (hashlib.md5(b"".join(part_md5s)).hexdigest(), len(part_md5s))  # nosec B324


def local_files(run_root):
    """{relative posix path: absolute path} of the run's files (links out of the tree are not followed)."""
    root_real = os.path.realpath(run_root)
    found = {}
    for directory, dirnames, filenames in os.walk(run_root):
        dirnames.sort()
        dirnames[:] = [d for d in dirnames if results_tree.within(os.path.join(directory, d), root_real)]
        for name in filenames:
            path = os.path.join(directory, name)
            if name in NOT_UPLOADED or name.endswith(PARTIAL_SUFFIX) or not os.path.isfile(path) \
                    or not results_tree.within(path, root_real):
                continue
            found[os.path.relpath(path, run_root).replace(os.sep, "/")] = path
    return found


def describe_files(run_root, part_size):
    """{relative path: {size, mtime_ns, sha256, etag}}; hashes of unchanged files come from the last upload."""
    try:
        with open(os.path.join(run_root, LOCAL_MANIFEST), encoding="utf-8") as handle:
            previous = json.load(handle)
        known = previous["files"] if previous.get("part_size") == part_size else {}
    except (OSError, ValueError, KeyError, AttributeError):
        known = {}
    described = {}
    for relative, path in local_files(run_root).items():
        stat = os.stat(path)
        entry = known.get(relative)
        if isinstance(entry, dict) and entry.get("size") == stat.st_size and entry.get("mtime_ns") == stat.st_mtime_ns:
            described[relative] = entry
            continue
        sha, etag = _hash_file(path, part_size)
        described[relative] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha, "etag": etag}
    return described


# --------------------------------------------------------------------------
# upload


def _upload_one(client, bucket, key, path, size, part_size):
    if size <= part_size:
        with open(path, "rb") as handle:
            return client.put_object(bucket, key, handle.read())

    def parts():
        with open(path, "rb") as handle:
            yield from iter(lambda: handle.read(part_size), b"")
    return client.put_multipart(bucket, key, parts())


def upload_tree(client, run_root, url, run_id=None, parallel=4, part_size=8 * MIB, clock=time.monotonic):
    """Upload what the bucket lacks of ``run_root``; returns a summary. A failure of some files
    leaves the others uploaded and the manifest absent (a re-run sends the rest)."""
    if part_size < MIN_PART_SIZE:
        raise TransferError("export_artifacts.part_size_mib: expected at least 5 (S3's smallest part)")
    bucket, prefix = parse_url(url)
    started = clock()
    files = describe_files(run_root, part_size)
    try:
        remote = client.list_objects(bucket, prefix + "/")
    except s3_client.S3Error as exc:
        raise TransferError("export_artifacts to %s: %s" % (url, exc)) from None
    pending = [relative for relative, entry in sorted(files.items())
               if (remote.get(prefix + "/" + relative) or {}).get("size") != entry["size"]
               or remote[prefix + "/" + relative]["etag"] != entry["etag"]]
    failures, sent, unreachable = [], 0, threading.Event()

    def upload(relative):
        # once the store cannot be reached (after the client's retries), the rest is not tried
        if unreachable.is_set():
            raise StoreUnreachable("not sent: the store could not be reached for an earlier file")
        try:
            return _upload_one(client, bucket, prefix + "/" + relative, os.path.join(run_root, relative),
                               files[relative]["size"], part_size)
        except s3_client.S3Error as exc:
            if exc.status is None:
                unreachable.set()
            raise

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, int(parallel))) as pool:
        futures = {pool.submit(upload, relative): relative for relative in pending}
        for future in concurrent.futures.as_completed(futures):
            relative = futures[future]
            try:
                etag = future.result()
            except (s3_client.S3Error, StoreUnreachable, OSError) as exc:
                failures.append("%s: %s" % (relative, exc))
                continue
            if etag and etag != files[relative]["etag"]:
                failures.append("%s: the store's checksum %s differs from the file's %s" % (
                    relative, etag, files[relative]["etag"]))
                continue
            sent += files[relative]["size"]
    summary = {"url": url, "files": len(files), "uploaded": len(pending) - len(failures),
               "already_there": len(files) - len(pending), "bytes_uploaded": sent,
               "bytes_total": sum(entry["size"] for entry in files.values()), "failed": sorted(failures)}
    if not failures:
        manifest = {"format": MANIFEST_FORMAT, "run_id": run_id, "part_size": part_size,
                    "uploaded": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "files": files}
        try:
            client.put_object(bucket, prefix + "/" + MANIFEST_NAME, json.dumps(manifest, sort_keys=True).encode())
        except s3_client.S3Error as exc:
            failures.append("%s: %s" % (MANIFEST_NAME, exc))
        else:
            artifacts.write_json_atomic(os.path.join(run_root, LOCAL_MANIFEST),
                                        {"part_size": part_size, "files": files})
    summary["failed"] = sorted(failures)
    summary["complete"] = not failures
    summary["seconds"] = round(clock() - started, 3)
    return summary


def write_export_record(run_root, summary):
    """The outcome of the last upload, in the run's metadata (``artifacts_export.json``)."""
    record = dict(summary, finished=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    artifacts.write_json_atomic(os.path.join(run_root, EXPORT_RECORD), record)
    return os.path.join(run_root, EXPORT_RECORD)


# --------------------------------------------------------------------------
# the remote tree, as the results walk sees a local one


class RemoteTree:
    """The manifest's files seen as a tree rooted at ``root`` (the local directory they go to)."""

    def __init__(self, root, files):
        self.root = os.path.abspath(root)
        self.files = files
        self.children = {}
        self.file_names = {}
        for relative in files:
            parts = relative.split("/")
            for depth in range(len(parts)):
                directory = os.path.join(self.root, *parts[:depth]) if depth else self.root
                if depth < len(parts) - 1:
                    self.children.setdefault(directory, set()).add(parts[depth])
                else:
                    self.file_names.setdefault(directory, set()).add(parts[depth])

    def relative(self, path):
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def listdir(self, path):
        path = os.path.abspath(path)
        return sorted(self.children.get(path, set()) | self.file_names.get(path, set()))

    def walk(self, top):
        """``os.walk`` over the manifest (top-down; editing ``dirnames`` prunes)."""
        top = os.path.abspath(top)
        dirnames = sorted(self.children.get(top, ()))
        yield top, dirnames, sorted(self.file_names.get(top, ()))
        for name in list(dirnames):
            yield from self.walk(os.path.join(top, name))

    def state(self, path):
        entry = self.files.get(self.relative(os.path.normpath(path)))
        return [entry["size"], entry["mtime_ns"]] if entry else None

    def test_roots(self):
        return results_tree.find_test_roots(self.root, walk=self.walk)

    def matching(self, pattern_path):
        """Relative paths of the files matching an absolute path that may hold globs."""
        pattern = self.relative(pattern_path)
        if not any(char in pattern for char in "*?["):
            return [pattern] if pattern in self.files else []
        return [relative for relative in self.files if fnmatch.fnmatchcase(relative, pattern)]

    def important_files(self, test_dir, workload, memo):
        """The workload's important files of one test, resolved as its parser would."""
        resolved = results_tree.resolve_artifact_paths(test_dir, self.root, workload.artifact_dirnames, memo,
                                                       listdir=self.listdir)
        found = set()
        for pattern in workload.important_files:
            head, _slash, rest = pattern.partition("/")
            if head in workload.artifact_dirnames:
                if not resolved.get(head):
                    continue
                base = resolved[head]
                target = os.path.join(base, rest) if rest else base
            else:
                target = os.path.join(test_dir, pattern)
            matches = self.matching(target)
            if not matches and not rest and head in workload.artifact_dirnames:
                # the key names a directory: all of it
                prefix = self.relative(target) + "/"
                matches = [relative for relative in self.files if relative.startswith(prefix)]
            found.update(matches)
        return found


# --------------------------------------------------------------------------
# download modes (a registry: each selects files in one or more rounds)


class DownloadPlan:
    """What a mode works with: the remote tree, the workload (and the Prometheus workload, whose
    captures are important files too), and ``fetch`` (download now)."""

    def __init__(self, tree, workload, fetch, prom_workload=None):
        self.tree = tree
        self.workload = workload
        self.prom_workload = prom_workload
        self.fetch = fetch
        self.notes = []
        self._captures = None

    def skeleton(self, roots):
        """The run's own files, every settings.yaml and skip file, and each test's identity."""
        names = {artifacts.SETTINGS_FILE, results_tree.SKIP_FILE}
        selected = {relative for relative in self.tree.files if "/" not in relative
                    or relative.rsplit("/", 1)[-1] in names}
        for root in roots:
            for name in (artifacts.EXIT_CODE_FILE, artifacts.UUID_FILE):
                relative = self.tree.relative(os.path.join(root, name))
                if relative in self.tree.files:
                    selected.add(relative)
        return selected

    def important(self, roots):
        memo, selected = {}, set()
        for root in roots:
            selected |= self.tree.important_files(root, self.workload, memo)
        return selected | self.prom_captures(roots)

    def prom_captures(self, roots):
        """The files of the Prometheus captures inside the given tests (what the prom workload reads)."""
        if self.prom_workload is None:
            return set()
        if self._captures is None:
            pattern = self.prom_workload.CAPTURE_DIR_GLOB
            self._captures = [relative for relative in self.tree.files
                              if any(fnmatch.fnmatchcase(part, pattern) for part in relative.split("/")[:-1])]
        prefixes = tuple("" if relative == "." else relative + "/" for relative in map(self.tree.relative, roots))
        return {relative for relative in self._captures if relative.startswith(prefixes)}


def mode_all(plan):
    plan.fetch(set(plan.tree.files))


def mode_important(plan):
    roots = plan.tree.test_roots()
    plan.fetch(plan.skeleton(roots) | plan.important(roots))


def mode_prefer_cache(plan):
    roots = plan.tree.test_roots()
    caches = {plan.tree.relative(os.path.join(root, results_tree.CACHE_FILE)) for root in roots}
    # the Prometheus captures have no parse cache: the prom workload reads them every time
    plan.fetch(plan.skeleton(roots) | (caches & set(plan.tree.files)) | plan.prom_captures(roots))
    fingerprint = results_tree.workload_fingerprint(plan.workload)
    # the store's own check, with the files' states as the manifest records them
    stale = [root for root in roots
             if results_tree.load_cache(root, fingerprint, [], stat=plan.tree.state, local_state=plan.tree.state) is None]
    if stale:
        plan.notes.append("%d test(s) without a usable parse cache (missing, or parsed by other workload code): "
                          "their important files were downloaded" % len(stale))
        plan.fetch(plan.important(stale))


DOWNLOAD_MODES = {
    "prefer_cache": mode_prefer_cache,
    "important": mode_important,
    "all": mode_all,
}


def mode_names():
    return sorted(DOWNLOAD_MODES)


# --------------------------------------------------------------------------
# download


class _HashingWriter:
    """Hashes what it writes, and stops an object that sends more bytes than its manifest entry says."""

    def __init__(self, handle, key, size):
        self.handle = handle
        self.key = key
        self.size = size
        self.written = 0
        self.digest = hashlib.sha256()

    def write(self, chunk):
        self.written += len(chunk)
        if self.written > self.size:
            raise TransferError("%s: more than the %d bytes of its manifest entry (changed in the bucket?)"
                                % (self.key, self.size))
        self.digest.update(chunk)
        self.handle.write(chunk)


def _download_one(client, bucket, key, path, entry):
    """Into a temporary name, checked, dated, renamed: whole or absent."""
    artifacts.ensure_dir(os.path.dirname(path))
    partial = path + PARTIAL_SUFFIX
    try:
        with open(partial, "wb") as handle:
            writer = _HashingWriter(handle, key, entry["size"])
            client.get_object_into(bucket, key, writer)
        if writer.digest.hexdigest() != entry["sha256"]:
            raise TransferError("%s: its SHA-256 differs from the manifest's (changed in the bucket?)" % key)
        os.utime(partial, ns=(entry["mtime_ns"], entry["mtime_ns"]))
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


def _is_downloaded(path, entry):
    try:
        stat = os.stat(path)
    except OSError:
        return False
    return stat.st_size == entry["size"] and stat.st_mtime_ns == entry["mtime_ns"]


def read_manifest(client, url):
    bucket, prefix = parse_url(url)
    try:
        manifest = json.loads(client.get_object(bucket, prefix + "/" + MANIFEST_NAME))
    except s3_client.S3Error as exc:
        if exc.status == 404:
            raise TransferError("url %s: no complete upload there (no %s: the export did not finish, or the prefix "
                                "is wrong)" % (url, MANIFEST_NAME)) from None
        raise TransferError("url %s: %s" % (url, exc)) from None
    except ValueError:
        raise TransferError("url %s: its %s is not JSON" % (url, MANIFEST_NAME)) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise TransferError("url %s: its %s has no file list" % (url, MANIFEST_NAME))
    return manifest


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _entry_problem(name, entry):
    """What is wrong with one manifest entry's own fields (its name is checked by ``safe_paths``)."""
    base = name.rsplit("/", 1)[-1] if isinstance(name, str) else ""
    if base in NOT_UPLOADED or base.endswith(PARTIAL_SUFFIX):
        return "a name the download keeps for itself"
    if not isinstance(entry, dict):
        return "not an object"
    size, mtime, sha = entry.get("size"), entry.get("mtime_ns"), entry.get("sha256")
    if not _whole(size) or not 0 <= size <= MAX_OBJECT_SIZE:
        return "size %r: expected a whole number of bytes up to %d" % (size, MAX_OBJECT_SIZE)
    if not _whole(mtime) or mtime < 0:
        return "mtime_ns %r: expected a whole number of nanoseconds" % (mtime,)
    if not isinstance(sha, str) or len(sha) != 64 or not set(sha) <= SHA256_HEX:
        return "sha256 %r: expected 64 lowercase hex digits" % (sha if not isinstance(sha, str) else sha[:80],)
    return None


def check_manifest(url, dest, files):
    """Every entry of a downloaded manifest, before anything is written: a safe relative name
    (``safe_paths``), not one of the download's own files, with its size, time and hash. One line
    naming the first refused entries otherwise."""
    problems = []
    for name in sorted(files, key=str):
        problem = _entry_problem(name, files[name])
        if problem:
            problems.append("%r (%s)" % (name if len(name) <= 80 else name[:77] + "...", problem))
    if problems:
        more = " and %d more" % (len(problems) - safe_paths.SHOWN) if len(problems) > safe_paths.SHOWN else ""
        raise TransferError("url %s: its %s has %d unusable entr(y/ies): %s%s; nothing was downloaded"
                            % (url, MANIFEST_NAME, len(problems), ", ".join(problems[:safe_paths.SHOWN]), more))
    try:
        safe_paths.check_names(dest, list(files), "manifest entry")
    except safe_paths.UnsafeName as exc:
        raise TransferError("url %s: its %s: %s" % (url, MANIFEST_NAME, exc)) from None


def _check_destination(dest, url):
    """A new or empty directory, or an earlier (maybe interrupted) download of the same url."""
    if not os.path.isdir(dest) or not os.listdir(dest):
        return
    try:
        with open(os.path.join(dest, DOWNLOAD_RECORD), encoding="utf-8") as handle:
            previous = json.load(handle).get("url")
    except (OSError, ValueError, AttributeError):
        previous = None
    if previous != url:
        raise TransferError("artifact_dir %s: not empty and not a download of %s; expected a new or empty directory"
                            % (dest, url))


def download_tree(client, url, dest, mode, workload, parallel=4, clock=time.monotonic, prom_workload=None):
    """Download the files ``mode`` selects into ``dest``; returns a summary. Resumes: a file already
    there in the manifest's size and time is not fetched again."""
    if mode not in DOWNLOAD_MODES:
        raise TransferError("mode %r: expected one of %s" % (mode, ", ".join(mode_names())))
    started = clock()
    bucket, prefix = parse_url(url)
    manifest = read_manifest(client, url)
    dest = os.path.abspath(dest)
    _check_destination(dest, url)
    check_manifest(url, dest, manifest["files"])
    tree = RemoteTree(dest, manifest["files"])
    record = {"url": url, "mode": mode, "run_id": manifest.get("run_id"), "complete": False}
    # written first, so that an interrupted download is resumed into the same directory
    artifacts.write_json_atomic(os.path.join(dest, DOWNLOAD_RECORD), record)
    done = set()
    counts = {"downloaded": 0, "bytes_downloaded": 0, "already_there": 0}

    def fetch(relatives):
        todo = []
        for relative in sorted(set(relatives) - done):
            entry = tree.files[relative]
            done.add(relative)
            if _is_downloaded(os.path.join(dest, relative), entry):
                counts["already_there"] += 1
            else:
                todo.append(relative)
        failures = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, int(parallel))) as pool:
            futures = {pool.submit(_download_one, client, bucket, prefix + "/" + relative, os.path.join(dest, relative),
                                   tree.files[relative]): relative for relative in todo}
            for future in concurrent.futures.as_completed(futures):
                relative = futures[future]
                try:
                    future.result()
                except (s3_client.S3Error, TransferError, OSError) as exc:
                    failures.append("%s: %s" % (relative, exc))
                    continue
                counts["downloaded"] += 1
                counts["bytes_downloaded"] += tree.files[relative]["size"]
        if failures:
            raise TransferError("download of %s: %d file(s) failed, first: %s (re-run to resume)"
                                % (url, len(failures), sorted(failures)[0]))

    plan = DownloadPlan(tree, workload, fetch, prom_workload)
    DOWNLOAD_MODES[mode](plan)
    left = {relative: [entry["size"], entry["mtime_ns"]] for relative, entry in tree.files.items()
            if relative not in done}
    artifacts.write_json_atomic(os.path.join(dest, DOWNLOAD_RECORD), dict(record, complete=True, left_remote=left))
    return dict(counts, url=url, mode=mode, artifact_dir=dest, files=len(tree.files), left_remote=len(left),
                bytes_total=sum(entry["size"] for entry in tree.files.values()), notes=plan.notes,
                seconds=round(clock() - started, 3))
