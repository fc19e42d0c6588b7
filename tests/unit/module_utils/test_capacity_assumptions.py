"""The capacity planner says what it assumed: a model config without a dtype is planned as bfloat16 and the
plan says so (the numbers are those of a bfloat16 config); a GPU product it does not know gets the
products the user may have meant."""

import copy
import json

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import architectures
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import gpus
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import memory
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import model_table
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import requests
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

ASSUMED = ("the model config names no dtype (torch_dtype): the plan assumes bfloat16, 2 bytes per parameter; give "
           "dtype (vLLM's --dtype) if the model is served in another")
KNOWN = ("NVIDIA-A10, NVIDIA-A100-80GB-PCIe, NVIDIA-A100-PCIE-40GB, NVIDIA-A100-SXM4-40GB, NVIDIA-A100-SXM4-80GB, "
         "NVIDIA-A10G, NVIDIA-B200, NVIDIA-H100-80GB-HBM3, NVIDIA-H100-NVL, NVIDIA-H100-PCIe, NVIDIA-H200, NVIDIA-L4, "
         "NVIDIA-L40, NVIDIA-L40S, Tesla-T4, Tesla-V100-SXM2-16GB, Tesla-V100-SXM2-32GB")


def llama_config(**changes):
    config = copy.deepcopy(model_table.lookup("meta-llama/Llama-3.1-8B-Instruct")["config"])
    config.update(changes)
    return {key: value for key, value in config.items() if value is not None}


def plan_of(config, **request):
    return memory.plan(memory.ServingRequest(architectures.shape_of(config, "model c.json"), 79.19,
                                             max_model_len=8192, **request))


def test_a_config_without_a_dtype_is_planned_as_bfloat16_and_the_plan_says_so():
    said = plan_of(llama_config(torch_dtype="bfloat16"))
    assumed = plan_of(llama_config(torch_dtype=None))
    assert said["warnings"] == [] and assumed["warnings"] == [ASSUMED]
    # not a change of behaviour: the same numbers as the config that says bfloat16
    assert {k: v for k, v in assumed.items() if k != "warnings"} == {k: v for k, v in said.items() if k != "warnings"}


def test_no_assumption_is_said_when_the_config_or_the_request_names_the_dtype():
    assert plan_of(llama_config(torch_dtype=None, dtype="float16"))["warnings"] == []
    assert plan_of(llama_config(torch_dtype="float32"))["warnings"] == []
    assert plan_of(llama_config(torch_dtype=None), dtype="float16")["warnings"] == []
    # dtype auto takes the config's: nothing named there, so the assumption is said
    assert plan_of(llama_config(torch_dtype=None), dtype="auto")["warnings"] == [ASSUMED]


def test_a_multimodal_config_takes_the_dtype_of_its_outer_config():
    text = llama_config(torch_dtype=None)
    assert plan_of({"model_type": "llava", "torch_dtype": "float16", "text_config": text})["warnings"] == []
    assert plan_of({"model_type": "llava", "text_config": text})["warnings"] == [ASSUMED]


def test_the_capacity_plan_command_says_the_assumption_in_its_plan(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(llama_config(torch_dtype=None)))
    plan, message = requests.serving_plan({"model_config": str(path), "gpu": "NVIDIA-H100-80GB-HBM3",
                                           "max_model_len": 8192, "online": False})
    assert plan["warnings"] == [ASSUMED] and plan["dtype"] == "bfloat16"
    assert message.startswith("feasible: fits: ")


@pytest.mark.parametrize("asked, meant", [
    ("H100", ["NVIDIA-H100-NVL", "NVIDIA-H100-PCIe", "NVIDIA-H100-80GB-HBM3"]),
    ("a10", ["NVIDIA-A10", "NVIDIA-A10G", "NVIDIA-A100-80GB-PCIe", "NVIDIA-A100-PCIE-40GB"]),
    ("L40", ["NVIDIA-L40", "NVIDIA-L40S"]),
    ("nvidia-h100-80gb-hbm3", ["NVIDIA-H100-80GB-HBM3"]),
    ("T4", ["Tesla-T4"]),
    ("NVIDIA-H900", ["NVIDIA-H200"]),
    ("H200x", ["NVIDIA-H200", "NVIDIA-B200"]),
    ("MI300X", []),
    ("", []),
    ("H100" * 20, []),
])
def test_the_products_a_user_may_have_meant(asked, meant):
    assert gpus.close_products(asked) == meant


def test_an_unknown_gpu_product_is_one_line_with_what_was_meant_and_the_known_ones():
    with pytest.raises(CapacityError) as raised:
        gpus.product_memory("H100")
    assert str(raised.value) == (
        "gpu 'H100' is not a GPU product this planner knows (did you mean one of NVIDIA-H100-NVL, NVIDIA-H100-PCIe, "
        "NVIDIA-H100-80GB-HBM3?); known: %s; give gpu_memory_gib instead" % KNOWN)
    with pytest.raises(CapacityError) as raised:
        gpus.product_memory("NVIDIA-H900-SHARED")
    assert str(raised.value) == ("gpu 'NVIDIA-H900-SHARED' is not a GPU product this planner knows (did you mean "
                                 "NVIDIA-H200?); known: %s; give gpu_memory_gib instead" % KNOWN)
    with pytest.raises(CapacityError) as raised:
        gpus.product_memory("MI300X")
    assert str(raised.value) == ("gpu 'MI300X' is not a GPU product this planner knows; known: %s; give "
                                 "gpu_memory_gib instead" % KNOWN)
