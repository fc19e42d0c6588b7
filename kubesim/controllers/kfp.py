"""Kubeflow Pipelines v2 on a DSPA: the API server's REST API and the Argo Workflows its runs become.

The API server (``ds-pipeline-NAME``, port 8888, reached through the API server's service or pod
proxy) is served in kubesim's process (:class:`KfpApi`), one store per DSPA, as KFP's v2beta1 REST
API answers (backend/api/v2beta1/*.proto, backend/src/apiserver/server/*_server.go):

- JSON with proto field names (snake_case), empty fields left out, unknown fields refused (400,
  ``googleRpcStatus`` ``{code, message, details}``), timestamps RFC 3339;
- ``GET healthz``; pipelines: ``POST pipelines/upload`` (multipart field ``uploadfile``, query
  ``name``, ``display_name``, ``description``: a pipeline and its first version) and
  ``POST pipelines/upload_version`` (query ``pipelineid``, ``name``), whose errors are the upload
  server's ``{error_message, error_details}``; ``POST pipelines`` (a pipeline alone), ``GET pipelines``,
  ``GET pipelines/names/{name}``, ``GET pipelines/{id}``, ``GET pipelines/{id}/versions``; an existing
  name is 409; a spec without ``pipelineInfo.name``, ``root.dag`` or an executor for each task is 400;
- experiments: ``POST experiments`` (a display name taken in the namespace is 409), ``GET experiments``
  with KFP's filter (``{"predicates": [{"key": "display_name", "operation": "EQUALS",
  "string_value": ...}]}``), ``GET experiments/{id}``;
- runs: ``POST runs`` stores the run ``PENDING`` (``created_at`` = ``scheduled_at``, ``finished_at``
  the epoch, one ``state_history`` entry) and creates its Argo Workflow; ``GET runs/{id}``,
  ``GET runs`` (``experiment_id``). The persistence agent copies each workflow change into its run:
  ``Running`` -> ``RUNNING``, ``Succeeded`` -> ``SUCCEEDED``, ``Failed``/``Error`` -> ``FAILED``,
  ``finished_at`` from the workflow's ``finishedAt``, a ``state_history`` entry per new state.

A plain-HTTP request to the API server while ``podToPodTLS`` is on (the default) is answered as a Go
TLS server answers one: 400 "Client sent an HTTP request to an HTTPS server.".

The Workflow of a run (argoproj.io/v1alpha1, :class:`ArgoWorkflowController`, as KFP's argo compiler
writes it and Argo's workflow controller runs it): ``generateName`` the pipeline's name, label
``pipeline/runid``, annotation ``pipelines.kubeflow.org/run_name`` (the run's display name), pod
metadata ``pipelines.kubeflow.org/v2_component``; templates ``entrypoint`` (a DAG running ``root``), ``root``
(the pipeline's DAG, one task per pipeline task with its ``dependencies``) and
``system-container-impl``. Argo: phase unset until the controller takes the workflow, then
``Running`` (``startedAt``, nodes ``<wf>`` (template ``entrypoint``) and ``<wf>.root`` (template
``root``) Running); a pod per task once its dependencies succeeded (``<wf>-system-container-impl-
<fnv32a>``, labels ``workflows.argoproj.io/workflow``, ``workflows.argoproj.io/completed``,
annotation ``workflows.argoproj.io/node-name``), its node Pending -> Running -> Succeeded/Failed
with the pod; a failed pod's node message ``Error (exit code N)``; ``progress`` "done/total"; at the end
``Succeeded`` (or ``Failed`` once no task runs: a DAG's failure has no workflow message),
``finishedAt``, condition ``Completed``, labels ``workflows.argoproj.io/phase`` and
``workflows.argoproj.io/completed: "true"``; the persistence agent then labels it
``pipeline/persistedFinalState: "true"``. What a task's pod does is kubesim's pod model (its
image's behaviours: duration, outcome, log).

Simplified: one Pod node per task (KFP has a driver pod and an executor DAG whose pod runs the
component), no launcher, no artifacts, MLMD or object store; nested DAGs
(``ParallelFor``, sub-pipelines) and recurring runs are not modelled (a spec with a nested DAG is
refused with a message saying so); no auth (single-user mode, as through the service's http port).

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``argo-workflow``: kubeflow/pipelines @ 7b70c7b95f6832772efd6fd0029a4024491a0f44; files:
  backend/api/v2beta1/run.proto, backend/api/v2beta1/pipeline.proto, backend/api/v2beta1/experiment.proto,
  backend/src/apiserver/resource/resource_manager.go, backend/src/v2/compiler/argocompiler/argo.go,
  backend/src/apiserver/server/pipeline_upload_server.go, backend/src/agent/persistence/worker/workflow_saver.go,
  backend/src/apiserver/model/run.go; and argoproj/argo-workflows @ f016ad89eb269d282aec06dc491c29f396a38df4
  (workflow/controller/operator.go, workflow/util/pod_name.go, pkg/apis/workflow/v1alpha1/workflow_types.go).
"""

import copy
import email.parser
import email.policy
import json
import threading
import uuid
from urllib.parse import parse_qs, unquote

import yaml

from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import create_or_skip, owner_reference
from kubesim.responses import Response

WORKFLOWS = ("argoproj.io", "workflows")
PODS = ("", "pods")
DSPAS = ("datasciencepipelinesapplications.opendatahub.io", "datasciencepipelinesapplications")
API_PORT = 8888
PREFIX = "/apis/v2beta1/"
EPOCH = "1970-01-01T00:00:00Z"
RUN_LABEL = "pipeline/runid"
WORKFLOW_LABEL = "workflows.argoproj.io/workflow"
NODE_ANNOTATION = "workflows.argoproj.io/node-name"
RUN_STATE_OF_PHASE = {"Running": "RUNNING", "Succeeded": "SUCCEEDED", "Failed": "FAILED", "Error": "FAILED"}
# google.rpc.Code
INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS = 3, 5, 6
HTTP_OF_CODE = {INVALID_ARGUMENT: 400, NOT_FOUND: 404, ALREADY_EXISTS: 409}
PIPELINE_FIELDS = {"pipeline_id", "display_name", "name", "description", "created_at", "namespace", "error", "tags"}
EXPERIMENT_FIELDS = {"experiment_id", "display_name", "description", "created_at", "namespace", "storage_state",
                     "last_run_created_at"}
RUN_FIELDS = {"experiment_id", "run_id", "display_name", "storage_state", "description", "pipeline_version_id",
              "pipeline_spec", "pipeline_version_reference", "runtime_config", "service_account", "created_at",
              "scheduled_at", "finished_at", "state", "error", "run_details", "recurring_run_id", "state_history"}


class UploadError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def fnv32a(text):
    """Argo's node and pod name hash (FNV-1a, 32 bits)."""
    value = 0x811C9DC5
    for byte in text.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def _strict(body, fields, what):
    unknown = sorted(set(body) - fields)
    if unknown:
        raise RpcError(INVALID_ARGUMENT, 'proto: (line 1:2): unknown field "%s" in %s' % (unknown[0], what))


def _tasks(spec):
    """The pipeline spec's tasks as ``{name: {"container": {...}, "dependencies": [...]}}`` (RpcError when
    the spec is not one KFP could compile)."""
    if not isinstance(spec, dict) or not ((spec.get("pipelineInfo") or {}).get("name")):
        raise RpcError(INVALID_ARGUMENT, "Failed to create a pipeline version: Invalid input error: invalid pipeline "
                                         "spec: pipelineInfo.name is empty")
    dag = ((spec.get("root") or {}).get("dag") or {}).get("tasks")
    if not isinstance(dag, dict) or not dag:
        raise RpcError(INVALID_ARGUMENT, "Failed to create a pipeline version: Invalid input error: invalid pipeline "
                                         "spec: root.dag has no tasks")
    components = spec.get("components") or {}
    executors = (spec.get("deploymentSpec") or {}).get("executors") or {}
    tasks = {}
    for name, task in dag.items():
        component = components.get(((task or {}).get("componentRef") or {}).get("name") or "") or {}
        if component.get("dag"):
            raise RpcError(INVALID_ARGUMENT, "kubesim: task %r is a nested DAG (ParallelFor or a sub-pipeline), which "
                                             "kubesim does not model" % name)
        container = (executors.get(component.get("executorLabel") or "") or {}).get("container")
        if not isinstance(container, dict) or not container.get("image"):
            raise RpcError(INVALID_ARGUMENT, "Failed to create a pipeline version: Invalid input error: invalid pipeline "
                                             "spec: task %r has no container executor" % name)
        dependencies = list((task or {}).get("dependentTasks") or [])
        missing = [d for d in dependencies if d not in dag]
        if missing:
            raise RpcError(INVALID_ARGUMENT, "Failed to create a pipeline version: Invalid input error: invalid pipeline "
                                             "spec: task %r depends on unknown task %r" % (name, missing[0]))
        tasks[name] = {"container": container, "dependencies": dependencies}
    return tasks


def spec_name(spec):
    return str(((spec or {}).get("pipelineInfo") or {}).get("name") or "") if isinstance(spec, dict) else ""


def _uploaded_spec(body, content_type):
    """The pipeline spec of an upload's multipart field ``uploadfile`` (YAML or JSON)."""
    if not content_type.startswith("multipart/form-data"):
        raise UploadError(400, "Failed to create a pipeline: Invalid input error: failed to read the uploaded file: "
                               "request Content-Type isn't multipart/form-data")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + (body or b""))
    for part in message.iter_parts() if message.is_multipart() else ():
        if part.get_param("name", header="content-disposition") == "uploadfile":
            try:
                spec = yaml.safe_load(part.get_payload(decode=True) or b"")
            except yaml.YAMLError as exc:
                raise UploadError(400, "Failed to create a pipeline: Invalid input error: the file is not YAML: %s"
                                  % str(exc).splitlines()[0]) from None
            return spec
    raise UploadError(400, "Failed to create a pipeline: Invalid input error: failed to read the uploaded file: "
                           "http: no such file (form field uploadfile)")


def _sanitize(name):
    text = "".join(c if c.isalnum() else "-" for c in str(name).lower()).strip("-")
    return (text or "pipeline")[:50]


class DspaStore:
    """The API server's database for one DSPA."""

    def __init__(self, namespace, dspa):
        self.namespace, self.dspa = namespace, dspa
        self.pipelines, self.versions, self.experiments, self.runs = {}, {}, {}, {}


class KfpApi:
    """Every DSPA's API server (thread-safe): answers the proxy, creates workflows, takes the agent's reports."""

    def __init__(self, cluster):
        self.cluster = cluster
        self._lock = threading.RLock()
        self._stores = {}

    # -- the proxy's hook
    def serve(self, pod, port, scheme, method, path, body, headers):
        """A Response when ``pod:port`` is a DSPA's API server, else None (the proxy forwards as usual)."""
        labels = pod["metadata"].get("labels") or {}
        dspa_name = labels.get("dspa")
        if port != API_PORT or labels.get("component") != "data-science-pipelines" or \
                labels.get("app") != "ds-pipeline-%s" % dspa_name:
            return None
        namespace = pod["metadata"]["namespace"]
        dspa = self.cluster.store.get(DSPAS, namespace, dspa_name) or {}
        if scheme != "https" and (dspa.get("spec") or {}).get("podToPodTLS", True):
            return Response(400, b"Client sent an HTTP request to an HTTPS server.\n", "text/plain; charset=utf-8")
        path, _, query = path.partition("?")
        try:
            with self._lock:
                store = self._stores.setdefault((namespace, dspa_name), DspaStore(namespace, dspa_name))
                if method == "POST" and path in (PREFIX + "pipelines/upload", PREFIX + "pipelines/upload_version"):
                    code, document = self._upload(store, path.endswith("_version"), parse_qs(query), body,
                                                  headers.get("Content-Type") or "")
                else:
                    code, document = self._dispatch(store, method, path, parse_qs(query), body)
        except UploadError as exc:
            code, document = exc.status, {"error_message": exc.message, "error_details": exc.message}
        except RpcError as exc:
            code, document = HTTP_OF_CODE.get(exc.code, 500), {"code": exc.code, "message": exc.message, "details": []}
        return Response(code, json.dumps(document).encode())

    def _dispatch(self, store, method, path, query, body):
        if not path.startswith(PREFIX):
            raise RpcError(NOT_FOUND, "Not Found")
        parts = [unquote(p) for p in path[len(PREFIX):].strip("/").split("/")]
        if parts == ["healthz"]:
            return 200, {"commit_sha": "7b70c7b9", "tag_name": "2.5.0", "multi_user": False,
                         "pipeline_store": "database"}
        request = self._body(body) if method in ("POST", "PUT", "PATCH") else {}
        head = parts[0]
        if head == "pipelines":
            return 200, self._pipelines(store, method, parts[1:], query, request)
        if head == "experiments":
            return 200, self._experiments(store, method, parts[1:], query, request)
        if head == "runs":
            return 200, self._runs(store, method, parts[1:], query, request)
        raise RpcError(NOT_FOUND, "Not Found")

    @staticmethod
    def _body(raw):
        try:
            document = json.loads(raw or b"{}")
        except ValueError as exc:
            raise RpcError(INVALID_ARGUMENT, "proto: syntax error: %s" % exc) from None
        if not isinstance(document, dict):
            raise RpcError(INVALID_ARGUMENT, "proto: syntax error: expected an object")
        return document

    def _now(self):
        return self.cluster.clock.timestamp()

    # -- pipelines
    def _pipelines(self, store, method, rest, query, request):
        if method == "POST" and not rest:
            pipeline = self._new_pipeline(store, request)
            store.pipelines[pipeline["pipeline_id"]] = pipeline
            return pipeline
        if method == "GET" and not rest:
            items = sorted(store.pipelines.values(), key=lambda p: p["created_at"])
            return {"pipelines": items, "total_size": len(items)} if items else {}
        if method == "GET" and len(rest) == 2 and rest[0] == "names":
            for pipeline in store.pipelines.values():
                if pipeline["name"] == rest[1]:
                    return pipeline
            raise RpcError(NOT_FOUND, "Failed to get a pipeline with name %s: ResourceNotFoundError: Pipeline %s not "
                                      "found" % (rest[1], rest[1]))
        pipeline = store.pipelines.get(rest[0]) if rest else None
        if pipeline is None:
            raise RpcError(NOT_FOUND, "Failed to get a pipeline: ResourceNotFoundError: Pipeline %s not found"
                           % (rest[0] if rest else ""))
        if method == "GET" and len(rest) == 1:
            return pipeline
        if method == "GET" and len(rest) == 2 and rest[1] == "versions":
            items = sorted((v for v in store.versions.values() if v["pipeline_id"] == pipeline["pipeline_id"]),
                           key=lambda v: v["created_at"])
            return {"pipeline_versions": items, "total_size": len(items)}
        raise RpcError(NOT_FOUND, "Not Found")

    def _new_pipeline(self, store, body):
        _strict(body, PIPELINE_FIELDS, "Pipeline")
        name = body.get("name") or body.get("display_name")
        if not name:
            raise RpcError(INVALID_ARGUMENT, "Failed to create a pipeline: Invalid input error: pipeline's name cannot "
                                             "be empty")
        if any(p["name"] == name for p in store.pipelines.values()):
            raise RpcError(ALREADY_EXISTS, "Failed to create a pipeline: Already exist error: Failed to create a new "
                                           "pipeline. The name %s already exists. Please specify a new name" % name)
        return {"pipeline_id": str(uuid.uuid4()), "name": name, "display_name": body.get("display_name") or name,
                "description": body.get("description", ""), "created_at": self._now(), "namespace": store.namespace}

    def _new_version(self, store, pipeline, body):
        spec = body.get("pipeline_spec")
        _tasks(spec)
        name = body.get("name") or body.get("display_name") or pipeline["name"]
        if any(v["pipeline_id"] == pipeline["pipeline_id"] and v["name"] == name for v in store.versions.values()):
            raise RpcError(ALREADY_EXISTS, "Failed to create a pipeline version: Already exist error: the name %s "
                                           "already exists" % name)
        return {"pipeline_id": pipeline["pipeline_id"], "pipeline_version_id": str(uuid.uuid4()), "name": name,
                "display_name": body.get("display_name") or name, "created_at": self._now(),
                "pipeline_spec": copy.deepcopy(spec)}

    def _upload(self, store, version_only, query, body, content_type):
        """``pipelines/upload`` and ``pipelines/upload_version`` (pipeline_upload_server.go)."""
        def first(key):
            return (query.get(key) or [""])[0]
        spec = _uploaded_spec(body, content_type)
        try:
            if version_only:
                pipeline = store.pipelines.get(first("pipelineid"))
                if pipeline is None:
                    raise UploadError(404, "Failed to create a pipeline version: ResourceNotFoundError: Pipeline %s "
                                           "not found" % first("pipelineid"))
                version = self._new_version(store, pipeline, {"name": first("name"), "pipeline_spec": spec})
                store.versions[version["pipeline_version_id"]] = version
                return 200, version
            pipeline = self._new_pipeline(store, {"name": first("name") or spec_name(spec),
                                                  "display_name": first("display_name"),
                                                  "description": first("description")})
            version = self._new_version(store, pipeline, {"name": pipeline["name"], "pipeline_spec": spec})
        except RpcError as exc:
            raise UploadError(HTTP_OF_CODE.get(exc.code, 500), exc.message) from None
        store.pipelines[pipeline["pipeline_id"]] = pipeline
        store.versions[version["pipeline_version_id"]] = version
        return 200, pipeline

    # -- experiments
    def _experiments(self, store, method, rest, query, request):
        if method == "POST" and not rest:
            _strict(request, EXPERIMENT_FIELDS, "Experiment")
            name = request.get("display_name")
            if not name:
                raise RpcError(INVALID_ARGUMENT, "Failed to create an experiment: Invalid input error: Experiment name "
                                                 "is empty. Please specify a valid experiment name")
            if any(e["display_name"] == name for e in store.experiments.values()):
                raise RpcError(ALREADY_EXISTS, "Failed to create an experiment: Already exist error: Failed to create "
                                               "a new experiment. The name %s already exists. Please specify a new "
                                               "name" % name)
            experiment = {"experiment_id": str(uuid.uuid4()), "display_name": name,
                          "description": request.get("description", ""), "created_at": self._now(),
                          "namespace": store.namespace, "storage_state": "AVAILABLE"}
            store.experiments[experiment["experiment_id"]] = experiment
            return experiment
        if method == "GET" and not rest:
            items = sorted(store.experiments.values(), key=lambda e: e["created_at"])
            wanted = _filter_value(query, "display_name")
            if wanted is not None:
                items = [e for e in items if e["display_name"] == wanted]
            return {"experiments": items, "total_size": len(items)} if items else {}
        if method == "GET" and len(rest) == 1 and rest[0] in store.experiments:
            return store.experiments[rest[0]]
        raise RpcError(NOT_FOUND, "Failed to get an experiment: ResourceNotFoundError: Experiment %s not found"
                       % (rest[0] if rest else ""))

    # -- runs
    def _runs(self, store, method, rest, query, request):
        if method == "POST" and not rest:
            return self._create_run(store, request, (query.get("experiment_id") or [None])[0])
        if method == "GET" and not rest:
            items = sorted(store.runs.values(), key=lambda r: r["created_at"])
            experiment = (query.get("experiment_id") or [None])[0]
            if experiment:
                items = [r for r in items if r.get("experiment_id") == experiment]
            return {"runs": [copy.deepcopy(r) for r in items], "total_size": len(items)} if items else {}
        if method == "GET" and len(rest) == 1 and rest[0] in store.runs:
            return copy.deepcopy(store.runs[rest[0]])
        raise RpcError(NOT_FOUND, "Failed to get a run: ResourceNotFoundError: Run %s not found"
                       % (rest[0] if rest else ""))

    def _create_run(self, store, body, experiment_id):
        _strict(body, RUN_FIELDS, "Run")
        if not body.get("display_name"):
            raise RpcError(INVALID_ARGUMENT, "Failed to create a run: Invalid input error: The run name is empty. "
                                             "Please specify a valid name")
        experiment_id = body.get("experiment_id") or experiment_id
        if experiment_id and experiment_id not in store.experiments:
            raise RpcError(NOT_FOUND, "Failed to create a run: ResourceNotFoundError: Experiment %s not found"
                           % experiment_id)
        reference = body.get("pipeline_version_reference") or {}
        spec = body.get("pipeline_spec")
        if spec is None:
            version = store.versions.get(reference.get("pipeline_version_id") or body.get("pipeline_version_id") or "")
            if version is None:
                raise RpcError(NOT_FOUND, "Failed to create a run: ResourceNotFoundError: PipelineVersion %s not found"
                               % (reference.get("pipeline_version_id") or ""))
            spec = version["pipeline_spec"]
            reference = {"pipeline_id": version["pipeline_id"], "pipeline_version_id": version["pipeline_version_id"]}
        tasks = _tasks(spec)
        if not experiment_id:
            default = next((e for e in store.experiments.values() if e["display_name"] == "Default"), None)
            if default is None:
                default = {"experiment_id": str(uuid.uuid4()), "display_name": "Default", "description": "",
                           "created_at": self._now(), "namespace": store.namespace, "storage_state": "AVAILABLE"}
                store.experiments[default["experiment_id"]] = default
            experiment_id = default["experiment_id"]
        now = self._now()
        run = {"run_id": str(uuid.uuid4()), "experiment_id": experiment_id, "display_name": body["display_name"],
               "storage_state": "AVAILABLE", "pipeline_version_reference": reference,
               "runtime_config": body.get("runtime_config") or {}, "service_account": "pipeline-runner-%s" % store.dspa,
               "created_at": now, "scheduled_at": now, "finished_at": EPOCH, "state": "PENDING",
               "state_history": [{"update_time": now, "state": "PENDING"}]}
        if body.get("description"):
            run["description"] = body["description"]
        self._create_workflow(store, run, spec, tasks)
        store.runs[run["run_id"]] = run
        store.experiments[experiment_id]["last_run_created_at"] = now
        return copy.deepcopy(run)

    def _create_workflow(self, store, run, spec, tasks):
        resource = self.cluster.resource_for_key(WORKFLOWS)
        if resource is None:
            raise RpcError(13, "Failed to create a run: the Workflow kind (argoproj.io) is not served")
        root_tasks = [{"name": name, "template": "system-container-impl",
                       "arguments": {"parameters": [{"name": "container", "value": json.dumps(task["container"])}]},
                       **({"depends": " && ".join("%s.Succeeded" % d for d in task["dependencies"])}
                          if task["dependencies"] else {})}
                      for name, task in tasks.items()]
        body = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
                "metadata": {"generateName": _sanitize(spec["pipelineInfo"]["name"].split("/")[-1]) + "-",
                             "namespace": store.namespace, "labels": {RUN_LABEL: run["run_id"]},
                             "annotations": {"pipelines.kubeflow.org/run_name": run["display_name"]}},
                "spec": {"entrypoint": "entrypoint", "serviceAccountName": run["service_account"],
                         "podMetadata": {"labels": {RUN_LABEL: run["run_id"],
                                                    "pipelines.kubeflow.org/v2_component": "true"},
                                         "annotations": {"pipelines.kubeflow.org/v2_component": "true"}},
                         "templates": [{"name": "entrypoint", "dag": {"tasks": [{"name": "root", "template": "root"}]}},
                                       {"name": "root", "dag": {"tasks": root_tasks}},
                                       {"name": "system-container-impl",
                                        "inputs": {"parameters": [{"name": "container"}]},
                                        "container": {"image": "{{inputs.parameters.container.image}}"}}]}}
        create_or_skip(self.cluster, resource, body, store.namespace)

    # -- the persistence agent
    def report(self, workflow):
        """Copy a workflow's phase and end into its run."""
        meta = workflow["metadata"]
        run_id = (meta.get("labels") or {}).get(RUN_LABEL)
        status = workflow.get("status") or {}
        state = RUN_STATE_OF_PHASE.get(status.get("phase") or "")
        if not run_id or state is None:
            return
        with self._lock:
            run = next((s.runs[run_id] for (ns, _d), s in self._stores.items()
                        if ns == meta.get("namespace") and run_id in s.runs), None)
            if run is None or run["state"] == state:
                return
            now = self._now()
            run["state"] = state
            run["state_history"].append({"update_time": now, "state": state})
            if state in ("SUCCEEDED", "FAILED"):
                run["finished_at"] = status.get("finishedAt") or now
            if state == "FAILED":
                run["error"] = {"code": 2, "message": status.get("message") or "workflow failed"}


def _filter_value(query, key):
    """The string value of KFP's ``filter`` predicate on ``key`` (EQUALS), or None."""
    raw = (query.get("filter") or [None])[0]
    if not raw:
        return None
    try:
        predicates = json.loads(raw).get("predicates") or []
    except (ValueError, AttributeError):
        raise RpcError(INVALID_ARGUMENT, "Invalid input error: failed to parse the filter %r" % raw) from None
    for item in predicates:
        if item.get("key") == key and item.get("operation") == "EQUALS":
            return item.get("string_value")
    return None


class ArgoWorkflowController(OperatorReconciler):
    """Argo's workflow controller for the Workflows KFP creates (and the persistence agent's reports)."""

    name = "argo-workflow"
    key = WORKFLOWS
    default_delay = 0.0
    extra_watches = (PODS,)

    def __init__(self, cluster, manager):
        super().__init__(cluster, manager)
        self.api = KfpApi(cluster)

    def start(self):
        self.cluster.pod_servers.append(self.api.serve)

    def related(self, event):
        workflow = (event.obj["metadata"].get("labels") or {}).get(WORKFLOW_LABEL)
        return [r for r in self.all_refs(event.obj["metadata"].get("namespace")) if r.name == workflow] \
            if workflow else []

    def running(self):
        return self.resource is not None

    def sync(self, ref, workflow):
        status = workflow.get("status") or {}
        if status.get("phase") in ("Succeeded", "Failed", "Error"):
            return None
        now = self.clock.timestamp()
        name = workflow["metadata"]["name"]
        templates = {t.get("name"): t for t in (workflow.get("spec") or {}).get("templates") or ()}
        tasks = ((templates.get("root") or {}).get("dag") or {}).get("tasks") or []
        root_id = "%s-%d" % (name, fnv32a(name + ".root"))
        nodes = copy.deepcopy(status.get("nodes") or {})
        if not nodes:
            nodes[name] = {"id": name, "name": name, "displayName": name, "type": "DAG", "templateName": "entrypoint",
                           "phase": "Running", "startedAt": now, "finishedAt": None, "children": [root_id]}
            nodes[root_id] = {"id": root_id, "name": name + ".root", "displayName": "root", "type": "DAG",
                              "templateName": "root", "boundaryID": name, "phase": "Running", "startedAt": now,
                              "finishedAt": None, "children": []}
        pods = {(p["metadata"].get("annotations") or {}).get(NODE_ANNOTATION): p
                for p in self.cluster.store.list(PODS, ref.namespace)[0]
                if (p["metadata"].get("labels") or {}).get(WORKFLOW_LABEL) == name}
        phase_of = {}
        for task in tasks:
            node_name = "%s.root.%s" % (name, task["name"])
            node_id = "%s-%d" % (name, fnv32a(node_name))
            dependencies = [part.split(".")[0].strip() for part in (task.get("depends") or "").split("&&") if part.strip()]
            if all(phase_of.get(d) == "Succeeded" for d in dependencies) and node_name not in pods:
                self._create_pod(workflow, task, node_name)
                nodes[node_id] = {"id": node_id, "name": node_name, "displayName": task["name"], "type": "Pod",
                                  "templateName": "system-container-impl", "boundaryID": root_id, "phase": "Pending",
                                  "startedAt": now, "finishedAt": None}
                if not dependencies:
                    nodes[root_id]["children"] = sorted(set(nodes[root_id]["children"]) | {node_id})
                for dependency in dependencies:
                    parent = nodes.get("%s-%d" % (name, fnv32a("%s.root.%s" % (name, dependency))))
                    if parent is not None:
                        parent["children"] = sorted(set(parent.get("children") or []) | {node_id})
            pod = pods.get(node_name)
            if pod is not None and node_id in nodes:
                pod_status = pod.get("status") or {}
                node = nodes[node_id]
                node["phase"] = pod_status.get("phase") or "Pending"
                if node["phase"] in ("Succeeded", "Failed"):
                    terminated = [((c.get("state") or {}).get("terminated") or {}).get("finishedAt")
                                  for c in pod_status.get("containerStatuses") or ()]
                    node["finishedAt"] = node.get("finishedAt") or next((t for t in terminated if t), now)
                    if node["phase"] == "Failed":
                        node["message"] = "Error (exit code %s)" % next(
                            (((c.get("state") or {}).get("terminated") or {}).get("exitCode")
                             for c in pod_status.get("containerStatuses") or ()), 1)
            phase_of[task["name"]] = nodes.get(node_id, {}).get("phase")
        done = [t for t in tasks if phase_of.get(t["name"]) in ("Succeeded", "Failed")]
        failed = [t for t in tasks if phase_of.get(t["name"]) == "Failed"]
        active = [t for t in tasks if phase_of.get(t["name"]) in ("Pending", "Running")]
        phase = "Running"
        if len(done) == len(tasks) and not failed:
            phase = "Succeeded"
        elif failed and not active:
            phase = "Failed"
        if phase != "Running":
            for node_id in (name, root_id):
                nodes[node_id].update(phase=phase, finishedAt=now)
        progress = "%d/%d" % (len([t for t in tasks if phase_of.get(t["name"]) == "Succeeded"]), len(tasks))
        self._write(ref, phase, nodes, progress, now)
        return None

    def _create_pod(self, workflow, task, node_name):
        name = workflow["metadata"]["name"]
        container = json.loads(task["arguments"]["parameters"][0]["value"])
        labels = {WORKFLOW_LABEL: name, "workflows.argoproj.io/completed": "false"}
        pod_metadata = (workflow.get("spec") or {}).get("podMetadata") or {}
        labels.update(pod_metadata.get("labels") or {})
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "%s-system-container-impl-%d" % (name, fnv32a(node_name)),
                             "namespace": workflow["metadata"]["namespace"], "labels": labels,
                             "annotations": dict(pod_metadata.get("annotations") or {}, **{
                                 NODE_ANNOTATION: node_name,
                                 "workflows.argoproj.io/node-id": "%s-%d" % (name, fnv32a(node_name))}),
                             "ownerReferences": [owner_reference(workflow)]},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "main", "image": container["image"],
                                         **({"command": list(container["command"])} if container.get("command") else {}),
                                         **({"args": list(container["args"])} if container.get("args") else {}),
                                         "resources": container.get("resources") or {}}]}}
        create_or_skip(self.cluster, self.cluster.resource_for_key(PODS), body, workflow["metadata"]["namespace"])

    def _write(self, ref, phase, nodes, progress, now):
        def change(obj):
            status = obj.setdefault("status", {})
            before = json.dumps(obj, sort_keys=True)
            status.update(phase=phase, nodes=nodes, progress=progress)
            status.setdefault("startedAt", now)
            labels = obj["metadata"].setdefault("labels", {})
            labels["workflows.argoproj.io/phase"] = phase
            obj["metadata"].setdefault("annotations", {})["workflows.argoproj.io/pod-name-format"] = "v2"
            if phase != "Running":
                status["finishedAt"] = now
                status["conditions"] = [{"type": "PodRunning", "status": "False"},
                                        {"type": "Completed", "status": "True"}]
                labels["workflows.argoproj.io/completed"] = "true"
                labels["pipeline/persistedFinalState"] = "true"  # the persistence agent, once it reported it
            else:
                status["finishedAt"] = None
                running = any(n.get("type") == "Pod" and n.get("phase") == "Running" for n in nodes.values())
                status["conditions"] = [{"type": "PodRunning", "status": "True" if running else "False"}]
            return json.dumps(obj, sort_keys=True) != before
        stored = self.cluster.mutate(self.resource, ref.namespace, ref.name, change)
        if stored is not None:
            self.api.report(stored)
