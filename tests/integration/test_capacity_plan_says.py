"""The toolbox command `capacity plan` says what it assumed and what the user may have meant."""

import json

from helpers import run_playbook

CONFIG = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
          "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
          "max_position_embeddings": 131072}


def toolbox(tmp_path, *args):
    return run_playbook("perfscale.topsail.toolbox", "-e", "artifact_dir=%s" % tmp_path,
                        "-e", "command='capacity plan'", *args,
                        env={"KUBECONFIG": str(tmp_path / "no-such-kubeconfig")})


def test_a_config_without_a_dtype_is_planned_as_bfloat16_with_a_warning(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIG))
    run = toolbox(tmp_path / "a", "-e", "model_config=%s" % path, "-e", "gpu=NVIDIA-H100-80GB-HBM3",
                  "-e", "max_model_len=8192")
    assert run.returncode == 0, run.output
    warning = ("[WARNING]: the model config names no dtype (torch_dtype): the plan assumes bfloat16, 2 bytes per "
               "parameter; give dtype (vLLM's --dtype) if the model is served in another")
    assert warning in run.flat
    plan = json.loads((tmp_path / "a" / "000__capacity__plan" / "capacity_plan.json").read_text())
    assert plan["dtype"] == "bfloat16" and plan["warnings"][0] == warning[len("[WARNING]: "):]
    assert "feasible: fits: " in run.flat


def test_a_gpu_named_in_part_gets_the_products_it_may_mean(tmp_path):
    run = toolbox(tmp_path / "b", "-e", "model=meta-llama/Llama-3.1-8B-Instruct", "-e", "gpu=H100")
    assert run.returncode != 0
    assert ("gpu 'H100' is not a GPU product this planner knows (did you mean one of NVIDIA-H100-NVL, "
            "NVIDIA-H100-PCIe, NVIDIA-H100-80GB-HBM3?); known: ") in run.flat
    assert "Traceback" not in run.output
