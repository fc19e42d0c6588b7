# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Multi-user scale tests (``local_ci run_multi``): the users' results and their summary.

The users are the pods of one Indexed Job (one completion index per user), each running
``multi_user_pod.py`` (barrier, own delay, the command, its report through the pod log).
Here, on the controller: each user's pod log is turned into ``NNN__user_<i>/`` (its
``user.json``, and its artifacts when they were retrieved), and the users into a summary:
success per user, start skew (the spread of the moments the users passed the barrier and
started their command), barrier wait and durations. It lives with the executors: a user's pod
sends its report back through its log in the kubernetes executor's archive (``pod_point.py``).
"""

from __future__ import annotations

import math
import os

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils import safe_paths
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import kubernetes as k8s_executor
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.multi_user_pod import USER_FILE

INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
SUMMARY_FILE = "multi_user_summary.json"
SUMMARY_TEXT = "multi_user_summary.txt"
EXIT_CODE_FILE = "exit_code"


def user_dir_name(index, count):
    return "%0*d__user_%d" % (artifacts.index_digits(count), index, index)


def _index(pod):
    try:
        return int(((pod.get("metadata") or {}).get("annotations") or {}).get(INDEX_ANNOTATION))
    except (TypeError, ValueError):
        return None


def latest_pod_per_user(pods):
    """{user index: its newest pod} (an index retried has several pods: the last one counts)."""
    latest = {}
    for pod in pods:
        index = _index(pod)
        if index is None:
            continue
        stamp = (pod.get("metadata") or {}).get("creationTimestamp") or ""
        if index not in latest or stamp >= ((latest[index].get("metadata") or {}).get("creationTimestamp") or ""):
            latest[index] = pod
    return latest


def pod_outcome(pod):
    """(exit code or None, one line) of a user pod from its status."""
    phase = (pod.get("status") or {}).get("phase")
    for status in (pod.get("status") or {}).get("containerStatuses") or ():
        terminated = (status.get("state") or {}).get("terminated")
        if terminated:
            return terminated.get("exitCode"), "%s (exit code %s)" % (terminated.get("reason") or phase,
                                                                      terminated.get("exitCode"))
    return None, "pod %s" % (phase or "without status")


def write_user(directory, index, pod, log):
    """Unpack a user's pod log into ``directory``; returns the user's record (``user.json`` plus
    what the controller saw: pod, phase, the archive's state)."""
    os.makedirs(directory, exist_ok=True)
    name = (pod.get("metadata") or {}).get("name")
    code, state = pod_outcome(pod)
    record = {"user_index": index, "pod": name, "pod_state": state, "exit_code": code, "error": None}
    if log is None:
        record["error"] = "its log could not be read (%s)" % state
    else:
        try:
            found = k8s_executor.parse_archive(log)
        except ValueError as exc:
            found, record["error"] = None, "its report is damaged: %s" % exc
        if found is None and record["error"] is None:
            record["error"] = "its log holds no report (%s)" % state
            artifacts.write_text_atomic(os.path.join(directory, "pod.log"), log[-20000:])
        elif found is not None:
            try:
                k8s_executor.extract_archive(found[1], directory)
            except (ValueError, OSError) as exc:
                record["error"] = "its report could not be unpacked: %s" % exc
            else:
                try:
                    user = read_json(os.path.join(directory, USER_FILE))
                    if not isinstance(user, dict):
                        raise ValueError("expected a JSON object")
                    record.update(user, pod=name, pod_state=state, user_index=index)
                except (OSError, ValueError) as exc:
                    record["error"] = "its %s is unreadable: %s" % (USER_FILE, exc)
            record["exit_code"] = found[0]
    record["succeeded"] = record["exit_code"] == 0 and not record["error"]
    artifacts.write_json_atomic(os.path.join(directory, USER_FILE), record)
    artifacts.write_text_atomic(os.path.join(directory, EXIT_CODE_FILE), "%s\n" % (
        record["exit_code"] if record["exit_code"] is not None else 1))
    if not record["succeeded"]:
        artifacts.write_failure(directory, "user %d: %s" % (index, record.get("error") or "exit code %s" % record["exit_code"]))
    return record


def collect_user(directory, index, pod, log, fetch=None):
    """One user's record, isolated from the others: whatever its pod's log or artifacts hold, an
    error makes this user failed with its reason (written in its directory when it can be) and
    never stops the collection of the others. ``fetch(directory, record)``: brings its artifacts."""
    try:
        record = write_user(directory, index, pod, log)
        return fetch(directory, record) if fetch is not None else record
    except (ValueError, OSError) as exc:
        reason = "its results could not be collected: %s" % (exc.strerror or exc if isinstance(exc, OSError) else exc)
        record = {"user_index": index, "pod": (pod.get("metadata") or {}).get("name"), "pod_state": None,
                  "exit_code": None, "error": reason, "succeeded": False}
        try:
            os.makedirs(directory, exist_ok=True)
            artifacts.write_failure(directory, "user %d: %s" % (index, reason))
        except OSError:
            pass  # the summary still names this user and its reason
        return record


def fetch_s3_artifacts(directory, record, client, bucket):
    """Bring a user's artifacts back from the S3 store (``artifacts_s3_key`` of its record) into its
    directory; every member is checked (a regular file inside the directory) before anything is
    written. Updates and returns the record (an error makes the user failed)."""
    import io
    import tarfile

    from ansible_collections.perfscale.topsail.plugins.module_utils.transfer.s3_client import S3Error

    key = record.get("artifacts_s3_key")
    if not key:
        return record
    try:
        data = client.get_object(bucket, key)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = tar.getmembers()
            safe_paths.check_tar_members(directory, members, "archive member")
            tar.extractall(directory, members=members, filter="data")
    except S3Error as exc:
        record["error"] = "its artifacts could not be downloaded: %s" % exc
    except (tarfile.TarError, EOFError, ValueError, OSError) as exc:
        record["error"] = "its artifacts archive %s is unusable: %s" % (key, exc)
    if record.get("error"):
        record["succeeded"] = False
        artifacts.write_failure(directory, "user %d: %s" % (record["user_index"], record["error"]))
    artifacts.write_json_atomic(os.path.join(directory, USER_FILE), record)
    return record


def read_json(path):
    import json

    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def _spread(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return round(max(values) - min(values), 3) if values else None


def _stats(values):
    values = sorted(v for v in values if isinstance(v, (int, float)))
    if not values:
        return None

    def rank(q):
        return values[min(len(values) - 1, max(0, int(math.ceil(q * len(values))) - 1))]

    return {"count": len(values), "min": round(values[0], 3), "median": round(rank(0.5), 3),
            "p90": round(rank(0.9), 3), "max": round(values[-1], 3)}


def summarize(records, user_count, need_all_success=False):
    """The test's summary over every user (``records``: {index: record}; a user without a record
    never ran) and its verdict: every user succeeded when ``need_all_success``, else at least one."""
    users = []
    for index in range(user_count):
        record = records.get(index) or {"user_index": index, "succeeded": False, "exit_code": None,
                                        "error": "no pod ran for this user"}
        users.append(record)
    succeeded = [u for u in users if u.get("succeeded")]
    failed = [u for u in users if not u.get("succeeded")]
    passed = [u.get("barrier_passed_at") for u in users]
    started = [u.get("started_at") for u in users]
    durations = [u["ended_at"] - u["started_at"] for u in users
                 if isinstance(u.get("ended_at"), (int, float)) and isinstance(u.get("started_at"), (int, float))]
    waits = [u["barrier_passed_at"] - u["ready_at"] for u in users
             if isinstance(u.get("barrier_passed_at"), (int, float)) and isinstance(u.get("ready_at"), (int, float))]
    ok = (len(failed) == 0) if need_all_success else bool(succeeded)
    return {
        "user_count": user_count,
        "succeeded": len(succeeded),
        "failed": len(failed),
        "success": {str(u["user_index"]): bool(u.get("succeeded")) for u in users},
        "failed_users": [{"user_index": u["user_index"], "exit_code": u.get("exit_code"), "error": u.get("error")}
                         for u in failed],
        "barrier": any(u.get("barrier") for u in users),
        "barrier_skew_s": _spread(passed),
        "start_skew_s": _spread(started),
        "barrier_wait_s": _stats(waits),
        "duration_s": _stats(durations),
        "need_all_success": need_all_success,
        "ok": ok,
    }


def summary_text(summary):
    lines = ["%d user(s): %d succeeded, %d failed (%s)" % (
        summary["user_count"], summary["succeeded"], summary["failed"],
        "every user must succeed" if summary["need_all_success"] else "at least one must succeed")]
    lines.append("barrier: %s; users passed it within %s s; started within %s s" % (
        "yes" if summary["barrier"] else "no", summary["barrier_skew_s"], summary["start_skew_s"]))
    for key in ("barrier_wait_s", "duration_s"):
        stats = summary[key]
        if stats:
            lines.append("%s: min %s, median %s, p90 %s, max %s"
                         % (key, stats["min"], stats["median"], stats["p90"], stats["max"]))
    for user in summary["failed_users"][:20]:
        lines.append("user %d failed: %s" % (user["user_index"], user["error"] or "exit code %s" % user["exit_code"]))
    if len(summary["failed_users"]) > 20:
        lines.append("... and %d more failed user(s)" % (len(summary["failed_users"]) - 20))
    return "\n".join(lines) + "\n"
