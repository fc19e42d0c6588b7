#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: capacity_plan
short_description: Plan a vLLM serving configuration's memory on each GPU, and say whether it can serve
version_added: 0.4.0
description:
  - Reads the model's architecture (O(model) from the collection's table of common models, or the
    Hugging Face Hub, or O(model_config)) and computes, per GPU, what vLLM would take - the weights,
    the activation peak of its memory profile, the memory outside PyTorch - and what it would leave
    to the KV cache, its size in tokens and the sequences of O(max_model_len) tokens it holds at once.
  - The plan is feasible when the weights fit, something is left for the KV cache, one sequence of
    O(max_model_len) tokens fits in it and O(max_model_len) is within the model's positions; an
    infeasible plan is not a failure (RV(feasible) is false and RV(plan) says why).
  - Bad input fails in one line naming it - an unknown GPU product or architecture, a tensor-parallel
    size the model's attention heads cannot take, a model the table lacks and the Hub cannot give, a
    number that is not finite or out of its range (O(gpu_memory_gib) C(nan), a negative
    C(sliding_window)), a C(config.json) field of the wrong type, a C(config.json) that is not UTF-8
    JSON or not a regular file. No plan ever holds a number that is not finite or is negative.
  - The activation and non-torch terms depend on vLLM's release (O(vllm_version)); every plan states the
    release line it was calibrated on.
  - The memory model and its validation against vLLM's logged figures are in docs/capacity.md.
  - Runs on the controller (action plugin); the Hub is only asked when the table lacks the model and
    O(online) is true (C(HF_TOKEN) from the environment for a gated model, never shown).
author:
  - perfscale.topsail developers (@perfscale)
options:
  model:
    description: A Hugging Face model id (C(org/name) or C(hf://org/name)).
    type: str
  model_config:
    description: A path to the model's C(config.json) (its C(quantization_config) and C(torch_dtype) are honoured).
    type: path
  gpu:
    description: A GPU product as nodes label it (C(nvidia.com/gpu.product)), for example C(NVIDIA-H100-80GB-HBM3).
    type: str
  gpu_memory_gib:
    description: The GPU's memory as CUDA reports it, in GiB (instead of O(gpu)).
    type: float
  tensor_parallel_size:
    description: vLLM's C(--tensor-parallel-size).
    type: int
    default: 1
  pipeline_parallel_size:
    description: vLLM's C(--pipeline-parallel-size).
    type: int
    default: 1
  max_model_len:
    description: vLLM's C(--max-model-len) (default the model's C(max_position_embeddings)).
    type: int
  max_num_seqs:
    description: vLLM's C(--max-num-seqs) (default vLLM's, 1024 on GPUs of 70 GiB and more, else 256).
    type: int
  max_num_batched_tokens:
    description: vLLM's C(--max-num-batched-tokens) (default vLLM's, 8192 on GPUs of 70 GiB and more, else 2048).
    type: int
  gpu_memory_utilization:
    description: vLLM's C(--gpu-memory-utilization).
    type: float
    default: 0.9
  kv_cache_dtype:
    description: vLLM's C(--kv-cache-dtype) (C(auto) is the model's dtype, C(fp8) halves a 16-bit cache).
    type: str
    default: auto
  dtype:
    description: vLLM's C(--dtype) (C(auto), C(bfloat16), C(float16), C(float32)).
    type: str
    default: auto
  quantization:
    description: vLLM's C(--quantization) for an unquantized checkpoint (C(fp8), C(int8), C(awq), C(gptq), C(mxfp4)).
    type: str
  online:
    description: Ask the Hugging Face Hub for a C(config.json) the collection's table lacks.
    type: bool
    default: true
  vllm_version:
    description:
      - The vLLM release that will serve (C(0.11), C(0.10.2), C(v0.11.0)); its release line selects the
        calibration of the activation and non-torch terms, which changed between releases.
      - Calibrated lines - C(0.10) and C(0.11) (one calibration), C(0.19). Omitted, the plan is made for the
        newest calibrated line and says so (C(calibrated on vLLM 0.19 (default; set vllm_version to yours))).
      - A line without a calibration fails in one line naming the calibrated ones (docs/capacity.md says what
        to do then); give it as text (YAML reads C(0.10) as the number 0.1).
    type: raw
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Can Llama 3.1 70B serve 32k tokens on two H100s?
  perfscale.topsail.capacity_plan:
    model: meta-llama/Llama-3.1-70B-Instruct
    gpu: NVIDIA-H100-80GB-HBM3
    tensor_parallel_size: 2
    max_model_len: 32768
    vllm_version: "0.11"
  register: plan
"""

RETURN = r"""
feasible:
  description: Whether vLLM can serve this configuration.
  returned: success
  type: bool
plan:
  description:
    - C(feasible), C(reason) (one line), per GPU C(weights_gib), C(activation_gib), C(non_torch_gib),
      C(kv_cache_gib), C(kv_cache_bytes_per_token), C(max_tokens_in_kv_cache),
      C(max_concurrent_sequences_at_max_model_len), C(warnings), the parameter counts and where the
      model's config and the GPU's memory came from; C(vllm_version) (the release line planned for) and
      C(calibration) (C(calibrated on vLLM 0.19 (default; set vllm_version to yours))).
  returned: success
  type: dict
"""
