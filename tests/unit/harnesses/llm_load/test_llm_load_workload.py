"""The post-processing workload and its report builders on a tree made of real harness runs."""

import json
import os
import uuid

import pytest
import yaml

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import kpi as kpi_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import llm_load, llm_load_reports

from conftest import run_cli

WORKLOAD = "ansible_collections.perfscale.topsail.plugins.module_utils.workloads.llm_load"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """Two server versions x (a sweep-like set of stages), one failed point, one point without output."""
    from fake_openai import FakeServerThread  # pylint: disable=import-outside-toplevel

    root = tmp_path_factory.mktemp("results")
    write(str(root / "000__host__capture_environment" / "environment.json"), json.dumps(
        {"os": {"hostname": "bench-1"}, "collection": {"version": "0.1.0", "git_commit": "abc"}, "cpu": {"model": "cpu"}}))
    stages = root / "stages.json"
    stages.write_text(json.dumps([{"load": "constant", "rate": 20, "max_requests": 6},
                                  {"load": "constant", "rate": 40, "max_requests": 6}]))
    matrix = root / "001__matbenchmarking"
    for index, version in enumerate(("1.0.0", "1.1.0")):
        with FakeServerThread(ttft=0.005 * (index + 1), itl=0.001, version=version) as server:
            point = matrix / ("%03d__server_version_%s" % (index, version))
            done = run_cli(["--url", server.url, "--model", "fake-model", "--stages", stages, "--output-tokens", "4",
                            "--output", point / "llm_load", "--server-name", "vllm", "--client-bound-p99-ms", "100"])
            assert done.returncode == 0, done.stderr
        write(str(point / "output.json"), done.stdout)
        write(str(point / "settings.yaml"), yaml.safe_dump({"model": "fake-model", "replicas": 2, "accelerator": "L4",
                                                            "runtime_image": "vllm:%s" % version, "workers": 1}))
        write(str(point / ".uuid"), str(uuid.uuid4()))
        write(str(point / "exit_code"), "0\n")
    failed = matrix / "002__server_version_broken"
    write(str(failed / "settings.yaml"), yaml.safe_dump({"model": "fake-model"}))
    write(str(failed / "FAILURE"), "harness exited with 3: connect error\n")
    write(str(failed / "stderr.log"), "llm_load: http://127.0.0.1:9: connect error\n")
    write(str(failed / "exit_code"), "3\n")
    missing = matrix / "003__no_output"
    write(str(missing / "settings.yaml"), yaml.safe_dump({"model": "fake-model"}))
    write(str(missing / "exit_code"), "0\n")
    return str(root)


def test_workload_loads_with_its_kpis():
    workload = workload_lib.load_workload(WORKLOAD)
    names = [k.name for k in workload.kpis]
    assert {"ttft_p50", "ttft_p99", "tpot_p90", "itl_p99", "e2e_p50", "output_token_throughput", "request_throughput",
            "achieved_rate", "error_rate", "client_bound"} <= set(names)
    assert workload.regression["comparison_keys"] == ["server_version", "collection_version"]


def test_parse_labels_and_kpis(tree):
    workload = workload_lib.load_workload(WORKLOAD)
    entries, _warnings = results_tree.parse_results(tree, workload)
    by_name = {os.path.basename(e.test_dir): e for e in entries}
    assert len(entries) == 4
    good = by_name["000__server_version_1.0.0"]
    payload, warnings = postprocess.build_payload(good, workload, workload.labels_model(), strict=True)
    labels = payload["labels"]
    assert labels["server_version"] == "1.0.0" and labels["server"] == "vllm" and labels["model"] == "fake-model"
    assert (labels["load"], labels["rate"], labels["stage"]) == ("constant", 40.0, 1)
    assert labels["replicas"] == 2 and labels["accelerator"] == "L4"
    assert labels["deployment"] == "accelerator=L4,replicas=2,runtime_image=vllm:1.0.0"
    assert labels["collection_version"] == "0.1.0" and labels["hostname"] == "bench-1"
    kpis = payload["kpis"]
    with open(os.path.join(good.test_dir, "output.json"), encoding="utf-8") as handle:
        headline = json.load(handle)["@result"]
    assert kpis["ttft_p50"]["value"] == headline["ttft_p50_ms"] > 4 and kpis["itl_p99"]["value"] == headline["itl_p99_ms"]
    assert kpis["error_rate"]["value"] == 0 and kpis["client_bound"]["value"] == 0
    assert kpis["ttft_p50"]["unit"] == "ms" and kpis["ttft_p50"]["higher_is_better"] is False
    assert kpis["output_token_throughput"]["higher_is_better"] is True
    assert warnings == []
    text = kpi_lib.openmetrics([(labels, kpis)])
    assert "perfscale_ttft_p99_ms{" in text and text.endswith("# EOF\n")
    # a failed point is a failure with its FAILURE text; a point without output degrades with a warning
    failed = by_name["002__server_version_broken"]
    assert failed.failed and "connect error" in failed.results["failure"]
    missing = by_name["003__no_output"]
    assert any("output.json: missing" in w for w in missing.warnings)
    _payload, warnings = postprocess.build_payload(missing, workload, workload.labels_model(), strict=False)
    assert any("KPI ttft_p50" in w for w in warnings)


def test_report_builders_on_the_stage_dataframe(tree):
    workload = workload_lib.load_workload(WORKLOAD)
    entries, _warnings = results_tree.parse_results(tree, workload)
    df = llm_load_reports.stages_dataframe(llm_load_reports.stage_rows(entries, workload.kpi_labels))
    assert len(df) == 4 and set(df["server_version"]) == {"1.0.0", "1.1.0"} and sorted(set(df["offered"])) == [20.0, 40.0]
    fig = llm_load_reports.plot_latency_vs_throughput(df)
    assert len(fig.data) == 2 and all(len(trace.x) == 2 for trace in fig.data)
    table = llm_load_reports.percentile_table(df)
    assert {"ttft_p50_ms", "tpot_p99_ms", "itl_p90_ms", "e2e_p99_ms"} <= set(table.columns)
    errors = llm_load_reports.error_table(df)
    assert list(errors["total_requests"]) == [6, 6, 6, 6]
    title, body = llm_load_reports.latency_throughput_report(df)
    assert "latency against throughput" in title and body.count('class="plot"') == 4
    title, body = llm_load_reports.error_report(df)
    assert "4 stage(s), 0 with errors, 0 client-bound" in body


def test_deployment_factors_leave_harness_options_out():
    assert llm_load.deployment_factors({"rate": 3, "model": "m", "replicas": 2, "tp": 4, "extra": {"a": 1}}) == "replicas=2,tp=4"
