# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubeflow Pipelines runs on a DataSciencePipelinesApplication, as the reference's KFP notebooks submit them.

The reference's ``pipelines run_kfp_notebook`` executes a notebook in a workbench; the notebook
(through the ``kfp`` SDK) uploads the compiled pipeline, creates the experiment
``experiment-<name>``, submits ``run_count`` runs named ``<name>-run<i>`` (``run_delay`` seconds
apart, each waited for when ``wait_for_run_completion``) and records when it submitted and saw
each run complete. :func:`submit_runs` does the same through KFP's v2beta1 REST API
(kubeflow/pipelines backend/api/v2beta1), reached through the API server's service proxy
(``services/https:ds-pipeline-<dspa>:8888``), standard library and ``kubernetes`` only.

API errors are one line with the answer's message (``googleRpcStatus`` ``message``, or the upload
server's ``error_message``).
"""

from __future__ import annotations

import datetime
import json
import time

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

FINAL_STATES = ("SUCCEEDED", "FAILED", "SKIPPED", "CANCELED")
API = "/apis/v2beta1/"


class KfpError(PerfscaleError):
    """The KFP API refused or could not be reached (one line)."""


class KfpClient:
    """KFP's v2beta1 API over a transport (``request(method, path, params, body, content_type)``)."""

    def __init__(self, transport):
        self.transport = transport
        self.url = transport.url

    def _call(self, method, path, params=None, body=None, content_type=None, missing_ok=False):
        status, raw = self.transport.request(method, API + path, params, body, content_type)
        try:
            document = bounded_input.load_json(raw or b"{}", "%s %s%s: the answer" % (method, self.url, API + path),
                                               max_bytes=bounded_input.MAX_RESPONSE_BYTES)
        except bounded_input.NotJSON:
            document = None
        except bounded_input.InputError as exc:
            raise KfpError(str(exc)) from None
        if status == 404 and missing_ok:
            return None
        if status >= 300 or not isinstance(document, dict):
            reason = None
            if isinstance(document, dict):
                reason = document.get("message") or document.get("error_message")
            if reason is None:
                reason = raw[:200].decode("utf-8", "replace").strip()
            raise KfpError("%s %s%s: %s %s" % (method, self.url, API + path, status, " ".join(str(reason).split())))
        return document

    def healthz(self):
        return self._call("GET", "healthz")

    def pipeline_by_name(self, name):
        return self._call("GET", "pipelines/names/%s" % name, missing_ok=True)

    def upload_pipeline(self, name, content, filename="pipeline.yaml"):
        """A new pipeline (and its first version) from a compiled pipeline file's bytes."""
        return self._call("POST", "pipelines/upload", {"name": name, "display_name": name},
                          [("uploadfile", (filename, content, "application/octet-stream"))])

    def upload_version(self, pipeline_id, name, content, filename="pipeline.yaml"):
        return self._call("POST", "pipelines/upload_version", {"pipelineid": pipeline_id, "name": name},
                          [("uploadfile", (filename, content, "application/octet-stream"))])

    def latest_version(self, pipeline_id):
        versions = self._call("GET", "pipelines/%s/versions" % pipeline_id).get("pipeline_versions") or []
        if not versions:
            raise KfpError("GET %s%spipelines/%s/versions: the pipeline has no version" % (self.url, API, pipeline_id))
        return max(versions, key=lambda v: v.get("created_at") or "")

    def experiment(self, name):
        """The experiment named ``name``, created when missing."""
        found = self._call("GET", "experiments", {"filter": json.dumps({"predicates": [
            {"key": "display_name", "operation": "EQUALS", "string_value": name}]})}).get("experiments") or []
        if found:
            return found[0]
        return self._call("POST", "experiments", body={"display_name": name})

    def create_run(self, name, experiment_id, pipeline_id, version_id):
        return self._call("POST", "runs", body={
            "display_name": name, "experiment_id": experiment_id,
            "pipeline_version_reference": {"pipeline_id": pipeline_id, "pipeline_version_id": version_id}})

    def run(self, run_id):
        return self._call("GET", "runs/%s" % run_id)


def load_pipeline_file(path):
    """``(bytes, document)`` of a compiled KFP v2 pipeline file (bounded; KfpError naming the file otherwise)."""
    import yaml  # pylint: disable=import-outside-toplevel

    with open(path, "rb") as handle:
        content = handle.read(bounded_input.MAX_DOCUMENT_BYTES + 1)
    try:
        document = bounded_input.parse(lambda text: yaml.load(text, Loader=bounded_input.safe_yaml_loader()),  # nosec B506
                                       content, path)
    except yaml.YAMLError as exc:
        raise KfpError("%s: not YAML: %s" % (path, " ".join(str(exc).split())[:200])) from None
    except bounded_input.InputError as exc:
        raise KfpError(str(exc)) from None
    return content, check_pipeline_spec(document, path)


def check_pipeline_spec(document, where):
    """A compiled KFP v2 pipeline (``pipelineInfo.name``, ``root``, ``deploymentSpec``), else KfpError."""
    if not isinstance(document, dict) or not (document.get("pipelineInfo") or {}).get("name") \
            or "root" not in document or "deploymentSpec" not in document:
        raise KfpError("%s: expected a compiled KFP v2 pipeline (pipelineInfo.name, root, deploymentSpec: "
                       "kfp dsl compile --py pipeline.py --output pipeline.yaml)" % where)
    return document


def _now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def wait_for_run(client, run_id, timeout_s, poll_s=2.0, clock=time.monotonic, sleep=time.sleep):
    """The run once its state is final (KfpError after ``timeout_s``)."""
    deadline = clock() + timeout_s
    while True:
        run = client.run(run_id)
        if run.get("state") in FINAL_STATES:
            return run
        if clock() >= deadline:
            raise KfpError("run %s (%s): still %s after %ss"
                           % (run.get("display_name"), run_id, run.get("state"), timeout_s))
        sleep(poll_s)


def submit_runs(client, name, pipeline_content, run_count, run_delay_s=0.0, wait_for_completion=False,
                run_timeout_s=3600, sleep=time.sleep, now=_now_iso):
    """Upload (or add a version to) pipeline ``name``, then ``run_count`` runs in experiment
    ``experiment-<name>``; returns ``{"pipeline", "version", "experiment", "runs", "submitted",
    "completed"}`` - ``submitted``/``completed`` map each run's name to the controller's ISO time, as the
    reference's ``<name>_runs_submit.json`` / ``_runs_complete.json`` (``completed`` only when waited for)."""
    client.healthz()
    pipeline = client.pipeline_by_name(name)
    if pipeline is None:
        pipeline = client.upload_pipeline(name, pipeline_content)
        version = client.latest_version(pipeline["pipeline_id"])
    else:
        # the same name again (a second call of the command): a new version, the runs use it
        version = client.upload_version(pipeline["pipeline_id"], "%s-%s" % (name, now().replace(":", "-")),
                                        pipeline_content)
    experiment = client.experiment("experiment-%s" % name)
    runs, submitted, completed = [], {}, {}
    for index in range(int(run_count)):
        run_name = "%s-run%d" % (name, index)
        run = client.create_run(run_name, experiment["experiment_id"], pipeline["pipeline_id"],
                                version["pipeline_version_id"])
        submitted[run_name] = now()
        if wait_for_completion:
            run = wait_for_run(client, run["run_id"], run_timeout_s, sleep=sleep)
            completed[run_name] = now()
        runs.append(run)
        if run_delay_s and index + 1 < int(run_count):
            sleep(float(run_delay_s))
    return {"pipeline": pipeline, "version": {k: v for k, v in version.items() if k != "pipeline_spec"},
            "experiment": experiment, "runs": runs, "submitted": submitted, "completed": completed}
