# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The memory of one GPU of a fine-tuning job (FSDP over every GPU of the job), and whether it fits.

A rough model, not validated against measured figures (docs/capacity.md says so); it catches the
points that cannot fit by a wide margin (a 70B full fine-tuning on one GPU), not the borderline ones:

- model states, fully sharded over the job's ``N`` GPUs (FSDP full shard, ZeRO stage 3): mixed-precision
  AdamW keeps 16 bytes per trained parameter (16-bit weights and gradients, and float32 master weights,
  momentum and variance: Rajbhandari et al., "ZeRO", 2020, section 3.1), frozen parameters (LoRA) 2;
- LoRA adapters (``peft_method: lora``): rank ``r`` matrices on the query and value projections
  (``r x (in + out)`` per projection), trained with the same 16 bytes;
- activations without recomputation, with a fused attention kernel: ``34 x s x b x h`` bytes per layer
  (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", 2022, section
  4.1, without its ``5as/h`` attention-score term), plus the float32 logits and their gradient
  ``2 x 4 x s x b x V``;
- ``CONTEXT_GIB`` for the CUDA context, NCCL and the allocator's fragmentation.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import architectures
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import memory
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

GIB = float(2 ** 30)
TRAINED_BYTES = 16
FROZEN_BYTES = 2
ACTIVATION_FACTOR = 34
CONTEXT_GIB = 1.5
DEFAULT_LORA_RANK = 8
PEFT_METHODS = ("none", "lora")
# the largest value of each number a job takes (far above any job; every result stays finite)
LIMITS = {"gpus": 1 << 16, "batch_size": 1 << 20, "max_seq_length": 1 << 32, "lora_rank": 1 << 16}


def plan(shape, gpu_memory_gib, gpus, batch_size=1, max_seq_length=1024, peft_method="none", lora_rank=None):
    """The per-GPU memory of a fine-tuning job (a JSON-ready dict with ``feasible`` and ``reason``)."""
    if peft_method in (None, ""):
        peft_method = "none"
    if not isinstance(peft_method, str) or peft_method not in PEFT_METHODS:
        raise CapacityError("peft_method %r: expected one of %s" % (peft_method, ", ".join(PEFT_METHODS)))
    if isinstance(gpus, (int, float)) and not isinstance(gpus, bool) and gpus <= 0:
        raise CapacityError("gpus %r: a fine-tuning job needs at least one GPU to plan" % (gpus,))
    gpu_memory_gib = memory.positive("gpu_memory_gib", gpu_memory_gib, float)
    gpus = memory.positive("gpus", gpus, int, LIMITS["gpus"])
    batch_size = memory.positive("batch_size", batch_size, int, LIMITS["batch_size"])
    max_seq_length = memory.positive("max_seq_length", max_seq_length, int, LIMITS["max_seq_length"])
    if lora_rank is not None:
        lora_rank = memory.positive("lora_rank", lora_rank, int, LIMITS["lora_rank"])
    counts = architectures.parameter_counts(shape)
    total = counts["total"]
    if peft_method == "lora":
        rank = lora_rank or DEFAULT_LORA_RANK
        h, layers = shape.hidden_size, shape.num_layers
        q_out = shape.num_heads * shape.head_dim
        v_out = shape.num_kv_heads * shape.head_dim
        trained = layers * rank * ((h + q_out) + (h + v_out))
        states = total * FROZEN_BYTES + trained * TRAINED_BYTES
    else:
        trained = total
        states = total * TRAINED_BYTES
    per_gpu_states = states / float(gpus)
    tokens = batch_size * max_seq_length
    activations = ACTIVATION_FACTOR * tokens * shape.hidden_size * shape.num_layers + 2 * 4 * tokens * shape.vocab_size
    needed = per_gpu_states + activations + CONTEXT_GIB * GIB
    available = gpu_memory_gib * GIB
    result = {
        "feasible": needed <= available,
        "model": shape.describe(),
        "parameters": total,
        "trained_parameters": int(trained),
        "gpus": gpus,
        "peft_method": peft_method,
        "batch_size": batch_size,
        "max_seq_length": max_seq_length,
        "gpu_memory_gib": round(gpu_memory_gib, 3),
        "model_states_gib": round(per_gpu_states / GIB, 3),
        "activation_gib": round(activations / GIB, 3),
        "non_torch_gib": CONTEXT_GIB,
        "needed_gib": round(needed / GIB, 3),
    }
    if result["feasible"]:
        result["reason"] = "fits: %.1f of %.1f GiB per GPU" % (needed / GIB, gpu_memory_gib)
    else:
        result["reason"] = ("needs %.1f GiB per GPU (model states %.1f over %d GPU(s), activations %.1f), more than the "
                            "%.1f GiB of the GPU: more GPUs, a smaller batch or max_seq_length, or LoRA"
                            % (needed / GIB, per_gpu_states / GIB, gpus, activations / GIB, gpu_memory_gib))
    return memory.checked_numbers(result, "fine-tuning plan")
