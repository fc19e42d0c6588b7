# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judges of Open Data Hub / OpenShift AI: DSCInitialization and DataScienceCluster.

Upstream: opendatahub-io/opendatahub-operator, branch stable-2.x @ 6d30a3241082501fd5b930408906eaeb62f99d59
(the 2.x line OpenShift AI 2.x ships) and main @ 0c0c9913c712e3adac471a50f4bb461c125ef534.

- DSCInitialization (controllers/dscinitialization/dscinitialization_controller.go): ``phase``
  Progressing (``ReconcileInit``) then Ready; ``phase: Error`` (``ReconcileFailed``) is retried with
  back-off. Its readiness is the phase: 2.x has no ``Ready`` condition, and in 3.x ``Ready`` mirrors
  the Monitoring CR, not the DSCInitialization. A missing Service Mesh operator makes
  ``CapabilityServiceMesh=False`` (``MissingOperator``) while the phase is still Ready.
- DataScienceCluster (controllers/datasciencecluster, pkg/controller/reconciler): ``phase`` ``Ready`` or
  ``Not Ready``; ``<Component>Ready`` mirrors each component's Ready (``DeploymentsNotReady``,
  "n/m deployments ready" while it rolls out). KServe with Serverless checks its prerequisites first
  (components/kserve/kserve_controller_actions.go ``checkPreConditions``): the DSCI's service mesh
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
    upstream = (ODH, "controllers/dscinitialization/dscinitialization_controller.go (stable-2.x), "
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
    upstream = (ODH, "controllers/datasciencecluster, pkg/controller/reconciler, "
                     "components/kserve/kserve_controller_actions.go (stable-2.x)")
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


JUDGES = (DSCInitializationReady, DataScienceClusterReady)
