"""The llm_serving flow plans its points on kubesim's GPU nodes (two g6e.12xlarge: 4 NVIDIA L40S each, labelled
by the GPU operator's feature discovery): a point that asks 8 GPUs per pod cannot be placed, a point whose
128k context cannot fit in what vLLM would leave of an L40S at a 0.5 utilization does not fit; both are skipped
before anything is deployed (SKIPPED and capacity_plan.json, a console line, a line in every report, not a
failed point), the feasible one runs. Its wall time is exported as a point document, and a rehearsal of the same
matrix then estimates each point from it (same settings for the point that ran, nearest for the others).

The flow runs its test step only (``-e steps=test``) on a cluster that has what its prepare step would leave:
the GPU nodes as the GPU operator labels them, KServe's CRDs (kubesim's ``gpu-ready`` and ``kserve`` addons)
and the flow's namespace; the whole flow, prepare included, is test_flow_llm_serving.py's (this test took
120 CPU-seconds with the prepare step, 34 without)."""

import glob
import json
import os
import sqlite3

from conftest import read
from fake_openai import FakeServerThread

SIM_SETTINGS = dict(addons=["gpu-ready", "kserve"])
MODEL = "granite-3.1-8b-instruct"
MATRIX = {"tests.llm_serving.benchmark.matrix": {
    "factors": {"gpu_count": [1, 8]}, "common_settings": {"rate": 10},
    "include": [{"gpu_count": 2, "rate": 10, "runtime_args": ["--max-model-len=131072", "--tensor-parallel-size=1",
                                                              "--gpu-memory-utilization=0.5"]}],
    "exclude": []},
    "tests.llm_serving.benchmark.name_template": "g{gpu_count}"}


def test_infeasible_points_are_skipped_before_deploy_and_the_matrix_cost_is_estimated(playbook, sim, kube, tmp_path):
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(
        body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "llm-serving-testing"}})
    store = str(tmp_path / "results.sqlite")
    overrides = dict(MATRIX, **{"export.sqlite.path": store})
    run_dir = tmp_path / "run"
    with FakeServerThread(ttft=0.002, itl=0.001, model=MODEL) as server:
        sim.settings.inference_url = server.url
        try:
            run = playbook("playbooks/llm_serving.yml", "-e", "preset=llm_serving_smoke", "-e", "steps=test", "-e",
                           json.dumps({"overrides": overrides}),
                           "-e", "artifact_dir=%s" % run_dir, timeout=900)
        finally:
            sim.settings.inference_url = None
    assert run.returncode == 0, run.output[-4000:]
    flat = run.flat
    assert "skipped before deploy: g8: cannot be placed: a pod asks for 8 GPUs on one node; the largest node has 4" in flat
    assert "skipped before deploy: g2: does not fit on NVIDIA-L40S: one sequence of max_model_len 131072 tokens" in flat
    assert "1 succeeded, 0 failed, 0 skipped (already done), 2 skipped before deploy (cannot fit or be placed)" in flat

    matrix = glob.glob(str(run_dir / "*__llm_serving"))[0]
    points = {os.path.basename(p).split("__", 1)[1]: p for p in glob.glob(os.path.join(matrix, "*__g*"))}
    assert sorted(points) == ["g1", "g2", "g8"], points
    for name in ("g2", "g8"):
        # nothing was deployed for a skipped point: no command directory, no exit code, the reason kept
        assert read(points[name], "SKIPPED").startswith("skipped before deploy: ")
        assert not [d for d in os.listdir(points[name]) if d[:3].isdigit()]
        assert not os.path.exists(os.path.join(points[name], "exit_code"))
        assert read(points[name], "capacity_plan.json")["skip"] is True
    plan = read(points["g1"], "capacity_plan.json")
    assert plan["skip"] is False and plan["gpu_product"] == "NVIDIA-L40S" and plan["model"] == "ibm-granite/granite-3.1-8b-instruct"
    assert plan["memory"]["feasible"] and plan["memory"]["model_config_source"].startswith("shipped table")
    assert plan["placement"]["placeable"] and read(points["g1"], "exit_code").strip() == "0"
    estimate = read(matrix, "cost_estimate.json")
    assert estimate["totals"]["skipped"] == 2 and estimate["totals"]["without_history"] == 1

    # the reports say which points were skipped and why, and set the estimate beside what it took
    plots = sorted(glob.glob(str(run_dir / "*__plots")))[-1]
    summary = read(plots, "summary.json")
    assert sorted(s["name"] for s in summary["skipped_before_deploy"]) == ["g2", "g8"]
    index = read(plots, "reports_index.html")
    assert "2 point(s) skipped before deploy, not failed (they cannot fit or be placed)" in index
    assert "estimate vs actual: no point had both an estimate and a measured time" in index
    with sqlite3.connect(store) as connection:
        durations = [json.loads(row[0]) for row in connection.execute(
            "SELECT document FROM documents WHERE kind = 'point'").fetchall()]
    assert [(d["point"], d["matrix"], d["model"], d["gpus"], d["exit_code"]) for d in durations] == [
        ("g1", "llm_serving", "ibm-granite/granite-3.1-8b-instruct", 1, 0)]

    # a rehearsal of the same matrix: what each point asks, whether it fits, and what it will cost
    rehearsal = playbook("playbooks/llm_serving.yml", "-e", "preset=llm_serving_smoke,rehearsal_flows", "-e", "steps=test",
                         "-e", json.dumps({"overrides": overrides}),
                         "-e", "artifact_dir=%s" % (tmp_path / "rehearsal"), timeout=600)
    assert rehearsal.returncode == 0, rehearsal.output[-3000:]
    flat = rehearsal.flat
    took = durations[0]["value"]
    assert "| feasible, 1 GPU(s): fits: " in flat and "| estimate %.0f s (same settings)" % took in flat, flat[-3000:]
    assert "SKIPPED before deploy, 8 GPU(s): cannot be placed" in flat
    assert ("rehearsal: 3 point(s), 2 skipped before deploy, 1 to run on 1 GPU(s) in all: estimated" in flat
            and "the estimate rests on history for 1 of 1 point(s) to run (1 with the same settings, 0 from the nearest)"
            in flat), flat[-3000:]
    assert not glob.glob(str(tmp_path / "rehearsal" / "*__llm_serving" / "*__g1" / "exit_code"))
