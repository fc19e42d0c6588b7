# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The entry of a matrix point's pod (the kubernetes executor), run as a script.

``python -S -P pod_point.py ARGV...`` (the container's ``command`` and ``args``)
runs the point's command ``ARGV`` in a fresh working directory, as the local
executor does: its stdout and stderr go to ``stdout.log`` / ``stderr.log``
there. When it ends, the directory comes back to the controller through the
pod log, one file after another, each zlib-compressed in base64 lines::

    PERFSCALE-POINT-ARCHIVE-BEGIN <exit code> <files>
    PERFSCALE-POINT-FILE <path, base64> <bytes> <crc32>
    ...
    PERFSCALE-POINT-ARCHIVE-END

The pod exits with the command's exit code (so the Job is Complete or Failed).
Files that would push the archive past ``PERFSCALE_POINT_ARCHIVE_LIMIT`` bytes
(counted before compression; smallest files first) are left out and listed in
``executor-skipped-files.txt``. The command runs in this process's group;
SIGTERM (the Job deleted, its deadline passed) is passed on to the group.

It runs before every point, so it imports as little as it can (a point's
overhead is mostly Python's start-up): no subprocess, tarfile, json or signal
module, only built-in ones.
"""

from __future__ import annotations

import binascii
import os
import sys
import time
import zlib

try:
    import _signal as signals  # the C module: ``signal`` imports enum, half of this script's start-up
except ImportError:  # another Python implementation
    import signal as signals

LIMIT_ENV = "PERFSCALE_POINT_ARCHIVE_LIMIT"
WORKDIR_ENV = "PERFSCALE_POINT_WORKDIR"
BEGIN = "PERFSCALE-POINT-ARCHIVE-BEGIN"
FILE = "PERFSCALE-POINT-FILE"
END = "PERFSCALE-POINT-ARCHIVE-END"
SKIPPED_FILE = "executor-skipped-files.txt"
DEFAULT_LIMIT = 8 * 1024 * 1024
LINE_BYTES = 57  # 76 base64 characters per line


def encode_path(relative):
    return binascii.b2a_base64(relative.encode("utf-8"), newline=False).decode("ascii")


def point_files(directory):
    """(size, relative path) of the regular files under ``directory``."""
    found = []
    for root, _dirs, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found.append((os.path.getsize(path), os.path.relpath(path, directory)))
    return found


def select_files(files, limit):
    """The relative paths that fit in ``limit`` bytes (smallest first) and those left out."""
    kept, skipped, total = [], [], 0
    for size, relative in sorted(files):
        if total + size <= limit:
            kept.append(relative)
            total += size
        else:
            skipped.append(relative)
    return sorted(kept), sorted(skipped)


def write_file_entry(stream, relative, data):
    stream.write("%s %s %d %d\n" % (FILE, encode_path(relative), len(data), zlib.crc32(data)))
    packed = zlib.compress(data, 6)
    for start in range(0, len(packed), LINE_BYTES):
        stream.write(binascii.b2a_base64(packed[start:start + LINE_BYTES]).decode("ascii"))


def write_archive(stream, exit_code, directory, limit):
    """Write ``directory``'s files to ``stream`` as a point archive; the paths left out."""
    kept, skipped = select_files(point_files(directory), limit)
    stream.write("%s %d %d\n" % (BEGIN, exit_code, len(kept) + (1 if skipped else 0)))
    for relative in kept:
        with open(os.path.join(directory, relative), "rb") as handle:
            write_file_entry(stream, relative, handle.read())
    if skipped:
        write_file_entry(stream, SKIPPED_FILE, ("\n".join(skipped) + "\n").encode("utf-8"))
    stream.write(END + "\n")
    stream.flush()
    return skipped


def run(argv, workdir):
    """Run ``argv`` in ``workdir`` (in this process's group, SIGTERM passed on); its exit code."""
    os.chdir(workdir)
    stdout = os.open("stdout.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    stderr = os.open("stderr.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        # in this process's group: whoever stops the pod's process group (kubesim) stops the
        # command's whole tree too
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, stdout, 1), (os.POSIX_SPAWN_DUP2, stderr, 2)])
    except OSError as exc:
        os.write(stderr, ("pod_point: %s could not be started: %s\n" % (argv[0], exc.strerror or exc)).encode())
        return 127
    finally:
        os.close(stdout)
        os.close(stderr)

    def forward(signum, _frame):
        # a kubelet signals only the container's first process: pass it on to the group
        signals.signal(signum, signals.SIG_IGN)
        try:
            os.killpg(os.getpgrp(), signum)
        except (ProcessLookupError, PermissionError):
            pass

    signals.signal(signals.SIGTERM, forward)
    _pid, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def remove_tree(directory):
    for root, dirs, names in os.walk(directory, topdown=False):
        for name in names:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            path = os.path.join(root, name)
            if os.path.islink(path):
                os.unlink(path)
            else:
                os.rmdir(path)
    os.rmdir(directory)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.stderr.write("pod_point: no command (usage: pod_point.py COMMAND [ARGUMENT...])\n")
        return 2
    try:
        limit = int(os.environ.get(LIMIT_ENV, DEFAULT_LIMIT))
    except ValueError:
        sys.stderr.write("pod_point: %s=%r: expected a number of bytes\n" % (LIMIT_ENV, os.environ[LIMIT_ENV]))
        return 2
    parent = os.environ.get(WORKDIR_ENV) or os.environ.get("TMPDIR") or "/tmp"
    workdir = os.path.join(parent, "perfscale-point-%d-%d" % (os.getpid(), time.time_ns()))
    os.makedirs(workdir)
    try:
        started = time.monotonic()
        code = run(argv, workdir)
        sys.stdout.write("pod_point: %s exited with %d after %.3f s\n"
                         % (os.path.basename(argv[0]), code, time.monotonic() - started))
        skipped = write_archive(sys.stdout, code, workdir, limit)
        if skipped:
            sys.stderr.write("pod_point: left out (over %d bytes): %s\n" % (limit, ", ".join(skipped)))
        return code
    finally:
        os.chdir(parent)
        remove_tree(workdir)


if __name__ == "__main__":
    raise SystemExit(main())
