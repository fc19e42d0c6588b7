"""The toolbox command `capacity plan` as a user runs it: no cluster, the model from the shipped table or a
config.json, capacity_plan.json in its artifact directory; an infeasible plan is a successful command that
says why, bad input is one line naming it."""

import json

from helpers import run_playbook


def toolbox(tmp_path, *args):
    return run_playbook("perfscale.topsail.toolbox", "-e", "artifact_dir=%s" % tmp_path, *args,
                        env={"KUBECONFIG": str(tmp_path / "no-such-kubeconfig")})


def test_capacity_plan_feasible_infeasible_and_bad_input(tmp_path):
    run = toolbox(tmp_path / "a", "-e", "command='capacity plan'", "-e", "model=hf://meta-llama/Llama-3.1-8B-Instruct",
                  "-e", "gpu=NVIDIA-H100-80GB-HBM3", "-e", "max_model_len=8192", "-e", "gpu_memory_utilization=0.95")
    assert run.returncode == 0, run.output
    plan = json.loads((tmp_path / "a" / "000__capacity__plan" / "capacity_plan.json").read_text())
    assert plan["feasible"] and 57 < plan["kv_cache_gib"] < 59.5 and plan["kv_cache_bytes_per_token"] == 131072
    assert "feasible: fits: " in run.flat

    # a 70B model on one GPU: the command succeeds and says why it cannot serve
    config = {"model_type": "llama", "hidden_size": 8192, "num_hidden_layers": 80, "num_attention_heads": 64,
              "num_key_value_heads": 8, "intermediate_size": 28672, "vocab_size": 128256,
              "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    run = toolbox(tmp_path / "b", "-e", "command='capacity plan'", "-e", "model_config=%s" % path, "-e", "gpu=NVIDIA-L40S",
                  "-e", "max_model_len=4096")
    assert run.returncode == 0, run.output
    plan = json.loads((tmp_path / "b" / "000__capacity__plan" / "capacity_plan.json").read_text())
    assert plan["feasible"] is False and plan["reason"].startswith("the weights need 131.4 GiB per GPU")
    assert "INFEASIBLE: the weights need 131.4 GiB per GPU" in run.flat

    run = toolbox(tmp_path / "c", "-e", "command='capacity plan'", "-e", "model=meta-llama/Llama-3.1-8B-Instruct",
                  "-e", "gpu=NVIDIA-H900")
    assert run.returncode != 0
    assert "gpu 'NVIDIA-H900' is not a GPU product this planner knows" in run.flat
    assert "Traceback" not in run.output
    run = toolbox(tmp_path / "d", "-e", "command='capacity plan'", "-e", "model=meta-llama/Llama-3.1-8B-Instruct",
                  "-e", "gpu=NVIDIA-L40S", "-e", "tensor_parallel_size=3")
    assert run.returncode != 0
    assert "tensor_parallel_size 3 does not divide the model's 32 attention heads (vLLM refuses it)" in run.flat


def test_capacity_plan_by_vllm_release(tmp_path):
    # without vllm_version the plan and the answer say which release it was calibrated on
    run = toolbox(tmp_path / "a", "-e", "command='capacity plan'", "-e", "model=Qwen/Qwen3-32B",
                  "-e", "gpu_memory_gib=79.18", "-e", "max_model_len=16000")
    assert run.returncode == 0, run.output
    plan = json.loads((tmp_path / "a" / "000__capacity__plan" / "capacity_plan.json").read_text())
    assert plan["vllm_version"] == "0.19" and plan["calibration"] == \
        "calibrated on vLLM 0.19 (default; set vllm_version to yours)"
    assert "(calibrated on vLLM 0.19 (default; set vllm_version to yours))" in run.flat
    # vLLM 0.11 logged 4.45 GiB of KV cache for this model on one H100 (llm-d-planner's 0.11.0 table)
    run = toolbox(tmp_path / "b", "-e", "command='capacity plan'", "-e", "model=Qwen/Qwen3-32B",
                  "-e", "gpu_memory_gib=79.18", "-e", "max_model_len=16000", "-e", "vllm_version=v0.11.0")
    assert run.returncode == 0, run.output
    plan = json.loads((tmp_path / "b" / "000__capacity__plan" / "capacity_plan.json").read_text())
    assert plan["vllm_version"] == "0.11" and 4.3 < plan["kv_cache_gib"] < 4.6
    run = toolbox(tmp_path / "c", "-e", "command='capacity plan'", "-e", "model=Qwen/Qwen3-32B",
                  "-e", "gpu_memory_gib=79.18", "-e", "vllm_version=0.14.1")
    assert run.returncode != 0
    assert "vllm_version 0.14.1: release line 0.14 is not calibrated; calibrated lines: 0.10, 0.11, 0.19" in run.flat
    assert "Traceback" not in run.output
