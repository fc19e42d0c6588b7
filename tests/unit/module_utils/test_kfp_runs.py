"""pipelines run_kfp_notebook's core: the KFP v2beta1 client, the submission the reference's notebooks do,
and the runs' KPIs from their Argo Workflows."""

import json

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import kfp_api
from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import dsp_runs

SPEC = b"pipelineInfo: {name: hello}\nroot: {dag: {tasks: {}}}\ndeploymentSpec: {executors: {}}\n"


class FakeApi:
    """A KFP API server's answers: records the requests, runs finish after ``polls_to_finish`` reads."""

    url = "service ns/ds-pipeline-x:8888"

    def __init__(self, existing=False, polls_to_finish=2, fail=None):
        self.calls = []
        self.existing = existing
        self.polls_to_finish = polls_to_finish
        self.fail = fail or {}
        self.runs = {}

    def request(self, method, path, params=None, body=None, content_type=None):
        path = path[len(kfp_api.API):]
        self.calls.append((method, path, params, body))
        if (method, path) in self.fail:
            status, document = self.fail[(method, path)]
            return status, json.dumps(document).encode()
        if path == "healthz":
            return 200, b'{"multi_user": false}'
        if path.startswith("pipelines/names/"):
            return (200, b'{"pipeline_id": "p1", "name": "hello"}') if self.existing else (404, b'{"code": 5}')
        if path == "pipelines/upload":
            return 200, json.dumps({"pipeline_id": "p1", "name": params["name"]}).encode()
        if path == "pipelines/upload_version":
            return 200, json.dumps({"pipeline_id": "p1", "pipeline_version_id": "v2", "name": params["name"],
                                    "pipeline_spec": {"big": True}}).encode()
        if path == "pipelines/p1/versions":
            return 200, json.dumps({"pipeline_versions": [
                {"pipeline_version_id": "v0", "created_at": "2026-01-01T00:00:00Z"},
                {"pipeline_version_id": "v1", "created_at": "2026-01-02T00:00:00Z"}]}).encode()
        if path == "experiments" and method == "GET":
            return 200, b"{}"
        if path == "experiments":
            return 200, json.dumps({"experiment_id": "e1", "display_name": body["display_name"]}).encode()
        if path == "runs":
            run_id = "r%d" % len(self.runs)
            self.runs[run_id] = 0
            return 200, json.dumps({"run_id": run_id, "display_name": body["display_name"], "state": "PENDING",
                                    "version": body["pipeline_version_reference"]["pipeline_version_id"]}).encode()
        if path.startswith("runs/"):
            run_id = path.split("/")[1]
            self.runs[run_id] += 1
            state = "SUCCEEDED" if self.runs[run_id] >= self.polls_to_finish else "RUNNING"
            return 200, json.dumps({"run_id": run_id, "state": state}).encode()
        return 404, b'{"code": 5, "message": "Not Found"}'


def times():
    counter = iter(range(1000))
    return lambda: "2026-11-26T10:00:%02d+00:00" % next(counter)


def test_a_new_pipeline_its_experiment_and_runs_named_as_the_notebooks_name_them():
    api, slept = FakeApi(), []
    record = kfp_api.submit_runs(kfp_api.KfpClient(api), "user0-pl0", SPEC, 3, run_delay_s=5, sleep=slept.append,
                                 now=times())
    assert [r["display_name"] for r in record["runs"]] == ["user0-pl0-run0", "user0-pl0-run1", "user0-pl0-run2"]
    # the latest version of the uploaded pipeline, the experiment of the notebooks' name
    assert {r["version"] for r in record["runs"]} == {"v1"}
    assert record["experiment"]["display_name"] == "experiment-user0-pl0"
    # the delay between two submissions, not after the last one
    assert slept == [5.0, 5.0]
    assert list(record["submitted"]) == ["user0-pl0-run0", "user0-pl0-run1", "user0-pl0-run2"]
    assert record["completed"] == {}
    upload = next(c for c in api.calls if c[1] == "pipelines/upload")
    assert upload[2]["name"] == "user0-pl0" and upload[3][0][0] == "uploadfile" and upload[3][0][1][1] == SPEC


def test_an_existing_pipeline_gets_a_version_and_each_run_is_waited_for_when_asked():
    api, slept = FakeApi(existing=True, polls_to_finish=3), []
    record = kfp_api.submit_runs(kfp_api.KfpClient(api), "hello", SPEC, 2, wait_for_completion=True,
                                 sleep=slept.append, now=times())
    assert not any(c[1] == "pipelines/upload" for c in api.calls)
    assert {r["state"] for r in record["runs"]} == {"SUCCEEDED"}
    assert list(record["completed"]) == ["hello-run0", "hello-run1"]
    # the version's spec is not copied into the record
    assert "pipeline_spec" not in record["version"] and record["version"]["pipeline_version_id"] == "v2"
    # each run polled until final: runs/r0 read 3 times before run 1 was submitted
    order = [c[1] for c in api.calls if c[1].startswith("runs")]
    assert order == ["runs", "runs/r0", "runs/r0", "runs/r0", "runs", "runs/r1", "runs/r1", "runs/r1"]


def test_api_errors_are_one_line_with_the_servers_message():
    api = FakeApi(fail={("POST", "runs"): (404, {"code": 5, "message": "Failed to create a run:\n  Experiment e1 not found"})})
    with pytest.raises(kfp_api.KfpError, match=r"^POST service ns/ds-pipeline-x:8888/apis/v2beta1/runs: 404 Failed to "
                                               r"create a run: Experiment e1 not found$"):
        kfp_api.submit_runs(kfp_api.KfpClient(api), "hello", SPEC, 1)
    api = FakeApi(fail={("POST", "pipelines/upload"): (400, {"error_message": "invalid pipeline spec",
                                                             "error_details": "x"})})
    with pytest.raises(kfp_api.KfpError, match="pipelines/upload: 400 invalid pipeline spec"):
        kfp_api.submit_runs(kfp_api.KfpClient(api), "hello", SPEC, 1)


def test_a_run_that_does_not_end_in_time_is_named():
    api = FakeApi(polls_to_finish=10 ** 6)
    api.runs["r0"] = 0
    clock = iter(range(0, 10000, 10))
    with pytest.raises(kfp_api.KfpError, match=r"run None \(r0\): still RUNNING after 30s"):
        kfp_api.wait_for_run(kfp_api.KfpClient(api), "r0", 30, clock=lambda: next(clock), sleep=lambda _s: None)
    assert api.runs["r0"] == 3  # looked at 10, 20 and 30 s after the start (the deadline)


def test_the_pipeline_file_must_be_a_compiled_pipeline(tmp_path):
    good = tmp_path / "pipeline.yaml"
    good.write_bytes(SPEC)
    content, spec = kfp_api.load_pipeline_file(str(good))
    assert content == SPEC and spec["pipelineInfo"]["name"] == "hello"
    notebook = tmp_path / "nb.yaml"
    notebook.write_text('{"cells": [], "nbformat": 4}')
    with pytest.raises(kfp_api.KfpError, match="nb.yaml: expected a compiled KFP v2 pipeline"):
        kfp_api.load_pipeline_file(str(notebook))
    broken = tmp_path / "broken.yaml"
    broken.write_text("root: [unclosed\n")
    with pytest.raises(kfp_api.KfpError, match="broken.yaml: not YAML"):
        kfp_api.load_pipeline_file(str(broken))
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (bounded_input.MAX_DOCUMENT_BYTES + 10))
    with pytest.raises(kfp_api.KfpError, match="more than the limit"):
        kfp_api.load_pipeline_file(str(big))


def workflow(name, run_id, root_start, finished, phase="Succeeded"):
    return {"metadata": {"name": name, "labels": {"pipeline/runid": run_id}},
            "status": {"phase": phase, "startedAt": root_start, "finishedAt": finished, "nodes": {
                name: {"templateName": "entrypoint", "startedAt": "2000-01-01T00:00:00Z"},
                name + "-1": {"templateName": "root", "startedAt": root_start}}}}


def test_latency_and_duration_from_the_run_and_its_workflows_root_node():
    runs = [{"run_id": "a", "display_name": "p-run0", "created_at": "2026-11-26T10:00:00Z"},
            {"run_id": "b", "display_name": "p-run1", "created_at": "2026-11-26T10:00:10Z"},
            {"run_id": "c", "display_name": "p-run2", "created_at": "2026-11-26T10:00:20Z"}]
    workflows = [workflow("w-b", "b", "2026-11-26T10:00:14Z", "2026-11-26T10:01:14Z"),
                 workflow("w-a", "a", "2026-11-26T10:00:02Z", "2026-11-26T10:01:32Z"),
                 workflow("w-c", "c", "2026-11-26T10:00:26Z", "2026-11-26T10:01:56Z", phase="Failed"),
                 workflow("w-other", "zzz", "2026-11-26T09:00:00Z", "2026-11-26T09:01:00Z")]
    out = dsp_runs.dsp_run_result(runs, workflows)
    assert [(r["name"], r["workflow"], r["latency_s"], r["duration_s"]) for r in out["runs"]] == [
        ("p-run0", "w-a", 2.0, 90.0), ("p-run1", "w-b", 4.0, 60.0), ("p-run2", "w-c", 6.0, 90.0)]
    result = out["result"]
    assert (result["run_count"], result["succeeded_runs"], result["failed_runs"]) == (3, 2, 1)
    assert (result["dsp_run_latency_s_min"], result["dsp_run_latency_s_median"], result["dsp_run_latency_s_max"]) == (
        2.0, 4.0, 6.0)
    assert result["dsp_run_latency_s_p99"] == pytest.approx(5.96)
    # each further run starts 2 s later than the one before
    assert result["dsp_run_latency_s_degrade_speed_s_per_run"] == pytest.approx(2.0)
    assert result["dsp_run_duration_s_degrade_speed_s_per_run"] == pytest.approx(0.0)


def test_a_run_without_its_workflow_or_not_started_has_no_values_and_no_run_is_an_error():
    runs = [{"run_id": "a", "display_name": "p-run0", "created_at": "2026-11-26T10:00:00Z"},
            {"run_id": "b", "display_name": "p-run1", "created_at": "2026-11-26T10:00:10Z"}]
    not_started = {"metadata": {"name": "w-b", "labels": {"pipeline/runid": "b"}}, "status": {}}
    out = dsp_runs.dsp_run_result(runs, [not_started])
    records = [(r["workflow"], r["latency_s"], r["duration_s"]) for r in out["runs"]]
    assert records == [(None, None, None), ("w-b", None, None)]
    assert "dsp_run_latency_s_median" not in out["result"] and out["result"]["run_count"] == 2
    # an unfinished run's finished_at epoch is no time
    assert dsp_runs.run_records([{"run_id": "a", "created_at": "1970-01-01T00:00:00Z"}], [])[0]["latency_s"] is None
    with pytest.raises(HarnessOutputError, match="no run was submitted"):
        dsp_runs.dsp_run_result([], [])
    bad = [workflow("w-a", "a", "yesterday", "2026-11-26T10:01:32Z")]
    with pytest.raises(HarnessOutputError, match="workflow w-a root startedAt: 'yesterday' is not an RFC 3339 time"):
        dsp_runs.dsp_run_result(runs[:1], bad)
