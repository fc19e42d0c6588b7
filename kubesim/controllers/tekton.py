"""Tekton Pipelines (tekton.dev/v1): PipelineRun and TaskRun, executed by Tekton's rules.

PipelineRun (``spec.pipelineSpec``, or ``spec.pipelineRef`` to a Pipeline of its namespace):

- a pipeline task starts once every task of its ``runAfter`` has finished; when one of them
  failed (or was skipped), it is skipped (``status.skippedTasks``), as Tekton does;
- a task with a ``matrix`` fans out into one TaskRun per combination, all created at once:
  the cartesian product of ``matrix.params``, then each ``matrix.include`` entry (one that names
  only parameters outside ``matrix.params`` adds them to every combination; else it is a
  combination of its own); TaskRuns are ``<run>-<task>`` (``-<i>`` per combination);
- ``$(params.NAME)`` in task parameters is the PipelineRun's parameter (or the default);
  in ``finally`` tasks, ``$(tasks.NAME.status)`` is ``Succeeded``, ``Failed`` or ``None``;
- the ``finally`` tasks start when every other task finished or was skipped; the run is then
  ``Succeeded`` (reason ``Succeeded``, or ``Completed`` with skipped tasks) or ``Failed``.

TaskRun (``spec.taskSpec`` or ``spec.taskRef`` to a Task): its pod ``<taskrun>-pod`` has one
container ``step-<name>`` per step (parameters and ``$(results.NAME.path)`` substituted; the
first container is what kubesim runs, locally with ``kubesim.perfscale.io/run-local: "true"``);
the TaskRun's (hence the PipelineRun's) ``kubesim.perfscale.io/*`` annotations go to the pod.
It succeeds when the pod does, or when the step failed with ``onError: continue`` (its exit
code stays in ``status.steps``), as Tekton does.

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``tekton-pipelinerun``: tektoncd/pipeline @ 3ee1745ae5b2d9175b11917d7c1935eaad44910c; files:
  pkg/reconciler/pipelinerun/pipelinerun.go, timeout.go, pkg/reconciler/pipelinerun/resources/pipelinerunstate.go,
  pkg/apis/pipeline/v1/pipelinerun_defaults.go, pipelinerun_validation.go, config/config-defaults.yaml.
- ``tekton-taskrun``: tektoncd/pipeline @ 3ee1745ae5b2d9175b11917d7c1935eaad44910c; files:
  pkg/reconciler/taskrun/taskrun.go, pkg/pod/status.go, pkg/apis/pipeline/v1/taskrun_defaults.go.
"""

import itertools
import re

from kubesim.errors import ApiError

from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import (condition, create_or_skip, new_pod, owner_reference, pod_phase, set_condition,
                                      since, steering_annotations)

PIPELINERUNS = ("tekton.dev", "pipelineruns")
PIPELINES = ("tekton.dev", "pipelines")
TASKRUNS = ("tekton.dev", "taskruns")
TASKS = ("tekton.dev", "tasks")
PODS = ("", "pods")
PARAM = re.compile(r"\$\(params\.([A-Za-z0-9_.-]+)\)")
TASK_STATUS = re.compile(r"\$\(tasks\.([A-Za-z0-9_.-]+)\.status\)")
RESULT_PATH = re.compile(r"\$\(results\.([A-Za-z0-9_.-]+)\.path\)")
RESULTS_DIR = "tekton-results"


DEFAULT_TIMEOUT = "1h0m0s"   # config/config-defaults.yaml default-timeout-minutes: "60"
DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
WEBHOOK = 'admission webhook "validation.webhook.pipeline.tekton.dev" denied the request: validation failed: '


def parse_duration(text):
    """Seconds of a Go duration (``1h0m0s``, ``90m``, ``0``, ``0s``); ValueError otherwise."""
    text = str(text).strip()
    if text in ("0", "0s"):
        return 0.0
    parts = DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError("time: invalid duration %r" % text)
    return sum(float(n) * DURATION_UNITS[u] for n, u in parts)


def format_duration(seconds):
    """A Go ``time.Duration.String()`` of whole seconds: ``1h0m0s``, ``30m0s``, ``45s``, ``0s``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return "%ds" % seconds
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return ("%dh%dm%ds" % (hours, minutes, secs)) if hours else "%dm%ds" % (minutes, secs)


def tekton_admission(cluster, resource, old, new):
    """Tekton's webhook: defaults (``spec.timeouts.pipeline`` / ``spec.timeout`` to the 60-minute default) and
    the validation of a PipelineRun's ``spec.timeouts`` (pkg/apis/pipeline/v1/pipelinerun_defaults.go,
    taskrun_defaults.go, pipelinerun_validation.go), as the admission webhook answers it (400)."""
    if resource.group != "tekton.dev" or resource.plural not in ("pipelineruns", "taskruns"):
        return
    spec = new.setdefault("spec", {})
    if resource.plural == "taskruns":
        spec.setdefault("timeout", DEFAULT_TIMEOUT)
        return
    timeouts = spec.setdefault("timeouts", {})
    timeouts.setdefault("pipeline", DEFAULT_TIMEOUT)
    problems = []
    values = {}
    for key in ("pipeline", "tasks", "finally"):
        if key not in timeouts:
            continue
        try:
            values[key] = parse_duration(timeouts[key])
        except ValueError as exc:
            problems.append("invalid value: %s: spec.timeouts.%s" % (exc, key))
            continue
        if values[key] < 0:
            problems.append("invalid value: %s should be >= 0: spec.timeouts.%s" % (timeouts[key], key))
    pipeline = values.get("pipeline")
    if pipeline is not None and pipeline > 0:
        for key in ("tasks", "finally"):
            if key in values and values[key] == 0:
                problems.append("invalid value: 0s (no timeout) should be <= pipeline duration: spec.timeouts.%s" % key)
            elif key in values and values[key] > pipeline:
                problems.append("invalid value: %s should be <= pipeline duration: spec.timeouts.%s"
                                % (format_duration(values[key]), key))
        if "tasks" in values and "finally" in values and values["tasks"] + values["finally"] > pipeline:
            for key in ("finally", "tasks"):
                problems.append("invalid value: %s + %s should be <= pipeline duration: spec.timeouts.%s" % (
                    format_duration(values["tasks"]), format_duration(values["finally"]), key))
    if problems:
        raise ApiError.bad_request(WEBHOOK + "\n".join(problems))


def substitute(value, pattern, values):
    """``value`` with ``pattern``'s references replaced from ``values`` (unknown ones kept)."""
    if isinstance(value, str):
        return pattern.sub(lambda m: str(values.get(m.group(1), m.group(0))), value)
    if isinstance(value, list):
        return [substitute(v, pattern, values) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, pattern, values) for k, v in value.items()}
    return value


def fan_out(task):
    """The parameter sets of a pipeline task's TaskRuns (Tekton's matrix rules)."""
    base = {p["name"]: p.get("value") for p in task.get("params") or ()}
    matrix = task.get("matrix") or {}
    if not matrix:
        return [base]
    names = [p["name"] for p in matrix.get("params") or ()]
    combinations = [dict(zip(names, values)) for values in itertools.product(*[p["value"] for p in matrix.get("params")])] \
        if names else []
    extra = []
    for entry in matrix.get("include") or ():
        params = {p["name"]: p.get("value") for p in entry.get("params") or ()}
        if combinations and not set(params) & set(names):
            for combination in combinations:
                combination.update(params)
        else:
            extra.append(params)
    return [dict(base, **c) for c in combinations + extra]


def _finished(obj):
    found = condition(obj, "Succeeded")
    return found is not None and found.get("status") in ("True", "False")


def _succeeded(obj):
    found = condition(obj, "Succeeded")
    return found is not None and found.get("status") == "True"


class _TektonV1(OperatorReconciler):
    """Reads and writes the v1 version of the kind (the CRDs also serve v1beta1)."""

    @property
    def resource(self):
        return self.cluster.registry.get(self.key[0], "v1", self.key[1]) or self.cluster.resource_for_key(self.key)


class PipelineRunController(_TektonV1):
    name = "tekton-pipelinerun"
    key = PIPELINERUNS
    default_delay = 0.0
    extra_watches = (TASKRUNS,)

    def related(self, event):
        run = ((event.obj.get("metadata") or {}).get("labels") or {}).get("tekton.dev/pipelineRun")
        return [r for r in self.all_refs(event.obj["metadata"].get("namespace")) if r.name == run] if run else []

    def _spec(self, run):
        spec = run.get("spec") or {}
        if spec.get("pipelineSpec"):
            return spec["pipelineSpec"], None
        name = (spec.get("pipelineRef") or {}).get("name")
        pipeline = self.cluster.store.get(PIPELINES, run["metadata"]["namespace"], name) if name else None
        if pipeline is None:
            return None, "Pipeline %s/%s can't be found" % (run["metadata"]["namespace"], name)
        return pipeline.get("spec") or {}, None

    def _timeouts(self, run):
        """``(pipeline, tasks)`` seconds (0: none) of ``spec.timeouts`` (defaulted at admission)."""
        timeouts = (run.get("spec") or {}).get("timeouts") or {}
        values = []
        for key in ("pipeline", "tasks"):
            try:
                values.append(parse_duration(timeouts[key]) if key in timeouts else 0.0)
            except ValueError:
                values.append(0.0)
        return tuple(values)

    def _cancel_children(self, run, taskruns, message):
        """Every unfinished TaskRun of the run: ``spec.status: TaskRunCancelled`` (timeout.go)."""
        resource = self.cluster.registry.get("tekton.dev", "v1", "taskruns")
        for taskrun in taskruns:
            if _finished(taskrun) or (taskrun.get("spec") or {}).get("status") == "TaskRunCancelled":
                continue

            def cancel(obj):
                obj["spec"]["status"] = "TaskRunCancelled"
                obj["spec"]["statusMessage"] = message
            self.cluster.mutate(resource, taskrun["metadata"]["namespace"], taskrun["metadata"]["name"], cancel)

    def sync(self, ref, run):
        if _finished(run):
            return None
        now = self.clock.timestamp()
        started = (run.get("status") or {}).get("startTime")
        elapsed = since(started, self.clock) if started else 0.0
        pipeline_timeout, tasks_timeout = self._timeouts(run)
        if pipeline_timeout and elapsed >= pipeline_timeout:
            taskruns = [t for t in self.cluster.store.list(TASKRUNS, ref.namespace)[0]
                        if (t["metadata"].get("labels") or {}).get("tekton.dev/pipelineRun") == ref.name]
            self._cancel_children(run, taskruns, "TaskRun cancelled as the PipelineRun it belongs to has timed out.")
            return self._finish(ref, now, False, "PipelineRunTimeout", 'PipelineRun "%s" failed to finish within "%s"' % (
                ref.name, run["spec"]["timeouts"]["pipeline"]), [], [])
        spec, error = self._spec(run)
        if error:
            return self._finish(ref, now, False, "CouldntGetPipeline", error, [], [])
        params = {p["name"]: p.get("default") for p in spec.get("params") or () if "default" in p}
        params.update({p["name"]: p.get("value") for p in (run.get("spec") or {}).get("params") or ()})
        taskruns = [t for t in self.cluster.store.list(TASKRUNS, ref.namespace)[0]
                    if (t["metadata"].get("labels") or {}).get("tekton.dev/pipelineRun") == ref.name]
        by_task = {}
        for taskrun in taskruns:
            by_task.setdefault(taskrun["metadata"]["labels"].get("tekton.dev/pipelineTask"), []).append(taskrun)

        def state(name):
            runs = by_task.get(name) or []
            if not runs or not all(_finished(r) for r in runs):
                return None
            return "Succeeded" if all(_succeeded(r) for r in runs) else "Failed"

        tasks = spec.get("tasks") or []
        skipped = {s["name"] for s in (run.get("status") or {}).get("skippedTasks") or ()}
        for task in tasks:
            name = task["name"]
            if name in by_task or name in skipped:
                continue
            after = task.get("runAfter") or ()
            if any(dep in skipped or state(dep) == "Failed" for dep in after):
                skipped.add(name)
            elif all(state(dep) == "Succeeded" for dep in after):
                self._create(run, task, "tasks", substitute(fan_out(task), PARAM, params))
        tasks_timed_out = bool(tasks_timeout) and elapsed >= tasks_timeout
        if tasks_timed_out:
            dag = [r for name in (t["name"] for t in tasks) for r in by_task.get(name) or ()]
            self._cancel_children(run, dag, "TaskRun cancelled as the PipelineRun it belongs to has timed out.")
            for task in tasks:
                if task["name"] not in by_task:
                    skipped.add(task["name"])
        done = all(t["name"] in skipped or state(t["name"]) for t in tasks)
        finally_tasks = spec.get("finally") or []
        if done:
            statuses = {t["name"]: "None" if t["name"] in skipped else state(t["name"]) for t in tasks}
            for task in finally_tasks:
                if task["name"] not in by_task:
                    combos = substitute(substitute(fan_out(task), PARAM, params), TASK_STATUS, statuses)
                    self._create(run, task, "finally", combos)
        all_done = done and all(state(t["name"]) for t in finally_tasks)
        children = sorted(t["metadata"]["name"] for t in taskruns)

        def change(status, _obj):
            status.setdefault("startTime", now)
            status["childReferences"] = [{"apiVersion": "tekton.dev/v1", "kind": "TaskRun", "name": name,
                                          "pipelineTaskName": next(t["metadata"]["labels"]["tekton.dev/pipelineTask"]
                                                                   for t in taskruns if t["metadata"]["name"] == name)}
                                         for name in children]
            status["skippedTasks"] = [{"name": n, "reason": "Parent Tasks were skipped or failed"} for n in sorted(skipped)]
            if not status.get("conditions"):
                status["conditions"] = set_condition([], "Succeeded", "Unknown", "Running", "Tasks Completed: 0", now=now)
        self.write_status(ref, change)
        if all_done:
            failed = [t["name"] for t in tasks + finally_tasks if state(t["name"]) == "Failed"]
            reason = "Failed" if failed else ("Completed" if skipped else "Succeeded")
            message = "Tasks Completed: %d (Failed: %d, Cancelled 0), Skipped: %d" % (
                len(tasks) + len(finally_tasks) - len(skipped), len(failed), len(skipped))
            if tasks_timed_out:
                reason, message = "PipelineRunTimeout", 'PipelineRun "%s" failed due to tasks failed to finish within ' \
                    '"%s"' % (ref.name, run["spec"]["timeouts"]["tasks"])
            return self._finish(ref, now, not failed and not tasks_timed_out, reason, message, children, skipped)
        remaining = [limit - elapsed for limit in (pipeline_timeout, tasks_timeout) if limit and limit > elapsed]
        return min(remaining) if remaining else None

    def _finish(self, ref, now, ok, reason, message, children, skipped):
        def change(status, _obj):
            status.setdefault("startTime", now)
            status["completionTime"] = now
            status["conditions"] = set_condition(status.get("conditions"), "Succeeded", "True" if ok else "False",
                                                 reason, message, now=now)
        self.write_status(ref, change)
        return None

    def _create(self, run, task, member_of, combinations):
        meta = run["metadata"]
        resource = self.cluster.registry.get("tekton.dev", "v1", "taskruns")
        for index, combination in enumerate(combinations):
            name = "%s-%s" % (meta["name"], task["name"]) + ("-%d" % index if task.get("matrix") else "")
            spec = {"params": [{"name": k, "value": v} for k, v in combination.items()]}
            if task.get("taskSpec"):
                spec["taskSpec"] = task["taskSpec"]
            else:
                spec["taskRef"] = dict(task.get("taskRef") or {})
            if (run.get("spec") or {}).get("taskRunTemplate", {}).get("serviceAccountName"):
                spec["serviceAccountName"] = run["spec"]["taskRunTemplate"]["serviceAccountName"]
            body = {"apiVersion": "tekton.dev/v1", "kind": "TaskRun",
                    "metadata": {"name": name[:63].rstrip("-"), "namespace": meta["namespace"],
                                 "labels": dict(meta.get("labels") or {}, **{
                                     "tekton.dev/pipelineRun": meta["name"], "tekton.dev/pipelineTask": task["name"],
                                     "tekton.dev/memberOf": member_of}),
                                 "annotations": steering_annotations(run),
                                 "ownerReferences": [owner_reference(run)]},
                    "spec": spec}
            create_or_skip(self.cluster, resource, body, meta["namespace"])


class TaskRunController(_TektonV1):
    name = "tekton-taskrun"
    key = TASKRUNS
    default_delay = 0.0
    extra_watches = (PODS,)

    def related(self, event):
        taskrun = ((event.obj.get("metadata") or {}).get("labels") or {}).get("tekton.dev/taskRun")
        return [r for r in self.all_refs(event.obj["metadata"].get("namespace")) if r.name == taskrun] if taskrun else []

    def _task_spec(self, taskrun):
        spec = taskrun.get("spec") or {}
        if spec.get("taskSpec"):
            return spec["taskSpec"], None
        name = (spec.get("taskRef") or {}).get("name")
        task = self.cluster.store.get(TASKS, taskrun["metadata"]["namespace"], name) if name else None
        if task is None:
            return None, "Task %s/%s can't be found" % (taskrun["metadata"]["namespace"], name)
        return task.get("spec") or {}, None

    def sync(self, ref, taskrun):
        if _finished(taskrun):
            return None
        now = self.clock.timestamp()
        task, error = self._task_spec(taskrun)
        if error:
            return self._status(ref, now, "False", "TaskRunResolutionFailed", error)
        params = {p["name"]: p.get("default") for p in task.get("params") or () if "default" in p}
        params.update({p["name"]: p.get("value") for p in (taskrun.get("spec") or {}).get("params") or ()})
        missing = [p["name"] for p in task.get("params") or () if p["name"] not in params]
        if missing:
            return self._status(ref, now, "False", "TaskRunValidationFailed",
                                "missing parameters: %s" % ", ".join(sorted(missing)))
        steps = task.get("steps") or []
        pod_name = (ref.name + "-pod")[:63]
        spec = taskrun.get("spec") or {}
        started = (taskrun.get("status") or {}).get("startTime")
        elapsed = since(started, self.clock) if started else 0.0
        try:
            timeout = parse_duration(spec.get("timeout", DEFAULT_TIMEOUT))
        except ValueError:
            timeout = 0.0
        if spec.get("status") == "TaskRunCancelled":
            self._delete_pod(ref.namespace, pod_name)
            return self._status(ref, now, "False", "TaskRunCancelled", ('TaskRun "%s" was cancelled. %s' % (
                ref.name, spec.get("statusMessage") or "")).strip(), done=True)
        if timeout and started and elapsed >= timeout:
            self._delete_pod(ref.namespace, pod_name)
            return self._status(ref, now, "False", "TaskRunTimeout", 'TaskRun "%s" failed to finish within "%s"' % (
                ref.name, spec.get("timeout", DEFAULT_TIMEOUT)), done=True)
        left = (timeout - elapsed) if timeout else None
        pod = self.cluster.store.get(PODS, ref.namespace, pod_name)
        if pod is None:
            self._create_pod(taskrun, task, params, pod_name)
            self._status(ref, now, "Unknown", "Pending", "Pending", pod_name=pod_name)
            return left
        phase = pod_phase(pod)
        if phase == "Pending":
            reason, message, final = self._pending_reason(pod)
            self._status(ref, now, "False" if final else "Unknown", reason, message, pod_name=pod_name, done=final)
            return None if final else left
        if phase == "Running":
            self._status(ref, now, "Unknown", "Running", "Not all Steps in the Task have finished executing",
                         pod_name=pod_name)
            return left
        code = None
        for container in (pod.get("status") or {}).get("containerStatuses") or ():
            terminated = (container.get("state") or {}).get("terminated")
            if terminated:
                code = terminated.get("exitCode")
        if code is None:
            code = 0 if phase == "Succeeded" else 1
        step_name = steps[0].get("name", "step") if steps else "step"
        step_states = [{"name": step_name, "container": "step-%s" % step_name, "terminated": {"exitCode": code}}]
        if phase == "Succeeded" or (steps and steps[0].get("onError") == "continue"):
            return self._status(ref, now, "True", "Succeeded", "All Steps have completed executing", pod_name=pod_name,
                                steps=step_states, done=True)
        return self._status(ref, now, "False", "StepFailed", '"step-%s" exited with code %s' % (
            step_states[0]["name"], code), pod_name=pod_name, steps=step_states, done=True)

    def _delete_pod(self, namespace, name):
        from kubesim.controllers.util import delete_quietly
        delete_quietly(self.cluster, self.cluster.resource_for_key(PODS), namespace, name)

    @staticmethod
    def _pending_reason(pod):
        """``(reason, message, final)`` of a TaskRun whose pod is Pending (pkg/pod/status.go): an image that
        cannot be pulled ends it (TaskRunImagePullFailed, the default image pull back-off timeout being 0); a
        pod the scheduler cannot place for lack of resources is ExceededNodeResources, still going."""
        status = pod.get("status") or {}
        for item in status.get("containerStatuses") or ():
            waiting = (item.get("state") or {}).get("waiting") or {}
            reason = waiting.get("reason")
            if reason in ("ImagePullBackOff", "InvalidImageName"):
                return ("TaskRunImagePullFailed", 'the step "%s" in TaskRun "%s" failed to pull the image "%s". The pod '
                        'errored with the message: "%s."' % (item.get("name", "").replace("step-", "", 1),
                                                            (pod["metadata"].get("labels") or {}).get("tekton.dev/taskRun"),
                                                            item.get("image"), waiting.get("message")), True)
            if reason == "ErrImagePull":
                return "PullImageFailed", 'build step "%s" is pending with reason "%s"' % (
                    item.get("name"), waiting.get("message")), False
            if reason and reason not in ("ContainerCreating", "PodInitializing"):
                return "Pending", 'build step "%s" is pending with reason "%s"' % (item.get("name"),
                                                                                 waiting.get("message") or reason), False
        for item in status.get("conditions") or ():
            if item.get("type") == "PodScheduled" and item.get("status") == "False":
                if "Insufficient" in str(item.get("message")):
                    return "ExceededNodeResources", "TaskRun Pod exceeded available resources", False
                return "Pending", 'pod status "PodScheduled":"False"; message: "%s"' % item.get("message"), False
        return "Pending", "Pending", False

    def _create_pod(self, taskrun, task, params, pod_name):
        # a result file is relative to the step's working directory (a real pod has /tekton/results)
        results = {r["name"]: "%s/%s" % (RESULTS_DIR, r["name"]) for r in task.get("results") or ()}
        steps = task.get("steps") or []
        containers = []
        for step in steps:
            container = {"name": "step-%s" % step.get("name", "step"), "image": step.get("image", "busybox")}
            for key in ("command", "args", "env", "workingDir"):
                if key in step:
                    container[key] = substitute(substitute(step[key], PARAM, params), RESULT_PATH, results)
            if step.get("script") and "command" not in container:
                container["command"] = ["/bin/sh", "-c", substitute(step["script"], PARAM, params)]
            if step.get("computeResources"):
                container["resources"] = step["computeResources"]
            containers.append(container)
        meta = taskrun["metadata"]
        labels = dict(meta.get("labels") or {}, **{"tekton.dev/taskRun": meta["name"], "app.kubernetes.io/managed-by":
                                                   "tekton-pipelines"})
        containers = containers or [{"name": "step-none", "image": "busybox"}]
        template = {"metadata": {"labels": labels, "annotations": steering_annotations(taskrun)},
                    "spec": {"restartPolicy": "Never", "containers": containers}}
        if (taskrun.get("spec") or {}).get("serviceAccountName"):
            template["spec"]["serviceAccountName"] = taskrun["spec"]["serviceAccountName"]
        body = new_pod(template, taskrun, meta["namespace"], name=pod_name)
        create_or_skip(self.cluster, self.cluster.resource_for_key(PODS), body, meta["namespace"])

    def _status(self, ref, now, status_value, reason, message, pod_name=None, steps=None, done=False):
        def change(status, _obj):
            status.setdefault("startTime", now)
            if pod_name:
                status["podName"] = pod_name
            if steps is not None:
                status["steps"] = steps
            if done:
                status["completionTime"] = now
            status["conditions"] = set_condition(status.get("conditions"), "Succeeded", status_value, reason, message,
                                                 now=now)
        self.write_status(ref, change)
        return None
