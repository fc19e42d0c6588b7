# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Hugging Face ``config.json`` as a model shape, and the model's parameters by component.

``shape_of(config)`` reads the keys every decoder-only transformer of the supported families has
(``hidden_size``, ``num_hidden_layers``, heads, key-value heads, ``intermediate_size``,
``vocab_size``) and the keys of its family (experts, multi-head latent attention, sliding windows);
the family comes from ``model_type`` through ``FAMILIES`` (a registry: a new family is one entry).
``components(shape)`` lists the model's weights as components (name, parameter count, and how vLLM
holds them: sharded over tensor-parallel ranks, replicated, or one key-value head per rank), which
both the parameter count and the per-GPU weight memory (``memory.py``) add up. Layer norms, biases
and attention sinks are counted; rotary tables and buffers are not (they are not parameters).

Formulas per layer (h hidden size, n heads, k key-value heads, d head size, I MLP size, V vocabulary):

- attention (GQA/MHA): q ``h*n*d``, k and v ``h*k*d`` each, o ``n*d*h`` (+ biases where the family has them)
- attention (MLA, DeepSeek V2/V3): q_a ``h*rq`` (+ norm ``rq``) and q_b ``rq*n*(dn+dr)`` (or q ``h*n*(dn+dr)``
  without ``q_lora_rank``), kv_a ``h*(rkv+dr)`` (+ norm ``rkv``), kv_b ``rkv*n*(dn+dv)``, o ``n*dv*h``
- gated MLP (SwiGLU/GeGLU): ``3*h*I``; a mixture of experts: router ``h*E`` and ``E`` experts of ``3*h*Ie``
  (plus shared experts), of which ``top_k`` are active per token
- embeddings ``V*h``, and the output projection ``V*h`` unless tied to them

A config is read as data from outside (a user's file, the Hub): every field the formulas take must be
of its type and within ``LIMITS`` (far above any published model, low enough that every product of
them stays a finite number), ``num_attention_heads`` must divide ``hidden_size`` when ``head_dim`` is
not given and be a multiple of ``num_key_value_heads``; anything else is one line naming the field.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

# bytes per parameter of the dtypes a config names
DTYPE_BYTES = {"float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2, "fp8": 1, "float8_e4m3fn": 1,
               "fp8_e4m3": 1, "fp8_e5m2": 1, "int8": 1}
# how vLLM holds a component over tensor-parallel ranks
SHARDED, REPLICATED, KV_HEADS = "sharded", "replicated", "kv_heads"

# the largest value of a config's whole numbers: far above any published model (hidden 16k-25k, 128 layers,
# 256k vocabulary, 10M positions, 384 experts), low enough that every product the formulas take stays finite
LIMITS = {"hidden_size": 1 << 20, "num_hidden_layers": 1 << 14, "num_attention_heads": 1 << 14,
          "num_key_value_heads": 1 << 14, "head_dim": 1 << 16, "intermediate_size": 1 << 22, "vocab_size": 1 << 24,
          "max_position_embeddings": 1 << 32, "sliding_window": 1 << 32, "num_local_experts": 1 << 16,
          "num_experts": 1 << 16, "n_routed_experts": 1 << 16, "num_experts_per_tok": 1 << 16,
          "experts_per_token": 1 << 16, "n_shared_experts": 1 << 16}
DEFAULT_LIMIT = 1 << 22
# the weight widths quantized formats store (bits)
AWQ_GPTQ_BITS = (2, 3, 4, 8)
COMPRESSED_TENSORS_BITS = (2, 3, 4, 8, 16)


class Component:
    """Weights of one kind: ``count`` parameters in the whole model (every layer), held ``placement``
    over tensor-parallel ranks; ``per_layer`` ones split over pipeline stages, the others sit in one
    stage (``stage``: first or last); ``quantizable``: a linear layer's weight a quantization method
    can store in fewer bits; ``expert``: an expert's (all but ``active_fraction`` idle per token)."""

    __slots__ = ("name", "count", "placement", "per_layer", "stage", "quantizable", "expert", "active_fraction", "dims")

    def __init__(self, name, count, placement=SHARDED, per_layer=True, stage=None, quantizable=False, expert=False,
                 active_fraction=1.0, dims=None):
        self.name = name
        self.count = int(count)
        self.placement = placement
        self.per_layer = per_layer
        self.stage = stage
        self.quantizable = quantizable
        self.expert = expert
        self.active_fraction = active_fraction
        # (hidden, intermediate) of an expert's matrices: a kernel that pads them needs them
        self.dims = dims


class ModelShape:
    """What the memory model needs of a model; built by ``shape_of``."""

    def __init__(self, **fields):
        self.model_type = fields["model_type"]
        self.family = fields["family"]
        self.hidden_size = fields["hidden_size"]
        self.num_layers = fields["num_layers"]
        self.num_heads = fields["num_heads"]
        self.num_kv_heads = fields["num_kv_heads"]
        self.head_dim = fields["head_dim"]
        self.intermediate_size = fields["intermediate_size"]
        self.vocab_size = fields["vocab_size"]
        self.tied_embeddings = fields["tied_embeddings"]
        self.max_position_embeddings = fields["max_position_embeddings"]
        self.dtype = fields["dtype"]
        self.attention_bias = fields.get("attention_bias", False)
        self.o_bias = fields.get("o_bias", self.attention_bias)
        self.qk_norm = fields.get("qk_norm", False)
        self.norms_per_layer = fields.get("norms_per_layer", 2)
        # mixture of experts (None for a dense model)
        self.num_experts = fields.get("num_experts")
        self.experts_per_token = fields.get("experts_per_token")
        self.expert_intermediate_size = fields.get("expert_intermediate_size")
        self.expert_bias = fields.get("expert_bias", False)
        self.router_bias = fields.get("router_bias", False)
        self.shared_expert_intermediate_size = fields.get("shared_expert_intermediate_size") or 0
        self.shared_expert_gate = fields.get("shared_expert_gate", False)
        self.moe_layers = fields.get("moe_layers", 0)
        # multi-head latent attention (None for grouped-query attention)
        self.mla = fields.get("mla")
        # layers attending within a sliding window (their KV cache is bounded by it), and the window
        self.sliding_window_layers = fields.get("sliding_window_layers", 0)
        self.sliding_window = fields.get("sliding_window")
        self.attention_sinks = fields.get("attention_sinks", False)
        self.quantization = fields.get("quantization")
        # the config named no dtype: DEFAULT_DTYPE was assumed (plans say so, memory.assumption_warnings)
        self.dtype_assumed = fields.get("dtype_assumed", False)

    @property
    def is_moe(self):
        return bool(self.num_experts)

    @property
    def dtype_bytes(self):
        return DTYPE_BYTES[self.dtype]

    def describe(self):
        parts = ["%s, %d layers, hidden %d" % (self.model_type, self.num_layers, self.hidden_size)]
        if self.mla:
            parts.append("MLA (latent %d + rope %d)" % (self.mla["kv_lora_rank"], self.mla["qk_rope_head_dim"]))
        else:
            parts.append("%d heads / %d KV heads of %d" % (self.num_heads, self.num_kv_heads, self.head_dim))
        if self.is_moe:
            parts.append("%d experts (%d active) in %d layers" % (self.num_experts, self.experts_per_token, self.moe_layers))
        if self.quantization:
            parts.append("%s weights" % self.quantization["method"])
        return ", ".join(parts)


def shown(value):
    """``value`` as a message shows it: its repr, cut at 60 characters; a huge whole number by its size."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 18:
        return "%s10^%d" % ("-" if value < 0 else "about ", int(abs(value).bit_length() * 0.30103))
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _get(config, key, expected=int, required=True, where="model config", minimum=1):
    """A whole number of the config from ``minimum`` (1: positive) to its limit (``LIMITS``), None when
    it is absent (null) and not ``required``."""
    value = config.get(key)
    if value is None:
        if required:
            raise CapacityError("%s: %s is missing (expected %s)" % (where, key, expected.__name__))
        return None
    maximum = LIMITS.get(key, DEFAULT_LIMIT)
    if expected is int and (isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum):
        raise CapacityError("%s: %s is %s (expected a %s whole number, at most %d)"
                            % (where, key, shown(value), "positive" if minimum == 1 else "non-negative", maximum))
    return value


def _flag(config, key, default, where):
    """A true/false field of the config (``default`` when absent or null)."""
    value = config.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise CapacityError("%s: %s is %s (expected true or false)" % (where, key, shown(value)))
    return value


def text_config(config):
    """The language model's part of a config (multimodal configs nest it under ``text_config``)."""
    inner = config.get("text_config")
    if isinstance(inner, dict) and inner.get("hidden_size"):
        merged = dict(inner)
        for key in ("torch_dtype", "dtype", "quantization_config", "tie_word_embeddings"):
            if key not in merged and key in config:
                merged[key] = config[key]
        merged.setdefault("model_type", config.get("model_type"))
        return merged
    return config


# the dtype of a config that names none (neither torch_dtype nor dtype): a plan says it assumed it
DEFAULT_DTYPE = "bfloat16"


def model_dtype(config, where):
    dtype = config.get("torch_dtype") or config.get("dtype") or DEFAULT_DTYPE
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        raise CapacityError("%s: torch_dtype %s (expected one of float32, float16, bfloat16)" % (where, shown(dtype)))
    # vLLM serves float32 checkpoints in 16 bits by default (its dtype 'auto')
    return "bfloat16" if DTYPE_BYTES[dtype] == 4 else dtype


def _common(config, where, family):
    hidden = _get(config, "hidden_size", where=where)
    heads = _get(config, "num_attention_heads", where=where)
    kv_heads = _get(config, "num_key_value_heads", required=False, where=where) or heads
    head_dim = _get(config, "head_dim", required=False, where=where)
    if heads > hidden:
        raise CapacityError("%s: num_attention_heads %d is more than hidden_size %d (expected at most hidden_size)"
                            % (where, heads, hidden))
    if head_dim is None and hidden % heads:
        raise CapacityError("%s: num_attention_heads %d does not divide hidden_size %d (expected a divisor of it, "
                            "or head_dim)" % (where, heads, hidden))
    if heads % kv_heads:
        raise CapacityError("%s: num_key_value_heads %d does not divide num_attention_heads %d (expected a divisor "
                            "of it)" % (where, kv_heads, heads))
    return dict(
        model_type=config.get("model_type"), family=family, hidden_size=hidden,
        num_layers=_get(config, "num_hidden_layers", where=where), num_heads=heads, num_kv_heads=kv_heads,
        head_dim=head_dim or hidden // heads,
        intermediate_size=_get(config, "intermediate_size", required=False, where=where) or 0,
        vocab_size=_get(config, "vocab_size", where=where),
        tied_embeddings=_flag(config, "tie_word_embeddings", False, where),
        max_position_embeddings=_get(config, "max_position_embeddings", required=False, where=where),
        dtype=model_dtype(config, where), attention_bias=_flag(config, "attention_bias", False, where),
        quantization=quantization_of(config.get("quantization_config"), where),
    )


def _window(config, where):
    """``sliding_window``: a positive whole number, or None (absent, null)."""
    return _get(config, "sliding_window", required=False, where=where)


def _experts(fields, where):
    """A mixture of experts activates at most its experts per token."""
    if fields["num_experts"] and fields["experts_per_token"] > fields["num_experts"]:
        raise CapacityError("%s: %d experts per token of %d experts (expected at most the number of experts)"
                            % (where, fields["experts_per_token"], fields["num_experts"]))
    return fields


def _sliding(config, fields, where):
    """Layers whose attention looks back ``sliding_window`` tokens only (``layer_types``, or Gemma 2's
    every other layer)."""
    layer_types = config.get("layer_types")
    if isinstance(layer_types, list) and config.get("sliding_window") is not None:
        window = _window(config, where)
        sliding = sum(1 for t in layer_types if t == "sliding_attention")
        if sliding > fields["num_layers"]:
            raise CapacityError("%s: layer_types names %d sliding_attention layers (expected at most "
                                "num_hidden_layers, %d)" % (where, sliding, fields["num_layers"]))
        fields.update(sliding_window_layers=sliding, sliding_window=window)
    return fields


def _dense(config, where):
    fields = _common(config, where, "dense")
    if not fields["intermediate_size"]:
        raise CapacityError("%s: intermediate_size is missing (expected a positive whole number)" % where)
    if fields["model_type"] in ("qwen2",):
        fields.update(attention_bias=True, o_bias=False)  # Qwen2's q, k, v projections have biases, o has none
    if fields["model_type"] in ("qwen3", "gemma3", "gemma3_text"):
        fields["qk_norm"] = True
    if fields["model_type"] in ("gemma2", "gemma3", "gemma3_text"):
        fields["norms_per_layer"] = 4  # pre- and post- attention and feed-forward norms
        fields["tied_embeddings"] = _flag(config, "tie_word_embeddings", True, where)
    if fields["model_type"] == "gemma":
        fields["tied_embeddings"] = _flag(config, "tie_word_embeddings", True, where)
    if fields["model_type"] == "gemma2" and config.get("sliding_window") is not None and "layer_types" not in config:
        fields.update(sliding_window_layers=fields["num_layers"] // 2, sliding_window=_window(config, where))
        return fields
    return _sliding(config, fields, where)


def _mixtral(config, where):
    fields = _common(config, where, "moe")
    fields.update(num_experts=_get(config, "num_local_experts", where=where),
                  experts_per_token=_get(config, "num_experts_per_tok", where=where),
                  expert_intermediate_size=_get(config, "intermediate_size", where=where),
                  moe_layers=fields["num_layers"], intermediate_size=0)
    return _experts(fields, where)


def _qwen_moe(config, where):
    fields = _common(config, where, "moe")
    layers = fields["num_layers"]
    step = _get(config, "decoder_sparse_step", required=False, where=where) or 1
    dense_only = config.get("mlp_only_layers") or []
    if not isinstance(dense_only, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in dense_only):
        raise CapacityError("%s: mlp_only_layers is %s (expected a list of layer numbers)" % (where, shown(dense_only)))
    dense_only = set(dense_only)
    moe_layers = sum(1 for i in range(layers) if i not in dense_only and (i + 1) % step == 0)
    shared = _get(config, "shared_expert_intermediate_size", required=False, where=where, minimum=0) or 0
    fields.update(num_experts=_get(config, "num_experts", where=where),
                  experts_per_token=_get(config, "num_experts_per_tok", where=where),
                  expert_intermediate_size=_get(config, "moe_intermediate_size", where=where),
                  shared_expert_intermediate_size=shared, shared_expert_gate=bool(shared),
                  moe_layers=moe_layers,
                  qk_norm=fields["model_type"] == "qwen3_moe",
                  attention_bias=fields["model_type"] == "qwen2_moe", o_bias=False)
    if moe_layers < layers and not fields["intermediate_size"]:
        raise CapacityError("%s: intermediate_size is missing for the dense layers" % where)
    return _experts(fields, where)


def _gpt_oss(config, where):
    fields = _common(config, where, "moe")
    fields.update(num_experts=_get(config, "num_local_experts", where=where),
                  experts_per_token=_get(config, "num_experts_per_tok", required=False, where=where)
                  or _get(config, "experts_per_token", where=where),
                  expert_intermediate_size=_get(config, "intermediate_size", where=where),
                  moe_layers=fields["num_layers"], intermediate_size=0, expert_bias=True, router_bias=True,
                  attention_bias=True, attention_sinks=True)
    return _sliding(config, _experts(fields, where), where)


def _deepseek(config, where):
    fields = _common(config, where, "moe")
    layers = fields["num_layers"]
    first_dense = _get(config, "first_k_dense_replace", required=False, where=where, minimum=0) or 0
    frequency = _get(config, "moe_layer_freq", required=False, where=where) or 1
    experts = _get(config, "n_routed_experts", required=False, where=where, minimum=0)
    moe_layers = sum(1 for i in range(layers) if experts and i >= first_dense and i % frequency == 0)
    mla = {key: _get(config, key, where=where) for key in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
                                                           "v_head_dim")}
    mla["q_lora_rank"] = _get(config, "q_lora_rank", required=False, where=where)
    # the experts' sizes are needed when the model has experts
    per_token = _get(config, "num_experts_per_tok", required=bool(experts), where=where)
    expert_size = _get(config, "moe_intermediate_size", required=bool(experts), where=where)
    shared = _get(config, "n_shared_experts", required=False, where=where, minimum=0) or 0
    fields.update(mla=mla, num_experts=experts, experts_per_token=per_token, expert_intermediate_size=expert_size,
                  shared_expert_intermediate_size=shared * (expert_size or 0),
                  moe_layers=moe_layers, router_bias=config.get("topk_method") == "noaux_tc",
                  # MLA caches one latent vector per token and layer, shared by every head
                  num_kv_heads=1, head_dim=mla["kv_lora_rank"] + mla["qk_rope_head_dim"])
    return _experts(fields, where)


# model_type -> how its config reads (a new family of architectures is one entry here)
FAMILIES = {
    "llama": _dense, "mistral": _dense, "qwen2": _dense, "qwen3": _dense, "granite": _dense, "gemma": _dense,
    "gemma2": _dense, "gemma3": _dense, "gemma3_text": _dense, "phi3": _dense,
    "mixtral": _mixtral,
    "qwen2_moe": _qwen_moe, "qwen3_moe": _qwen_moe,
    "gpt_oss": _gpt_oss,
    "deepseek_v2": _deepseek, "deepseek_v3": _deepseek, "kimi_k2": _deepseek,
}


# ---------------------------------------------------------------------------------------------------
# quantized weights: bytes per weight of a quantized linear layer, and which layers are quantized

def _compressed_tensors_bits(qconfig, where):
    groups = qconfig.get("config_groups") or {}
    if not isinstance(groups, dict):
        raise CapacityError("%s: quantization_config.config_groups is %s (expected a mapping of groups)"
                            % (where, shown(groups)))
    for name, group in groups.items():
        key = "quantization_config.config_groups.%s" % name
        if group is None:
            continue
        if not isinstance(group, dict):
            raise CapacityError("%s: %s is %s (expected a mapping)" % (where, key, shown(group)))
        weights = group.get("weights")
        if weights is None:
            continue
        if not isinstance(weights, dict):
            raise CapacityError("%s: %s.weights is %s (expected a mapping)" % (where, key, shown(weights)))
        bits = weights.get("num_bits")
        if bits is None:
            continue
        if isinstance(bits, bool) or bits not in COMPRESSED_TENSORS_BITS:
            raise CapacityError("%s: %s.weights.num_bits is %s (expected one of %s)" % (
                where, key, shown(bits), ", ".join(map(str, COMPRESSED_TENSORS_BITS))))
        kind = weights.get("type", "int")
        if kind not in ("int", "float"):
            raise CapacityError("%s: %s.weights.type is %s (expected int or float)" % (where, key, shown(kind)))
        size = weights.get("group_size")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= DEFAULT_LIMIT):
            raise CapacityError("%s: %s.weights.group_size is %s (expected a positive whole number, at most %d, or "
                                "null)" % (where, key, shown(size), DEFAULT_LIMIT))
        return int(bits), kind, size
    return None, None, None


def _quantization_number(qconfig, keys, default, allowed, where):
    """The first of ``keys`` the quantization_config sets (else ``default``), one of ``allowed`` (a
    whole-number test)."""
    for key in keys:
        value = qconfig.get(key)
        if value is None or value == 0:   # unset (0: the format's default)
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not allowed(value):
            return key, value
        return None, value
    return None, default


def quantization_of(qconfig, where="model config"):
    """``{"method", "bits_per_weight", "experts_only"}`` of a ``quantization_config``, or None.

    ``bits_per_weight`` includes the scales stored beside the weights: group-quantized INT4 (AWQ,
    GPTQ) keeps a 16-bit scale and a 4-bit zero point per group (``group_size``, 128 by default);
    MXFP4 keeps an 8-bit scale per 32 weights (4.25 bits); FP8 and INT8 keep per-channel or per-block
    scales (negligible)."""
    if not qconfig:
        return None
    if not isinstance(qconfig, dict):
        raise CapacityError("%s: quantization_config is %s (expected a mapping)" % (where, shown(qconfig)))
    method = str(qconfig.get("quant_method") or "").lower()
    if method in ("fp8", "fbgemm_fp8", "modelopt"):
        return {"method": "fp8", "bits_per_weight": 8.0, "experts_only": False}
    if method in ("awq", "gptq", "awq_marlin", "gptq_marlin"):
        bad, bits = _quantization_number(qconfig, ("bits", "w_bit"), 4, lambda v: v in AWQ_GPTQ_BITS, where)
        if bad:
            raise CapacityError("%s: quantization_config.%s is %s (expected one of %s)"
                                % (where, bad, shown(bits), ", ".join(map(str, AWQ_GPTQ_BITS))))
        bad, group = _quantization_number(qconfig, ("group_size", "q_group_size"), 128,
                                          lambda v: v == -1 or 0 < v <= DEFAULT_LIMIT, where)
        if bad:
            raise CapacityError("%s: quantization_config.%s is %s (expected a positive whole number, at most %d, "
                                "or -1)" % (where, bad, shown(group), DEFAULT_LIMIT))
        group = group if group > 0 else 4096  # -1: one scale per output channel
        return {"method": "%s-int%d" % (method.split("_", maxsplit=1)[0], bits),
                "bits_per_weight": bits + (16.0 + bits) / group, "experts_only": False}
    if method == "mxfp4":
        # vLLM's MXFP4 MoE method pads each expert's matrices: the hidden size to a multiple of 256 and
        # the intermediate size of each tensor-parallel rank to a multiple of 128 (Mxfp4MoEMethod.create_weights,
        # vllm/model_executor/layers/quantization/mxfp4.py; gpt-oss: 2880 -> 3072 and 2944)
        return {"method": "mxfp4", "bits_per_weight": 4.25, "experts_only": True,
                "pad": {"hidden": 256, "intermediate_per_rank": 128}}
    if method == "compressed-tensors":
        bits, kind, group = _compressed_tensors_bits(qconfig, where)
        if bits is None:
            raise CapacityError("%s: quantization_config (compressed-tensors) names no weight bits" % where)
        extra = (16.0 / group) if group else 0.0
        return {"method": "%s%d" % ("fp" if kind == "float" else "int", bits), "bits_per_weight": bits + extra,
                "experts_only": False}
    if method == "bitsandbytes":
        bits = 4 if qconfig.get("load_in_4bit") else 8
        return {"method": "bnb-int%d" % bits, "bits_per_weight": bits + (32.0 / 64 if bits == 4 else 0),
                "experts_only": False}
    raise CapacityError("%s: quantization method %s is not known (known: fp8, awq, gptq, mxfp4, compressed-tensors, "
                        "bitsandbytes)" % (where, shown(qconfig.get("quant_method"))))


def quantization_for(name):
    """A quantization named on the command line (vLLM's ``--quantization``): fp8, int8, int4/awq/gptq, mxfp4."""
    table = {"fp8": {"quant_method": "fp8"}, "int8": {"quant_method": "compressed-tensors", "config_groups": {
        "g": {"weights": {"num_bits": 8, "type": "int"}}}}, "awq": {"quant_method": "awq"},
        "gptq": {"quant_method": "gptq"}, "int4": {"quant_method": "gptq"}, "mxfp4": {"quant_method": "mxfp4"}}
    if not isinstance(name, str) or name not in table:
        raise CapacityError("quantization %s: expected one of %s" % (shown(name), ", ".join(sorted(table))))
    return quantization_of(table[name], "quantization")


def shape_of(config, where="model config"):
    """The ``ModelShape`` of a config.json (a dict); CapacityError names what is wrong."""
    if not isinstance(config, dict):
        raise CapacityError("%s: expected a JSON object (a model's config.json)" % where)
    config = text_config(config)
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        raise CapacityError("%s: architecture %s (model_type) is not known; known: %s"
                            % (where, shown(model_type), ", ".join(sorted(FAMILIES))))
    fields = FAMILIES[model_type](config, where)
    fields["dtype_assumed"] = not (config.get("torch_dtype") or config.get("dtype"))
    return ModelShape(**fields)


# ---------------------------------------------------------------------------------------------------
# parameters by component


def _attention(shape):
    h, n, k, d, layers = shape.hidden_size, shape.num_heads, shape.num_kv_heads, shape.head_dim, shape.num_layers
    if shape.mla:
        m = shape.mla
        qk = m["qk_nope_head_dim"] + m["qk_rope_head_dim"]
        parts = []
        if m["q_lora_rank"]:
            # vLLM keeps the low-rank projections whole on every rank (ReplicatedLinear)
            parts += [Component("attention.q_a", layers * (h * m["q_lora_rank"] + m["q_lora_rank"]), REPLICATED,
                                quantizable=True),
                      Component("attention.q_b", layers * m["q_lora_rank"] * n * qk, quantizable=True)]
        else:
            parts.append(Component("attention.q", layers * h * n * qk, quantizable=True))
        parts += [Component("attention.kv_a", layers * (h * (m["kv_lora_rank"] + m["qk_rope_head_dim"])
                                                        + m["kv_lora_rank"]), REPLICATED, quantizable=True),
                  Component("attention.kv_b", layers * m["kv_lora_rank"] * n * (m["qk_nope_head_dim"] + m["v_head_dim"]),
                            quantizable=True),
                  Component("attention.o", layers * n * m["v_head_dim"] * h, quantizable=True)]
        return parts
    bias = shape.attention_bias
    parts = [Component("attention.q", layers * (h * n * d + (n * d if bias else 0)), quantizable=True),
             Component("attention.kv", layers * 2 * (h * k * d + (k * d if bias else 0)), KV_HEADS, quantizable=True),
             Component("attention.o", layers * (n * d * h + (h if shape.o_bias else 0)),
                       quantizable=True)]
    if shape.qk_norm:
        parts.append(Component("attention.qk_norm", layers * 2 * d, REPLICATED))
    if shape.attention_sinks:
        parts.append(Component("attention.sinks", layers * n))
    return parts


def _feed_forward(shape):
    h, layers = shape.hidden_size, shape.num_layers
    parts = []
    dense_layers = layers - shape.moe_layers if shape.is_moe else layers
    if dense_layers and shape.intermediate_size:
        parts.append(Component("mlp", dense_layers * 3 * h * shape.intermediate_size, quantizable=True))
    if shape.is_moe:
        e, ie, moe = shape.num_experts, shape.expert_intermediate_size, shape.moe_layers
        per_expert = 3 * h * ie + ((2 * ie + h) if shape.expert_bias else 0)
        parts.append(Component("experts", moe * e * per_expert, quantizable=True, expert=True,
                               active_fraction=float(shape.experts_per_token) / e, dims=(h, ie)))
        parts.append(Component("router", moe * (h * e + (e if shape.router_bias else 0)), REPLICATED))
        if shape.shared_expert_intermediate_size:
            parts.append(Component("shared_experts", moe * 3 * h * shape.shared_expert_intermediate_size,
                                   quantizable=True))
        if shape.shared_expert_gate:
            parts.append(Component("shared_expert_gate", moe * h, REPLICATED))
    return parts


def components(shape):
    """The model's weights as ``Component`` s (see the module's formulas)."""
    h, layers, vocab = shape.hidden_size, shape.num_layers, shape.vocab_size
    parts = [Component("embeddings", vocab * h, per_layer=False, stage="first")]
    if not shape.tied_embeddings:
        parts.append(Component("lm_head", vocab * h, per_layer=False, stage="last"))
    parts += _attention(shape)
    parts += _feed_forward(shape)
    parts.append(Component("norms", layers * shape.norms_per_layer * h, REPLICATED))
    parts.append(Component("final_norm", h, REPLICATED, per_layer=False, stage="last"))
    return parts


def parameter_counts(shape):
    """``{"total", "active", "embeddings", "by_component"}``: parameters of the whole model, and those a
    token goes through (a mixture of experts activates ``top_k`` of its experts)."""
    parts = components(shape)
    total = sum(c.count for c in parts)
    active = sum(c.count * c.active_fraction for c in parts)
    embeddings = next(c.count for c in parts if c.name == "embeddings")
    return {"total": total, "active": int(round(active)), "embeddings": embeddings,
            # what some model cards call active: without the input embeddings (a lookup, not a matrix product)
            "active_without_embeddings": int(round(active)) - embeddings,
            "by_component": {c.name: c.count for c in parts}}
