# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.capacity_plan (documented in plugins/modules)."""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import memory
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import requests as capacity_requests

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
    # raw: a YAML number (0.10 read as 0.1) is refused with a hint to quote it, not turned into "0.1"
    vllm_version=dict(type="raw"),
)


class ActionModule(PerfscaleAction):
    NAME = "capacity_plan"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    NEEDS_CONFIG = False

    def execute(self, result, args, task_vars, config):
        plan, message = capacity_requests.serving_plan(args)
        result.update(changed=False, plan=plan, feasible=plan["feasible"], msg=message)
        # what the plan assumed or cannot promise, as Ansible warnings (one [WARNING] line each)
        if plan["warnings"]:
            result["warnings"] = list(plan["warnings"])
        return result
