"""benchmark.yml with the LLM load harness (preset llm_load_smoke) against a local fake
OpenAI-compatible server: points, llm-d reports, KPIs, the workload's reports, the token by
reference only, and a misspelt option refused before anything runs."""

import json
import os
import sys

import pytest
import yaml

from helpers import REPO, grep_tree, run_playbook

sys.path.insert(0, os.path.join(REPO, "tests"))
from fake_openai import FakeServerThread  # noqa: E402  pylint: disable=wrong-import-position

TOKEN = "tok-llm-load-4711-never-written"


def common_settings(port, **changes):
    settings = {"url": "http://127.0.0.1:%d" % port, "model": "fake-model", "load": "constant", "duration": 2,
                "warmup": 0.5, "prompt_tokens": 64, "output_tokens": 16, "token": "secret:llm-token", "replicas": 2}
    settings.update(changes)
    return settings


@pytest.fixture(scope="module")
def server():
    with FakeServerThread(ttft=0.01, itl=0.002, token=TOKEN) as running:
        yield running


@pytest.fixture(scope="module")
def secrets(tmp_path_factory):
    directory = tmp_path_factory.mktemp("secrets")
    (directory / "llm-token").write_text(TOKEN)
    return {"PERFSCALE_SECRETS_DIR": str(directory)}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, server, secrets):
    root = tmp_path_factory.mktemp("llm")
    overrides = {"tests.benchmark.matrix.common_settings": common_settings(server.port),
                 "tests.benchmark.deployment_factors": ["replicas"]}
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=llm_load_smoke", "-e", "artifact_dir=%s" % root,
                       "-e", json.dumps({"overrides": overrides}), env=secrets)
    return root, run


def test_llm_load_smoke_runs_every_point_and_reports(smoke):
    root, run = smoke
    assert run.returncode == 0, run.output
    assert "matrix: 2/2 done (0 failed, 0 skipped)" in run.flat
    matrix_dir = root / "001__matbenchmarking"
    for name, rate in (("000__constant_10", 10), ("001__constant_20", 20)):
        point = matrix_dir / name
        assert (point / "exit_code").read_text() == "0\n"
        settings = yaml.safe_load((point / "settings.yaml").read_text())
        assert settings["replicas"] == 2 and settings["token"] == "secret:llm-token"
        report = json.loads((point / "benchmark_report_stage_0.json").read_text())
        assert report["version"] == "0.2.1"
        result = json.loads((point / "output.json").read_text())["@result"]
        assert result["completed_requests"] > 0 and result["failed_requests"] == 0
        assert result["requested_rate"] == rate
        # the token went by file: the parameters name its path, never its value
        assert json.loads((point / "output.json").read_text())["@parameters"]["token_file"].endswith("llm-token")
    plots = root / "002__plots"
    for report in ("llm_load_latency_throughput.html", "llm_load_errors.html", "regression_report.html"):
        assert (plots / report).exists(), report
    records = json.loads((plots / "kpi_records.json").read_text())
    ttft = [r for r in records if r["kpi_name"] == "ttft_p50"]
    assert len(ttft) == 2 and all(r["deployment"] == "replicas=2" and r["replicas"] == 2 for r in ttft)
    assert all(5 <= r["value"] <= 200 for r in ttft), ttft   # the server's TTFT is 10 ms
    assert grep_tree(str(root), TOKEN) == []
    assert TOKEN not in run.output


def test_a_misspelt_harness_option_fails_before_anything_runs(tmp_path):
    overrides = {"tests.benchmark.matrix.common_settings": dict(common_settings(1), rat=5),
                 "tests.benchmark.deployment_factors": ["replicas"]}
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=llm_load_smoke", "-e", "artifact_dir=%s" % tmp_path,
                       "-e", json.dumps({"overrides": overrides}))
    assert run.returncode != 0
    assert "the llm_load harness has no option rat (did you mean rate?)" in run.flat
    assert not (tmp_path / "001__matbenchmarking").exists()


def toolbox(command, args, artifact_dir, env=None):
    return run_playbook("playbooks/toolbox.yml", "-e", "command=%r" % command, "-e", json.dumps({"args": args}),
                        "-e", "artifact_dir=%s" % artifact_dir, env=env)


def test_llm_load_run_toolbox_command_with_the_token_by_reference(tmp_path, server, secrets):
    run = toolbox("llm_load run", {"url": "http://127.0.0.1:%d" % server.port, "model": "fake-model", "rate": 20,
                                   "duration": 1, "output_tokens": "8", "token_secret": "llm-token"}, tmp_path, secrets)
    assert run.returncode == 0, run.output
    directory = tmp_path / "000__llm_load__run"
    result = json.loads((directory / "result.json").read_text())["@result"]
    assert result["completed_requests"] > 0 and result["failed_requests"] == 0
    assert (directory / "benchmark_report_stage_0.json").exists()
    assert grep_tree(str(tmp_path), TOKEN) == [] and TOKEN not in run.output


def test_llm_load_run_without_the_token_fails_with_the_servers_answer(tmp_path, server):
    run = toolbox("llm_load run", {"url": "http://127.0.0.1:%d" % server.port, "model": "fake-model", "rate": 5,
                                   "duration": 1}, tmp_path)
    assert run.returncode != 0
    failure = (tmp_path / "000__llm_load__run" / "FAILURE").read_text()
    assert "llm_load exited with 3" in failure and "401" in failure


def test_llm_load_test_run_takes_the_reference_parameters(tmp_path, server):
    reference = {"host": "127.0.0.1", "port": server.port, "duration": 1, "model_id": "fake-model",
                 "concurrency": 2, "max_input_tokens": 32, "max_output_tokens": 8}
    refused = toolbox("llm_load_test run", reference, tmp_path / "grpc")
    assert refused.returncode != 0
    assert "interface=grpc plugin=tgis_grpc_plugin is not supported" in " ".join(
        (tmp_path / "grpc" / "000__llm_load_test__run" / "FAILURE").read_text().split())
    # an authenticated server: llm_load_test has no token parameter, so this one gets none and says 401;
    # the reference names reach the harness (host, port, concurrency, the token bounds)
    run = toolbox("llm_load_test run", dict(reference, interface="http", plugin="openai_plugin"), tmp_path / "http")
    params = yaml.safe_load((tmp_path / "http" / "000__llm_load_test__run" / "_params.yaml").read_text())
    assert params["concurrency"] == 2 and params["max_output_tokens"] == 8
    assert "401" in (tmp_path / "http" / "000__llm_load_test__run" / "FAILURE").read_text(), run.output
