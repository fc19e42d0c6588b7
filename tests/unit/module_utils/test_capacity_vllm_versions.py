"""The capacity planner by vLLM release: the release line of a version, the refusal of a line without a
calibration (one line naming the calibrated ones), the default stated in every plan and answer, and each
line's plan against the figures vLLM of that line logged (benchmarks/results/capacity_vllm_measured.json;
the expected numbers below are the logs', not the planner's)."""

import copy

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import architectures
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import memory
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import model_table
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import requests
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
QWEN32 = "Qwen/Qwen3-32B"
GPT_OSS_120B = "openai/gpt-oss-120b"
H100 = 79.19
# llm-d-planner's vLLM 0.11.0 table reports the H100 as 79.18 GiB
H100_TABLE = 79.18
LINES = "calibrated lines: 0.10, 0.11, 0.19"
DEFAULT = "calibrated on vLLM 0.19 (default; set vllm_version to yours)"


def shape(model_id):
    return architectures.shape_of(copy.deepcopy(model_table.lookup(model_id)["config"]), model_id)


def plan_of(model_id, gpu_gib=H100, **kwargs):
    return memory.plan(memory.ServingRequest(shape(model_id), gpu_gib, **kwargs))


def refusal(function, *args, **kwargs):
    with pytest.raises(CapacityError) as refused:
        function(*args, **kwargs)
    assert "\n" not in str(refused.value)
    return str(refused.value)


def available_kv_gib(plan):
    """The available KV cache as vLLM logs it: negative when weights, activation and non-torch exceed the
    memory vLLM may use (the plan's kv_cache_gib stops at 0)."""
    return plan["usable_gib"] - plan["weights_gib"] - plan["activation_gib"] - plan["non_torch_gib"]


@pytest.mark.parametrize("version, line", [
    ("0.10", "0.10"), ("0.10.2", "0.10"), ("v0.11.0", "0.11"), ("V0.19.1", "0.19"), (" 0.19.0 ", "0.19"),
    ("0.10.1.1", "0.10"), ("0.11.0rc3", "0.11"), ("0.10.1.dev636+g92ff41abe", "0.10"),
    ("0.11.0+582e4e37.nv25.11", "0.11"), ("0.011", "0.11"),
])
def test_a_version_is_planned_at_its_release_line(version, line):
    plan = plan_of(LLAMA, max_model_len=8192, vllm_version=version)
    assert plan["vllm_version"] == line
    assert plan["calibration"] == "calibrated on vLLM %s (vllm_version %s)" % (
        "0.10-0.11" if line in ("0.10", "0.11") else line, version.strip())


@pytest.mark.parametrize("version, message", [
    ("0.14.1", "vllm_version 0.14.1: release line 0.14 is not calibrated; %s (docs/capacity.md says what to do "
               "with another release)" % LINES),
    ("v0.6.3.post1", "vllm_version v0.6.3.post1: release line 0.6 is not calibrated; %s (docs/capacity.md says what "
                     "to do with another release)" % LINES),
    ("0.20", "vllm_version 0.20: release line 0.20 is not calibrated; %s (docs/capacity.md says what to do with "
             "another release)" % LINES),
    ("latest", "vllm_version 'latest': expected a vLLM release such as 0.11 or v0.10.2; %s" % LINES),
    ("0.x", "vllm_version '0.x': expected a vLLM release such as 0.11 or v0.10.2; %s" % LINES),
    ("0.11\n0.19", "vllm_version '0.11\\n0.19': expected a vLLM release such as 0.11 or v0.10.2; %s" % LINES),
    ("1" * 200, "vllm_version '%s...: expected a vLLM release such as 0.11 or v0.10.2; %s" % ("1" * 56, LINES)),
    (0.1, "vllm_version 0.1: expected a vLLM release as text, such as \"0.11\" or \"v0.10.2\" (YAML reads 0.10 as "
          "the number 0.1: quote it); %s" % LINES),
    (11, "vllm_version 11: expected a vLLM release as text, such as \"0.11\" or \"v0.10.2\"; %s" % LINES),
    (["0.11"], "vllm_version ['0.11']: expected a vLLM release as text, such as \"0.11\" or \"v0.10.2\"; %s" % LINES),
])
def test_a_version_without_a_calibration_or_not_a_version_is_one_line_naming_the_calibrated_lines(version, message):
    assert refusal(memory.ServingRequest, shape(LLAMA), H100, vllm_version=version) == message


def test_without_a_version_the_plan_and_the_answer_state_the_default_line():
    plan, message = requests.serving_plan({"model": LLAMA, "gpu": "NVIDIA-H100-80GB-HBM3", "max_model_len": 8192,
                                           "online": False})
    assert plan["vllm_version"] == "0.19" and plan["calibration"] == DEFAULT
    assert message.startswith("feasible: fits: ") and message.endswith(" (%s)" % DEFAULT)
    plan, message = requests.serving_plan({"model": LLAMA, "gpu": "NVIDIA-H100-80GB-HBM3", "max_model_len": 8192,
                                           "online": False, "vllm_version": "0.11.0"})
    assert plan["vllm_version"] == "0.11" and message.endswith(" (calibrated on vLLM 0.10-0.11 (vllm_version 0.11.0))")
    assert refusal(requests.serving_plan, {"model": LLAMA, "gpu": "NVIDIA-H100-80GB-HBM3", "online": False,
                                           "vllm_version": "0.15.1"}) == \
        "vllm_version 0.15.1: release line 0.15 is not calibrated; %s (docs/capacity.md says what to do with " \
        "another release)" % LINES


# llm-d-planner's vLLM 0.11.0 table (H100, gpu_memory_utilization 0.9, max_model_len 16000, vLLM's defaults of
# 8192 batched tokens and 1024 sequences): weights, activation, non-torch, available KV cache
@pytest.mark.parametrize("model_id, tp, weights, activation, non_torch, kv_cache", [
    (QWEN32, 1, 61.03, 5.64, 0.14, 4.45),
    (QWEN32, 2, 30.59, 5.64, 0.54, 34.49),
    (LLAMA, 1, 14.99, 4.76, 0.13, 51.38),
])
def test_vllm_0_11_plans_match_its_logs(model_id, tp, weights, activation, non_torch, kv_cache):
    plan = plan_of(model_id, H100_TABLE, tensor_parallel_size=tp, max_model_len=16000, gpu_memory_utilization=0.9,
                   vllm_version="0.11.0")
    assert plan["weights_gib"] == pytest.approx(weights, rel=0.01)
    assert plan["activation_gib"] == pytest.approx(activation, rel=0.03)
    assert plan["non_torch_gib"] == pytest.approx(non_torch, abs=0.02)
    assert plan["kv_cache_gib"] == pytest.approx(kv_cache, rel=0.02)
    assert plan["feasible"]


def test_vllm_0_11_gpt_oss_120b_on_one_h100_is_refused_as_vllm_refused_it():
    # vLLM issue 27508 (0.11): `vllm serve openai/gpt-oss-120b --gpu-memory-utilization 0.95
    # --max-num-batched-tokens 1024` logged "Available KV cache memory: 1.71 GiB" and refused its 131072-token
    # context; with 0.19's terms the planner left 6.2 GiB and called it feasible
    plan = plan_of(GPT_OSS_120B, gpu_memory_utilization=0.95, max_num_batched_tokens=1024, vllm_version="0.11")
    assert available_kv_gib(plan) == pytest.approx(1.71, abs=0.3)
    assert not plan["feasible"] and plan["reason"].startswith("one sequence of max_model_len 131072 tokens needs")


def test_vllm_0_10_gpt_oss_120b_has_no_room_for_a_kv_cache_as_logged():
    # vLLM issue 23278 (0.10.1, vLLM's defaults: utilization 0.9): "Model loading took 65.9651 GiB",
    # "Available KV cache memory: -2.14 GiB"
    plan = plan_of(GPT_OSS_120B, vllm_version="0.10.1")
    assert plan["weights_gib"] == pytest.approx(65.97, rel=0.01)
    assert available_kv_gib(plan) == pytest.approx(-2.14, abs=0.3)
    assert not plan["feasible"] and plan["reason"].startswith("nothing left for the KV cache")


def test_vllm_0_19_plans_match_its_logs_given_or_by_default():
    # llm-d-planner's vLLM 0.19.0 sweep, Llama 3.1 8B on an H100 at 0.95: weights 14.99, activation 1.89,
    # non-torch 0.25, KV cache 58.11 GiB; Qwen2.5 7B at TP 2: non-torch 2.06, KV cache 63.84
    for version in ("0.19.0", None):
        plan = plan_of(LLAMA, max_model_len=8192, gpu_memory_utilization=0.95, vllm_version=version)
        assert plan["activation_gib"] == pytest.approx(1.89, rel=0.05)
        assert plan["non_torch_gib"] == pytest.approx(0.25, abs=0.02)
        assert plan["kv_cache_gib"] == pytest.approx(58.11, rel=0.02)
        plan = plan_of("Qwen/Qwen2.5-7B-Instruct", tensor_parallel_size=2, max_model_len=8192,
                       gpu_memory_utilization=0.95, vllm_version=version)
        assert plan["non_torch_gib"] == pytest.approx(2.06, abs=0.05)
        assert plan["kv_cache_gib"] == pytest.approx(63.84, rel=0.02)


SERVING = {"request": "llm_serving", "model_key": "tests.llm_serving.model", "skip_infeasible": True,
           "check_placement": False, "online": False, "gpu_memory_gib": H100_TABLE}


def serving_config(runtime_args):
    return {"tests": {"llm_serving": {"model": {"name": "qwen", "source": "hf://" + QWEN32},
                                      "test_settings": {"gpu_count": 1, "runtime_args": runtime_args}}}}


def test_a_flow_plans_its_points_at_the_configured_release_and_refuses_an_uncalibrated_one_before_any_point():
    planner = requests.PointPlanner(dict(SERVING, vllm_version="0.11"), "tests.llm_serving.test_settings")
    verdict = planner.plan_point(serving_config(["--max-model-len=16000"]), {})
    # Qwen3-32B on one H100 under vLLM 0.11: 4.45 GiB of KV cache logged (0.19's terms promised 7.8)
    assert verdict["memory"]["vllm_version"] == "0.11"
    assert verdict["memory"]["kv_cache_gib"] == pytest.approx(4.45, rel=0.02)
    default = requests.PointPlanner(SERVING, "tests.llm_serving.test_settings")
    assert default.plan_point(serving_config(["--max-model-len=16000"]), {})["memory"]["calibration"] == DEFAULT
    assert refusal(requests.PointPlanner, dict(SERVING, vllm_version="0.13.0"), "tests.llm_serving.test_settings") == \
        "capacity.vllm_version 0.13.0: release line 0.13 is not calibrated; %s (docs/capacity.md says what to do " \
        "with another release)" % LINES
    # a fine-tuning matrix does not run vLLM: its vllm_version is not read
    requests.PointPlanner({"request": "fine_tuning", "vllm_version": "0.13.0"}, "s")
