# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ``k8s_read`` and ``k8s_wait`` tasks do, wherever they run (``k8s_capture``: kube/capture.py).

Each task runs either as its module (a process of its own on the target host, which imports the
Kubernetes client at every call) or, when the target is the controller itself, inside its action
plugin (plugins/plugin_utils/kube_action.py): the same function below does the work in both, given the
task's validated arguments and a function that makes kubernetes.core's ``K8sService`` (called once the
arguments are known to be right, so a wrong argument is said before any connection is tried).

A task that fails raises ``TaskFailed`` carrying the result to return (its ``msg`` and what was found
until then); kubernetes.core's ``CoreException`` (no kubeconfig, a client that cannot be built) passes
through, for the caller to report as kubernetes.core does.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import reads, waits
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.query import FetchError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import Target, WaitError, wait_for
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.several import wait_for_all, waits_from

# the tasks' own arguments (their modules and action plugins add kubernetes.core's AUTH_ARG_SPEC)
READ_ARGS = dict(queries=dict(type="dict", required=True))
WAIT_ARGS = dict(
    judge=dict(type="str"),
    namespace=dict(type="str"),
    name=dict(type="str"),
    label_selectors=dict(type="list", elements="str", default=[]),
    options=dict(type="dict", default={}),
    timeout=dict(type="float", default=600),
    delay=dict(type="float", default=5),
    fail_on_timeout=dict(type="bool", default=True),
    waits=dict(type="list", elements="dict"),
)


class TaskFailed(Exception):
    """The task failed: ``result`` is what it returns (``msg`` and what it found until then)."""

    def __init__(self, msg, **extra):
        super().__init__(msg)
        self.result = dict(extra, msg=msg)


def read_task(params, make_service):
    """k8s_read: every query's objects (``resources``), whether its kind is served (``api_found``) and the
    logs of the queries that ask for them."""
    try:
        queries = {key: reads.query_from(key, spec) for key, spec in params["queries"].items()}
        with_logs = [key for key, spec in params["queries"].items() if reads.wants_logs(key, spec)]
    except ValueError as exc:
        raise TaskFailed("k8s_read: %s" % exc) from None
    resources, api_found, logs, log_errors = {}, {}, {}, {}
    try:
        svc = make_service()
        for key, query in queries.items():
            found = reads.read(svc, query)
            api_found[key] = found is not None
            resources[key] = found[0] if found is not None else []
        for key in with_logs:
            logs[key], log_errors[key] = reads.pod_logs(svc, resources[key])
    except FetchError as exc:
        raise TaskFailed("k8s_read: %s" % exc, resources=resources, api_found=api_found) from None
    return dict(changed=False, resources=resources, api_found=api_found, logs=logs, log_errors=log_errors)


def _one_wait(params, make_service):
    if not params["judge"]:
        raise WaitError("k8s_wait: judge: missing; expected the judge of the wait (or waits, each with its judge)")
    judge = waits.judge(params["judge"])
    target = Target(params["namespace"], params["name"], params["label_selectors"], params["options"])
    judge.check(target)
    queries = judge.queries(target)
    reader = reads.ApiReader(make_service(), queries.get("subject"))
    result = wait_for(judge, target, reader.fetch, params["timeout"], params["delay"],
                      watch=reader.watch if reader.subject is not None else None)
    return result, dict(result.as_dict(), changed=False, resources=result.found)


def _several_waits(params, make_service):
    given = [key for key in ("name", "label_selectors") if params[key]]
    if given:
        raise WaitError("k8s_wait: %s: not with waits; expected each wait to name its objects" % ", ".join(given))
    entries = waits_from(params["waits"], params["judge"], params["namespace"], params["options"])
    reader = reads.ApiReader(make_service(), None)
    result = wait_for_all(entries, reader.fetch, params["timeout"], params["delay"], watch=reader.watch_any)
    each = [dict(wait.as_dict(), judge=judge.name, msg=wait.message(params["timeout"]), resources=wait.found)
            for (judge, _target), wait in zip(entries, result.results)]
    return result, dict(result.as_dict(), changed=False, resources={}, waits=each)


def wait_task(params, make_service):
    """k8s_wait: wait for one judge's verdict (or several, ``waits``); a timeout or a failed verdict fails the
    task unless ``fail_on_timeout`` is false."""
    try:
        result, out = _several_waits(params, make_service) if params["waits"] is not None \
            else _one_wait(params, make_service)
    except PerfscaleError as exc:
        raise TaskFailed(str(exc)) from None
    out["msg"] = result.message(params["timeout"])
    if result.state != waits.base.READY and params["fail_on_timeout"]:
        raise TaskFailed(**out)
    return out
