# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The entry of a user pod of a multi-user scale test (``local_ci run_multi``), run as a script.

``python -S -P multi_user_pod.py`` in each pod of the test's Indexed Job:

1. **Barrier**: with a Redis server (``PERFSCALE_MULTI_REDIS=host:port``), the pod counts itself
   ready (``INCR <key>:ready``); the last one to arrive pushes one token per user onto
   ``<key>:go`` and every pod takes one (``BLPOP``): all users pass together, once all are
   running. Without Redis there is no barrier (each user starts when its pod does). A barrier
   not passed within ``PERFSCALE_MULTI_BARRIER_TIMEOUT_S`` ends the pod (exit 124).
2. **Own delay**: user ``i`` waits ``(i // user_batch_size) * sleep_factor`` seconds (users start
   in batches, one batch every ``sleep_factor`` seconds).
3. **Abort**: with ``abort_on_failure``, a user that fails sets ``<key>:abort``; a user that
   sees it before starting does not start (exit 3).
4. **The command**: ``PERFSCALE_MULTI_COMMAND`` runs with ``sh -c`` in a fresh directory (its
   stdout and stderr in ``stdout.log`` / ``stderr.log``), with ``USER_INDEX``, ``USER_COUNT``
   and ``ARTIFACT_DIR`` (that directory) in its environment.
5. **Report**: ``user.json`` (index, exit code, when it was ready, passed the barrier, started and
   ended) and, with ``PERFSCALE_MULTI_RETRIEVE_ARTIFACTS=1``, the whole directory, go back to the
   controller through the pod log in the point-archive format of ``executors/pod_point.py``. With
   an S3 store (``PERFSCALE_MULTI_S3_ENDPOINT``, ``_S3_BUCKET``, ``_S3_PREFIX``, ``_S3_ACCESS_KEY``,
   ``_S3_SECRET_KEY``: MinIO from ``server deploy_minio_s3_server``) the directory is uploaded there
   instead, as ``<prefix>/user_<i>.tar.gz``, and ``user.json`` names it.

It imports the standard library only (the user's image needs nothing else).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sys
import time

PREFIX = "PERFSCALE_MULTI_"
USER_FILE = "user.json"
EXIT_BARRIER_TIMEOUT = 124
EXIT_ABORTED = 3
KEY_TTL_S = 86400


def _sibling(relative, name):
    """A module of the collection beside this script, loaded by path (no package to import)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), relative)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pod_point():
    return _sibling(os.path.join(os.pardir, "executors", "pod_point.py"), "perfscale_pod_point")


def _s3_client():
    return _sibling(os.path.join(os.pardir, "transfer", "s3_client.py"), "perfscale_s3_client")


class RedisError(Exception):
    pass


class Redis:
    """The few Redis commands the barrier needs, over RESP."""

    def __init__(self, address, timeout):
        host, _colon, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise RedisError("%sREDIS=%r: expected host:port" % (PREFIX, address))
        self.sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
        self.reader = self.sock.makefile("rb")

    def command(self, *parts, timeout=None):
        payload = [b"*%d\r\n" % len(parts)]
        for part in parts:
            data = str(part).encode("utf-8")
            payload.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.sock.settimeout(timeout)
        self.sock.sendall(b"".join(payload))
        return self._reply()

    def _reply(self):
        line = self.reader.readline()
        if not line:
            raise RedisError("the Redis server closed the connection")
        kind, rest = line[:1], line[1:].rstrip(b"\r\n")
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RedisError(rest.decode("utf-8", "replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            if size < 0:
                return None
            data = self.reader.read(size + 2)[:size]
            return data.decode("utf-8", "replace")
        if kind == b"*":
            size = int(rest)
            return None if size < 0 else [self._reply() for _item in range(size)]
        raise RedisError("unexpected Redis reply %r" % line[:40])

    def close(self):
        self.reader.close()
        self.sock.close()


def _env(name, default=None):
    return os.environ.get(PREFIX + name, default)


def settings_from_env():
    index = _env("USER_INDEX") or os.environ.get("JOB_COMPLETION_INDEX") or "0"
    return {
        "index": int(index),
        "count": int(_env("USER_COUNT", "1")),
        "command": _env("COMMAND", ""),
        "redis": _env("REDIS") or None,
        "key": _env("BARRIER_KEY", "perfscale-multi"),
        "barrier_timeout_s": float(_env("BARRIER_TIMEOUT_S", "600")),
        "sleep_factor": float(_env("SLEEP_FACTOR", "0")),
        "batch_size": max(1, int(_env("USER_BATCH_SIZE", "1"))),
        "abort_on_failure": _env("ABORT_ON_FAILURE", "0") == "1",
        "retrieve_artifacts": _env("RETRIEVE_ARTIFACTS", "0") == "1",
        "s3": {key: _env("S3_" + key.upper()) for key in ("endpoint", "bucket", "prefix", "access_key", "secret_key")}
        if _env("S3_ENDPOINT") else None,
    }


def upload_artifacts(settings, workdir):
    """The user's directory as ``<prefix>/user_<i>.tar.gz`` in the S3 store; its key."""
    import io
    import tarfile

    s3 = settings["s3"]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for root, _dirs, names in os.walk(workdir):
            for name in sorted(names):
                path = os.path.join(root, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    tar.add(path, arcname=os.path.relpath(path, workdir), recursive=False)
    key = "%s/user_%d.tar.gz" % ((s3.get("prefix") or "perfscale").strip("/"), settings["index"])
    client = _s3_client()
    try:
        client.S3Client(s3["endpoint"], s3.get("access_key") or "", s3.get("secret_key") or "").put_object(
            s3["bucket"], key, buffer.getvalue())
    except client.S3Error as exc:
        raise OSError("its artifacts could not be uploaded: %s" % exc) from None
    return key


def own_delay(settings):
    return (settings["index"] // settings["batch_size"]) * settings["sleep_factor"]


def barrier(redis, settings):
    """Wait until every user is ready; True when passed, False on timeout."""
    ready_key, go_key = settings["key"] + ":ready", settings["key"] + ":go"
    arrived = redis.command("INCR", ready_key)
    redis.command("EXPIRE", ready_key, KEY_TTL_S)
    if arrived == settings["count"]:
        redis.command("RPUSH", go_key, *(["go"] * settings["count"]))
        redis.command("EXPIRE", go_key, KEY_TTL_S)
    timeout = settings["barrier_timeout_s"]
    # BLPOP's own timeout is whole seconds; the socket's is a little longer
    reply = redis.command("BLPOP", go_key, max(1, int(timeout + 0.999)), timeout=timeout + 5)
    return reply is not None


def run_user(settings, workdir, pod_point):
    """Barrier, delay, command; returns (exit code, user record)."""
    record = {"user_index": settings["index"], "user_count": settings["count"], "ready_at": time.time(),
              "barrier": bool(settings["redis"]), "barrier_passed_at": None, "started_at": None, "ended_at": None,
              "delay_s": own_delay(settings), "exit_code": None, "aborted": False, "error": None}
    redis = None
    try:
        if settings["redis"]:
            redis = Redis(settings["redis"], timeout=30)
            if not barrier(redis, settings):
                record.update(exit_code=EXIT_BARRIER_TIMEOUT, error="the barrier was not passed within %s s (not every "
                              "user became ready)" % settings["barrier_timeout_s"])
                return EXIT_BARRIER_TIMEOUT, record
        record["barrier_passed_at"] = time.time()
        time.sleep(record["delay_s"])
        if redis is not None and settings["abort_on_failure"] and redis.command("GET", settings["key"] + ":abort"):
            record.update(exit_code=EXIT_ABORTED, aborted=True, error="not started: another user failed "
                                                                      "(abort_on_failure)")
            return EXIT_ABORTED, record
        os.environ.update(USER_INDEX=str(settings["index"]), USER_COUNT=str(settings["count"]), ARTIFACT_DIR=workdir)
        record["started_at"] = time.time()
        code = pod_point.run(["sh", "-c", settings["command"]], workdir)
        record.update(ended_at=time.time(), exit_code=code)
        if code != 0:
            record["error"] = "the command exited with %d" % code
            if redis is not None and settings["abort_on_failure"]:
                redis.command("SET", settings["key"] + ":abort", settings["index"], "EX", KEY_TTL_S)
        return code, record
    except (OSError, RedisError, ValueError) as exc:
        record.update(exit_code=1, error="%s: %s" % (type(exc).__name__, exc))
        return 1, record
    finally:
        if redis is not None:
            redis.close()


def main():
    try:
        settings = settings_from_env()
    except ValueError as exc:
        sys.stderr.write("multi_user_pod: %s\n" % exc)
        return 2
    if not settings["command"]:
        sys.stderr.write("multi_user_pod: %sCOMMAND is empty: nothing to run\n" % PREFIX)
        return 2
    pod_point = _pod_point()
    parent = os.environ.get("TMPDIR") or "/tmp"
    stamp = "%d-%d" % (os.getpid(), time.time_ns())
    workdir = os.path.join(parent, "perfscale-user-%s" % stamp)
    report = os.path.join(parent, "perfscale-user-report-%s" % stamp)
    os.makedirs(workdir)
    os.makedirs(report)
    try:
        code, record = run_user(settings, workdir, pod_point)
        through_s3 = settings["retrieve_artifacts"] and settings["s3"] is not None
        if through_s3:
            try:
                record["artifacts_s3_key"] = upload_artifacts(settings, workdir)
            except OSError as exc:
                record["error"] = str(exc)
                code = code or 1
        target = workdir if settings["retrieve_artifacts"] and not through_s3 else report
        with open(os.path.join(target, USER_FILE), "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        sys.stdout.write("multi_user_pod: user %d exited with %s\n" % (settings["index"], record["exit_code"]))
        pod_point.write_archive(sys.stdout, code, target,
                                int(os.environ.get(pod_point.LIMIT_ENV, pod_point.DEFAULT_LIMIT)))
        return code
    finally:
        os.chdir(parent)
        pod_point.remove_tree(workdir)
        pod_point.remove_tree(report)


if __name__ == "__main__":
    raise SystemExit(main())
