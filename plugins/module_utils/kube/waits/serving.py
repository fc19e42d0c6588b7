# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judges of model serving: KServe's InferenceService and LLMInferenceService, the Gateway API's
Gateway and HTTPRoute, and the Inference Extension's InferencePool.

Upstream:
- kserve/kserve @ aaac4e294dae2c7b1aa1886447793f3aa1c30912 (and opendatahub-io/kserve @
  3cf0a0416662e3db328f6ddf4755ce730f41c747, the fork OpenShift AI ships):
  pkg/controller/v1beta1/inferenceservice/controller.go - Knative mode where Knative Services are not
  served is a ``ServerlessModeRejected`` Warning event and a terminal error: the status keeps its
  initial Unknown conditions for ever, only the event names the failure. Ready rolls up PredictorReady
  and IngressReady; ``Ready=False`` is normal during a rollout. ``status.deploymentMode`` is ``Standard``
  or ``Knative`` (pkg/constants/constants.go; ``RawDeployment`` and ``Serverless`` are the deprecated
  annotation values it normalizes). pkg/apis/serving/v1beta1/inference_service_status.go:
  ``PropagateModelStatus`` sets ``modelStatus.transitionStatus`` ``BlockedByFailedLoad`` while the
  kserve-container or the storage-initializer is terminated with an error or in CrashLoopBackOff, and
  ``UpToDate``/``Loaded`` once a restart succeeds: it is not final, a crash loop is (here: a container
  of the predictor's pods - label ``serving.kserve.io/inferenceservice`` - in CrashLoopBackOff or
  terminated with an error after ``max_restarts`` restarts, named with its last termination).
  ``PropagateRawStatus`` lets ``Available=False`` (MinimumReplicasUnavailable) override a
  ``ProgressDeadlineExceeded`` Progressing condition, and ReplicaFailure override both: PredictorReady
  says ProgressDeadlineExceeded only for a stalled rollout beside an available one, which ends the wait
  as the ``deployment`` judge does; MinimumReplicasUnavailable is waited through. ``PropagateStatus``
  copies the Knative Service's Ready, RoutesReady and ConfigurationsReady to PredictorReady,
  PredictorRouteReady and PredictorConfigurationReady (``PropagateCrossComponentStatus``: RoutesReady,
  LatestDeploymentReady). pkg/controller/v1beta1/inferenceservice/components/predictor.go: ``InvalidSpec``
  with ``RuntimeNotRecognized`` ("Waiting for runtime to become available") is retried until the
  ServingRuntime exists; other ``InvalidSpec`` reasons (NoSupportingRuntime, RuntimeDisabled) need a change.
- knative/serving @ 69aa052f143657969e5f0d7e0902088da6f22566 (knative-v1.21.1, the v0.48.1 KServe
  requires): pkg/apis/serving/v1/revision_lifecycle.go, configuration_lifecycle.go, route_lifecycle.go,
  service_lifecycle.go - a revision whose container exits is ``ContainerHealthy=False`` (``ExitCode<n>``)
  until a pod is ready again; the configuration says ``RevisionFailed``, the route ``RevisionMissing``,
  both recover. A revision whose initial scale was never achieved (``ProgressDeadlineExceeded``
  "Initial scale was never achieved", PropagateAutoscalerStatus) is scaled away and not retried.
- kserve/kserve @ aaac4e294dae2c7b1aa1886447793f3aa1c30912, LLMInferenceService:
  pkg/apis/serving/v1alpha2/llm_inference_service_lifecycle.go and pkg/controller/v1alpha2/llmisvc
  (config_merge.go, router.go, router_validation.go, workload.go, scheduler.go): Ready rolls up
  PresetsCombined, WorkloadsReady and RouterReady; ``ConfigNotFound``, ``InvalidRenderedConfig``,
  ``GatewayPreconditionNotMet``, ``RefsInvalid``, ``ScalingCRDNotFound``, ``ProgressDeadlineExceeded``
  (the scheduler) and ``Stopped`` are not retried.
- kubernetes-sigs/gateway-api @ 4564255ac2c35d582249b3cdf261bdf51c8bca32 (apis/v1/gateway_types.go,
  httproute_types.go, shared_types.go, the conformance suite): a Gateway's default status is
  Accepted/Programmed ``Unknown``, reason ``Pending``, "Waiting for controller"; Accepted=False and
  Programmed=False ``Invalid``/``AddressNotUsable`` need a spec change. A route's parents say
  Accepted/ResolvedRefs; ``BackendNotFound`` clears once the backend exists.
- kubernetes-sigs/gateway-api-inference-extension @ 84436a96b9e6ce2b59ddacd3d04c31b4fbd442de
  (api/v1/inferencepool_types.go): ``status.parents[]`` per Gateway, Accepted/ResolvedRefs;
  the older v1alpha2 @ c7202e7605dcf9a6bd9895ca0aa97983ca2399d8 (apix/v1alpha2) ``status.parent[]`` with a
  default ``Status/default`` parent ``Pending``.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.display_text import escape
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    MESSAGE_CHARS, Judge, Query, WaitError, condition, condition_text, conditions_of, describe, failed, is_true,
    ready, short, status_of, waiting)

KSERVE = "https://github.com/kserve/kserve"
GATEWAY_API = "https://github.com/kubernetes-sigs/gateway-api"
GIE = "https://github.com/kubernetes-sigs/gateway-api-inference-extension"
# PredictorReady reasons the controller does not recover from by itself
PREDICTOR_TERMINAL_REASONS = ("ProgressDeadlineExceeded", "FailedCreate", "Stopped")
# InvalidSpec reasons KServe retries until what is missing appears (components/predictor.go)
MODEL_RETRIED_INVALID = ("RuntimeNotRecognized",)
# the containers whose termination PropagateModelStatus reads (constants.InferenceServiceContainerName,
# constants.StorageInitializerContainerName)
MODEL_CONTAINERS = ("kserve-container", "storage-initializer")
ISVC_POD_LABEL = "serving.kserve.io/inferenceservice"
# restarts of a crashing model container after which the crash loop ends the wait (the kubelet's back-off:
# 10 s doubled per restart, so about 5 minutes of crashes)
DEFAULT_MAX_RESTARTS = 5
# a Knative revision scaled away after its progress deadline (PropagateAutoscalerStatus): not retried
KNATIVE_NEVER_SCALED = "Initial scale was never achieved"
KNATIVE_MODES = ("Knative", "Serverless")
LLMISVC_TERMINAL_REASONS = ("ConfigNotFound", "InvalidRenderedConfig", "GatewayPreconditionNotMet", "RefsInvalid",
                            "ProgressDeadlineExceeded",
                            "ScalingCRDNotFound", "Stopped")
GATEWAY_ACCEPTED_TERMINAL = ("Invalid", "InvalidParameters", "UnsupportedAddress", "ListenersNotValid")
GATEWAY_PROGRAMMED_TERMINAL = ("Invalid", "AddressNotUsable")
ROUTE_ACCEPTED_TERMINAL = ("NotAllowedByListeners", "NoMatchingListenerHostname", "NoMatchingParent",
                           "UnsupportedValue", "IncompatibleFilters")
ROUTE_REFS_TERMINAL = ("RefNotPermitted", "InvalidKind", "UnsupportedProtocol")
POOL_ACCEPTED_TERMINAL = ("NotSupportedByParent", "NotSupportedByGateway", "EndpointPickerRefMissing")
REJECTED_EVENTS = ("ServerlessModeRejected",)


def events_query(kind, target):
    return Query("v1", "Event", target.namespace, None, (),
                 ("involvedObject.kind=%s" % kind, "involvedObject.name=%s" % target.name))


def rejection(events, obj):
    """The newest Warning event that rejected this very object (same uid), or None."""
    uid = (obj.get("metadata") or {}).get("uid")
    mine = [e for e in events or () if e.get("reason") in REJECTED_EVENTS
            and (not uid or not (e.get("involvedObject") or {}).get("uid") or (e.get("involvedObject") or {}).get("uid") == uid)]
    mine.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    return mine[-1] if mine else None


def outside_text(value):
    """A message written by a container or a controller (a termination message is the log's tail) as one
    printable line: whitespace folded, control characters escaped, cut to a summary's length."""
    return escape(" ".join(str(value or "").split()), MESSAGE_CHARS)


def whole_number(value, what):
    """``value`` as an int >= 1, else WaitError naming ``what``."""
    try:
        number = 0 if isinstance(value, bool) else int(str(value).strip())
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise WaitError("%s: %s; expected a whole number of at least 1" % (what, escape(value, 60)))
    return number


def crash_of(pods):
    """The model container that crashes the most in ``pods``: ``{pod, container, restarts, reason, exit_code,
    message}`` for a kserve-container or storage-initializer in CrashLoopBackOff or terminated with an error
    (what PropagateModelStatus reads), or None."""
    worst = None
    for pod in pods or ():
        if not isinstance(pod, dict):
            continue
        status = status_of(pod)
        for entry in list(status.get("initContainerStatuses") or ()) + list(status.get("containerStatuses") or ()):
            if not isinstance(entry, dict) or entry.get("name") not in MODEL_CONTAINERS:
                continue
            state = entry.get("state") if isinstance(entry.get("state"), dict) else {}
            last = entry.get("lastState") if isinstance(entry.get("lastState"), dict) else {}
            waiting_state = state.get("waiting") if isinstance(state.get("waiting"), dict) else {}
            terminated = state.get("terminated") if isinstance(state.get("terminated"), dict) else None
            if terminated is not None and (terminated.get("reason") == "Error" or _code(terminated)):
                ended = terminated
            elif waiting_state.get("reason") == "CrashLoopBackOff":
                ended = last.get("terminated") if isinstance(last.get("terminated"), dict) else {}
            else:
                continue
            restarts = _code(entry, "restartCount")
            if worst is None or restarts > worst["restarts"]:
                worst = {"pod": (pod.get("metadata") or {}).get("name") or "?", "container": entry.get("name"),
                         "restarts": restarts, "reason": ended.get("reason") or "no reason",
                         "exit_code": _code(ended), "message": ended.get("message"),
                         "backing_off": terminated is None}
    return worst


def _listed(objects):
    return any(isinstance(o, dict) for o in objects or ())


def _code(obj, key="exitCode"):
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def crash_text(crash):
    text = "container %s of pod %s restarted %d time(s), last terminated %s exit code %d" % (
        crash["container"], escape(crash["pod"], 80), crash["restarts"], escape(crash["reason"], 60),
        crash["exit_code"])
    message = outside_text(crash["message"])
    return "%s: %s" % (text, message) if message else text


def never_scaled(isvc):
    """The Knative condition (PredictorReady, PredictorConfigurationReady) of a revision Knative scaled away
    after its progress deadline, or None."""
    for ctype in ("PredictorConfigurationReady", "PredictorReady"):
        item = condition(isvc, ctype)
        if item is not None and str(item.get("status")) == "False" and \
                KNATIVE_NEVER_SCALED in str(item.get("message") or ""):
            return item
    return None


class InferenceServiceReady(Judge):
    """An InferenceService ``Ready=True``. Ends as failed on a ServerlessModeRejected event (Knative
    mode without Knative), a model container still crashing after ``max_restarts`` restarts (named, with
    its last termination), a model with no runtime, a predictor Deployment the controller gave up on or
    a Knative revision never scaled up; ``Ready=False`` during the rollout, a model ``BlockedByFailedLoad``
    by a crash KServe recovers from, and a ServingRuntime not created yet are waited through."""

    name = "inferenceservice"
    description = "an InferenceService Ready"
    api_version = "serving.kserve.io/v1beta1"
    kind = "InferenceService"
    upstream = (KSERVE, "pkg/controller/v1beta1/inferenceservice/controller.go, "
                        "pkg/apis/serving/v1beta1/inference_service_status.go, "
                        "pkg/controller/v1beta1/inferenceservice/components/predictor.go; "
                        "knative/serving pkg/apis/serving/v1/service_lifecycle.go, configuration_lifecycle.go, "
                        "revision_lifecycle.go, route_lifecycle.go")
    options = ("max_restarts",)

    def check(self, target):
        super().check(target)
        self.max_restarts(target)

    @staticmethod
    def max_restarts(target):
        return whole_number(target.option("max_restarts", DEFAULT_MAX_RESTARTS), "wait inferenceservice: max_restarts")

    def queries(self, target):
        queries = super().queries(target)
        queries["events"] = events_query(self.kind, target)
        queries["pods"] = Query("v1", "Pod", target.namespace, None, ("%s=%s" % (ISVC_POD_LABEL, target.name),))
        return queries

    def observe(self, found, target):
        isvc = self.subject(found, target)
        if isvc is None:
            return self.absent(target)
        name = describe(isvc)
        status = status_of(isvc)
        if is_true(isvc, "Ready"):
            address = (status.get("address") or {}).get("url") or "none"
            return ready("%s: Ready (url %s, address %s)" % (name, status.get("url") or "none", address))
        mode = status.get("deploymentMode") or "unknown"
        event = rejection(found.get("events"), isvc)
        if event is not None:
            return failed("%s: %s: %s (deployment mode %s)" % (name, event.get("reason"), short(event.get("message")),
                                                               mode))
        model = status.get("modelStatus") if isinstance(status.get("modelStatus"), dict) else {}
        info = model.get("lastFailureInfo") if isinstance(model.get("lastFailureInfo"), dict) else {}
        transition = model.get("transitionStatus")
        if transition == "InvalidSpec":
            text = "%s: model InvalidSpec (%s: %s)" % (name, info.get("reason") or "no reason",
                                                       outside_text(info.get("message")))
            if info.get("reason") in MODEL_RETRIED_INVALID:
                return waiting(text + "; KServe retries until the ServingRuntime exists")
            return failed(text)
        crash = crash_of(found.get("pods"))
        limit = self.max_restarts(target)
        if crash is not None and crash["restarts"] >= limit:
            return failed("%s: %s%s; still crashing after %d restarts (max_restarts %d)" % (
                name, "model BlockedByFailedLoad: " if transition == "BlockedByFailedLoad" else "", crash_text(crash),
                crash["restarts"], limit))
        predictor = condition(isvc, "PredictorReady")
        if transition == "BlockedByFailedLoad" and not _listed(found.get("pods")) and mode in KNATIVE_MODES and \
                predictor is not None and str(predictor.get("status")) == "False":
            # PropagateModelStatus: no pod and a Knative condition False - the revision failed and was scaled
            # to zero; Knative does not retry it
            return failed("%s: model BlockedByFailedLoad with no predictor pod: %s (the Knative revision failed "
                          "and was scaled to zero)" % (name, condition_text(predictor)))
        if transition == "BlockedByFailedLoad":
            why = crash_text(crash) if crash is not None else "%s: %s%s" % (
                info.get("reason") or "no reason", outside_text(info.get("message")),
                " (exit code %d)" % _code(info) if _code(info) else "")
            return waiting("%s: model BlockedByFailedLoad (%s); KServe marks it Loaded when a restart succeeds "
                           "(failed after %d restarts)" % (name, why, limit))
        if predictor is not None and predictor.get("reason") in PREDICTOR_TERMINAL_REASONS and \
                str(predictor.get("status")) == "False":
            return failed("%s: %s" % (name, condition_text(predictor)))
        scaled_away = never_scaled(isvc)
        if scaled_away is not None:
            return failed("%s: %s (Knative does not retry a revision past its progress deadline)" % (
                name, condition_text(scaled_away)))
        shown = predictor if predictor is not None and str(predictor.get("status")) != "True" else None
        if shown is None:
            kinds = ("RoutesReady", "LatestDeploymentReady", "IngressReady", "Ready")
            shown = next((c for c in (condition(isvc, t) for t in kinds)
                          if c is not None and str(c.get("status")) != "True"), None)
        why = condition_text(shown) if shown else "no status yet"
        if crash is not None:
            why += "; %s" % crash_text(crash)
        return waiting("%s: %s" % (name, why))


class LLMInferenceServiceReady(Judge):
    """An LLMInferenceService ``Ready=True``; reasons the controller does not retry end the wait."""

    name = "llminferenceservice"
    description = "an LLMInferenceService Ready"
    api_version = "serving.kserve.io/v1alpha1"
    kind = "LLMInferenceService"
    upstream = (KSERVE, "pkg/apis/serving/v1alpha2/llm_inference_service_lifecycle.go, "
                        "pkg/controller/v1alpha2/llmisvc")

    def observe(self, found, target):
        llm = self.subject(found, target)
        if llm is None:
            return self.absent(target)
        name = describe(llm)
        if is_true(llm, "Ready"):
            status = status_of(llm)
            addresses = [a.get("url") for a in status.get("addresses") or () if a.get("url")]
            return ready("%s: Ready (url %s)" % (name, status.get("url") or ", ".join(addresses) or "none"))
        for item in conditions_of(llm):
            if str(item.get("status")) == "False" and item.get("reason") in LLMISVC_TERMINAL_REASONS:
                return failed("%s: %s" % (name, condition_text(item)))
        pending = [c for c in conditions_of(llm) if str(c.get("status")) != "True" and c.get("type") != "Ready"]
        shown = pending[0] if pending else condition(llm, "Ready")
        return waiting("%s: %s" % (name, condition_text(shown) if shown else "no status yet"))


def generation_current(obj, item):
    observed = item.get("observedGeneration")
    generation = (obj.get("metadata") or {}).get("generation")
    return observed is None or generation is None or int(observed) >= int(generation)


GATEWAYCLASS_ACCEPTED_TERMINAL = ("InvalidParameters", "Unsupported", "UnsupportedVersion")


class GatewayClassAccepted(Judge):
    """A GatewayClass Accepted by the controller its ``spec.controllerName`` names. Until a controller
    answers, the class keeps its CRD default (``Accepted`` ``Unknown``, ``Pending``, "Waiting for
    controller"; gatewayclass_types.go: the controller "MUST" set it "when it sees a GatewayClass using its
    controller string") - for ever when no controller of that name runs, so the summary names it.
    ``Accepted=False`` (``InvalidParameters``, ``Unsupported``, ``UnsupportedVersion``) needs a change."""

    name = "gatewayclass"
    description = "a GatewayClass Accepted by its controller"
    api_version = "gateway.networking.k8s.io/v1"
    kind = "GatewayClass"
    upstream = (GATEWAY_API, "apis/v1/gatewayclass_types.go, geps/gep-2162/index.md")

    def observe(self, found, target):
        gateway_class = self.subject(found, target)
        if gateway_class is None:
            return self.absent(target)
        controller = short((gateway_class.get("spec") or {}).get("controllerName") or "none")
        name = "%s (controllerName %s)" % (describe(gateway_class), controller)
        accepted = condition(gateway_class, "Accepted")
        if accepted is None:
            return waiting("%s: no status yet" % name)
        status = str(accepted.get("status"))
        if status == "False" and accepted.get("reason") in GATEWAYCLASS_ACCEPTED_TERMINAL:
            return failed("%s: %s" % (name, condition_text(accepted)))
        if status == "True" and generation_current(gateway_class, accepted):
            return ready("%s: %s" % (name, condition_text(accepted)))
        if status == "True":
            return waiting("%s: status of an older generation (%s)" % (name, condition_text(accepted)))
        return waiting("%s: %s - no controller named %s has answered" % (name, condition_text(accepted), controller))


class GatewayProgrammed(Judge):
    """A Gateway Accepted and Programmed for its current generation, with an address."""

    name = "gateway"
    description = "a Gateway Programmed"
    api_version = "gateway.networking.k8s.io/v1"
    kind = "Gateway"
    upstream = (GATEWAY_API, "apis/v1/gateway_types.go, conformance/utils/kubernetes/helpers.go")

    def observe(self, found, target):
        gateway = self.subject(found, target)
        if gateway is None:
            return self.absent(target)
        name = describe(gateway)
        accepted, programmed = condition(gateway, "Accepted"), condition(gateway, "Programmed")
        if accepted is not None and str(accepted.get("status")) == "False" and \
                accepted.get("reason") in GATEWAY_ACCEPTED_TERMINAL:
            return failed("%s: %s" % (name, condition_text(accepted)))
        if programmed is not None and str(programmed.get("status")) == "False" and \
                programmed.get("reason") in GATEWAY_PROGRAMMED_TERMINAL:
            return failed("%s: %s" % (name, condition_text(programmed)))
        current = all(generation_current(gateway, c) for c in (accepted, programmed) if c is not None)
        addresses = [a.get("value") for a in status_of(gateway).get("addresses") or () if a.get("value")]
        if is_true(gateway, "Accepted") and is_true(gateway, "Programmed") and current and addresses:
            return ready("%s: Programmed (address %s)" % (name, ", ".join(addresses)))
        shown = programmed if not is_true(gateway, "Programmed") else accepted
        why = condition_text(shown) if shown else "no status yet"
        if is_true(gateway, "Programmed") and not addresses:
            why = "Programmed but no address yet"
        elif not current:
            why = "status of an older generation (%s)" % why
        return waiting("%s: %s" % (name, why))


class HTTPRouteAccepted(Judge):
    """An HTTPRoute accepted, its references resolved, by every parent that answered (at least one)."""

    name = "httproute"
    description = "an HTTPRoute accepted"
    api_version = "gateway.networking.k8s.io/v1"
    kind = "HTTPRoute"
    upstream = (GATEWAY_API, "apis/v1/shared_types.go (RouteConditionType), conformance/tests")

    def observe(self, found, target):
        route = self.subject(found, target)
        if route is None:
            return self.absent(target)
        name = describe(route)
        parents = status_of(route).get("parents") or []
        if not parents:
            return waiting("%s: no parent Gateway has answered yet" % name)
        for parent in parents:
            where = (parent.get("parentRef") or {}).get("name") or "?"
            for item in parent.get("conditions") or ():
                status, reason = str(item.get("status")), item.get("reason")
                if status == "False" and ((item.get("type") == "Accepted" and reason in ROUTE_ACCEPTED_TERMINAL) or
                                          (item.get("type") == "ResolvedRefs" and reason in ROUTE_REFS_TERMINAL)):
                    return failed("%s: parent %s: %s" % (name, where, condition_text(item)))
        for parent in parents:
            where = (parent.get("parentRef") or {}).get("name") or "?"
            obj = {"status": {"conditions": parent.get("conditions") or []}}
            for ctype in ("Accepted", "ResolvedRefs"):
                item = condition(obj, ctype)
                if item is None or str(item.get("status")) != "True" or not generation_current(route, item):
                    return waiting("%s: parent %s: %s" % (name, where, condition_text(item) if item else
                                                          "no %s condition" % ctype))
        return ready("%s: accepted by %d parent(s)" % (name, len(parents)))


class InferencePoolAccepted(Judge):
    """An InferencePool accepted by every parent that answered (at least one); both API versions."""

    name = "inferencepool"
    description = "an InferencePool accepted"
    api_version = "inference.networking.k8s.io/v1"
    kind = "InferencePool"
    upstream = (GIE, "api/v1/inferencepool_types.go, apix/v1alpha2 (v1alpha2)")
    options = ("api_version",)

    def queries(self, target):
        return {"subject": Query(target.option("api_version", self.api_version), self.kind, target.namespace,
                                 target.name)}

    def observe(self, found, target):
        pool = self.subject(found, target)
        if pool is None:
            return self.absent(target)
        name = describe(pool)
        status = status_of(pool)
        parents = [p for p in (status.get("parents") or status.get("parent") or [])
                   if (p.get("parentRef") or {}).get("kind") != "Status"]
        if not parents:
            return waiting("%s: no Gateway has picked it up yet" % name)
        for parent in parents:
            where = (parent.get("parentRef") or {}).get("name") or "?"
            obj = {"status": {"conditions": parent.get("conditions") or []}}
            accepted = condition(obj, "Accepted")
            if accepted is not None and str(accepted.get("status")) == "False" and \
                    accepted.get("reason") in POOL_ACCEPTED_TERMINAL:
                return failed("%s: parent %s: %s" % (name, where, condition_text(accepted)))
            if accepted is None or str(accepted.get("status")) != "True":
                return waiting("%s: parent %s: %s" % (name, where, condition_text(accepted) if accepted else
                                                      "no Accepted condition"))
            refs = condition(obj, "ResolvedRefs")
            if refs is not None and str(refs.get("status")) != "True":
                return waiting("%s: parent %s: %s" % (name, where, condition_text(refs)))
        return ready("%s: accepted by %d parent(s)" % (name, len(parents)))


JUDGES = (InferenceServiceReady, LLMInferenceServiceReady, GatewayClassAccepted, GatewayProgrammed, HTTPRouteAccepted,
          InferencePoolAccepted)
