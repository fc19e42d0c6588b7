"""The capacity planner: parameter counts against the published sizes, vLLM's memory terms, feasibility,
bad input, placement on GPU nodes, the point planner of the flows and the cost estimate from history."""

import copy
import json
import math
import os

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import architectures
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import estimate
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import gpus
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import memory
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import model_table
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import models
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import placement
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import requests
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import training
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import vllm_versions
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

GIB = 2 ** 30


def shape(model_id):
    return architectures.shape_of(copy.deepcopy(model_table.lookup(model_id)["config"]), model_id)


# (model, published total, published active or None, whether the card's "active" leaves the embeddings out,
#  relative tolerance): each published figure with its source in model_table.py (published_source)
PUBLISHED = [
    # Meta's model cards (meta-llama/llama-models MODEL_CARD.md): 8B, 70B, 1B (1.23B), 3B (3.21B), 7B
    ("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, None, False, 0.005),
    ("meta-llama/Llama-3.1-70B-Instruct", 70.6e9, None, False, 0.005),
    ("meta-llama/Llama-3.2-1B-Instruct", 1.23e9, None, False, 0.01),
    ("meta-llama/Llama-3.2-3B-Instruct", 3.21e9, None, False, 0.005),
    ("meta-llama/Llama-2-7b-hf", 6.74e9, None, False, 0.005),
    # Qwen3 model cards: 8.2B; 32.8B; 30.5B total / 3.3B activated; 235B / 22B
    ("Qwen/Qwen3-8B", 8.2e9, None, False, 0.01),
    ("Qwen/Qwen3-32B", 32.8e9, None, False, 0.01),
    ("Qwen/Qwen3-30B-A3B", 30.5e9, 3.3e9, False, 0.02),
    ("Qwen/Qwen3-235B-A22B", 235e9, 22e9, False, 0.02),
    # Mixtral of Experts blog: 46.7B total, 12.9B active per token
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7e9, 12.9e9, False, 0.005),
    # gpt-oss README: 117B total / 5.1B active, 21B / 3.6B (active without the embedding table)
    ("openai/gpt-oss-120b", 117e9, 5.1e9, True, 0.01),
    ("openai/gpt-oss-20b", 21e9, 3.6e9, True, 0.01),
    # DeepSeek-V3 README: 671B total, 37B activated (the MTP module's 14B apart)
    ("deepseek-ai/DeepSeek-V3", 671e9, 37e9, True, 0.02),
    # keras-hub's gemma2_instruct_9b preset: 9,241,705,984 parameters
    ("google/gemma-2-9b-it", 9241705984, None, False, 0.0001),
]


@pytest.mark.parametrize("model_id,total,active,without_embeddings,tolerance", PUBLISHED)
def test_parameter_counts_match_the_published_sizes(model_id, total, active, without_embeddings, tolerance):
    counts = architectures.parameter_counts(shape(model_id))
    assert counts["total"] == pytest.approx(total, rel=tolerance)
    if active:
        found = counts["active_without_embeddings"] if without_embeddings else counts["active"]
        assert found == pytest.approx(active, rel=tolerance)


def test_every_shipped_model_reads_and_has_its_provenance():
    for model_id in model_table.known_models():
        entry = model_table.lookup(model_id)
        assert entry["source"] and entry["config"]["model_type"] in architectures.FAMILIES
        assert architectures.parameter_counts(shape(model_id))["total"] > 1e9


def test_grouped_query_attention_and_mla_kv_cache_per_token():
    llama = shape("meta-llama/Llama-3.1-8B-Instruct")  # 32 layers, 8 KV heads of 128
    assert memory.kv_cache_bytes_per_token(llama, 2) == 2 * 32 * 8 * 128 * 2
    assert memory.kv_cache_bytes_per_token(llama, 2, tp=2) == 2 * 32 * 4 * 128 * 2
    assert memory.kv_cache_bytes_per_token(llama, 2, tp=16) == 2 * 32 * 1 * 128 * 2  # a head per rank at least
    assert memory.kv_cache_bytes_per_token(llama, 1, pp=2) == 2 * 16 * 8 * 128
    deepseek = shape("deepseek-ai/DeepSeek-V3")  # MLA: one latent (512) + rope (64) per layer, on every rank
    assert memory.kv_cache_bytes_per_token(deepseek, 2, tp=8) == 61 * (512 + 64) * 2


def test_weights_quantization_and_tied_embeddings():
    llama = shape("meta-llama/Llama-3.1-8B-Instruct")
    bf16 = memory.weights_bytes_per_gpu(llama)
    assert bf16 == pytest.approx(8.03e9 * 2, rel=0.001)
    fp8 = copy.copy(llama)
    fp8.quantization = architectures.quantization_for("fp8")
    # the embeddings and the output projection stay 16-bit: 2 x 525M x 2 bytes + 6.98B x 1 byte
    embeddings = 128256 * 4096
    assert memory.weights_bytes_per_gpu(fp8) == pytest.approx(2 * embeddings * 2 + (8.03e9 - 2 * embeddings), rel=0.002)
    assert memory.weights_bytes_per_gpu(llama, tp=2) == pytest.approx(bf16 / 2, rel=0.001)
    tied = shape("meta-llama/Llama-3.2-1B-Instruct")
    assert tied.tied_embeddings and "lm_head" not in architectures.parameter_counts(tied)["by_component"]
    gpt_oss = shape("openai/gpt-oss-20b")  # MXFP4 experts (4.25 bits, padded to 256), the rest bf16
    assert gpt_oss.quantization["method"] == "mxfp4"
    assert memory.weights_bytes_per_gpu(gpt_oss) / GIB == pytest.approx(13.64, rel=0.05)  # vLLM 0.19 logged 13.64


def test_int4_group_quantization_counts_its_scales():
    awq = architectures.quantization_of({"quant_method": "awq", "bits": 4, "group_size": 128})
    assert awq["bits_per_weight"] == pytest.approx(4 + 20 / 128.0)
    assert architectures.quantization_of({"quant_method": "compressed-tensors", "config_groups": {
        "group_0": {"weights": {"num_bits": 8, "type": "float"}}}})["method"] == "fp8"


def plan_of(model_id, gpu_gib=79.19, **kwargs):
    return memory.plan(memory.ServingRequest(shape(model_id), gpu_gib, **kwargs))


def test_plan_of_a_measured_case_is_close_to_vllm():
    # vLLM 0.19 on an H100 (benchmarks/results/capacity_vllm_measured.json): weights 14.99, activation 1.89,
    # non-torch 0.25, KV cache 58.11 GiB, 476,016 tokens
    plan = plan_of("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192, gpu_memory_utilization=0.95)
    assert plan["feasible"] and plan["reason"].startswith("fits")
    assert plan["weights_gib"] == pytest.approx(14.99, rel=0.01)
    assert plan["activation_gib"] == pytest.approx(1.89, rel=0.05)
    assert plan["kv_cache_gib"] == pytest.approx(58.11, rel=0.02)
    assert plan["max_tokens_in_kv_cache"] == pytest.approx(476016, rel=0.02)
    assert plan["max_concurrent_sequences_at_max_model_len"] == pytest.approx(58.11, rel=0.02)
    assert plan["kv_cache_bytes_per_token"] == 131072
    for key in ("weights_gib", "activation_gib", "non_torch_gib", "kv_cache_gib"):
        assert isinstance(plan[key], float)


def test_infeasible_plans_say_why():
    # a 70B model in 16 bits on one 80 GB GPU: the weights do not fit
    plan = plan_of("meta-llama/Llama-3.1-70B-Instruct", max_model_len=4096)
    assert not plan["feasible"] and plan["reason"].startswith("the weights need 131.4 GiB per GPU")
    # 128k tokens of context left no room for one sequence (Llama-3.1-70B at TP 2, 40 GB A100s)
    plan = plan_of("meta-llama/Llama-3.1-70B-Instruct", gpu_gib=39.39, tensor_parallel_size=4, max_model_len=131072)
    assert not plan["feasible"] and "one sequence of max_model_len 131072 tokens" in plan["reason"]
    # longer than the model's positions
    plan = plan_of("meta-llama/Llama-2-7b-hf", max_model_len=8192)
    assert not plan["feasible"] and "max_position_embeddings" in plan["reason"]
    # an fp8 KV cache doubles the tokens
    bf16 = plan_of("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192)
    fp8 = plan_of("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192, kv_cache_dtype="fp8")
    assert fp8["max_tokens_in_kv_cache"] == pytest.approx(2 * bf16["max_tokens_in_kv_cache"], rel=0.001)


def test_sliding_window_layers_hold_only_the_window_per_sequence():
    gpt_oss = plan_of("openai/gpt-oss-20b", max_model_len=131072, tensor_parallel_size=1)
    full_layers_only = gpt_oss["kv_cache_gib"] * GIB / (gpt_oss["kv_cache_bytes_per_token"] / 2 * 131072)
    # half its layers attend within 128 tokens: one sequence costs about half of what every layer at full length would
    assert gpt_oss["max_concurrent_sequences_at_max_model_len"] == pytest.approx(full_layers_only, rel=0.01)


@pytest.mark.parametrize("kwargs,message", [
    ({"tensor_parallel_size": 3}, "tensor_parallel_size 3 does not divide the model's 32 attention heads"),
    ({"tensor_parallel_size": 0}, "tensor_parallel_size 0: expected a positive whole number"),
    ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization 1.5: expected a fraction"),
    ({"kv_cache_dtype": "int3"}, "kv_cache_dtype 'int3': expected one of"),
    ({"dtype": "int8"}, "dtype 'int8': expected auto, bfloat16, float16 or float32"),
    ({"quantization": "fp3"}, "quantization 'fp3': expected one of"),
])
def test_bad_input_is_one_line_naming_it(kwargs, message):
    with pytest.raises(CapacityError, match=message.replace("(", r"\(").replace(")", r"\)")):
        memory.ServingRequest(shape("meta-llama/Llama-3.1-8B-Instruct"), 79.19, **kwargs)


def test_unknown_architecture_and_gpu():
    with pytest.raises(CapacityError, match="architecture 'mamba' .model_type. is not known; known: "):
        architectures.shape_of({"model_type": "mamba", "hidden_size": 1})
    with pytest.raises(CapacityError, match="model config: hidden_size is missing"):
        architectures.shape_of({"model_type": "llama"})
    with pytest.raises(CapacityError, match="gpu 'NVIDIA-H900' is not a GPU product this planner knows"):
        gpus.product_memory("NVIDIA-H900")
    assert gpus.product_memory("NVIDIA-H100-80GB-HBM3")[0] == 79.19
    assert gpus.product_memory("NVIDIA-L40S-SHARED")[0] == pytest.approx((46068 - 468) / 1024.0, abs=0.01)
    assert gpus.product_memory("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb")[0] == pytest.approx(4.66, abs=0.01)


def test_model_config_sources(tmp_path):
    config, provenance = models.model_config(model="hf://meta-llama/Llama-3.1-8B-Instruct")
    assert config["num_hidden_layers"] == 32 and provenance.startswith("shipped table (")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(config, num_hidden_layers=2)))
    assert models.model_config(model="x/y", path=str(path))[0]["num_hidden_layers"] == 2
    path.write_text("{not json")
    with pytest.raises(CapacityError, match="model_config .*: not a JSON config.json"):
        models.model_config(path=str(path))
    with pytest.raises(CapacityError, match=r"model acme/unknown: not in the shipped table \(.*\) and online look-ups are off"):
        models.model_config(model="acme/unknown", online=False)
    with pytest.raises(CapacityError, match="model 's3://bucket/m': expected a Hugging Face model id"):
        models.model_config(model="s3://bucket/m")


def test_model_config_from_the_hub_never_shows_the_token():
    seen = {}

    class Response:
        def __init__(self, body):
            self.body = body

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self, _limit):
            return self.body

    def opener(url, headers, timeout):
        seen.update(url=url, auth=headers.get("Authorization"), timeout=timeout)
        return Response(json.dumps({"model_type": "llama"}).encode())

    config, provenance = models.model_config(model="acme/new-model", environ={"HF_TOKEN": "hf_secret_value"},
                                             opener=opener)
    assert config == {"model_type": "llama"} and "acme/new-model" in provenance and "hf_secret" not in provenance
    assert seen["auth"] == "Bearer hf_secret_value" and seen["url"].endswith("/acme/new-model/resolve/main/config.json")

    def unreachable(url, headers, timeout):
        raise OSError("connection refused")

    with pytest.raises(CapacityError, match="the Hub is not reachable .connection refused.; give model_config") as info:
        models.model_config(model="acme/new-model", environ={"HF_TOKEN": "hf_secret_value"}, opener=unreachable)
    assert "hf_secret" not in str(info.value)


def node(name, product="NVIDIA-L40S", count=4, taints=None, ready=True, unschedulable=False):
    return {"name": name, "ready": ready, "unschedulable": unschedulable, "taints": taints or [],
            "gpu": {"product": product, "count": count, "allocatable": count, "memory_mib": 46068}}


def test_placement_per_node_and_across_nodes():
    nodes = [node("gpu-0"), node("gpu-1"), {"name": "cpu-0", "ready": True, "gpu": None}]
    assert placement.place(nodes, 4, 2)["placeable"]
    verdict = placement.place(nodes, 8, 1)
    assert not verdict["placeable"] and verdict["reason"] == "a pod asks for 8 GPUs on one node; the largest node has 4"
    verdict = placement.place(nodes, 2, 5)
    assert not verdict["placeable"] and verdict["reason"].startswith("5 pods of 2 GPUs (10 in all): only 4 fit")
    verdict = placement.place(nodes, 1, 1, product="NVIDIA-H100-80GB-HBM3")
    assert verdict["reason"] == "no node has NVIDIA-H100-80GB-HBM3 GPUs (the cluster has: NVIDIA-L40S)"
    tainted = [node("gpu-0", taints=[{"key": "team", "value": "a", "effect": "NoSchedule"}]),
               node("gpu-1", taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])]
    assert placement.place(tainted, 4, 1)["nodes"] == ["gpu-1"]  # the GPU taint is tolerated (ExtendedResourceToleration)
    assert not placement.place(tainted, 4, 2)["placeable"]
    assert placement.place(tainted, 4, 2, tolerations=[{"key": "team", "operator": "Exists"}])["placeable"]
    cordoned = [node("gpu-0", unschedulable=True)]
    assert placement.place(cordoned, 1)["reason"] == "no GPU node can take the pod: gpu-0 cordoned (unschedulable)"
    assert placement.place([], 1)["reason"] == "the cluster has no GPU node (nvidia.com/gpu)"
    assert placement.place([], 0)["placeable"]


SERVING = {"request": "llm_serving", "model_key": "tests.llm_serving.model", "skip_infeasible": True,
           "check_placement": True, "online": False}


def serving_config(gpu_count=1, replicas=1, runtime_args=("--max-model-len=4096",), source="hf://meta-llama/Llama-3.1-8B-Instruct"):
    return {"tests": {"llm_serving": {"model": {"name": "m", "source": source}, "test_settings": {
        "gpu_count": gpu_count, "replicas": replicas, "runtime_args": list(runtime_args)}}}}


def test_point_planner_serving_points():
    nodes = [node("gpu-0", product="NVIDIA-H100-80GB-HBM3", count=8)]
    planner = requests.PointPlanner(SERVING, "tests.llm_serving.test_settings", nodes)
    ok = planner.plan_point(serving_config(), {})
    assert not ok["skip"] and ok["gpus"] == 1 and ok["memory"]["feasible"] and ok["gpu_product"] == "NVIDIA-H100-80GB-HBM3"
    assert ok["model"] == "meta-llama/Llama-3.1-8B-Instruct" and ok["memory"]["model_config_source"].startswith("shipped")
    big = planner.plan_point(serving_config(source="hf://meta-llama/Llama-3.1-70B-Instruct"), {})
    assert big["skip"] and big["reason"].startswith("does not fit on NVIDIA-H100-80GB-HBM3: the weights need")
    fits = planner.plan_point(serving_config(gpu_count=4, source="hf://meta-llama/Llama-3.1-70B-Instruct"), {})
    assert not fits["skip"] and fits["memory"]["tensor_parallel_size"] == 4
    unplaceable = planner.plan_point(serving_config(gpu_count=4, replicas=3), {})
    assert unplaceable["skip"] and "cannot be placed: 3 pods of 4 GPUs" in unplaceable["reason"]
    kept = requests.PointPlanner(dict(SERVING, skip_infeasible=False), "tests.llm_serving.test_settings", nodes)
    verdict = kept.plan_point(serving_config(gpu_count=4, replicas=3), {})
    assert not verdict["skip"] and not verdict["feasible"] and "cannot be placed" in verdict["reason"]
    assert ok["feasible"] and not big["feasible"]
    no_gpu = planner.plan_point(serving_config(gpu_count=0), {})
    assert not no_gpu["skip"] and no_gpu["memory"] is None and no_gpu["placement"]["placeable"]
    with pytest.raises(CapacityError, match="runtime_args ask for 4 GPUs .tensor 4 x pipeline 1., the pod gets gpu_count 2"):
        planner.plan_point(serving_config(gpu_count=2, runtime_args=["--tensor-parallel-size", "4"]), {})
    # a product the planner does not know: the memory its nodes label
    unknown = requests.PointPlanner(SERVING, "tests.llm_serving.test_settings",
                                    [node("gpu-9", product="NVIDIA-RTX-PRO-6000", count=2)])
    verdict = unknown.plan_point(serving_config(), {})
    assert verdict["memory"]["gpu_memory_gib"] == pytest.approx((46068 - 468) / 1024.0, abs=0.01)
    assert verdict["memory"]["gpu_memory_source"].startswith("the nodes' nvidia.com/gpu.memory (46068 MiB)")
    with pytest.raises(CapacityError, match="capacity.request 'nope': expected one of fine_tuning, llm_serving"):
        requests.PointPlanner(dict(SERVING, request="nope"), "x", nodes)


def test_vllm_options_of_runtime_arguments():
    assert requests.vllm_options(["--max-model-len=8192", "--tensor-parallel-size", "2", "--enable-prefix-caching",
                                  "--kv-cache-dtype=fp8"]) == {"max_model_len": 8192, "tensor_parallel_size": 2,
                                                               "kv_cache_dtype": "fp8"}
    with pytest.raises(CapacityError, match="runtime argument --max-model-len=lots: expected a number"):
        requests.vllm_options(["--max-model-len=lots"])


def test_point_planner_training_points():
    options = {"request": "fine_tuning", "model_key": "tests.fine_tuning.model", "online": False}
    nodes = [node("gpu-0", product="NVIDIA-A100-SXM4-80GB", count=8)]
    planner = requests.PointPlanner(options, "tests.fine_tuning.test_settings", nodes)

    def config(gpu, peft="none", model="hf://meta-llama/Llama-3.1-70B-Instruct"):
        return {"tests": {"fine_tuning": {"model": {"source": model}, "test_settings": {
            "gpu": gpu, "pod_count": 1, "hyper_parameters": {"per_device_train_batch_size": 1, "max_seq_length": 1024,
                                                             "peft_method": peft}}}}}

    assert planner.plan_point(config(1), {})["skip"]  # 70B x 16 bytes on one GPU
    assert not planner.plan_point(config(8, "lora"), {})["skip"]
    small = planner.plan_point(config(1, model="hf://meta-llama/Llama-3.2-1B-Instruct"), {})
    assert not small["skip"] and small["memory"]["model_states_gib"] == pytest.approx(1.236e9 * 16 / GIB, rel=0.01)


def test_cost_estimate_from_earlier_points():
    def doc(settings, seconds, code=0):
        return estimate.point_document(estimate.point_record("llm_load", "llm_serving", "p", settings, seconds, code,
                                                             "u%s%s" % (settings, seconds), "2026-11-01T00:00:00Z",
                                                             model="m", gpus=1))

    history = [doc({"rate": 1}, 100), doc({"rate": 1}, 120), doc({"rate": 1}, 110), doc({"rate": 5}, 300),
               doc({"rate": 5}, 999, code=1)]
    points = [{"name": "a", "settings": {"rate": 1}, "gpus": 2}, {"name": "b", "settings": {"rate": 10}, "gpus": 1},
              {"name": "c", "settings": {"rate": 1}, "gpus": 1, "skip": True}]
    result = estimate.estimate_matrix(points, {None: history})
    a, b, c = result["points"]
    assert a["estimate_s"] == 110 and a["basis"] == "same settings" and a["runs"] == 3
    assert b["estimate_s"] == 110 and b["basis"].startswith("nearest (differs in rate: 10 here, 1 before")
    assert c["basis"] == "skipped" and c["estimate_s"] is None
    totals = result["totals"]
    assert totals["estimated_duration_s"] == 220 and totals["estimated_gpu_hours"] == pytest.approx((110 * 2 + 110) / 3600.0,
                                                                                                    abs=0.001)
    assert totals["skipped"] == 1 and totals["rests_on_history"].startswith("2 of 2 point(s) to run (1 with the same")
    none = estimate.estimate_matrix(points[:1], {})
    assert none["points"][0]["basis"] == "no history" and none["totals"]["without_history"] == 1
    compared = estimate.compare(result, {"a": (100.0, 2), "b": (132.0, 1)})
    assert compared["points_compared"] == 2 and compared["line"] == (
        "estimate vs actual: 2 point(s) with both, estimated 220 s, took 232 s (-5 %)")
    assert compared["rows"][0]["error_percent"] == 10.0


def test_a_flow_matrix_skips_what_cannot_fit_and_estimates_from_the_store(tmp_path):
    """plan_capacity on the shipped llm_serving matrix, the runner skipping, the point records exported to a
    SQLite store and a second plan estimating from them."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
    from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark
    from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine
    from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import matrix_outcome
    from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib
    from ansible_collections.perfscale.topsail.plugins.module_utils.executors import base as executor_base
    import os

    shipped = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml")
    config = config_lib.resolve_config(shipped, presets="llm_serving", overrides={
        "tests.llm_serving.benchmark.matrix": {"factors": {"gpu_count": [1, 8]}, "common_settings": {}, "include": [],
                                               "exclude": []},
        "tests.llm_serving.benchmark.name_template": "g{gpu_count}",
        "export.sqlite.path": str(tmp_path / "store.sqlite")}).config
    plan = benchmark.plan_benchmark(config, "tests.llm_serving.benchmark")
    nodes = [node("gpu-0", count=4), node("gpu-1", count=4)]
    capacity = benchmark.plan_capacity(plan, config, nodes)
    assert not capacity["g1"]["skip"] and capacity["g8"]["skip"]
    assert capacity["g8"]["reason"] == "cannot be placed: a pod asks for 8 GPUs on one node; the largest node has 4"
    estimate = benchmark.estimate_cost_from_store(plan, capacity, config)
    assert estimate["totals"]["without_history"] == 1 and estimate["totals"]["skipped"] == 1

    class Done(executor_base.Executor):
        name = "done"

        def start(self, point, command, directory):
            with open(os.path.join(directory, "result.json"), "w") as handle:
                handle.write("{}")
            return point

        def wait(self, handle, timeout):
            return executor_base.Execution(0, 12.5)

    matrix_dir, _resumed = engine.prepare_matrix_dir(str(tmp_path / "run"), plan.points, name="llm_serving")
    skip = benchmark.record_capacity(plan, matrix_dir, capacity, estimate)
    assert skip == {"g8": capacity["g8"]["reason"]}
    assert open(os.path.join(plan.points[1].directory, "SKIPPED")).read().startswith("skipped before deploy: cannot be placed")

    class Harness:
        def read_output(self, directory, section=None):
            return {"name": "x"}

        def keep_output(self, directory, document):
            pass

        def failure_detail(self, directory):
            return ""

    runner = engine.MatrixRunner(matrix_dir, plan.points, 60, Harness(), Done(), skip=skip)
    summary = runner.run()
    assert (summary["succeeded"], summary["infeasible"], summary["failed"]) == (1, 1, 0)
    assert summary["infeasible_points"][0]["name"] == "g8"
    assert os.path.exists(os.path.join(plan.points[0].directory, "capacity_plan.json"))  # kept when the point ran
    assert engine.format_progress(summary).startswith("matrix: 2/2 done (0 failed, 0 skipped, 1 cannot fit or be placed)")

    lines, skipped, compared = matrix_outcome.notes(str(tmp_path / "run"))
    assert skipped == [{"matrix": "llm_serving", "name": "g8", "reason": capacity["g8"]["reason"]}]
    assert lines[0].startswith("1 point(s) skipped before deploy, not failed")

    class Entry:
        test_dir, uuid, exit_code, settings = plan.points[0].directory, "uuid-g1", 0, plan.points[0].settings

    records = matrix_outcome.point_records([Entry()], "llm_load")
    assert records[0]["value"] == 12.5 and records[0]["model"] == "ibm-granite/granite-3.1-8b-instruct"
    path = tmp_path / "points.json"
    path.write_text(json.dumps(records))
    delivery = export_lib.deliver(export_lib.load_bundle_documents({"kind": "point", "file": str(path)}),
                                  export_lib.read_export(config), config)
    assert not delivery.undelivered
    again = benchmark.estimate_cost_from_store(plan, capacity, config)
    assert again["points"][0]["estimate_s"] == 12.5 and again["points"][0]["basis"] == "same settings"
    assert again["totals"]["estimated_gpu_hours"] == round(12.5 / 3600.0, 3)
    # after the run: the estimate beside what each point took
    benchmark.record_capacity(plan, matrix_dir, capacity, again)
    compared = matrix_outcome.comparisons(str(tmp_path / "run"))
    assert [c["line"] for c in compared] == [
        "estimate vs actual: 1 point(s) with both, estimated 12 s, took 12 s (+0 %)"]


# --------------------------------------------------------------------------
# input from outside: every number finite and in range, every field of its type, one line naming it

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def config_of(model_id, **changes):
    config = copy.deepcopy(model_table.lookup(model_id)["config"])
    config.update(changes)
    return config


def refusal(function, *args, **kwargs):
    with pytest.raises(CapacityError) as refused:
        function(*args, **kwargs)
    assert "\n" not in str(refused.value)
    return str(refused.value)


@pytest.mark.parametrize("gpu_memory_gib, shown", [
    (float("nan"), "nan"), (float("inf"), "inf"), (1e308, "1e+308"), (-80.0, "-80.0"), (16385, "16385"),
])
def test_a_gpu_memory_that_is_not_a_finite_positive_size_is_refused(gpu_memory_gib, shown):
    # on main nan answered "feasible: fits: nan GiB" (NaN in capacity_plan.json); inf and 1e308 ended in a ValueError
    assert refusal(memory.ServingRequest, shape(LLAMA), gpu_memory_gib) == \
        "gpu_memory_gib %s: expected a positive number, at most 16384" % shown


@pytest.mark.parametrize("name, value, message", [
    ("gpu_memory_utilization", float("nan"), "gpu_memory_utilization nan: expected a positive number"),
    ("max_model_len", float("inf"), "max_model_len inf: expected a positive whole number, at most 4294967296"),
    ("max_num_seqs", 10 ** 40, "max_num_seqs about 10^40: expected a positive whole number, at most 1048576"),
    ("tensor_parallel_size", 8192, "tensor_parallel_size 8192: expected a positive whole number, at most 4096"),
    ("kv_cache_dtype", ["fp8"], "kv_cache_dtype ['fp8']: expected one of auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16, "
                                "float16"),
    ("dtype", {"a": 1}, "dtype {'a': 1}: expected auto, bfloat16, float16 or float32"),
    ("quantization", ["fp8"], "quantization ['fp8']: expected one of awq, fp8, gptq, int4, int8, mxfp4"),
])
def test_request_numbers_and_names_out_of_range_or_of_the_wrong_type_are_one_line(name, value, message):
    assert refusal(memory.ServingRequest, shape(LLAMA), 79.19, **{name: value}) == message


GPT_OSS = "openai/gpt-oss-20b"


@pytest.mark.parametrize("model_id, changes, message", [
    (LLAMA, {"torch_dtype": ["bfloat16"]}, "torch_dtype ['bfloat16'] (expected one of float32, float16, bfloat16)"),
    (LLAMA, {"model_type": ["llama"]}, "architecture ['llama'] (model_type) is not known; known: deepseek_v2, "
                                       "deepseek_v3, gemma, gemma2, gemma3, gemma3_text, gpt_oss, granite, kimi_k2, "
                                       "llama, mistral, mixtral, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe"),
    (LLAMA, {"num_attention_heads": 8192, "num_key_value_heads": 8},
     "num_attention_heads 8192 is more than hidden_size 4096 (expected at most hidden_size)"),
    (LLAMA, {"num_attention_heads": 48, "num_key_value_heads": 8},
     "num_attention_heads 48 does not divide hidden_size 4096 (expected a divisor of it, or head_dim)"),
    (LLAMA, {"num_key_value_heads": 5}, "num_key_value_heads 5 does not divide num_attention_heads 32 (expected a "
                                        "divisor of it)"),
    (LLAMA, {"hidden_size": 10 ** 300}, "hidden_size is about 10^300 (expected a positive whole number, at most "
                                        "1048576)"),
    (LLAMA, {"num_hidden_layers": True}, "num_hidden_layers is True (expected a positive whole number, at most 16384)"),
    (LLAMA, {"tie_word_embeddings": "false"}, "tie_word_embeddings is 'false' (expected true or false)"),
    (GPT_OSS, {"sliding_window": "128"}, "sliding_window is '128' (expected a positive whole number, at most "
                                         "4294967296)"),
    (GPT_OSS, {"sliding_window": -4500}, "sliding_window is -4500 (expected a positive whole number, at most "
                                         "4294967296)"),
    (GPT_OSS, {"num_experts_per_tok": 64}, "64 experts per token of 32 experts (expected at most the number of "
                                           "experts)"),
    (GPT_OSS, {"layer_types": ["sliding_attention"] * 25}, "layer_types names 25 sliding_attention layers (expected "
                                                           "at most num_hidden_layers, 24)"),
    (LLAMA, {"quantization_config": {"quant_method": "gptq", "bits": "4"}},
     "quantization_config.bits is '4' (expected one of 2, 3, 4, 8)"),
    (LLAMA, {"quantization_config": {"quant_method": "awq", "bits": -4}},
     "quantization_config.bits is -4 (expected one of 2, 3, 4, 8)"),
    (LLAMA, {"quantization_config": {"quant_method": "gptq", "group_size": -7}},
     "quantization_config.group_size is -7 (expected a positive whole number, at most 4194304, or -1)"),
    (LLAMA, {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": [{"weights": {}}]}},
     "quantization_config.config_groups is [{'weights': {}}] (expected a mapping of groups)"),
    (LLAMA, {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"g": ["w"]}}},
     "quantization_config.config_groups.g is ['w'] (expected a mapping)"),
    (LLAMA, {"quantization_config": {"quant_method": "compressed-tensors",
                                     "config_groups": {"g": {"weights": {"num_bits": 5}}}}},
     "quantization_config.config_groups.g.weights.num_bits is 5 (expected one of 2, 3, 4, 8, 16)"),
    (LLAMA, {"quantization_config": {"quant_method": "compressed-tensors",
                                     "config_groups": {"g": {"weights": {"num_bits": 4, "group_size": 0}}}}},
     "quantization_config.config_groups.g.weights.group_size is 0 (expected a positive whole number, at most "
     "4194304, or null)"),
    ("Qwen/Qwen3-30B-A3B", {"mlp_only_layers": "0,1"}, "mlp_only_layers is '0,1' (expected a list of layer numbers)"),
    ("Qwen/Qwen3-30B-A3B", {"decoder_sparse_step": 0.5}, "decoder_sparse_step is 0.5 (expected a positive whole "
                                                         "number, at most 4194304)"),
    ("deepseek-ai/DeepSeek-V3", {"num_experts_per_tok": None}, "num_experts_per_tok is missing (expected int)"),
    ("deepseek-ai/DeepSeek-V3", {"first_k_dense_replace": -1}, "first_k_dense_replace is -1 (expected a "
                                                               "non-negative whole number, at most 4194304)"),
])
def test_a_model_config_field_of_the_wrong_type_or_out_of_range_is_one_line_naming_it(model_id, changes, message):
    # on main each of these ended in a TypeError, ValueError, AttributeError, ZeroDivisionError or OverflowError,
    # or planned a "feasible" point with negative sequences or negative bits
    where = "model %s" % model_id
    assert refusal(lambda: memory.plan(memory.ServingRequest(
        architectures.shape_of(config_of(model_id, **changes), where), 79.19))) == "%s: %s" % (where, message)


def test_a_model_config_file_that_is_not_utf8_json_or_not_a_regular_file_is_one_line(tmp_path):
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"model_type": "caf\xe9"}')
    nan = tmp_path / "nan.json"
    nan.write_text(json.dumps(config_of(LLAMA)).replace('"hidden_size": 4096', '"hidden_size": NaN'))
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert refusal(models.read_config_file, str(latin)) == \
        "model_config %s: not UTF-8 text (byte 19); expected UTF-8" % latin
    assert refusal(models.read_config_file, str(nan)) == \
        "model_config %s: not a JSON config.json (key hidden_size: nan is not a finite number; expected a finite " \
        "number)" % nan
    assert refusal(models.read_config_file, str(fifo)) == \
        "model_config %s: a FIFO, not a regular file; expected a regular file" % fifo
    assert refusal(models.read_config_file, str(tmp_path / "absent.json")) == \
        "model_config %s: no such file; expected a path to a model's config.json" % (tmp_path / "absent.json")


def test_the_capacity_plan_command_writes_only_finite_non_negative_numbers(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config_of(GPT_OSS)))
    for args in ({"model": LLAMA, "gpu": "NVIDIA-H100-80GB-HBM3", "max_model_len": 8192},
                 {"model": LLAMA, "gpu_memory_gib": 0.5},                      # nothing fits
                 {"model_config": str(path), "gpu_memory_gib": 16384, "max_num_seqs": 1},
                 {"model": "meta-llama/Llama-3.1-70B-Instruct", "gpu": "NVIDIA-L4", "tensor_parallel_size": 8,
                  "max_model_len": 131072, "kv_cache_dtype": "fp8", "quantization": "fp8"}):
        plan, message = requests.serving_plan(args)
        written = tmp_path / "capacity_plan.json"
        artifacts.write_json_atomic(str(written), plan)
        numbers = [v for v in json.loads(written.read_text()).values()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)]
        assert numbers and all(math.isfinite(v) and v >= 0 for v in numbers), plan
        assert json.dumps(plan, allow_nan=False) and message.split(":", maxsplit=1)[0] in ("feasible", "INFEASIBLE")
    assert refusal(requests.serving_plan, {"model": LLAMA, "gpu_memory_gib": float("nan")}) == \
        "gpu_memory_gib nan: expected a positive number, at most 16384"
    assert refusal(requests.serving_plan, {"model_config": str(tmp_path / "absent.json"), "gpu": "NVIDIA-L4"}) == \
        "model_config %s: no such file; expected a path to a model's config.json" % (tmp_path / "absent.json")


def test_a_plan_that_would_hold_a_number_not_finite_is_refused_naming_it(monkeypatch):
    # the inputs' checks keep every result finite; the last guard names a number that is not, were a constant wrong
    monkeypatch.setattr(vllm_versions.V0_19, "non_torch_gib", float("nan"))
    assert refusal(memory.plan, memory.ServingRequest(shape(LLAMA), 79.19)) == \
        "capacity plan: non_torch_gib came out nan; expected a finite number, not negative (an input outside what " \
        "the planner models)"


@pytest.mark.parametrize("settings, message", [
    ({"gpu": 1, "hyper_parameters": {"per_device_train_batch_size": -1}},
     "setting per_device_train_batch_size=-1: expected a whole number from 1 to 1048576"),
    ({"gpu": 1, "hyper_parameters": {"max_seq_length": 2.5}},
     "setting max_seq_length=2.5: expected a whole number from 1 to 4294967296"),
    ({"gpu": -2}, "setting gpu=-2: expected a whole number from 0 to 4096"),
    ({"gpu": 1, "hyper_parameters": ["lora"]}, "setting hyper_parameters=['lora']: expected a mapping"),
    ({"gpu": 1, "hyper_parameters": {"r": 0, "peft_method": "lora"}}, "setting r=0: expected a whole number from 1 "
                                                                      "to 65536"),
])
def test_training_settings_out_of_range_are_one_line(settings, message):
    # on main a negative batch size planned negative activations, a negative GPU count was taken as none
    planner = requests.PointPlanner({"request": "fine_tuning", "model_key": "m", "online": False, "gpu_memory_gib": 80},
                                    "s")
    assert refusal(planner.plan_point, {"m": "hf://" + LLAMA, "s": settings}, {}) == message


def test_a_training_plan_of_a_gpu_memory_that_is_not_finite_is_refused():
    assert refusal(training.plan, shape(LLAMA), float("nan"), 1) == \
        "gpu_memory_gib nan: expected a positive number, at most 16384"
    assert json.dumps(training.plan(shape(LLAMA), 80.0, 8, batch_size=4, max_seq_length=4096), allow_nan=False)


def test_the_flow_planner_refuses_a_capacity_gpu_memory_that_is_not_a_number():
    planner = requests.PointPlanner(dict(SERVING, gpu_memory_gib="lots"), "tests.llm_serving.test_settings")
    assert refusal(planner.plan_point, serving_config(), {}) == \
        "capacity.gpu_memory_gib 'lots': expected a positive number, at most 16384"
    planner = requests.PointPlanner(dict(SERVING, gpu_memory_gib=80), "tests.llm_serving.test_settings")
    config = serving_config()
    config["tests"]["llm_serving"]["test_settings"]["runtime_args"] = 5
    assert refusal(planner.plan_point, config, {}) == \
        "runtime_args 5: expected a list of vLLM's command-line arguments, or one string"
