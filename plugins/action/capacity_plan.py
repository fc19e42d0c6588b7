# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.capacity_plan (documented in plugins/modules)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import architectures
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import gpus
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import memory
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import models
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

ARGUMENT_SPEC = dict(
    model=dict(type="str"),
    model_config=dict(type="path"),
    gpu=dict(type="str"),
    gpu_memory_gib=dict(type="float"),
    tensor_parallel_size=dict(type="int", default=1),
    pipeline_parallel_size=dict(type="int", default=1),
    max_model_len=dict(type="int"),
    max_num_seqs=dict(type="int"),
    max_num_batched_tokens=dict(type="int"),
    gpu_memory_utilization=dict(type="float", default=memory.DEFAULT_GPU_MEMORY_UTILIZATION),
    kv_cache_dtype=dict(type="str", default="auto"),
    dtype=dict(type="str", default="auto"),
    quantization=dict(type="str"),
    online=dict(type="bool", default=True),
)


class ActionModule(PerfscaleAction):
    NAME = "capacity_plan"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    NEEDS_CONFIG = False

    def execute(self, result, args, task_vars, config):
        if not args.get("model") and not args.get("model_config"):
            raise CapacityError("capacity plan: give model (a Hugging Face model id) or model_config (a path to a "
                                "config.json)")
        if args.get("gpu_memory_gib"):
            gpu_memory, gpu_source = args["gpu_memory_gib"], "gpu_memory_gib"
        elif args.get("gpu"):
            gpu_memory, gpu_source = gpus.product_memory(args["gpu"])
        else:
            raise CapacityError("capacity plan: give gpu (a GPU product as nodes label it, e.g. NVIDIA-H100-80GB-HBM3) "
                                "or gpu_memory_gib")
        loaded, provenance = models.model_config(model=args.get("model"), path=args.get("model_config"),
                                                 online=args["online"])
        shape = architectures.shape_of(loaded, "model %s" % (args.get("model_config") or args.get("model")))
        request = memory.ServingRequest(
            shape, gpu_memory, tensor_parallel_size=args["tensor_parallel_size"],
            pipeline_parallel_size=args["pipeline_parallel_size"], max_model_len=args.get("max_model_len"),
            max_num_seqs=args.get("max_num_seqs"), max_num_batched_tokens=args.get("max_num_batched_tokens"),
            gpu_memory_utilization=args["gpu_memory_utilization"], kv_cache_dtype=args["kv_cache_dtype"],
            dtype=args["dtype"], quantization=args.get("quantization"))
        plan = memory.plan(request)
        plan.update(model_id=models.model_id(args.get("model")) if args.get("model") else None,
                    model_config_source=provenance, gpu=args.get("gpu"), gpu_memory_source=gpu_source)
        result.update(changed=False, plan=plan, feasible=plan["feasible"],
                      msg="%s: %s" % ("feasible" if plan["feasible"] else "INFEASIBLE", plan["reason"]))
        return result
