# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judges of Kubeflow training: PyTorchJob (kubeflow.org/v1) and TrainJob (trainer.kubeflow.org/v1alpha1).

Upstream:
- kubeflow/trainer branch release-1.9 @ 3a3a1da8d5287f9f96e1b2d3be6a4b6ad756566d (the training-operator
  v1 line; opendatahub-io/training-operator @ 20c6ede9f8c7c629a4ee1d102b9f5975aa3284b6 writes the same
  strings): pkg/controller.v1/common/job.go, pkg/util/status.go. A PyTorchJob is Created (its pods'
  problems are only events), Running, maybe Restarting (a failed pod being recreated: not final), then
  Succeeded or Failed (``PyTorchJobFailed``, also for backoffLimit and activeDeadlineSeconds); only
  those two are terminal.
- kubeflow/trainer master @ 8c0f5059bd51ec3ba6d6a6a7b2e1471de7bc13b3 (pkg/controller/trainjob_controller.go,
  pkg/runtime/framework/plugins/jobset): a TrainJob has no condition while it runs (``jobsStatus`` says
  how many are active), then Complete or Failed copied from its JobSet.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    Judge, Query, condition, condition_text, describe, failed, is_true, ready, status_of, waiting)
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.core import last_failed_pod, pod_summary

TRAINING_V1 = ("https://github.com/kubeflow/trainer", "pkg/controller.v1/common/job.go, pkg/util/status.go "
               "(release-1.9, the training-operator v1 line)")
# the label the training operator puts on a job's pods (JobNameLabel, pkg/apis/kubeflow.org/v1/common_types.go)
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
TRAINER = ("https://github.com/kubeflow/trainer", "pkg/controller/trainjob_controller.go, "
           "pkg/runtime/framework/plugins/jobset")


class PyTorchJobFinished(Judge):
    """A PyTorchJob ``Succeeded``; ``Failed`` ends the wait. Created, Running and Restarting (a pod
    recreated after a failure) are waited through; the summary names a pending pod's trouble."""

    name = "pytorchjob"
    description = "a PyTorchJob Succeeded"
    api_version = "kubeflow.org/v1"
    kind = "PyTorchJob"
    upstream = TRAINING_V1

    def queries(self, target):
        queries = super().queries(target)
        queries["pods"] = Query("v1", "Pod", target.namespace, None, ("%s=%s" % (JOB_NAME_LABEL, target.name),))
        return queries

    def observe(self, found, target):
        job = self.subject(found, target)
        if job is None:
            return self.absent(target)
        name = describe(job)
        if is_true(job, "Failed"):
            return failed("%s: %s%s" % (name, condition_text(condition(job, "Failed")),
                                        last_failed_pod(job, found.get("pods"), JOB_NAME_LABEL)))
        if is_true(job, "Succeeded"):
            return ready("%s: %s" % (name, condition_text(condition(job, "Succeeded"))))
        current = next((condition(job, t) for t in ("Restarting", "Running", "Suspended", "Created") if is_true(job, t)), None)
        text = "%s: %s" % (name, condition_text(current) if current else "no condition yet")
        troubled = [p for p in found.get("pods") or () if status_of(p).get("phase") == "Pending"
                    or not is_true(p, "Ready") and status_of(p).get("phase") == "Running"]
        if troubled:
            text += "; " + pod_summary(troubled[0])
        return waiting(text)


class TrainJobFinished(Judge):
    """A TrainJob ``Complete``; ``Failed`` ends the wait. While it runs it has no condition: the summary
    says how many of its jobs are active."""

    name = "trainjob"
    description = "a TrainJob Complete"
    api_version = "trainer.kubeflow.org/v1alpha1"
    kind = "TrainJob"
    upstream = TRAINER

    def observe(self, found, target):
        job = self.subject(found, target)
        if job is None:
            return self.absent(target)
        name = describe(job)
        if is_true(job, "Failed"):
            return failed("%s: %s" % (name, condition_text(condition(job, "Failed"))))
        if is_true(job, "Complete"):
            return ready("%s: %s" % (name, condition_text(condition(job, "Complete"))))
        if is_true(job, "Suspended"):
            return waiting("%s: %s" % (name, condition_text(condition(job, "Suspended"))))
        jobs = status_of(job).get("jobsStatus") or []
        counts = ", ".join("%s active=%s ready=%s succeeded=%s failed=%s" % (
            j.get("name"), j.get("active", 0), j.get("ready", 0), j.get("succeeded", 0), j.get("failed", 0)) for j in jobs)
        return waiting("%s: running (%s)" % (name, counts or "no jobs yet"))


KUBERAY = ("https://github.com/ray-project/kuberay", "ray-operator/controllers/ray/rayjob_controller.go, "
           "ray-operator/apis/ray/v1/rayjob_types.go (feeaf72facab4881ba2b179248bb67315634e229)")


class RayJobFinished(Judge):
    """A RayJob ``Complete`` with its Ray job ``SUCCEEDED``; ``Failed`` (``AppFailed``,
    ``SubmissionFailed``, ``DeadlineExceeded``...) or ``ValidationFailed`` ends the wait, and so does a
    ``Complete`` job whose Ray job was ``STOPPED``. Initializing (the RayCluster coming up: its
    provisioning condition in the summary), Running with the Ray job empty, PENDING, RUNNING - or
    already SUCCEEDED while the submitter Job finishes -, Retrying, Suspended are waited through."""

    name = "rayjob"
    description = "a RayJob Complete with its Ray job SUCCEEDED"
    api_version = "ray.io/v1"
    kind = "RayJob"
    upstream = KUBERAY

    def observe(self, found, target):
        job = self.subject(found, target)
        if job is None:
            return self.absent(target)
        name = describe(job)
        status = status_of(job)
        deployment = status.get("jobDeploymentStatus") or ""
        ray_status = status.get("jobStatus") or ""
        detail = "; ".join(part for part in (status.get("reason"), (status.get("message") or "").strip()) if part)
        if deployment in ("Failed", "ValidationFailed"):
            return failed("%s: %s%s (Ray job %s)" % (name, deployment, ": " + detail if detail else "",
                                                     ray_status or "not started"))
        if deployment == "Complete":
            if ray_status == "SUCCEEDED":
                return ready("%s: Complete, Ray job SUCCEEDED" % name)
            why = ": " + detail if detail else ""
            return failed("%s: Complete, but the Ray job is %s%s" % (name, ray_status or "unknown", why))
        if deployment == "Initializing":
            cluster = status.get("rayClusterStatus") or {}
            provisioned = next((c for c in cluster.get("conditions") or () if c.get("type") == "RayClusterProvisioned"),
                               None)
            head = next((c for c in cluster.get("conditions") or () if c.get("type") == "HeadPodReady"), None)
            text = "RayCluster %s %s" % (status.get("rayClusterName") or "?", cluster.get("state") or "not ready")
            if provisioned and provisioned.get("status") != "True":
                text += " (%s workers ready of %s; head: %s)" % (
                    cluster.get("readyWorkerReplicas", 0), cluster.get("desiredWorkerReplicas", 0),
                    (head or {}).get("reason") or "not found")
            return waiting("%s: Initializing, %s" % (name, text))
        return waiting("%s: %s, Ray job %s" % (name, deployment or "new", ray_status or "not submitted yet"))


JUDGES = (PyTorchJobFinished, TrainJobFinished, RayJobFinished)
