"""Fuzz: what the capacity planner reads (a model's config.json from a user or the Hub, a request's numbers,
a point's settings) and what post-processing reads from an artifact tree (a point's point.json as anything a
tree may hold: any bytes, a link to /dev/zero or out of the tree, a FIFO, a directory, a huge file).

A plan or one line; a result or a one-line reason - never an exception, never a hang, never a number that
is not finite or is negative in a plan."""

import copy
import json
import math
import os
import socket
import sys
import tempfile

from hypothesis import given, settings, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fixtures"))
from fuzz_strategies import JSON  # noqa: E402  pylint: disable=wrong-import-position
import bounded_call  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import architectures  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import memory  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import model_table  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import requests  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree  # noqa: E402

# a forked child per example: fewer of them
TREE_EXAMPLES = 60


def one_line(exc):
    assert "\n" not in str(exc) and str(exc), repr(exc)


def finite_and_not_negative(document):
    """Every number of a plan (recursively): finite, not negative; and the plan is strict JSON."""
    json.dumps(document, allow_nan=False)
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            assert math.isfinite(value) and value >= 0, document


# --------------------------------------------------------------------------
# the capacity planner

NUMBERS = st.one_of(
    st.integers(min_value=-10, max_value=10), st.integers(min_value=-2 ** 70, max_value=2 ** 70),
    st.sampled_from([0, 1, 2, 3, 4, 5, 7, 8, 16, 64, 128, 4096, 10 ** 300, -4500, 2 ** 32 + 1]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([float("nan"), float("inf"), 1e308, -1.0, 0.5]),
)
VALUES = st.one_of(NUMBERS, st.none(), st.booleans(), st.text(max_size=8),
                   st.sampled_from(["bfloat16", "llama", "sliding_attention", "fp8", "gptq", "int", "float"]),
                   st.lists(st.one_of(NUMBERS, st.text(max_size=4)), max_size=3), JSON)
CONFIG_KEYS = st.sampled_from([
    "model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
    "intermediate_size", "vocab_size", "max_position_embeddings", "torch_dtype", "tie_word_embeddings",
    "attention_bias", "sliding_window", "layer_types", "num_local_experts", "num_experts", "num_experts_per_tok",
    "experts_per_token", "moe_intermediate_size", "shared_expert_intermediate_size", "decoder_sparse_step",
    "mlp_only_layers", "first_k_dense_replace", "moe_layer_freq", "n_routed_experts", "n_shared_experts",
    "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "q_lora_rank", "text_config",
    "quantization_config"])
QUANTIZATION = st.one_of(
    st.fixed_dictionaries({"quant_method": st.sampled_from(["awq", "gptq", "gptq_marlin", "fp8", "mxfp4",
                                                            "bitsandbytes", "nope", 3])},
                          optional={"bits": VALUES, "w_bit": VALUES, "group_size": VALUES, "q_group_size": VALUES,
                                    "load_in_4bit": VALUES}),
    st.fixed_dictionaries({"quant_method": st.just("compressed-tensors")}, optional={"config_groups": st.one_of(
        VALUES, st.dictionaries(st.text(max_size=3), st.one_of(VALUES, st.fixed_dictionaries({}, optional={
            "weights": st.one_of(VALUES, st.fixed_dictionaries({}, optional={
                "num_bits": VALUES, "type": VALUES, "group_size": VALUES}))})), max_size=2))}),
    VALUES)
CHANGES = st.dictionaries(CONFIG_KEYS, VALUES, max_size=4).flatmap(
    lambda changes: st.one_of(st.just(changes), QUANTIZATION.map(lambda q: dict(changes, quantization_config=q))))
REQUEST = st.fixed_dictionaries({}, optional={
    "tensor_parallel_size": NUMBERS, "pipeline_parallel_size": NUMBERS, "max_model_len": NUMBERS,
    "max_num_seqs": NUMBERS, "max_num_batched_tokens": NUMBERS, "gpu_memory_utilization": NUMBERS,
    "kv_cache_dtype": VALUES, "dtype": VALUES, "quantization": VALUES,
    # a vLLM release: calibrated, uncalibrated, a YAML number, anything
    "vllm_version": st.one_of(VALUES, st.sampled_from(["0.10", "v0.11.0", "0.19.1rc1", "0.14", "0.6.3", "0.1"]),
                              st.from_regex(r"[vV]?[0-9]{1,3}\.[0-9]{1,3}(\.[0-9]{1,3})?[a-z0-9+.]{0,6}",
                                            fullmatch=True))})


@given(model_id=st.sampled_from(sorted(model_table.MODELS)), changes=CHANGES,
       gpu_memory_gib=st.one_of(NUMBERS, st.sampled_from([79.19, 39.39, 23.0])), request=REQUEST)
def test_model_configs_and_requests(model_id, changes, gpu_memory_gib, request):
    config = copy.deepcopy(model_table.lookup(model_id)["config"])
    config.update(changes)
    try:
        shape = architectures.shape_of(config, "model %s" % model_id)
        plan = memory.plan(memory.ServingRequest(shape, gpu_memory_gib, **request))
    except CapacityError as exc:
        one_line(exc)
        return
    finite_and_not_negative(plan)


@settings(max_examples=60)
@given(document=st.one_of(JSON, st.dictionaries(CONFIG_KEYS, VALUES, max_size=8)), raw=st.binary(max_size=40))
def test_model_config_files(document, raw):
    with tempfile.TemporaryDirectory() as directory:
        for text in (json.dumps(document).encode(), raw):
            path = os.path.join(directory, "config.json")
            with open(path, "wb") as handle:
                handle.write(text)
            try:
                plan, message = requests.serving_plan({"model_config": path, "gpu_memory_gib": 79.19})
            except CapacityError as exc:
                one_line(exc)
                continue
            finite_and_not_negative(plan)
            assert "\n" not in message


SETTINGS = st.fixed_dictionaries({}, optional={
    "gpu": VALUES, "pod_count": VALUES, "gpu_count": VALUES, "replicas": VALUES, "runtime_args": VALUES,
    "hyper_parameters": st.one_of(VALUES, st.fixed_dictionaries({}, optional={
        "per_device_train_batch_size": VALUES, "max_seq_length": VALUES, "peft_method": VALUES, "r": VALUES}))})


@settings(max_examples=100)
@given(request=st.sampled_from(["llm_serving", "fine_tuning"]), point=st.one_of(SETTINGS, VALUES),
       gpu_memory_gib=st.one_of(NUMBERS, st.just(80)))
def test_point_settings_of_the_flows(request, point, gpu_memory_gib):
    options = {"request": request, "model_key": "m", "online": False, "gpu_memory_gib": gpu_memory_gib}
    try:
        verdict = requests.PointPlanner(options, "s").plan_point(
            {"m": "hf://meta-llama/Llama-3.1-8B-Instruct", "s": point}, {})
    except CapacityError as exc:
        one_line(exc)
        return
    finite_and_not_negative(verdict)


# --------------------------------------------------------------------------
# the artifact tree's readers: point.json as anything a tree may hold

def _socket(path):
    previous = os.getcwd()
    os.chdir(os.path.dirname(path))
    try:
        server = socket.socket(socket.AF_UNIX)
        server.bind(os.path.basename(path))
        server.close()
    finally:
        os.chdir(previous)


def _make(kind, path, content, outside):
    if kind == "file":
        with open(path, "wb") as handle:
            handle.write(content)
    elif kind == "huge":
        with open(path, "wb") as handle:
            handle.write(content[:100])
            handle.truncate(bounded_input.MAX_TREE_FILE_BYTES + 1)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", path)
    elif kind == "outside":
        with open(outside, "wb") as handle:
            handle.write(content)
        os.symlink(outside, path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        os.mkdir(path)
    elif kind == "socket":
        _socket(path)
    elif kind == "dangling":
        os.symlink(path + ".nowhere", path)


def _read_point(test_dir, root):
    warnings = []
    resources = results_tree.point_resources(test_dir, root, warnings)
    try:
        document = bounded_input.read_json_file(os.path.join(test_dir, results_tree.POINT_FILE), root,
                                                name=results_tree.POINT_FILE)
        reason = None
    except ValueError as exc:   # bounded_input's refusals are ValueErrors: one line each
        document, reason = None, str(exc)
    return resources, warnings, reason, document is not None


CONTENTS = st.one_of(
    st.binary(max_size=64),
    JSON.map(lambda value: json.dumps({"resources": value}).encode()),
    st.dictionaries(st.sampled_from(["cpu_user_s", "max_rss_mib", "x"]), NUMBERS, max_size=3).map(
        lambda resources: json.dumps({"resources": resources}).encode()),
    st.sampled_from([b'{"resources": {"cpu_user_s": NaN, "max_rss_mib": 1e999}}', b"[" * 5000, b"\xff\xfe",
                     b'{"resources": {"cpu_user_s": 1' + b"0" * 5000 + b"}}"]),
)


@settings(max_examples=TREE_EXAMPLES)
@given(kind=st.sampled_from(["file", "huge", "dev_zero", "outside", "fifo", "directory", "socket", "dangling"]),
       content=CONTENTS)
def test_point_json_as_anything_a_tree_may_hold(kind, content):
    with tempfile.TemporaryDirectory() as directory:
        root = os.path.join(directory, "run")
        test_dir = os.path.join(root, "001__matrix", "000__point")
        os.makedirs(test_dir)
        _make(kind, os.path.join(test_dir, results_tree.POINT_FILE), content, os.path.join(directory, "elsewhere"))
        # in a child with a deadline and a memory limit: a hang or an unbounded read is a failure, not a stuck suite
        outcome, value = bounded_call.call(_read_point, test_dir, root, timeout=30)
        assert outcome == "returned", value
        resources, warnings, reason, _read = value
        assert resources is None or all(isinstance(v, (int, float)) and math.isfinite(v) for v in resources.values())
        assert all("\n" not in w and w for w in warnings)
        assert reason is None or "\n" not in reason
        if kind != "file":
            assert resources is None
