# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judges of OpenShift's kinds: ClusterOperator, ClusterVersion, Machine, Build, Route,
MachineConfigPool and KubeletConfig.

Upstream (commits in docs/kubesim.md's table):
- ClusterOperators settled as ``oc adm wait-for-stable-cluster`` judges them (openshift/oc
  pkg/cli/admin/waitforstable): Available=True, Progressing=False, Degraded=False, a missing
  condition counting as not settled; Degraded is waited through (operators recover).
- ClusterVersion (openshift/cluster-version-operator pkg/cvo/status.go): an update is done when the
  newest ``status.history`` entry is the update asked for and ``Completed``; ``Failing=True`` is
  retried by the CVO for ever, so a wait goes on (and names it when time runs out).
- Machine (openshift/machine-api-operator pkg/controller/machine/controller.go): Provisioning,
  Provisioned, Running; ``Failed`` (``errorReason``) is never reconciled again.
- Build (openshift/openshift-controller-manager pkg/build/controller/build, openshift/api build/v1):
  Complete, or Failed/Error/Cancelled with ``status.reason``; ``CannotCreateBuildPod`` keeps it New.
- Route (openshift/router pkg/router/controller/status.go): ``status.ingress[].conditions``
  ``Admitted``; ``HostAlreadyClaimed`` and validation failures need a change.
- MachineConfigPool (openshift/machine-config-operator pkg/controller/node/status.go): rolled out when
  Updated=True, Updating=False and every machine updated with ``status.configuration`` equal to
  ``spec.configuration``; Degraded is retried by the machine-config daemon. KubeletConfig
  (pkg/controller/kubelet-config): ``Accepted``/``Success`` or a ``Failure`` that only a spec change clears.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    Judge, Query, WaitError, condition, condition_text, describe, failed, generation_observed, is_true, ready, short,
    status_of, to_int, waiting)

OC = "https://github.com/openshift/oc"
CVO = "https://github.com/openshift/cluster-version-operator"
MAO = "https://github.com/openshift/machine-api-operator"
MCO = "https://github.com/openshift/machine-config-operator"


def operator_unsettled(operator):
    """Why a ClusterOperator is not settled (None when it is), as ``oc adm wait-for-stable-cluster`` says."""
    wanted = (("Available", "True"), ("Progressing", "False"), ("Degraded", "False"))
    for ctype, value in wanted:
        item = condition(operator, ctype)
        if item is None or str(item.get("status")) != value:
            return "%s: %s" % (describe(operator), condition_text(item) if item else "no %s condition" % ctype)
    return None


class ClusterOperatorsSettled(Judge):
    """ClusterOperators (one by name, else all) Available, not Progressing, not Degraded."""

    name = "clusteroperators"
    description = "ClusterOperators settled"
    api_version = "config.openshift.io/v1"
    kind = "ClusterOperator"
    upstream = (OC, "pkg/cli/admin/waitforstable/waitforstable.go")
    needs_name = False

    def observe(self, found, target):
        operators = found.get("subject") or []
        if target.name:
            operators = [o for o in operators if (o.get("metadata") or {}).get("name") == target.name]
            if not operators:
                return self.absent(target)
        if not operators:
            return waiting("no ClusterOperator yet")
        unsettled = [why for why in (operator_unsettled(o) for o in operators) if why]
        if unsettled:
            return waiting("%d of %d ClusterOperator(s) not settled; %s" % (len(unsettled), len(operators), unsettled[0]))
        return ready("%d ClusterOperator(s) Available, not Progressing, not Degraded" % len(operators))


class ClusterOperatorReacted(Judge):
    """A ClusterOperator that has reacted to a change made at ``since`` (an RFC 3339 time): Progressing
    now, or its Progressing condition changed since then (a roll-out already over)."""

    name = "clusteroperator_reacted"
    description = "a ClusterOperator reacting to a change"
    api_version = "config.openshift.io/v1"
    kind = "ClusterOperator"
    upstream = ("https://github.com/openshift/api", "config/v1/types_cluster_operator.go (OperatorProgressing)")
    options = ("since",)

    def observe(self, found, target):
        operator = self.subject(found, target)
        if operator is None:
            return self.absent(target)
        progressing = condition(operator, "Progressing") or {}
        since = str(target.option("since", ""))
        if str(progressing.get("status")) == "True" or (since and str(progressing.get("lastTransitionTime") or "") >= since):
            return ready("%s: %s" % (describe(operator), condition_text(progressing)))
        return waiting("%s: not Progressing since %s (%s)" % (describe(operator), since or "the change",
                                                              condition_text(progressing) if progressing else "no condition"))


class ClusterVersionUpdated(Judge):
    """The cluster updated to ``image`` (or ``version``): the newest history entry is it, Completed."""

    name = "clusterversion"
    description = "a cluster update Completed"
    api_version = "config.openshift.io/v1"
    kind = "ClusterVersion"
    upstream = (CVO, "pkg/cvo/status.go, pkg/cvo/sync_worker.go")
    options = ("image", "version")
    needs_name = False

    def check(self, target):
        super().check(target)
        if not target.option("image") and not target.option("version"):
            raise WaitError("wait clusterversion: expected the image or the version updated to")

    def queries(self, target):
        return {"subject": Query(self.api_version, self.kind, None, target.name or "version")}

    def observe(self, found, target):
        version = (found.get("subject") or [None])[0]
        if version is None:
            return waiting("no ClusterVersion version")
        history = status_of(version).get("history") or [{}]
        newest = history[0] or {}
        image, wanted_version = target.option("image"), target.option("version")
        matches = (image and newest.get("image") == image) or (wanted_version and newest.get("version") == wanted_version)
        failing = condition(version, "Failing")
        progressing = condition(version, "Progressing")
        if matches and newest.get("state") == "Completed":
            return ready("%s: %s Completed" % (describe(version), newest.get("version") or newest.get("image")))
        detail = condition_text(failing) if is_true(version, "Failing") else condition_text(progressing)
        return waiting("%s: newest history %s %s (%s)" % (describe(version), newest.get("version") or newest.get("image")
                                                          or "none", newest.get("state") or "", detail))


class MachinesRunning(Judge):
    """Exactly ``count`` selected Machines (default: those not being deleted), all ``Running``, none
    left being deleted; a ``Failed`` one ends the wait (the machine controller never reconciles it again)."""

    name = "machines"
    description = "Machines Running"
    api_version = "machine.openshift.io/v1beta1"
    kind = "Machine"
    upstream = (MAO, "pkg/controller/machine/controller.go")
    options = ("count",)
    needs_name = False

    def observe(self, found, target):
        machines = found.get("subject") or []
        deleting = [m for m in machines if (m.get("metadata") or {}).get("deletionTimestamp")]
        live = [m for m in machines if m not in deleting]
        for machine in live:
            status = status_of(machine)
            if status.get("phase") == "Failed":
                reason = status.get("errorReason") or "no reason"
                return failed("%s: phase Failed (%s: %s)" % (describe(machine), reason, short(status.get("errorMessage"))))
        count = to_int(target.option("count", len(live) or 1), 1)
        running = [m for m in live if status_of(m).get("phase") == "Running"]
        if len(running) == len(live) == count and not deleting:
            return ready("%d Machine(s) Running" % len(running))
        pending = [m for m in live if status_of(m).get("phase") != "Running"]
        first = ("; %s: phase %s" % (describe(pending[0]), status_of(pending[0]).get("phase") or "none yet")) if pending else ""
        gone = ", %d being deleted" % len(deleting) if deleting else ""
        return waiting("%d of %d Machine(s) Running (%d exist%s)%s" % (len(running), count, len(live), gone, first))


class BuildComplete(Judge):
    """A Build ``Complete``; Failed, Error and Cancelled are terminal and name their reason."""

    name = "build"
    description = "a Build Complete"
    api_version = "build.openshift.io/v1"
    kind = "Build"
    upstream = ("https://github.com/openshift/openshift-controller-manager",
                "pkg/build/controller/build/build_controller.go; openshift/api build/v1/types.go")

    def observe(self, found, target):
        build = self.subject(found, target)
        if build is None:
            return self.absent(target)
        status = status_of(build)
        phase = status.get("phase") or "New"
        text = "%s: phase %s%s" % (describe(build), phase, " (%s: %s)" % (
            status.get("reason"), short(status.get("message"))) if status.get("reason") else "")
        if phase == "Complete":
            return ready(text)
        if phase in ("Failed", "Error", "Cancelled"):
            return failed(text)
        return waiting(text)


def admitted(route):
    """``(admitted, refused_condition)`` over the routers that answered."""
    refused = None
    ingresses = status_of(route).get("ingress") or []
    for ingress in ingresses:
        for item in ingress.get("conditions") or ():
            if item.get("type") == "Admitted":
                if str(item.get("status")) == "True":
                    return True, None
                refused = dict(item, router=ingress.get("routerName"))
    return False, refused


class RouteAdmitted(Judge):
    """A Route admitted by a router; a router's refusal (HostAlreadyClaimed, InvalidHost,
    ExtendedValidationFailed) needs a change and ends the wait."""

    name = "route"
    description = "a Route admitted"
    api_version = "route.openshift.io/v1"
    kind = "Route"
    upstream = ("https://github.com/openshift/router", "pkg/router/controller/status.go, pkg/router/controller/unique_host.go")

    def observe(self, found, target):
        route = self.subject(found, target)
        if route is None:
            return self.absent(target)
        ok, refused = admitted(route)
        if ok:
            return ready("%s: Admitted (host %s)" % (describe(route), (route.get("spec") or {}).get("host")))
        if refused is not None:
            return failed("%s: router %s: %s" % (describe(route), refused.get("router"), condition_text(refused)))
        return waiting("%s: no router admitted it yet" % describe(route))


class MachineConfigPoolsUpdated(Judge):
    """Every selected pool rolled out: Updated=True, Updating=False, all machines updated, its
    ``status.configuration`` the one of its spec (and not ``previous_configurations[pool]``, the
    rendered configuration before the change). Degraded pools are retried by the machine-config
    daemon: waited through, named."""

    name = "machineconfigpools"
    description = "MachineConfigPools updated"
    api_version = "machineconfiguration.openshift.io/v1"
    kind = "MachineConfigPool"
    upstream = (MCO, "pkg/controller/node/status.go")
    options = ("previous_configurations",)
    needs_name = False

    def observe(self, found, target):
        pools = found.get("subject") or []
        if target.name:
            pools = [p for p in pools if (p.get("metadata") or {}).get("name") == target.name]
        if not pools:
            return waiting("no MachineConfigPool matches %s" % (target.name or ",".join(target.label_selectors) or "yet"))
        previous = target.option("previous_configurations", {}) or {}
        for pool in pools:
            name = (pool.get("metadata") or {}).get("name")
            status = status_of(pool)
            current = (status.get("configuration") or {}).get("name")
            wanted = ((pool.get("spec") or {}).get("configuration") or {}).get("name")
            for ctype in ("Degraded", "NodeDegraded", "RenderDegraded"):
                if is_true(pool, ctype):
                    item = condition(pool, ctype)
                    return waiting("%s: %s" % (describe(pool), condition_text(item)))
            if not generation_observed(pool) or not is_true(pool, "Updated") or is_true(pool, "Updating") or \
                    to_int(status.get("updatedMachineCount")) < to_int(status.get("machineCount")) or \
                    (wanted and current != wanted) or (previous.get(name) and current == previous.get(name)):
                return waiting("%s: %s; %s of %s machines updated, configuration %s" % (
                    describe(pool), condition_text(condition(pool, "Updating") or condition(pool, "Updated")),
                    status.get("updatedMachineCount", 0), status.get("machineCount", 0), current or "none"))
        return ready("%d MachineConfigPool(s) updated" % len(pools))


class KubeletConfigAccepted(Judge):
    """A KubeletConfig whose MachineConfig was generated (``Accepted=True`` or legacy ``Success``);
    ``Failure`` (or ``Accepted=False``) ends the wait with its message."""

    name = "kubeletconfig"
    description = "a KubeletConfig accepted"
    api_version = "machineconfiguration.openshift.io/v1"
    kind = "KubeletConfig"
    upstream = (MCO, "pkg/controller/kubelet-config/kubelet_config_controller.go, helpers.go")

    def observe(self, found, target):
        config = self.subject(found, target)
        if config is None:
            return self.absent(target)
        accepted = condition(config, "Accepted")
        if (accepted is not None and str(accepted.get("status")) == "False") or is_true(config, "Failure"):
            item = condition(config, "Failure") if is_true(config, "Failure") else accepted
            return failed("%s: %s" % (describe(config), condition_text(item)))
        if (accepted is not None and str(accepted.get("status")) == "True") or is_true(config, "Success"):
            return ready("%s: accepted" % describe(config))
        return waiting("%s: not accepted yet" % describe(config))


CSI_OPERATOR = ("https://github.com/openshift/csi-operator",
                "pkg/driver/aws-efs/aws_efs.go; library-go deploymentcontroller and csidrivernodeservicecontroller "
                "(f7f9dc59603d190abbcda1ae818f489c9dc2f167)")


class ClusterCSIDriverAvailable(Judge):
    """A ClusterCSIDriver whose operator reports every one of its controllers ``...Available`` True
    (the driver's Deployment and node DaemonSet, and its credentials when it has them). No status
    yet means no operator is running for it; ``Progressing``/``Degraded`` ones are waited through,
    named in the progress line (library-go sets Degraded after 15 minutes of a stuck rollout)."""

    name = "clustercsidriver"
    description = "a ClusterCSIDriver's services available"
    api_version = "operator.openshift.io/v1"
    kind = "ClusterCSIDriver"
    upstream = CSI_OPERATOR

    def observe(self, found, target):
        driver = self.subject(found, target)
        if driver is None:
            return self.absent(target)
        name = describe(driver)
        conditions = (driver.get("status") or {}).get("conditions") or []
        available = [c for c in conditions if str(c.get("type", "")).endswith("Available")]
        if not available:
            return waiting("%s: no status yet (is its operator installed and running?)" % name)
        missing = [c for c in available if str(c.get("status")) != "True"]
        degraded = [c for c in conditions if str(c.get("type", "")).endswith("Degraded") and str(c.get("status")) == "True"]
        if not missing and not degraded:
            return ready("%s: %s" % (name, ", ".join(c["type"] for c in available)))
        return waiting("%s: %s" % (name, "; ".join(condition_text(c) for c in (degraded + missing)[:3])))


JUDGES = (ClusterCSIDriverAvailable, ClusterOperatorsSettled, ClusterOperatorReacted, ClusterVersionUpdated, MachinesRunning, BuildComplete, RouteAdmitted,
          MachineConfigPoolsUpdated, KubeletConfigAccepted)
