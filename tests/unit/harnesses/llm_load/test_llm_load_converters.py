"""Converters of other tools' outputs to the llm-d report v0.2.1 (fixtures made by the real tools)."""

import json
import os

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import converters

from conftest import FIXTURES, run_cli

CONVERT = "ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.convert"


def aggregate(report):
    return report["results"]["request_performance"]["aggregate"]


def test_registry_lists_every_converter():
    assert converters.known_converters() == ["guidellm", "inference-perf", "llm-load-test", "vllm-bench"]
    for name in converters.known_converters():
        module = converters.get_converter(name)
        assert module.NAME == name and module.DESCRIPTION and callable(module.convert_path)
    with pytest.raises(converters.ConversionError, match="unknown converter 'k6'; known: guidellm"):
        converters.get_converter("k6")


def test_guidellm_reference_report(report_validator):
    """The guidellm output shipped with llm-d-benchmark (guidellm 0.8.0.dev18)."""
    reports = converters.convert_path("guidellm", os.path.join(FIXTURES, "guidellm_report_v2.json"))
    assert len(reports) == 2
    for index, report in enumerate(reports):
        report_validator(report)
        assert report["scenario"]["load"]["standardized"]["stage"] == index
    first = aggregate(reports[0])
    assert first["requests"] == dict(first["requests"], total=2, failures=0)
    ttft = first["latency"]["time_to_first_token"]
    assert ttft["units"] == "s" and ttft["mean"] == pytest.approx(0.011481165885925293) and ttft["p50"] == pytest.approx(0.011276006698608398)
    assert first["latency"]["request_latency"]["units"] == "s"
    assert first["throughput"]["request_rate"]["mean"] == pytest.approx(0.39843430656414264)
    assert [r["scenario"]["load"]["standardized"]["rate_qps"] for r in reports] == [2.0, 4.0]
    assert reports[0]["scenario"]["stack"][0]["standardized"]["model"]["name"] == "e2e-mock-model"


def test_guidellm_0_8_1_run(report_validator):
    reports = converters.convert_path("guidellm", os.path.join(FIXTURES, "guidellm_0.8.1.json"))
    with open(os.path.join(FIXTURES, "guidellm_0.8.1.json"), encoding="utf-8") as handle:
        native = json.load(handle)
    for report, benchmark in zip(reports, native["benchmarks"]):
        report_validator(report)
        metrics = benchmark["metrics"]
        got = aggregate(report)
        assert got["requests"]["total"] == metrics["request_totals"]["total"]
        assert got["requests"]["failures"] == metrics["request_totals"]["errored"] > 0
        assert got["latency"]["time_to_first_token"]["p50"] == pytest.approx(metrics["time_to_first_token_ms"]["successful"]["median"] / 1e3)
        # by meaning: guidellm's TPOT includes the first token, its ITL is the decode time per token
        assert got["latency"]["normalized_time_per_output_token"]["mean"] == pytest.approx(
            metrics["time_per_output_token_ms"]["successful"]["mean"] / 1e3)
        assert got["latency"]["time_per_output_token"]["mean"] == pytest.approx(metrics["inter_token_latency_ms"]["successful"]["mean"] / 1e3)
    converted = reports[0]["results"]["observability"]["converted_from"]
    assert converted["tool_version"] == "0.8.1" and converted["sampled_send_lag"]["units"] == "ms"


def test_inference_perf_run(report_validator):
    directory = os.path.join(FIXTURES, "inference_perf_0.7.0")
    reports = converters.convert_path("inference-perf", directory)
    assert len(reports) == 2
    with open(os.path.join(directory, "stage_1_lifecycle_metrics.json"), encoding="utf-8") as handle:
        native = json.load(handle)
    for report in reports:
        report_validator(report)
    got = aggregate(reports[1])
    assert got["requests"]["total"] == native["successes"]["count"] + native["failures"]["count"]
    assert got["latency"]["inter_token_latency"]["p50"] == native["successes"]["latency"]["inter_token_latency"]["median"]
    assert reports[1]["scenario"]["load"]["standardized"]["rate_qps"] == 10.0
    assert reports[1]["results"]["observability"]["converted_from"]["achieved_rate_qps"] == native["load_summary"]["achieved_rate"]
    single = converters.convert_path("inference-perf", os.path.join(directory, "stage_0_lifecycle_metrics.json"))
    assert aggregate(single[0]) == aggregate(reports[0])


def test_vllm_bench_serve_result(report_validator):
    path = os.path.join(FIXTURES, "vllm_bench_serve.json")
    (report,) = converters.convert_path("vllm-bench", path)
    report_validator(report)
    with open(path, encoding="utf-8") as handle:
        native = json.load(handle)
    got = aggregate(report)
    assert got["requests"] == dict(got["requests"], total=native["completed"] + native["failed"], failures=native["failed"])
    assert got["latency"]["time_to_first_token"]["p50"] == pytest.approx(native["median_ttft_ms"] / 1e3)
    assert got["latency"]["inter_token_latency"]["p99"] == pytest.approx(native["p99_itl_ms"] / 1e3)
    assert got["latency"]["time_per_output_token"]["mean"] == pytest.approx(native["mean_tpot_ms"] / 1e3)
    assert "not produced by vLLM" in report["results"]["observability"]["converted_from"]["fixture_provenance"]
    # without the per-request lists, the summary keys are read
    summary_only = {k: v for k, v in native.items() if k not in ("ttfts", "itls", "output_lens", "input_lens", "latencies", "errors")}
    (report,) = converters.get_converter("vllm-bench").convert_document(summary_only, path)
    report_validator(report)
    assert aggregate(report)["latency"]["time_to_first_token"]["p90"] == pytest.approx(native["p90_ttft_ms"] / 1e3)


def test_llm_load_test_output(report_validator):
    path = os.path.join(FIXTURES, "llm_load_test_b27aad1.json")
    (report,) = converters.convert_path("llm-load-test", path)
    report_validator(report)
    with open(path, encoding="utf-8") as handle:
        native = json.load(handle)
    got = aggregate(report)
    assert got["requests"]["total"] == native["summary"]["total_requests"] and got["requests"]["failures"] == native["summary"]["total_failures"]
    assert got["latency"]["time_to_first_token"]["p50"] == pytest.approx(native["summary"]["ttft"]["median"] / 1e3)
    assert report["scenario"]["load"]["standardized"]["concurrency"] == 2
    assert report["results"]["observability"]["converted_from"]["errors_by_class"] == {"http_500": 4}


@pytest.mark.parametrize("name,content,message", [
    ("guidellm", {"benchmarks": "none"}, "expected a guidellm report"),
    ("vllm-bench", {"ttft": 1}, "expected a vllm bench serve result"),
    ("llm-load-test", [], "expected llm-load-test output"),
])
def test_wrong_inputs_are_one_line_errors(tmp_path, name, content, message):
    path = tmp_path / "input.json"
    path.write_text(json.dumps(content))
    with pytest.raises(converters.ConversionError, match=message):
        converters.convert_path(name, str(path))
    with pytest.raises(converters.ConversionError, match="expected an inference-perf stage"):
        converters.convert_path("inference-perf", str(path))


def test_convert_command(tmp_path, report_validator):
    done = run_cli(["--from", "inference-perf", os.path.join(FIXTURES, "inference_perf_0.7.0"), "--output", tmp_path,
                    "--tool-version", "0.7.0"], module=CONVERT)
    assert done.returncode == 0, done.stderr
    written = json.loads(done.stdout)["reports"]
    assert [os.path.basename(p) for p in written] == ["benchmark_report_inference-perf_0.json", "benchmark_report_inference-perf_1.json"]
    with open(written[0], encoding="utf-8") as handle:
        report = report_validator(json.load(handle))
    assert report["scenario"]["load"]["standardized"]["tool_version"] == "0.7.0"
    done = run_cli(["--from", "guidellm", tmp_path / "missing.json", "--output", tmp_path], module=CONVERT)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "No such file" in done.stderr
