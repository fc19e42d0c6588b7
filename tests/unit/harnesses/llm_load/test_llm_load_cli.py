"""The command end to end: files, the harness contract, the llm-d schema, start errors."""

import json
import os

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base as harness

from conftest import run_cli


def strict_json(text):
    def reject(constant):
        raise ValueError("non-finite number %s in JSON" % constant)
    return json.loads(text, parse_constant=reject)


def read_outputs(out):
    reports = sorted(name for name in os.listdir(out) if name.startswith("benchmark_report_stage_"))
    with open(os.path.join(out, "requests.jsonl"), encoding="utf-8") as handle:
        requests = [strict_json(line) for line in handle]
    with open(os.path.join(out, "result.json"), encoding="utf-8") as handle:
        result = strict_json(handle.read())
    documents = []
    for name in reports:
        with open(os.path.join(out, name), encoding="utf-8") as handle:
            documents.append(strict_json(handle.read()))
    return documents, requests, result


def test_constant_run_writes_schema_valid_reports_and_the_contract(fake_server, tmp_path, report_validator):
    server = fake_server(ttft=0.01, itl=0.001)
    out = tmp_path / "out"
    done = run_cli(["--url", server.url, "--model", "fake-model", "--rate", "40", "--duration", "0.5", "--warmup", "0.25",
                    "--prompt-tokens", "normal:32,4", "--output-tokens", "8", "--output", out, "--server-name", "fake",
                    "--client-bound-p99-ms", "100"])   # a shared test machine: the flag has its own tests
    assert done.returncode == 0, done.stderr
    document = harness.validate_output(done.stdout)
    assert document["name"] == "llm_load" and strict_json(done.stdout) == document
    result = document["@result"]
    assert result["total_requests"] == 20 and result["warmup_requests_excluded"] == 10 and result["failed_requests"] == 0
    assert 10 < result["ttft_p50_ms"] < 40 and result["ttft_p50_ms"] >= result["ttft_from_send_p50_ms"]
    assert result["requested_rate"] == 40 and abs(result["rate_error"]) < 0.02 and result["client_bound"] is False
    assert result["files"]["reports"] == ["benchmark_report_stage_0.json"] and result["server_version"] == "0.0.0-fake"
    reports, requests, written = read_outputs(out)
    assert written == document and len(requests) == 30 and sum(r["warmup"] for r in requests) == 10
    report = report_validator(reports[0])
    assert report["results"]["request_performance"]["aggregate"]["requests"]["total"] == 20
    assert report["scenario"]["load"]["standardized"]["rate_qps"] == 40
    assert report["scenario"]["stack"][0]["standardized"]["tool"] == "fake"
    assert report["results"]["observability"]["load_generator"]["send_lag"]["units"] == "ms"
    assert "stage 0 done" in done.stderr


def test_stages_file_runs_every_stage(fake_server, tmp_path, report_validator):
    server = fake_server(ttft=0.005, itl=0.001)
    stages = tmp_path / "stages.yaml"
    stages.write_text("- {load: constant, rate: 30, max_requests: 6}\n"
                      "- {load: concurrency, concurrency: 2, duration: 0.3, name: closed}\n"
                      "- {load: poisson, rate: 30, max_requests: 5, warmup_requests: 2}\n")
    out = tmp_path / "out"
    done = run_cli(["--url", server.url, "--model", "fake-model", "--stages", stages, "--output-tokens", "4", "--output", out])
    assert done.returncode == 0, done.stderr
    result = harness.validate_output(done.stdout)["@result"]
    assert [(s["stage"], s["load"], s["total_requests"]) for s in result["stages"]][::2] == [(0, "constant", 6), (2, "poisson", 5)]
    assert result["stages"][1]["name"] == "closed" and result["stages"][1]["requested_rate"] is None
    assert result["headline_stage"] == 2 and result["warmup_requests_excluded"] == 2
    reports, requests, _result = read_outputs(out)
    assert [r["scenario"]["load"]["standardized"]["stage"] for r in reports] == [0, 1, 2]
    assert reports[1]["scenario"]["load"]["standardized"]["concurrency"] == 2
    for report in reports:
        report_validator(report)
    assert {r["stage"] for r in requests} == {0, 1, 2}


def test_sweep_probes_then_steps_below_saturation(fake_server, tmp_path, report_validator):
    server = fake_server(ttft=0.005, itl=0.001)
    out = tmp_path / "out"
    done = run_cli(["--url", server.url, "--model", "fake-model", "--load", "sweep", "--concurrency", "2", "--duration", "0.3",
                    "--sweep-steps", "2", "--output-tokens", "4", "--output", out])
    assert done.returncode == 0, done.stderr
    stages = harness.validate_output(done.stdout)["@result"]["stages"]
    assert [s["load"] for s in stages] == ["concurrency", "constant", "constant"]
    probe = stages[0]["request_throughput"]
    assert stages[1]["rate"] == pytest.approx(probe / 3) and stages[2]["rate"] == pytest.approx(2 * probe / 3)
    for report in read_outputs(out)[0]:
        report_validator(report)


def test_worker_processes_share_the_schedule(fake_server, tmp_path):
    server = fake_server(ttft=0.005, itl=0.001)
    out = tmp_path / "out"
    done = run_cli(["--url", server.url, "--model", "fake-model", "--rate", "40", "--duration", "0.5", "--workers", "2",
                    "--output-tokens", "4", "--output", out])
    assert done.returncode == 0, done.stderr
    result = harness.validate_output(done.stdout)["@result"]
    _reports, requests, _result = read_outputs(out)
    assert sorted(r["index"] for r in requests) == list(range(20)) and result["total_requests"] == 20
    assert {r["worker"] for r in requests} == {0, 1} and all(r["index"] % 2 == r["worker"] for r in requests)
    assert abs(result["rate_error"]) < 0.05


def test_trace_prompt_file_chat_without_streaming(fake_server, tmp_path):
    server = fake_server(ttft=0.005, itl=0.001)
    trace = tmp_path / "trace.jsonl"
    trace.write_text("\n".join(json.dumps({"timestamp": t, "output_tokens": 3}) for t in (0, 0.05, 0.1, 0.2)))
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps({"messages": [{"role": "user", "content": "say three words"}]}) + "\n")
    out = tmp_path / "out"
    done = run_cli(["--url", server.url, "--model", "fake-model", "--load", "trace", "--trace", trace, "--duration", "5",
                    "--prompt-file", prompts, "--endpoint", "chat", "--no-stream", "--output", out])
    assert done.returncode == 0, done.stderr
    result = harness.validate_output(done.stdout)["@result"]
    assert result["total_requests"] == 4 and result["output_tokens_mean"] == 3 and result["input_tokens_mean"] == 3
    assert result["ttft_p50_ms"] is None and "non-streaming" in result["null_reasons"]["ttft_p50_ms"]
    assert result["e2e_p50_ms"] > 0 and result["requested_rate"] == pytest.approx(15.0)


def test_token_file_is_used_and_never_written(fake_server, tmp_path):
    server = fake_server(token="top-s3cret-value")
    token = tmp_path / "token"
    token.write_text("top-s3cret-value\n")
    out = tmp_path / "out"
    done = run_cli(["--url", server.url, "--model", "fake-model", "--rate", "20", "--max-requests", "3", "--token-file", token,
                    "--output-tokens", "2", "--output", out])
    assert done.returncode == 0, done.stderr
    assert "top-s3cret-value" not in done.stdout + done.stderr
    for name in os.listdir(out):
        assert "top-s3cret-value" not in (out / name).read_text()


@pytest.mark.parametrize("args,code,message", [
    (["--url", "localhost:8000"], 2, "--url 'localhost:8000': expected http://HOST"),
    (["--url", "http://127.0.0.1:9"], 3, "connect error: 127.0.0.1:9: Connection refused"),
    (["--url", "http://no-such-host.invalid:8000"], 3, "connect error: no-such-host.invalid:8000: "),
    (["--url", "SERVER", "--model", "other"], 3, "HTTP 404: no such endpoint or model 'other'"),
    (["--url", "SERVER", "--rate", None], 2, "load constant needs a rate"),
    (["--url", "SERVER", "--prompt-tokens", "gauss:3"], 2, "unknown distribution 'gauss'"),
    (["--url", "SERVER", "--token-file", "/nonexistent"], 2, "--token-file /nonexistent does not exist"),
    (["--url", "https://127.0.0.1:9", "--ca-file", "/nonexistent"], 2, "--ca-file /nonexistent does not exist"),
])
def test_start_errors_are_one_line_and_non_zero(fake_server, tmp_path, args, code, message):
    server = fake_server()
    options = {"--model": "fake-model", "--rate": "10", "--duration": "0.2"}
    pairs = dict(zip(args[::2], args[1::2]))
    options.update(pairs)
    argv = ["--output", tmp_path / "out"]
    for key, value in options.items():
        if value is not None:
            argv += [key, server.url if value == "SERVER" else value]
    done = run_cli(argv)
    assert done.returncode == code
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert done.stdout == ""


def test_a_run_where_nothing_succeeds_exits_4_with_its_results(fake_server, tmp_path, report_validator):
    server = fake_server(fault=lambda number, request: "http_500")
    out = tmp_path / "out"
    done = run_cli(["--url", server.url, "--model", "fake-model", "--rate", "50", "--max-requests", "5", "--output", out,
                    "--no-preflight"])
    assert done.returncode == 4
    result = harness.validate_output(done.stdout)["@result"]
    assert result["error_rate"] == 1.0 and result["errors_by_class"] == {"http_500": 5}
    assert "no measured request succeeded (errors: http_500 x5)" in done.stderr
    report_validator(read_outputs(out)[0][0])


def test_command_from_settings_maps_a_points_settings_to_options(tmp_path):
    from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import cli
    from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError

    argv = cli.command_from_settings({"url": "http://h:1", "model": "m", "rate": 5, "stream": False, "ignore_eos": True,
                                      "extra_body": {"temperature": 0}, "concurrency": None}, str(tmp_path), python="py")
    assert argv[:3] == ["py", "-m", "ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load"]
    assert argv[3:] == ["--extra-body", '{"temperature": 0}', "--ignore-eos", "true", "--model", "m", "--rate", "5",
                        "--no-stream", "--url", "http://h:1", "--output", str(tmp_path)]
    # ignore_eos takes auto, true or false (booleans as true/false); anything else is one line before anything runs
    for value, flag in (("auto", "auto"), (False, "false"), ("false", "false")):
        assert cli.command_from_settings({"ignore_eos": value}, "o", python="py")[3:5] == ["--ignore-eos", flag]
    with pytest.raises(ConfigError, match=r"^llm_load option ignore_eos: expected one of auto, true, false, got 'maybe'$"):
        cli.command_from_settings({"ignore_eos": "maybe"}, str(tmp_path))
    with pytest.raises(ConfigError, match="llm_load has no option speed; its options: .*client_bound_p99_ms"):
        cli.command_from_settings({"speed": 3}, str(tmp_path))


def test_runs_with_the_standard_library_only(fake_server, tmp_path):
    """As in a pod with nothing installed: no site-packages (python -S), a JSON stages file."""
    import subprocess
    import sys

    from conftest import PACKAGE, collections_root

    server = fake_server(ttft=0.002, itl=0.001)
    stages = tmp_path / "stages.json"
    stages.write_text(json.dumps([{"load": "poisson", "rate": 50, "max_requests": 5}]))
    done = subprocess.run([sys.executable, "-S", "-m", PACKAGE, "--url", server.url, "--model", "fake-model", "--stages",
                           str(stages), "--output-tokens", "3", "--output", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"PYTHONPATH": collections_root(), "PATH": os.environ.get("PATH", "")})
    assert done.returncode == 0, done.stderr
    assert harness.validate_output(done.stdout)["@result"]["completed_requests"] == 5
