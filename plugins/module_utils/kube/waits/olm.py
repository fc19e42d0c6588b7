# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judges of OLM's kinds: CatalogSource, Subscription, InstallPlan, ClusterServiceVersion.

Upstream: operator-framework/operator-lifecycle-manager @ 992bb097749e5994eedc5e4882583df952d8a70e.

- CatalogSource (pkg/controller/operators/catalog/operator.go ``syncConnection``,
  pkg/controller/registry/grpc/source.go): ``status.connectionState.lastObservedState`` is the raw
  gRPC connectivity state - IDLE, CONNECTING, then TRANSIENT_FAILURE while the registry pod starts,
  then READY (what OLM's own e2e waits for). An image that cannot be pulled leaves it in
  TRANSIENT_FAILURE for ever with no reason: only a deadline ends that. ``status.reason:
  SpecInvalidError`` stays until the spec changes.
- Subscription (catalog/operator.go ``syncResolvingNamespace``, catalog/subscription/state.go):
  ``ResolutionFailed`` with ``ErrorPreventedResolution`` is retried with back-off (a catalog not
  served yet); ``ConstraintsNotSatisfiable`` is not retried until something changes; an
  InstallPlan that failed leaves ``InstallPlanFailed`` (no new resolution).
- InstallPlan (catalog/operator.go ``syncInstallPlans``): ``Complete`` and ``Failed`` are terminal;
  execution errors are retried for a minute before ``Failed``.
- ClusterServiceVersion (pkg/controller/operators/olm/operator.go ``transitionCSVState``): a
  ``Failed`` CSV is re-checked on every sync and goes back to ``Pending`` (``NeedsReinstall``,
  ``RequirementsUnknown``) or straight to ``Succeeded``; the 5-minute ``install timeout`` is
  recoverable. It stays Failed when its Deployment exceeded its progress deadline ("install failed:
  ..."), when the error is ``InstallComponentFailedNoRetry``, and for OperatorGroup problems that
  only a change of the OperatorGroup clears.
"""

from __future__ import annotations

import re

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    Judge, Query, WaitError, condition, condition_text, describe, failed, is_true, ready, short, status_of, waiting)
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.core import pod_summary

OLM = "https://github.com/operator-framework/operator-lifecycle-manager"
API_VERSION = "operators.coreos.com/v1alpha1"
# CSV failures OLM does not leave by itself: the OperatorGroup or the bundle must change
CSV_FAILED_FOR_GOOD = ("NoOperatorGroup", "TooManyOperatorGroups", "UnsupportedOperatorGroup", "NoTargetNamespaces",
                       "InvalidInstallModes", "InterOperatorGroupOwnerConflict",
                       "CannotModifyStaticOperatorGroupProvidedAPIs", "OwnerConflict", "InvalidInstallStrategy",
                       "InvalidWebhookDescription", "InstallComponentFailedNoRetry")


class CatalogSourceReady(Judge):
    """A CatalogSource's gRPC connection ``READY``. IDLE, CONNECTING and TRANSIENT_FAILURE are how a
    registry pod's start looks; the summary names that pod's state (an image pull back-off)."""

    name = "catalogsource"
    description = "a CatalogSource served"
    api_version = API_VERSION
    kind = "CatalogSource"
    upstream = (OLM, "pkg/controller/operators/catalog/operator.go, pkg/controller/registry/grpc/source.go")
    # registry_selector: the label selector of the pods serving an address-based catalog
    # (default: the pod OLM creates for an image-based one, olm.catalogSource=<name>)
    options = ("registry_selector",)

    def queries(self, target):
        queries = super().queries(target)
        selector = target.option("registry_selector") or "olm.catalogSource=%s" % target.name
        queries["pods"] = Query("v1", "Pod", target.namespace, None, (selector,))
        return queries

    def observe(self, found, target):
        source = self.subject(found, target)
        if source is None:
            return self.absent(target)
        status = status_of(source)
        if status.get("reason") == "SpecInvalidError":
            return failed("%s: %s: %s" % (describe(source), status["reason"], short(status.get("message"))))
        state = (status.get("connectionState") or {}).get("lastObservedState")
        if state == "READY":
            return ready("%s: connection READY" % describe(source))
        text = "%s: connection %s" % (describe(source), state or "not yet observed")
        if status.get("reason"):
            text += " (%s: %s)" % (status["reason"], short(status.get("message")))
        pods = found.get("pods") or []
        if pods:
            text += "; registry " + pod_summary(pods[0])
        return waiting(text)


class SubscriptionResolved(Judge):
    """A Subscription ``installed`` (default: ``state: AtLatestKnown``, its CSV created - whose phase
    the ``csv`` wait judges) or only ``resolved`` (``stage: resolved``: it names its InstallPlan, to
    approve). Resolution errors OLM retries (a catalog not served yet, a bundle still unpacking) are
    waited through; constraints that cannot be satisfied while its catalogs are healthy, and a failed
    InstallPlan, end the wait."""

    name = "subscription"
    description = "a Subscription resolved"
    api_version = API_VERSION
    kind = "Subscription"
    upstream = (OLM, "pkg/controller/operators/catalog/operator.go, pkg/controller/operators/catalog/subscription/state.go")
    options = ("stage",)
    STAGES = ("installed", "resolved")

    def check(self, target):
        super().check(target)
        if target.option("stage", "installed") not in self.STAGES:
            raise WaitError("wait subscription: stage %r is not one of %s" % (target.option("stage"), ", ".join(self.STAGES)))

    def observe(self, found, target):
        sub = self.subject(found, target)
        if sub is None:
            return self.absent(target)
        status = status_of(sub)
        name = describe(sub)
        if is_true(sub, "InstallPlanFailed"):
            return failed("%s: %s" % (name, condition_text(condition(sub, "InstallPlanFailed"))))
        plan = (status.get("installPlanRef") or {}).get("name")
        if target.option("stage", "installed") == "resolved" and (plan or status.get("installedCSV")):
            return ready("%s: resolved to %s (InstallPlan %s)" % (
                name, status.get("currentCSV") or status.get("installedCSV"), plan or "none"))
        if status.get("state") == "AtLatestKnown" and status.get("installedCSV"):
            return ready("%s: AtLatestKnown, installed %s" % (name, status["installedCSV"]))
        if plan:
            pending = condition(sub, "InstallPlanPending")
            pending_text = ", " + condition_text(pending) if pending else ""
            return waiting("%s: state %s, InstallPlan %s%s" % (name, status.get("state") or "none", plan, pending_text))
        resolution = condition(sub, "ResolutionFailed")
        if is_true(sub, "ResolutionFailed"):
            if resolution.get("reason") == "ConstraintsNotSatisfiable" and not is_true(sub, "CatalogSourcesUnhealthy"):
                return failed("%s: %s" % (name, condition_text(resolution)))
            return waiting("%s: %s" % (name, condition_text(resolution)))
        for ctype in ("CatalogSourcesUnhealthy", "BundleUnpackFailed", "BundleUnpacking"):
            if is_true(sub, ctype):
                return waiting("%s: %s" % (name, condition_text(condition(sub, ctype))))
        return waiting("%s: not resolved yet (state %s)" % (name, status.get("state") or "none"))


class InstallPlanComplete(Judge):
    """An InstallPlan ``Complete``; ``Failed`` is terminal (OLM retried its steps for a minute before)."""

    name = "installplan"
    description = "an InstallPlan Complete"
    api_version = API_VERSION
    kind = "InstallPlan"
    upstream = (OLM, "pkg/controller/operators/catalog/operator.go (syncInstallPlans, transitionInstallPlanState)")

    def observe(self, found, target):
        plan = self.subject(found, target)
        if plan is None:
            return self.absent(target)
        status = status_of(plan)
        phase = status.get("phase") or "none yet"
        installed = condition(plan, "Installed")
        text = "%s: phase %s%s" % (describe(plan), phase, (", " + condition_text(installed)) if installed else "")
        if phase == "Complete":
            return ready(text)
        if phase == "Failed":
            return failed(text if installed else "%s (%s)" % (text, short(status.get("message"))))
        if status.get("message"):
            text += " (%s)" % short(status["message"])
        return waiting(text)


def csv_verdict(csv):
    """``(state, summary)`` of one CSV as OLM will treat it."""
    status = status_of(csv)
    phase, reason, message = status.get("phase") or "", status.get("reason") or "", status.get("message") or ""
    text = "%s: phase %s%s" % (describe(csv), phase or "none yet",
                               " (%s: %s)" % (reason, short(message)) if reason or message else "")
    if phase == "Succeeded":
        return "ready", text
    if phase == "Failed":
        if reason in CSV_FAILED_FOR_GOOD or (reason == "InstallCheckFailed" and message.startswith("install failed")):
            return "failed", text
        return "waiting", text + "; OLM retries a failed install"
    # a CSV OLM is installing again after a failure: the failure is what the user needs to read
    history = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    failures = [c for c in history if c.get("phase") == "Failed"]
    if failures and phase in ("Pending", "InstallReady", "Installing"):
        last = failures[-1]
        text += "; failed before: %s: %s" % (last.get("reason"), short(last.get("message")))
    return "waiting", text


class ClusterServiceVersionSucceeded(Judge):
    """A ClusterServiceVersion ``Succeeded``: ``name``, or the newest whose name matches
    ``csv_prefix`` (a regular expression anchored at the start). Failed CSVs OLM re-checks (install
    timeout, component failed) are waited through; failures only a change can clear end the wait."""

    name = "csv"
    description = "a ClusterServiceVersion Succeeded"
    api_version = API_VERSION
    kind = "ClusterServiceVersion"
    upstream = (OLM, "pkg/controller/operators/olm/operator.go (transitionCSVState)")
    options = ("csv_prefix",)
    needs_name = False

    def check(self, target):
        super().check(target)
        if not target.name and not target.option("csv_prefix"):
            raise WaitError("wait csv: expected the CSV's name or a csv_prefix")
        try:
            re.compile(target.option("csv_prefix") or "")
        except re.error as exc:
            raise WaitError("wait csv: csv_prefix %r is not a regular expression (%s)" % (
                target.option("csv_prefix"), exc)) from None

    def queries(self, target):
        return {"subject": Query(self.api_version, self.kind, target.namespace)}

    def pick(self, found, target):
        csvs = found.get("subject") or []
        if target.name:
            csvs = [c for c in csvs if (c.get("metadata") or {}).get("name") == target.name]
        else:
            pattern = re.compile(target.option("csv_prefix"))
            csvs = [c for c in csvs if pattern.match((c.get("metadata") or {}).get("name") or "")]
        csvs.sort(key=lambda c: str((c.get("metadata") or {}).get("creationTimestamp") or ""), reverse=True)
        return csvs[0] if csvs else None

    def observe(self, found, target):
        csv = self.pick(found, target)
        if csv is None:
            return waiting("no ClusterServiceVersion %s in %s yet" % (
                target.name or "matching " + target.option("csv_prefix"), target.namespace or "the cluster"))
        state, text = csv_verdict(csv)
        return {"ready": ready, "failed": failed}.get(state, waiting)(text)


JUDGES = (CatalogSourceReady, SubscriptionResolved, InstallPlanComplete, ClusterServiceVersionSucceeded)
