# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tekton executor: the whole matrix as a Tekton v1 PipelineRun (``module_utils/matrix/tekton_pipeline.py``).

It runs no point itself (a ``WholeMatrixExecutor``: the runner's ``run`` hands it the matrix):
``render`` writes ``task.yaml`` (the Task running one point) and
``pipelinerun.yaml`` (the PipelineRun embedding the Pipeline) into the matrix directory, both
validated strictly first (the CRDs, and the embedded Pipeline against Tekton's v1 OpenAPI
definitions), for ``kubectl create -f`` on a cluster with Tekton.

With ``tests.benchmark.tekton.apply``, ``run_rendered`` also applies the Task, creates the
PipelineRun on the cluster (the inventory's ``driver``/``sutest`` group, as the kubernetes
executor), follows it, and brings every TaskRun's point back: its pod log names the point
(``PERFSCALE-POINT <index> <directory>``) and carries its directory as an archive, unpacked into
the point's directory and finished as a local point is (``output.json`` or ``FAILURE``,
``point.json``, ``exit_code``). The PipelineRun's final status is kept as ``pipelinerun-status.yaml``.
"""

from __future__ import annotations

import os
import sys
import time
import uuid

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import tekton_pipeline as tekton
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import MatrixError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import base
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import kubernetes as k8s
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.kubernetes import CONTROLLER_COLLECTION
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import validation

PIPELINERUN_FILE = "pipelinerun.yaml"
TASK_FILE = "task.yaml"
STATUS_FILE = "pipelinerun-status.yaml"
GROUP, VERSION = "tekton.dev", "v1"
POLL_S = 0.5

# the defaults of tests.benchmark.tekton (benchmark/section.benchmark_model has the same)
DEFAULTS = {"namespace": "perfscale-benchmark", "image": "quay.io/perfscale/topsail:latest", "python": None,
            "collection_path": None, "service_account": None, "resources": {}, "unroll": [], "parallelism": None,
            "apply": False, "cluster": "driver", "annotations": {}}


def check(obj, validator):
    problems = validation.validate_pipelinerun(obj, validator=validator) if obj["kind"] == "PipelineRun" \
        else validator.validate(obj) + validator.validate_definition(obj["spec"], "v1.TaskSpec", "spec", kind=obj["kind"],
                                                                     name=obj["metadata"]["name"])
    if problems:
        raise MatrixError("tekton: the rendered %s is invalid: %s" % (obj["kind"], "; ".join(str(p) for p in problems)))


class TektonExecutor(base.WholeMatrixExecutor):
    name = "tekton"
    description = "The whole matrix as a Tekton PipelineRun (pipelinerun.yaml in the matrix directory); runs nothing here"

    def __init__(self, section, settings=None, connection=None, base_env=None):
        self.section = section
        self.settings = dict(DEFAULTS, **(settings or {}))
        self.connection = dict(connection or {})
        self.base_env = dict(os.environ if base_env is None else base_env)

    @classmethod
    def from_section(cls, section, base_env=None, connections=None):
        settings = dict(DEFAULTS, **(section.get("tekton") or {}))
        return cls(section, settings, connection=(connections or {}).get(settings["cluster"]), base_env=base_env)

    def render(self, points, matrix_dir):
        """Write task.yaml and pipelinerun.yaml for ``points`` into ``matrix_dir``; what was written."""
        names = tekton.setting_names(points)
        task = tekton.render_task(self.settings, names, self.settings.get("python") or sys.executable,
                                  self.settings.get("collection_path") or CONTROLLER_COLLECTION)
        run = tekton.render_pipelinerun(self.section, points, self.settings)
        if self.settings.get("annotations"):
            run["metadata"]["annotations"] = dict(self.settings["annotations"])
        validator = validation.OpenAPIDefinitionsValidator()
        check(task, validator)
        check(run, validator)
        paths = {"task": os.path.join(matrix_dir, TASK_FILE), "pipelinerun": os.path.join(matrix_dir, PIPELINERUN_FILE)}
        artifacts.write_yaml_atomic(paths["task"], task)
        artifacts.write_yaml_atomic(paths["pipelinerun"], run)
        return dict(paths, pipeline_tasks=len(run["spec"]["pipelineSpec"]["tasks"]))

    # -- apply: run the PipelineRun on the cluster and bring the points back

    def run_rendered(self, points, matrix_dir, harness, rendered):
        """With ``apply``: create and follow the PipelineRun, then finish each point it ran.
        Returns the matrix summary (None without ``apply``: the PipelineRun is only written)."""
        if not self.settings["apply"]:
            return None
        from kubernetes import client

        api_client = k8s.api_client_for(self.connection, self.base_env)
        core, custom = client.CoreV1Api(api_client), client.CustomObjectsApi(api_client)
        namespace = self.settings["namespace"]
        task = _load(rendered["task"])
        run = _load(rendered["pipelinerun"])
        try:
            k8s.ensure_namespace(core, namespace)
            self._apply_task(custom, task)
            created = custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "pipelineruns", run)
        except k8s.client_errors() as exc:
            raise MatrixError("tekton: the PipelineRun could not be created in %s: %s" % (namespace, k8s.api_error(exc))) \
                from None
        name = created["metadata"]["name"]
        final = self._follow(custom, name, len(points))
        artifacts.write_yaml_atomic(os.path.join(matrix_dir, STATUS_FILE), final)
        return self._collect(core, custom, name, points, harness, final)

    def _apply_task(self, custom, task):
        from kubernetes.client.exceptions import ApiException

        namespace, name = task["metadata"]["namespace"], task["metadata"]["name"]
        try:
            existing = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "tasks", name)
        except ApiException as exc:
            if exc.status != 404:
                raise
            custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "tasks", task)
            return
        task["metadata"]["resourceVersion"] = existing["metadata"]["resourceVersion"]
        custom.replace_namespaced_custom_object(GROUP, VERSION, namespace, "tasks", name, task)

    def _follow(self, custom, name, count):
        """Wait until the PipelineRun ends (at most the matrix's deadline, its ``spec.timeouts.pipeline``,
        plus the time Tekton takes to say so); past that it is cancelled. Its final object."""
        namespace = self.settings["namespace"]
        deadline = time.monotonic() + tekton.matrix_deadline_s(self.section, count) + tekton.TASK_MARGIN_S
        while True:
            run = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "pipelineruns", name)
            conditions = (run.get("status") or {}).get("conditions") or []
            if conditions and conditions[0].get("status") in ("True", "False"):
                return run
            if time.monotonic() > deadline:
                custom.patch_namespaced_custom_object(GROUP, VERSION, namespace, "pipelineruns", name,
                                                      {"spec": {"status": "Cancelled"}})
                return run
            time.sleep(POLL_S)

    def _collect(self, core, custom, name, points, harness, final):
        namespace = self.settings["namespace"]
        by_index = {p.index: p for p in points}
        taskruns = custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "taskruns",
                                                        label_selector="tekton.dev/pipelineRun=%s" % name)["items"]
        finished, failed = set(), []
        for taskrun in taskruns:
            if (taskrun["metadata"].get("labels") or {}).get("tekton.dev/memberOf") != "tasks":
                continue
            status = taskrun.get("status") or {}
            pod = status.get("podName")
            if not pod:
                continue
            try:
                log = core.read_namespaced_pod_log(pod, namespace, _preload_content=False).data.decode("utf-8", "replace")
            except k8s.client_errors():
                continue
            header = [line.split() for line in log.splitlines() if line.startswith("PERFSCALE-POINT ")]
            if not header or len(header[0]) != 3 or not header[0][1].isdigit() or int(header[0][1]) not in by_index:
                continue
            point = by_index[int(header[0][1])]
            outcome = self._finish_point(point, taskrun, log, harness)
            finished.add(point.name)
            if not outcome.ok:
                failed.append({"name": point.name, "directory": point.directory, "exit_code": outcome.exit_code,
                               "error": outcome.error})
        not_run = [p.name for p in points if p.name not in finished]
        reason = ((final.get("status") or {}).get("conditions") or [{}])[0].get("reason")
        return {"total": len(points), "done": len(finished), "succeeded": len(finished) - len(failed),
                "failed": len(failed), "skipped": 0, "not_run": len(not_run), "not_run_points": not_run,
                "failed_points": failed, "pipelinerun": name, "pipelinerun_reason": reason, "abandoned": False}

    def _finish_point(self, point, taskrun, log, harness):
        status = taskrun.get("status") or {}
        started, ended = status.get("startTime"), status.get("completionTime")
        details = {"name": self.name, "namespace": self.settings["namespace"], "taskrun": taskrun["metadata"]["name"],
                   "pod": status.get("podName")}
        artifacts.write_text_atomic(os.path.join(point.directory, artifacts.UUID_FILE), str(uuid.uuid4()) + "\n")
        duration = _seconds_between(started, ended)
        try:
            found = k8s.parse_archive(log)
            if found is None:
                raise ValueError("its log holds no point archive")
            code, files = found
            k8s.extract_archive(files, point.directory)
        except (ValueError, OSError) as exc:
            execution = base.Execution(base.EXIT_BAD_OUTPUT, duration, details=details,
                                       error="TaskRun %s/%s: %s" % (details["namespace"], details["taskrun"], exc))
        else:
            execution = base.Execution(code, duration, details=details, error=None if code == 0 else
                                       "harness exited with %d (TaskRun %s/%s)" % (code, details["namespace"],
                                                                                   details["taskrun"]))
        return matrix_lib.record_outcome(point, execution, harness, self.section, {"started": started, "ended": ended})


def _load(path):
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _seconds_between(start, end):
    import datetime

    try:
        parse = [datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ") for t in (start, end)]
    except (TypeError, ValueError):
        return 0.0
    return max(0.0, (parse[1] - parse[0]).total_seconds())
