# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""vLLM's memory on each GPU of a serving point, and whether the point can serve at all.

vLLM (V1 engine, ``vllm/v1/worker/gpu_worker.py`` ``determine_available_memory``) loads the weights,
runs one forward pass of ``max_num_batched_tokens`` dummy tokens and a sampler pass of ``max_num_seqs``
rows, and gives the KV cache what is left of ``total_gpu_memory x gpu_memory_utilization`` after the
weights, the activation peak of that profile and the memory allocated outside PyTorch (NCCL, cuBLAS)::

    kv_cache = total x utilization - weights - activation_peak - non_torch

Each term here (docs/capacity.md gives the formula of each and where its constants come from):

- ``weights``: every component of the model (``architectures.components``) at its dtype (or its
  quantized width), divided over tensor-parallel ranks as vLLM shards it (replicated parts whole,
  key-value projections one head per rank when there are fewer heads than ranks) and over pipeline
  stages by layer (embeddings in the first stage, the output projection in the last);
- ``activation_peak``: the profile's forward pass (MLP or experts' intermediate tensors, attention
  projections, residual stream) and its sampler pass (float32 logits over the vocabulary);
- ``non_torch``: a constant per tensor-parallel size, fitted on vLLM's logged figures;
- the activation's sampler term and ``non_torch`` depend on vLLM's release: ``vllm_versions`` holds them per
  calibrated release line (``vllm_version``; default the newest, which every plan states);
- the KV cache's bytes per token: ``2 x layers x kv_heads_per_rank x head_dim x bytes`` (keys and
  values), or ``layers x (kv_lora_rank + rope_dim) x bytes`` for multi-head latent attention (DeepSeek),
  which every rank keeps whole. Layers with a sliding window need at most the window per sequence.

A plan is feasible when the weights fit, something is left for the KV cache, and one sequence of
``max_model_len`` tokens fits in it (vLLM refuses to start otherwise).
"""

from __future__ import annotations

import copy
import math

from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import architectures
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import vllm_versions
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

GIB = float(2 ** 30)
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
# vLLM V1's defaults for its OpenAI server (vllm/engine/arg_utils.py, _set_default_args): on a GPU of
# 70 GiB or more 8192 batched tokens and 1024 sequences at once (max_num_seqs), below 2048 and 256
LARGE_GPU_GIB = 70
DEFAULT_BATCHED_TOKENS = {True: 8192, False: 2048}
DEFAULT_MAX_NUM_SEQS = {True: 1024, False: 256}
# memory outside PyTorch's allocator (cuBLAS workspaces alone on one GPU; NCCL's and the custom all-reduce's
# buffers with tensor parallelism) and the sampler's float32 copies of the logits of max_num_seqs rows
# (logits, their softmax, a sorted copy for top-p/top-k, ...): per vLLM release line, vllm_versions.CALIBRATIONS
# below this much memory outside gpu_memory_utilization, a large sampler warm-up is flagged (see headroom_warnings)
HEADROOM_GIB = 4.0
SAMPLER_WARN_GIB = 2.5
KV_DTYPES = {"auto": None, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "bfloat16": 2, "float16": 2}
# the largest value of each number a request takes: far above any GPU and any vLLM setting, low enough
# that every result stays a finite number
LIMITS = {"gpu_memory_gib": 1 << 14, "tensor_parallel_size": 1 << 12, "pipeline_parallel_size": 1 << 12,
          "max_model_len": 1 << 32, "max_num_seqs": 1 << 20, "max_num_batched_tokens": 1 << 32}


class ServingRequest:
    """What a vLLM serving point asks of each GPU (the planner's input, checked)."""

    def __init__(self, shape, gpu_memory_gib, tensor_parallel_size=1, pipeline_parallel_size=1, max_model_len=None,
                 max_num_seqs=None, max_num_batched_tokens=None, gpu_memory_utilization=None, kv_cache_dtype=None,
                 dtype=None, quantization=None, vllm_version=None):
        self.shape = shape = copy.copy(shape)  # the request's dtype and quantization are its own
        if quantization:
            shape.quantization = architectures.quantization_for(quantization)
        if dtype and dtype != "auto":
            if not isinstance(dtype, str) or dtype not in architectures.DTYPE_BYTES \
                    or architectures.DTYPE_BYTES[dtype] not in (2, 4):
                raise CapacityError("dtype %s: expected auto, bfloat16, float16 or float32"
                                    % architectures.shown(dtype))
            shape.dtype = dtype
            shape.dtype_assumed = False
        self.gpu_memory_gib = positive("gpu_memory_gib", gpu_memory_gib, float)
        self.tp = positive("tensor_parallel_size", tensor_parallel_size, int)
        self.pp = positive("pipeline_parallel_size", pipeline_parallel_size, int)
        self.max_model_len = positive("max_model_len", max_model_len, int) if max_model_len else \
            shape.max_position_embeddings
        if not self.max_model_len:
            raise CapacityError("max_model_len: the model's config has no max_position_embeddings; give max_model_len")
        large = self.gpu_memory_gib >= LARGE_GPU_GIB
        self.max_num_seqs = positive("max_num_seqs", max_num_seqs, int) if max_num_seqs else DEFAULT_MAX_NUM_SEQS[large]
        self.max_num_batched_tokens = positive("max_num_batched_tokens", max_num_batched_tokens, int) \
            if max_num_batched_tokens else DEFAULT_BATCHED_TOKENS[large]
        utilization = DEFAULT_GPU_MEMORY_UTILIZATION if gpu_memory_utilization is None else gpu_memory_utilization
        self.gpu_memory_utilization = positive("gpu_memory_utilization", utilization, float)
        if self.gpu_memory_utilization > 1:
            raise CapacityError("gpu_memory_utilization %s: expected a fraction of the GPU's memory, above 0 and at "
                                "most 1" % (gpu_memory_utilization,))
        kv = kv_cache_dtype or "auto"
        if not isinstance(kv, str) or kv not in KV_DTYPES:
            raise CapacityError("kv_cache_dtype %s: expected one of %s"
                                % (architectures.shown(kv_cache_dtype), ", ".join(KV_DTYPES)))
        self.kv_cache_dtype = kv
        self.kv_bytes = KV_DTYPES[kv] or shape.dtype_bytes
        self.vllm_line, self.calibration, self.calibration_statement = vllm_versions.calibration(vllm_version)
        self._check_parallelism()

    def _check_parallelism(self):
        shape, tp = self.shape, self.tp
        if shape.num_heads % tp:
            raise CapacityError("tensor_parallel_size %d does not divide the model's %d attention heads (vLLM "
                                "refuses it)" % (tp, shape.num_heads))
        kv = shape.num_kv_heads
        if not shape.mla and (kv % tp if kv >= tp else tp % kv):
            raise CapacityError("tensor_parallel_size %d and the model's %d key-value heads: one must divide the "
                                "other (vLLM refuses it)" % (tp, kv))
        if self.pp > shape.num_layers:
            raise CapacityError("pipeline_parallel_size %d: the model has only %d layers" % (self.pp, shape.num_layers))


def positive(name, value, kind, maximum=None):
    """``value`` as a finite ``kind`` (int or float) above 0 and at most ``maximum`` (default:
    ``LIMITS[name]``); CapacityError naming ``name`` otherwise."""
    maximum = LIMITS.get(name) if maximum is None else maximum
    expected = "expected a positive %s%s" % ("whole number" if kind is int else "number",
                                             ", at most %s" % maximum if maximum else "")
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):   # OverflowError: int(inf)
        raise CapacityError("%s %s: %s" % (name, architectures.shown(value), expected)) from None
    if isinstance(value, bool) or not math.isfinite(number) or number <= 0 or (maximum and number > maximum) or \
            (kind is int and number != value and not isinstance(value, str)):
        raise CapacityError("%s %s: %s" % (name, architectures.shown(value), expected))
    return number


def _round_up(value, multiple):
    return int(math.ceil(value / float(multiple)) * multiple)


def _bytes_per_param(component, shape, tp=1):
    quantization = shape.quantization
    if quantization and component.quantizable and (component.expert or not quantization["experts_only"]):
        size = quantization["bits_per_weight"] / 8.0
        pad = quantization.get("pad")
        if pad and component.dims:
            hidden, inner = component.dims
            per_rank = inner / float(tp)
            size *= (_round_up(hidden, pad["hidden"]) * _round_up(per_rank, pad["intermediate_per_rank"])) \
                / float(hidden * per_rank)
        return size
    return float(shape.dtype_bytes)


def _per_rank(component, shape, tp):
    if component.placement == architectures.REPLICATED:
        return float(component.count)
    if component.placement == architectures.KV_HEADS:
        return component.count / float(min(tp, shape.num_kv_heads))
    return component.count / float(tp)


def weights_bytes_per_gpu(shape, tp=1, pp=1):
    """Bytes of weights on the busiest GPU (the pipeline stage with the most)."""
    layers_per_stage = math.ceil(shape.num_layers / float(pp))
    layer_share = layers_per_stage / float(shape.num_layers)
    stages = {"first": 0.0, "last": 0.0, "layers": 0.0}
    for component in architectures.components(shape):
        size = _per_rank(component, shape, tp) * _bytes_per_param(component, shape, tp)
        if component.per_layer:
            stages["layers"] += size * layer_share
        else:
            stages[component.stage] += size
    if pp == 1:
        return stages["layers"] + stages["first"] + stages["last"]
    if shape.tied_embeddings:
        stages["last"] += stages["first"]  # the last stage needs its own copy of a tied output projection
    return stages["layers"] + max(stages["first"], stages["last"])


def activation_bytes_per_gpu(shape, tp, batched_tokens, max_num_seqs, calibration=vllm_versions.V0_19):
    """The activation peak of vLLM's profile run: forward pass of ``batched_tokens`` tokens, or the
    sampler's float32 logits of ``max_num_seqs`` rows (``calibration.sampler_copies`` of them), whichever
    is larger."""
    b = shape.dtype_bytes
    h = shape.hidden_size
    attention = (shape.num_heads + 2 * shape.num_kv_heads) * shape.head_dim / float(tp) if not shape.mla else \
        shape.num_heads * (shape.mla["qk_nope_head_dim"] + shape.mla["qk_rope_head_dim"] + shape.mla["v_head_dim"]) \
        / float(tp)
    if shape.is_moe:
        # fused MoE's intermediate caches: top_k rows per token of 2*Ie (gate and up), Ie and h
        k, ie = shape.experts_per_token, shape.expert_intermediate_size
        feed_forward = k * (3 * ie / float(tp) + h) + shape.num_experts * 2  # + float32 router logits
        if shape.intermediate_size and shape.moe_layers < shape.num_layers:
            feed_forward = max(feed_forward, 3 * shape.intermediate_size / float(tp))
    else:
        feed_forward = 3 * shape.intermediate_size / float(tp)
    forward = batched_tokens * b * (feed_forward + 4 * h + attention)
    sampler = max_num_seqs * shape.vocab_size * 4.0 * calibration.sampler_copies
    return max(forward, sampler)


def non_torch_gib(tp, calibration=vllm_versions.V0_19):
    return calibration.non_torch(tp)


def kv_cache_bytes_per_token(shape, kv_bytes, tp=1, pp=1, layers=None):
    """KV cache bytes of one token on one GPU, over ``layers`` layers (default: the busiest stage's)."""
    layers = math.ceil(shape.num_layers / float(pp)) if layers is None else layers
    if shape.mla:
        return layers * (shape.mla["kv_lora_rank"] + shape.mla["qk_rope_head_dim"]) * kv_bytes
    heads_per_rank = max(1, shape.num_kv_heads // tp)
    return 2 * layers * heads_per_rank * shape.head_dim * kv_bytes


def assumption_warnings(shape):
    """What the plan assumed that the model's config did not say: its dtype, when it names none."""
    if not shape.dtype_assumed:
        return []
    return ["the model config names no dtype (torch_dtype): the plan assumes %s, %d bytes per parameter; give "
            "dtype (vLLM's --dtype) if the model is served in another" % (shape.dtype, shape.dtype_bytes)]


def headroom_warnings(request, shape):
    """What the plan cannot promise: vLLM captures CUDA graphs and warms its sampler up (``max_num_seqs``
    dummy requests) after the KV cache took its share, in the memory ``gpu_memory_utilization`` leaves out;
    vLLM 0.19 ran out of memory there with gpt-oss at 0.95 (benchmarks/results/capacity_validation.md)."""
    headroom = request.gpu_memory_gib * (1 - request.gpu_memory_utilization)
    sampler = request.max_num_seqs * shape.vocab_size * 4.0 * request.calibration.sampler_copies / GIB
    if headroom < HEADROOM_GIB and sampler > SAMPLER_WARN_GIB:
        return ["%.1f GiB left outside gpu_memory_utilization %.2f for the CUDA context, CUDA graphs and the sampler's "
                "warm-up (%.1f GiB for %d sequences over a %d-token vocabulary): vLLM may run out of memory after "
                "allocating the KV cache; a lower gpu_memory_utilization or max_num_seqs is safer"
                % (headroom, request.gpu_memory_utilization, sampler, request.max_num_seqs, shape.vocab_size)]
    return []


def _gib(value):
    return round(value / GIB, 3)


def plan(request):
    """The capacity plan of a ``ServingRequest`` (a JSON-ready dict; ``feasible`` and ``reason``)."""
    shape = request.shape
    tp, pp = request.tp, request.pp
    total = request.gpu_memory_gib * GIB
    usable = total * request.gpu_memory_utilization
    weights = weights_bytes_per_gpu(shape, tp, pp)
    activation = activation_bytes_per_gpu(shape, tp, request.max_num_batched_tokens, request.max_num_seqs,
                                          request.calibration)
    non_torch = non_torch_gib(tp, request.calibration) * GIB
    kv_cache = usable - weights - activation - non_torch
    per_token = kv_cache_bytes_per_token(shape, request.kv_bytes, tp, pp)
    layers = math.ceil(shape.num_layers / float(pp))
    sliding = int(round(shape.sliding_window_layers * layers / float(shape.num_layers)))
    per_sequence = (kv_cache_bytes_per_token(shape, request.kv_bytes, tp, pp, layers - sliding) * request.max_model_len
                    + kv_cache_bytes_per_token(shape, request.kv_bytes, tp, pp, sliding)
                    * min(request.max_model_len, shape.sliding_window or request.max_model_len))
    max_tokens = int(kv_cache // per_token) if kv_cache > 0 else 0
    concurrent = kv_cache / per_sequence if kv_cache > 0 else 0.0
    counts = architectures.parameter_counts(shape)
    result = {
        "feasible": True,
        "reason": "",
        "model": shape.describe(),
        "parameters": counts["total"],
        "active_parameters": counts["active"],
        "gpus": tp * pp,
        "tensor_parallel_size": tp,
        "pipeline_parallel_size": pp,
        "max_model_len": request.max_model_len,
        "max_num_seqs": request.max_num_seqs,
        "max_num_batched_tokens": request.max_num_batched_tokens,
        "dtype": shape.dtype,
        "quantization": (shape.quantization or {}).get("method"),
        "kv_cache_dtype": request.kv_cache_dtype,
        "gpu_memory_gib": round(request.gpu_memory_gib, 3),
        "gpu_memory_utilization": request.gpu_memory_utilization,
        "usable_gib": _gib(usable),
        "weights_gib": _gib(weights),
        "activation_gib": _gib(activation),
        "non_torch_gib": _gib(non_torch),
        "kv_cache_gib": _gib(max(kv_cache, 0.0)),
        "kv_cache_bytes_per_token": int(per_token),
        "max_tokens_in_kv_cache": max_tokens,
        "max_concurrent_sequences_at_max_model_len": round(concurrent, 2),
        "vllm_version": request.vllm_line,
        "calibration": request.calibration_statement,
    }
    if weights > usable:
        reason = ("the weights need %.1f GiB per GPU, more than the %.1f GiB vLLM may use (%.2f x %.1f GiB): more "
                  "GPUs (tensor_parallel_size) or a quantized model"
                  % (weights / GIB, usable / GIB, request.gpu_memory_utilization, request.gpu_memory_gib))
    elif kv_cache <= 0:
        reason = ("nothing left for the KV cache: weights %.1f + activation %.1f + non-torch %.1f GiB use all %.1f GiB"
                  % (weights / GIB, activation / GIB, non_torch / GIB, usable / GIB))
    elif per_sequence > kv_cache:
        reason = ("one sequence of max_model_len %d tokens needs %.2f GiB of KV cache per GPU, more than the %.2f GiB "
                  "left (at most %d tokens): a shorter max_model_len, more GPUs or an fp8 KV cache"
                  % (request.max_model_len, per_sequence / GIB, kv_cache / GIB, max_tokens))
    elif shape.max_position_embeddings and request.max_model_len > shape.max_position_embeddings:
        reason = ("max_model_len %d is longer than the model's %d positions (max_position_embeddings): vLLM refuses it"
                  % (request.max_model_len, shape.max_position_embeddings))
    else:
        reason = None
    result["warnings"] = assumption_warnings(shape) + headroom_warnings(request, shape)
    if reason:
        result.update(feasible=False, reason=reason)
    else:
        result["reason"] = ("fits: %.1f GiB of KV cache per GPU, %d tokens, %.1f sequences of %d tokens at once"
                            % (kv_cache / GIB, max_tokens, concurrent, request.max_model_len))
    return checked_numbers(result)


def checked_numbers(result, what="capacity plan"):
    """``result`` when every number in it is finite and not negative; else CapacityError naming the key.
    The inputs' checks keep every result finite: this is the last guard before a plan is written."""
    stack = [((), result)]
    while stack:
        path, value = stack.pop()
        # pushed in reverse: the first bad number in the document's order is the one named
        if isinstance(value, dict):
            stack.extend(reversed([(path + (str(key),), item) for key, item in value.items()]))
        elif isinstance(value, (list, tuple)):
            stack.extend(reversed([(path + (str(index),), item) for index, item in enumerate(value)]))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                finite = math.isfinite(value)
            except OverflowError:   # an integer too large for a float
                finite = False
            if not finite or value < 0:
                raise CapacityError("%s: %s came out %s; expected a finite number, not negative (an input outside "
                                    "what the planner models)" % (what, ".".join(path), value))
    return result
