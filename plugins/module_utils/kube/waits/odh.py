# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judges of Open Data Hub / OpenShift AI: DSCInitialization and DataScienceCluster.

Upstream: opendatahub-io/opendatahub-operator, branch stable-2.x @ 6d30a3241082501fd5b930408906eaeb62f99d59
(the 2.x line OpenShift AI 2.x ships) and main @ 0c0c9913c712e3adac471a50f4bb461c125ef534.

- DSCInitialization (internal/controller/dscinitialization/dscinitialization_controller.go): ``phase``
  Progressing (``ReconcileInit``) then Ready; ``phase: Error`` (``ReconcileFailed``) is retried with
  back-off. Its readiness is the phase: 2.x has no ``Ready`` condition, and in 3.x ``Ready`` mirrors
  the Monitoring CR, not the DSCInitialization. A missing Service Mesh operator makes
  ``CapabilityServiceMesh=False`` (``MissingOperator``) while the phase is still Ready.
- DataScienceCluster (internal/controller/datasciencecluster, pkg/controller/reconciler): ``phase`` ``Ready`` or
  ``Not Ready``; ``<Component>Ready`` mirrors each component's Ready (``DeploymentsNotReady``,
  "n/m deployments ready" while it rolls out). KServe with Serverless checks its prerequisites first
  (internal/controller/components/kserve/kserve_controller_actions.go ``checkPreConditions``): the DSCI's service mesh
  Managed (``ServiceMeshNotConfigured``), the Service Mesh and Serverless operators installed ("...
  operator must be installed for this component's configuration"). Upstream retries those for ever;
  they need a person, so a wait ends on them with their message.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    Judge, condition, condition_text, conditions_of, conditions_text, describe, failed, generation_observed, ready,
    status_of, waiting)

ODH = "https://github.com/opendatahub-io/opendatahub-operator"
# component conditions that say a prerequisite is missing: retried upstream, but only a person clears them
MISSING_PREREQUISITE_REASONS = ("ServiceMeshNotConfigured",)
MISSING_PREREQUISITE_TEXT = ("must be installed",)


class DSCInitializationReady(Judge):
    """A DSCInitialization in ``phase: Ready`` (Error is retried by the operator and waited through)."""

    name = "dscinitialization"
    description = "a DSCInitialization Ready"
    api_version = "dscinitialization.opendatahub.io/v1"
    kind = "DSCInitialization"
    upstream = (ODH, "internal/controller/dscinitialization/dscinitialization_controller.go (stable-2.x), "
                     "internal/controller/dscinitialization (main)")
    needs_name = False

    def observe(self, found, target):
        dsci = self.subject(found, target)
        if dsci is None:
            return waiting("no DSCInitialization yet (the operator creates default-dsci at start-up unless "
                           "DISABLE_DSC_CONFIG is set)")
        status = status_of(dsci)
        phase = status.get("phase") or "none yet"
        if phase == "Ready" and generation_observed(dsci):
            mesh = condition(dsci, "CapabilityServiceMesh")
            extra = "; " + condition_text(mesh) if mesh is not None and mesh.get("status") != "True" else ""
            return ready("%s: phase Ready%s" % (describe(dsci), extra))
        detail = condition(dsci, "Progressing") if phase != "Error" else condition(dsci, "Available")
        return waiting("%s: phase %s (%s)" % (describe(dsci), phase, condition_text(detail)))


def missing_prerequisite(item):
    text = str(item.get("message") or "")
    return item.get("reason") in MISSING_PREREQUISITE_REASONS or any(t in text for t in MISSING_PREREQUISITE_TEXT)


class DataScienceClusterReady(Judge):
    """A DataScienceCluster in ``phase: Ready`` for its current generation. A managed component whose
    prerequisites are missing (an operator to install, the service mesh to manage) ends the wait with
    the component's message; components still rolling out are waited through."""

    name = "datasciencecluster"
    description = "a DataScienceCluster Ready"
    api_version = "datasciencecluster.opendatahub.io/v1"
    kind = "DataScienceCluster"
    upstream = (ODH, "internal/controller/datasciencecluster, pkg/controller/reconciler, "
                     "internal/controller/components/kserve/kserve_controller_actions.go (stable-2.x)")
    needs_name = False

    def observe(self, found, target):
        dsc = self.subject(found, target)
        if dsc is None:
            return self.absent(target)
        status = status_of(dsc)
        phase = status.get("phase") or "none yet"
        if phase == "Ready" and generation_observed(dsc):
            return ready("%s: phase Ready" % describe(dsc))
        blocked = [c for c in conditions_of(dsc) if str(c.get("status")) == "False" and c.get("type", "").endswith("Ready")
                   and c.get("type") not in ("Ready", "ComponentsReady") and missing_prerequisite(c)]
        if blocked:
            return failed("%s: %s" % (describe(dsc), condition_text(blocked[0])))
        pending = [c for c in conditions_of(dsc) if str(c.get("status")) == "False" and c.get("reason") != "Removed"
                   and c.get("type") not in ("Ready", "ComponentsReady")]
        detail = "; ".join(condition_text(c) for c in pending[:3]) or conditions_text(dsc, ["Ready"])
        if not generation_observed(dsc):
            detail = "generation %s not observed yet; %s" % ((dsc.get("metadata") or {}).get("generation"), detail)
        return waiting("%s: phase %s (%s)" % (describe(dsc), phase, detail))


DSPO = ("https://github.com/opendatahub-io/data-science-pipelines-operator",
        "controllers/dspastatus/dspa_status.go, controllers/dspipeline_controller.go "
        "(5e01e73f08558c70f5bcf899c540cf3dc1bd8322)")
# reasons the operator never retries by itself: only a changed DSPA clears them
DSPA_FINAL_REASONS = ("UnsupportedVersion",)
DSPA_NOT_BLOCKING = ("NotApplicable", "ManagedPipelinesFetchError")


class DataSciencePipelinesApplicationReady(Judge):
    """A DataSciencePipelinesApplication with ``Ready`` True (its reason is ``MinimumReplicasAvailable``
    whether True or False, upstream's). ``UnsupportedVersion`` ends the wait; ``FailingToDeploy`` is
    waited through - the operator retries every 20 s, and a database or object store that is still
    starting reads exactly like that - with the failing conditions in the progress line; ``NotApplicable``
    conditions (the webhook, managed pipelines) are False and do not matter."""

    name = "dspa"
    description = "a DataSciencePipelinesApplication Ready"
    api_version = "datasciencepipelinesapplications.opendatahub.io/v1"
    kind = "DataSciencePipelinesApplication"
    upstream = DSPO

    def observe(self, found, target):
        dspa = self.subject(found, target)
        if dspa is None:
            return self.absent(target)
        name = describe(dspa)
        ready_condition = condition(dspa, "Ready")
        if ready_condition is None:
            return waiting("%s: no status yet" % name)
        if str(ready_condition.get("status")) == "True":
            return ready("%s: Ready (%s)" % (name, ready_condition.get("message") or "all components are ready"))
        final = [c for c in conditions_of(dspa) if c.get("reason") in DSPA_FINAL_REASONS]
        if final:
            return failed("%s: %s" % (name, condition_text(final[-1])))
        pending = [c for c in conditions_of(dspa) if c.get("type") != "Ready" and str(c.get("status")) != "True"
                   and c.get("reason") not in DSPA_NOT_BLOCKING]
        detail = "; ".join(condition_text(c) for c in pending[:3]) or condition_text(ready_condition)
        return waiting("%s: not Ready (%s)" % (name, detail))


ARGO = ("https://github.com/argoproj/argo-workflows",
        "workflow/controller/operator.go markWorkflowPhase, pkg/apis/workflow/v1alpha1/workflow_types.go "
        "(f016ad89eb269d282aec06dc491c29f396a38df4); kubeflow/pipelines backend/src/apiserver/model/run.go "
        "(7b70c7b95f6832772efd6fd0029a4024491a0f44)")
WORKFLOW_DONE = ("Succeeded",)
WORKFLOW_FAILED = ("Failed", "Error")


class ArgoWorkflowsDone(Judge):
    """The Argo Workflows of pipeline runs (selected by label, e.g. ``pipeline/runid in (...)``; option
    ``count``: how many there must be) all ``Succeeded``. A workflow's phase is unset until Argo's
    controller takes it, then ``Running`` (``Pending`` only when Argo postpones it: parallelism, a
    lock, a PVC), and ends ``Succeeded``, ``Failed`` or ``Error`` - which KFP's persistence agent
    reports as the run's SUCCEEDED / FAILED. The first failed workflow ends the wait, naming its failed
    task (a DAG's failure has no workflow message; the pod node's message says why)."""

    name = "argo_workflows"
    description = "pipeline runs' Argo Workflows done"
    api_version = "argoproj.io/v1alpha1"
    kind = "Workflow"
    upstream = ARGO
    options = ("count",)
    needs_name = False

    def observe(self, found, target):
        workflows = [w for w in found.get("subject") or ()
                     if not target.name or (w.get("metadata") or {}).get("name") == target.name]
        expected = int(target.option("count", 1))
        if len(workflows) < expected:
            return waiting("%d of %d Workflows exist (yet)" % (len(workflows), expected))
        phases = {}
        for workflow in workflows:
            phases.setdefault(status_of(workflow).get("phase") or "", []).append(workflow)
        for phase in WORKFLOW_FAILED:
            for workflow in phases.get(phase, ()):
                status = status_of(workflow)
                nodes = [n for n in (status.get("nodes") or {}).values()
                         if isinstance(n, dict) and n.get("type") == "Pod" and n.get("phase") in WORKFLOW_FAILED]
                why = status.get("message") or "; ".join(
                    "task %s: %s" % (n.get("displayName"), n.get("message") or n.get("phase")) for n in nodes[:2])
                return failed("%s: %s (run %s)%s" % (describe(workflow), phase, (
                    (workflow.get("metadata") or {}).get("annotations") or {}).get("pipelines.kubeflow.org/run_name"),
                    ": " + why if why else ""))
        done = len([w for p in WORKFLOW_DONE for w in phases.get(p, ())])
        if done == len(workflows):
            return ready("%d Workflow(s) Succeeded" % done)
        going = [w for w in workflows if status_of(w).get("phase") not in WORKFLOW_DONE]
        first = going[0]
        return waiting("%d of %d Workflows Succeeded; %s: %s%s" % (
            done, len(workflows), describe(first), status_of(first).get("phase") or "not taken by the controller yet",
            " (%s)" % status_of(first)["progress"] if status_of(first).get("progress") else ""))


JUDGES = (DSCInitializationReady, DataScienceClusterReady, DataSciencePipelinesApplicationReady, ArgoWorkflowsDone)
