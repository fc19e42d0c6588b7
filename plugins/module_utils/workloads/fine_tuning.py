# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Workload of the fine-tuning flow (``playbooks/fine_tuning.yml``, docs/flows.md).

A test root is a matrix point of ``tests.fine_tuning.benchmark``: the matrix engine kept
the ``result.json`` of its ``fine_tuning run_fine_tuning_job`` command as ``output.json``
(the Trainer's summary: train runtime, samples/s, steps/s, tokens/s when logged, the
losses). Its labels are the job's parameters (model, dataset and its replication, GPUs,
pods, hyper-parameters, image) and the platform the flow prepared: the cluster's
versions and GPU product (``*__cluster__capture_environment/labels.json``), the RHOAI and
GPU operator versions (``csv_version.txt`` of their deploy commands).
"""

from __future__ import annotations

import glob
import json
import os
from typing import Optional

from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import base
from ansible_collections.perfscale.topsail.plugins.module_utils.workloads.fine_tuning_report import fine_tuning_report

KPI_SETTINGS_VERSION = "1.0"

ARTIFACT_DIRNAMES = {
    "CLUSTER_CAPTURE_ENVIRONMENT": "*__cluster__capture_environment",
    "RHODS_DEPLOY": "*__rhods__deploy_ods*",
    "GPU_OPERATOR_DEPLOY": "*__gpu_operator__deploy_from_operatorhub*",
    "RUN_INFO": "run.json",
    # the point's job command: its parameters label a point that failed before writing its result
    "JOB": "*__fine_tuning__run_fine_tuning_job*",
}

# stderr.log is not read: FAILURE already ends with its tail (the harness's failure_detail)
IMPORTANT_FILES = base.important_files(
    "CLUSTER_CAPTURE_ENVIRONMENT/labels.json",
    "RHODS_DEPLOY/csv_version.txt",
    "RHODS_DEPLOY/*__cluster__deploy_operator/csv_version.txt",
    "GPU_OPERATOR_DEPLOY/csv_version.txt",
    "GPU_OPERATOR_DEPLOY/*__cluster__deploy_operator/csv_version.txt",
    "RUN_INFO",
    "JOB/_params.yaml",
    stderr=False)

REGRESSION = {
    # a change of these is what a regression is looked for across (a new RHOAI, a new image)
    "comparison_keys": ["rhoai_version", "container_image", "gpu_operator_version"],
    "ignored_keys": ["test_path", "run_id"],
    "sorting_keys": ["model", "gpus_total", "dataset_replication", "batch_size"],
    "ignored_entries": {},
    # the machine: history from clusters with the same GPUs only
    "machine_keys": ["gpu_product", "worker_instance_types"],
}

REPORT_GROUP_BY = "model"

REPORTS = {
    "fine_tuning_throughput": (fine_tuning_report, "Train throughput and runtime against the GPU count, per dataset "
                                                   "replication and batch size; the loss curves"),
}

SUMMARY_KEYS = ("train_runtime", "train_samples_per_second", "train_steps_per_second", "train_tokens_per_second",
                "train_loss", "epoch", "final_loss", "gpus_total")


# --------------------------------------------------------------------------
# parsing


def _version(ctx, artifact):
    """The CSV version an operator's deploy command recorded (in its directory, or in the directory of
    the ``cluster deploy_operator`` it ran)."""
    base = ctx.path(artifact=artifact)
    if not base:
        return None
    for candidate in ["csv_version.txt"] + sorted(glob.glob(os.path.join(base, "*__cluster__deploy_operator*",
                                                                         "csv_version.txt")), reverse=True):
        relative = os.path.relpath(os.path.join(base, candidate), base)
        if os.path.exists(os.path.join(base, relative)):
            return (ctx.read_text(relative, artifact=artifact) or "").strip() or None
    return None


def parse_once(ctx, settings):
    results = base.read_failure(ctx, stderr=False)
    document = base.read_document(ctx)
    result = base.mapping(document.get("@result"))
    parameters = document.get("@parameters")
    if not parameters and ctx.path(artifact="JOB"):
        parameters = ctx.read_yaml("_params.yaml", artifact="JOB")
    parameters = base.mapping(parameters)
    results.update(
        framework=document.get("framework") or parameters.get("workload"),
        parameters=parameters,
        summary={key: result.get(key) for key in SUMMARY_KEYS},
        losses=[{"loss": r.get("loss"), "epoch": r.get("epoch")} for r in base.listed(result.get("losses"))
                if isinstance(r, dict)],
    )
    point = base.read_point(ctx)
    results.update(duration_s=point.get("duration_s"), started=point.get("started"))
    results["cluster"] = base.read_mapping(ctx, "labels.json", artifact="CLUSTER_CAPTURE_ENVIRONMENT", optional=True)
    results["rhoai_version"] = _version(ctx, "RHODS_DEPLOY")
    results["gpu_operator_version"] = _version(ctx, "GPU_OPERATOR_DEPLOY")
    results["run_id"] = base.read_run_id(ctx)
    return results


parse_always = base.parse_always
timestamp = base.timestamp


# --------------------------------------------------------------------------
# labels


# the LoRA settings of the hyper-parameters (fms-hf-tuning's names and their usual spellings) -> label
LORA_LABELS = (("peft_method", ("peft_method",)), ("lora_rank", ("r", "lora_r", "lora_rank")),
               ("lora_alpha", ("lora_alpha",)), ("lora_dropout", ("lora_dropout",)),
               ("lora_target_modules", ("target_modules", "lora_target_modules")))


def lora_labels(hyper):
    """The LoRA settings as labels (None when the job sets none)."""
    found = {}
    for label, keys in LORA_LABELS:
        value = next((hyper[k] for k in keys if hyper.get(k) is not None), None)
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        found[label] = None if value is None else str(value)
    return found


def labels_model():
    return base.labels_model(
        model=str, dataset=Optional[str], dataset_replication=int, gpu=int, pod_count=int, gpus_total=int,
        batch_size=Optional[int], hyper_parameters=str, container_image=Optional[str], framework=Optional[str],
        peft_method=Optional[str], lora_rank=Optional[str], lora_alpha=Optional[str], lora_dropout=Optional[str],
        lora_target_modules=Optional[str],
        gpu_product=Optional[str], worker_instance_types=Optional[str], cluster_gpu_count=Optional[int],
        kubernetes_version=Optional[str], openshift_version=Optional[str], rhoai_version=Optional[str],
        gpu_operator_version=Optional[str])


def kpi_labels(entry):
    results, settings = entry.results, entry.settings
    cluster = results.get("cluster") or {}
    setting = base.settings_reader(entry)
    hyper = (results.get("parameters") or {}).get("hyper_parameters") or {}
    gpu, pods = setting("gpu", 0), setting("pod_count", 1)
    return base.kpi_labels(
        KPI_SETTINGS_VERSION, entry,
        model=setting("model_name"),
        dataset=setting("dataset_name"),
        dataset_replication=setting("dataset_replication", 1),
        gpu=gpu,
        pod_count=pods,
        gpus_total=(gpu or 0) * (pods or 1),
        batch_size=hyper.get("per_device_train_batch_size", settings.get("hyper_parameters.per_device_train_batch_size")),
        hyper_parameters=json.dumps(hyper, sort_keys=True, separators=(",", ":")),
        container_image=setting("container_image"),
        framework=results.get("framework"),
        gpu_product=cluster.get("gpu_product"),
        worker_instance_types=cluster.get("worker_instance_types"),
        cluster_gpu_count=cluster.get("gpu_count"),
        kubernetes_version=cluster.get("kubernetes_version"),
        openshift_version=cluster.get("openshift_version"),
        rhoai_version=results.get("rhoai_version"),
        gpu_operator_version=results.get("gpu_operator_version"),
        **lora_labels(hyper),
    )


def payload_results(entry):
    results = base.summary_results(entry, "summary", loss_records="losses")
    tokens, gpus = results.get("train_tokens_per_second"), results.get("gpus_total")
    usable = isinstance(tokens, (int, float)) and tokens > 0 and isinstance(gpus, (int, float)) and gpus > 0
    # the reference's fine-tuning KPIs: throughput per GPU, and the GPU time a million tokens cost
    results["train_tokens_per_second_per_gpu"] = tokens / gpus if usable else None
    results["gpu_hours_per_million_tokens"] = gpus * 1e6 / (3600.0 * tokens) if usable else None
    return results


# --------------------------------------------------------------------------
# KPIs


KPIS = [
    base.kpi("train_runtime", "Wall time of the training (the Trainer's train_runtime)", "s", "lower", fmt="{:.1f}"),
    base.kpi("train_samples_per_second", "Training samples processed per second (the Trainer's train_samples_per_second)",
             "samples/s", "higher", fmt="{:.2f}"),
    base.kpi("train_steps_per_second", "Optimizer steps per second (the Trainer's train_steps_per_second)", "steps/s",
             "higher", fmt="{:.3f}"),
    base.kpi("train_tokens_per_second", "Training tokens per second, when the Trainer logs it", "tokens/s", "higher",
             fmt="{:.1f}"),
    base.kpi("train_tokens_per_second_per_gpu", "Training tokens per second and per GPU (tokens/s / GPUs)",
             "tokens/s/GPU", "higher", fmt="{:.1f}"),
    base.kpi("gpu_hours_per_million_tokens", "GPU-hours a million training tokens cost (GPUs x time per token)",
             "GPU-h/Mtok", "lower", fmt="{:.3f}"),
    base.kpi("final_loss", "Loss of the last logged training step (the train loss when no step was logged)", "loss",
             "lower", fmt="{:.4f}", ignored=True),
    base.kpi("gpu_count", "GPUs the job used (GPUs per pod x pods)", "GPUs", "higher", fmt="{:.0f}", ignored=True,
             key="gpus_total"),
]
