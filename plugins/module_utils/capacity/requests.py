# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one point of a flow's matrix asks of the cluster, planned before anything is deployed.

A flow's matrix section says how its points are planned (``tests.<flow>.benchmark.capacity``):
``request`` names an entry of ``REQUESTS`` (how a point's settings become GPUs and a memory plan),
``model_key`` the configuration's ``{name, source}`` mapping of the model. ``PointPlanner.plan_point``
takes a point's effective configuration (the point's settings written under the harness's
``settings_key``) and returns its verdict: the GPUs it asks for, the memory plan, the placement on
the cluster's GPU nodes, and ``skip`` with a one-line ``reason`` when it cannot fit or be placed.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import architectures
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import gpus as gpu_table
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import memory
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import models
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import placement
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import training
from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import vllm_versions
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_engine
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

PLAN_FILE = matrix_engine.PLAN_FILE
SKIPPED_FILE = "SKIPPED"

# vLLM's command-line options the serving plan reads from a point's runtime arguments
VLLM_OPTIONS = {
    "--tensor-parallel-size": "tensor_parallel_size", "-tp": "tensor_parallel_size",
    "--pipeline-parallel-size": "pipeline_parallel_size", "-pp": "pipeline_parallel_size",
    "--max-model-len": "max_model_len", "--max-num-seqs": "max_num_seqs",
    "--max-num-batched-tokens": "max_num_batched_tokens", "--gpu-memory-utilization": "gpu_memory_utilization",
    "--kv-cache-dtype": "kv_cache_dtype", "--dtype": "dtype", "--quantization": "quantization", "-q": "quantization",
}
NUMERIC = {"tensor_parallel_size": int, "pipeline_parallel_size": int, "max_model_len": int, "max_num_seqs": int,
           "max_num_batched_tokens": int, "gpu_memory_utilization": float}


def vllm_options(arguments):
    """The planner's parameters among vLLM's command-line ``arguments`` (``--name=value`` or ``--name value``)."""
    if isinstance(arguments, str):
        arguments = arguments.split()
    if arguments is not None and not isinstance(arguments, (list, tuple)):
        raise CapacityError("runtime_args %s: expected a list of vLLM's command-line arguments, or one string"
                            % architectures.shown(arguments))
    found, items = {}, [str(a) for a in arguments or ()]
    index = 0
    while index < len(items):
        item = items[index]
        name, has_value, value = item.partition("=")
        if name in VLLM_OPTIONS:
            if not has_value:
                if index + 1 >= len(items):
                    raise CapacityError("runtime argument %s: expected a value after it" % name)
                value = items[index + 1]
                index += 1
            key = VLLM_OPTIONS[name]
            try:
                found[key] = NUMERIC[key](value) if key in NUMERIC else value
            except ValueError:
                raise CapacityError("runtime argument %s=%s: expected a number" % (name, value)) from None
        index += 1
    return found


# the largest value of a point's whole-number settings: GPUs and pods per point, a batch, a sequence
SETTING_LIMITS = {"gpu_count": 1 << 12, "replicas": 1 << 12, "gpu": 1 << 12, "pod_count": 1 << 12,
                  "per_device_train_batch_size": 1 << 20, "max_seq_length": 1 << 32, "r": 1 << 16}


def _number(settings, key, default, minimum=0):
    """A whole-number setting from ``minimum`` to its limit (``SETTING_LIMITS``), ``default`` when unset."""
    value = settings.get(key, default)
    if value is None:
        return default
    maximum = SETTING_LIMITS[key]
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        number = None
    if number is None or isinstance(value, bool) or not minimum <= number <= maximum or \
            (number != value and not isinstance(value, str)):
        raise CapacityError("setting %s=%s: expected a whole number from %d to %d"
                            % (key, architectures.shown(value), minimum, maximum))
    return number


def _mapping(value, name):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise CapacityError("setting %s=%s: expected a mapping" % (name, architectures.shown(value)))
    return value


class ServingRequest:
    """A vLLM InferenceService point (``kserve deploy_model``): ``replicas`` pods of ``gpu_count`` GPUs,
    tensor parallelism ``--tensor-parallel-size`` (else every GPU of the pod) and vLLM's options from
    ``runtime_args``."""

    name = "llm_serving"

    def gpus(self, settings):
        return _number(settings, "gpu_count", 1), _number(settings, "replicas", 1)

    def memory_plan(self, settings, shape, gpu_memory_gib, vllm_version=None):
        options = vllm_options(settings.get("runtime_args"))
        gpu_count, _replicas = self.gpus(settings)
        pp = options.get("pipeline_parallel_size", 1)
        tp = options.get("tensor_parallel_size") or max(1, gpu_count // max(pp, 1))
        if tp * pp > gpu_count:
            raise CapacityError("runtime_args ask for %d GPUs (tensor %d x pipeline %d), the pod gets gpu_count %d"
                                % (tp * pp, tp, pp, gpu_count))
        request = memory.ServingRequest(
            shape, gpu_memory_gib, tensor_parallel_size=tp, pipeline_parallel_size=pp,
            max_model_len=options.get("max_model_len"), max_num_seqs=options.get("max_num_seqs"),
            max_num_batched_tokens=options.get("max_num_batched_tokens"),
            gpu_memory_utilization=options.get("gpu_memory_utilization"), kv_cache_dtype=options.get("kv_cache_dtype"),
            dtype=options.get("dtype"), quantization=options.get("quantization"), vllm_version=vllm_version)
        return memory.plan(request)


class TrainingRequest:
    """A fine-tuning PyTorchJob point (``fine_tuning run_fine_tuning_job``): ``pod_count`` pods of ``gpu``
    GPUs, FSDP over all of them, the batch size and sequence length of its hyper-parameters."""

    name = "fine_tuning"

    def gpus(self, settings):
        return _number(settings, "gpu", 1), _number(settings, "pod_count", 1)

    def memory_plan(self, settings, shape, gpu_memory_gib, vllm_version=None):  # pylint: disable=unused-argument
        # vllm_version: a fine-tuning job does not run vLLM
        per_pod, pods = self.gpus(settings)
        hyper = _mapping(settings.get("hyper_parameters"), "hyper_parameters")
        return training.plan(shape, gpu_memory_gib, per_pod * pods,
                             batch_size=_number(hyper, "per_device_train_batch_size", 1, minimum=1),
                             max_seq_length=_number(hyper, "max_seq_length", 1024, minimum=1),
                             peft_method=hyper.get("peft_method") or "none",
                             lora_rank=_number(hyper, "r", None, minimum=1))


def serving_plan(args):
    """The ``capacity plan`` command (the ``capacity_plan`` action's arguments): ``(plan, message)`` of
    one vLLM configuration; a plan holds finite, non-negative numbers only (``memory.checked_numbers``),
    bad input is one CapacityError line naming it."""
    if not args.get("model") and not args.get("model_config"):
        raise CapacityError("capacity plan: give model (a Hugging Face model id) or model_config (a path to a "
                            "config.json)")
    if args.get("gpu_memory_gib"):
        gpu_memory, gpu_source = args["gpu_memory_gib"], "gpu_memory_gib"
    elif args.get("gpu"):
        gpu_memory, gpu_source = gpu_table.product_memory(args["gpu"])
    else:
        raise CapacityError("capacity plan: give gpu (a GPU product as nodes label it, e.g. NVIDIA-H100-80GB-HBM3) "
                            "or gpu_memory_gib")
    loaded, provenance = models.model_config(model=args.get("model"), path=args.get("model_config"),
                                             online=args.get("online", True))
    shape = architectures.shape_of(loaded, "model %s" % (args.get("model_config") or args.get("model")))
    request = memory.ServingRequest(
        shape, gpu_memory, tensor_parallel_size=args.get("tensor_parallel_size", 1),
        pipeline_parallel_size=args.get("pipeline_parallel_size", 1), max_model_len=args.get("max_model_len"),
        max_num_seqs=args.get("max_num_seqs"), max_num_batched_tokens=args.get("max_num_batched_tokens"),
        gpu_memory_utilization=args.get("gpu_memory_utilization"), kv_cache_dtype=args.get("kv_cache_dtype"),
        dtype=args.get("dtype"), quantization=args.get("quantization"), vllm_version=args.get("vllm_version"))
    plan = memory.plan(request)
    plan.update(model_id=models.model_id(args.get("model")) if args.get("model") else None,
                model_config_source=provenance, gpu=args.get("gpu"), gpu_memory_source=gpu_source)
    return plan, "%s: %s (%s)" % ("feasible" if plan["feasible"] else "INFEASIBLE", plan["reason"], plan["calibration"])


# how a point of a flow asks for GPUs and memory (tests.<flow>.benchmark.capacity.request)
REQUESTS = {cls.name: cls for cls in (ServingRequest, TrainingRequest)}


def request_names():
    return sorted(REQUESTS)


class PointPlanner:
    """Plans the points of one matrix. ``options``: the matrix section's ``capacity``; ``nodes``: the
    cluster's nodes (``kube/environment.node_summary``), None when no cluster was read."""

    def __init__(self, options, settings_key, nodes=None, online=None, model_loader=models.model_config):
        name = options.get("request")
        if name not in REQUESTS:
            raise CapacityError("capacity.request %r: expected one of %s" % (name, ", ".join(request_names())))
        self.options = options
        self.request = REQUESTS[name]()
        self.settings_key = settings_key
        self.nodes = nodes
        self.online = options.get("online", True) if online is None else online
        self.vllm_version = options.get("vllm_version")
        if self.request.name == ServingRequest.name:
            try:   # an uncalibrated release is refused before any point is planned
                vllm_versions.calibration(self.vllm_version)
            except CapacityError as exc:
                raise CapacityError("capacity.%s" % exc) from None
        self._load = model_loader
        self._shapes = {}

    def model_source(self, config):
        """The model a point serves or trains, as the configuration names it (``model_key``'s source or name)."""
        if not self.options.get("model_key"):
            return None
        model = config_lib.get_dotted(config, self.options["model_key"], None)
        if isinstance(model, dict):
            return model.get("source") or model.get("name")
        return model if isinstance(model, str) else None

    def _model(self, config):
        path = self.options.get("model_config_file")
        source = None if path else self.model_source(config)
        key = path or source
        if key not in self._shapes:
            loaded, provenance = self._load(model=source, path=path, online=self.online)
            self._shapes[key] = (architectures.shape_of(loaded, "model %s" % (path or source)), provenance, source)
        return self._shapes[key]

    def _gpu(self, settings):
        """(product, memory GiB, how it was chosen) of the GPU a point runs on."""
        product = settings.get("gpu_product") or self.options.get("gpu")
        if self.options.get("gpu_memory_gib"):
            return product, memory.positive("capacity.gpu_memory_gib", self.options["gpu_memory_gib"], float,
                                            memory.LIMITS["gpu_memory_gib"]), "capacity.gpu_memory_gib"
        if not product and self.nodes:
            found = placement.products(self.nodes)
            if found:
                product = found[0]
        if not product:
            return None, None, None
        try:
            memory_gib, how = gpu_table.product_memory(product)
        except CapacityError:
            # a product the table lacks: the memory its nodes' feature discovery labels (nvidia.com/gpu.memory)
            labelled = [n["memory_mib"] for n in placement.gpu_nodes(self.nodes or ()) if n["product"] == product
                        and n["memory_mib"]]
            if not labelled:
                raise
            memory_gib = gpu_table.cuda_gib_from_nvml(min(labelled))
            how = "the nodes' nvidia.com/gpu.memory (%d MiB) minus the driver's reserve" % min(labelled)
        return product, memory_gib, how

    def plan_point(self, config, settings):
        """The verdict of one point: ``{"feasible", "skip", "reason", "gpus", "gpus_per_pod", "pods", "memory",
        "placement", "gpu_product", "model"}`` (JSON-ready; ``skip`` is ``feasible`` false with
        ``skip_infeasible``). CapacityError for input that cannot be planned."""
        point = _mapping(config_lib.get_dotted(config, self.settings_key, None), self.settings_key)
        per_pod, pods = self.request.gpus(point)
        verdict = {"skip": False, "reason": "", "gpus": per_pod * pods, "gpus_per_pod": per_pod, "pods": pods,
                   "memory": None, "placement": None, "gpu_product": None,
                   "model": models.model_id(self.model_source(config)) or self.model_source(config)}
        reasons = []
        product, gpu_memory_gib, how = self._gpu(settings)
        verdict["gpu_product"] = product
        if per_pod > 0 and gpu_memory_gib:
            shape, provenance, source = self._model(config)
            plan = self.request.memory_plan(point, shape, gpu_memory_gib, self.vllm_version)
            plan.update(gpu=product, gpu_memory_source=how, model_id=source, model_config_source=provenance)
            verdict["memory"] = plan
            if not plan["feasible"]:
                reasons.append("does not fit on %s: %s" % (product or "the GPU", plan["reason"]))
        elif per_pod > 0:
            verdict["memory_note"] = "no memory plan: no GPU product known (no GPU node read, capacity.gpu unset)"
        if self.nodes is not None and self.options.get("check_placement", True):
            placed = placement.place(self.nodes, per_pod, pods, product=settings.get("gpu_product"))
            verdict["placement"] = placed
            if not placed["placeable"]:
                reasons.append("cannot be placed: %s" % placed["reason"])
        verdict["feasible"] = not reasons
        if reasons:
            verdict.update(skip=bool(self.options.get("skip_infeasible", True)), reason="; ".join(reasons))
        else:
            verdict["reason"] = (verdict["memory"] or {}).get("reason") or (verdict["placement"] or {}).get("reason") \
                or verdict.get("memory_note") or "nothing to check"
        return verdict
