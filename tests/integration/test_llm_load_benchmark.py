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
def smoke(tmp_path_factory):
    root = tmp_path_factory.mktemp("llm")
    secrets = tmp_path_factory.mktemp("secrets")
    (secrets / "llm-token").write_text(TOKEN)
    with FakeServerThread(ttft=0.01, itl=0.002, token=TOKEN) as server:
        overrides = {"tests.benchmark.matrix.common_settings": common_settings(server.port),
                     "tests.benchmark.deployment_factors": ["replicas"]}
        run = run_playbook("playbooks/benchmark.yml", "-e", "preset=llm_load_smoke", "-e", "artifact_dir=%s" % root,
                           "-e", json.dumps({"overrides": overrides}), env={"PERFSCALE_SECRETS_DIR": str(secrets)})
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
