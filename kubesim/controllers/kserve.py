"""KServe: InferenceService (serving.kserve.io/v1beta1) and LLMInferenceService (v1alpha1).

InferenceService (kserve/kserve @ aaac4e294dae2c7b1aa1886447793f3aa1c30912: pkg/controller/v1beta1/inferenceservice,
pkg/apis/serving/v1beta1/inference_service_status.go, pkg/controller/v1beta1/inferenceservice/components/predictor.go,
pkg/controller/v1beta1/inferenceservice/reconcilers/ingress):

- the runtime: ``spec.predictor.model.runtime`` (a ServingRuntime of the namespace that lists the model's format)
  or the ServingRuntime whose ``supportedModelFormats`` (``autoSelect``) match ``model.modelFormat.name``; custom
  ``spec.predictor.containers`` need none. A named runtime that does not exist is ``InvalidSpec``
  ``RuntimeNotRecognized`` "Waiting for runtime to become available" (retried until it exists); one that does not
  list the format ``NoSupportingRuntime`` "Specified runtime does not support specified framework/version"; no
  auto-selected runtime ``NoSupportingRuntime`` "No runtime found to support specified framework/version";
- Standard mode: a Deployment ``<name>-predictor`` (``minReplicas``, default 1) whose ``kserve-container`` is the
  runtime's container with the model's ``args``, ``env`` and ``resources`` (GPU requests are scheduled like any
  pod), and a Service ``<name>-predictor``. ``PredictorReady`` is PropagateRawStatus's: Available=True ready,
  Progressing=False with a message (ProgressDeadlineExceeded) over it, Progressing=True NewReplicaSetAvailable
  ready, **Available=False (MinimumReplicasUnavailable) over all of these**, ReplicaFailure=True over Available.
  ``IngressReady`` (kube_ingress_reconciler.go): True with the URLs at once when ingress creation is disabled
  (``inferenceservice-config`` ``ingress.disableIngressCreation``, what the openshift profile writes) or the
  InferenceService is cluster-local, else False "Predictor ingress not created" (no message) until the predictor
  is ready;
- Knative mode (where Knative Serving serves its kinds): a Knative Service ``<name>-predictor`` with the same pods
  as its template (``autoscaling.knative.dev/min-scale`` from minReplicas, the InferenceService's
  ``serving.knative.dev/*`` annotations passed on), run by :mod:`kubesim.controllers.knative`; PropagateStatus
  copies its Ready, RoutesReady and ConfigurationsReady to ``PredictorReady``, ``PredictorRouteReady`` and
  ``PredictorConfigurationReady`` and its revisions to ``components.predictor``; PropagateCrossComponentStatus
  writes ``RoutesReady`` and ``LatestDeploymentReady`` ("PredictorRouteReady not ready"...); without Istio's
  VirtualService, ``IngressReady`` is True once the predictor has its URL (ingress_reconciler.go);
- ``modelStatus`` (PropagateModelStatus, on the first pod of the predictor - of the latest revision in Knative
  mode): ``Pending`` without a pod (``BlockedByFailedLoad`` in Knative mode when a Knative condition is False: the
  revision failed and was scaled to zero), ``BlockedByFailedLoad``/``FailedToLoad`` with ``lastFailureInfo``
  (``ModelLoadFailed``, the termination's message and exit code) while the kserve-container is terminated with an
  error or in CrashLoopBackOff, ``UpToDate``/``Loaded`` once the InferenceService is Ready, else ``Pending``; the
  failure info is kept when the model loads after a restart;
- ``url`` (the internal Service URL in Standard mode, as the OpenShift AI fork publishes it without exposed
  visibility; the external host in Knative mode), ``address.url`` (the internal Service), ``deploymentMode``
  (``Standard`` or ``Knative``, pkg/constants/constants.go; the deprecated ``RawDeployment`` and ``Serverless``
  are read as those), the ``Stopped`` condition False, ``observedGeneration``.

``kubesim.perfscale.io/url`` on the InferenceService (or ``--inference-url``)
sets ``status.url`` and ``status.address.url``: point them at a local
OpenAI-compatible server. ``kubesim.perfscale.io/fail``: the predictor's
containers crash with that message at every start (``CrashLoopBackOff``), never Ready in between, so the InferenceService
stays ``BlockedByFailedLoad`` with ``ModelLoadFailed`` (a crash that a restart recovers from: the image
behaviour ``crash-once``, kubesim/behaviours.py). Other steering annotations (``log``,
``ready``, ``ready-delay-s``, ``start-delay-s``) pass to the predictor pods.

LLMInferenceService (kserve/kserve @ aaac4e294dae2c7b1aa1886447793f3aa1c30912,
pkg/controller/v1alpha2/llmisvc, pkg/apis/serving/v1alpha2/llm_inference_service_lifecycle.go): a workload
Deployment ``<name>-kserve`` (``spec.template``, ``spec.replicas``), ``<name>-kserve-prefill`` for
``spec.prefill``, and with ``spec.router.scheduler`` an ``<name>-kserve-router-scheduler`` Deployment and an
InferencePool ``<name>-inference-pool``; with ``spec.router.route`` an HTTPRoute ``<name>-kserve-route`` to the
gateways of ``spec.router.gateway.refs`` (default ``openshift-ai-inference`` in ``openshift-ingress``).
Conditions: ``PresetsCombined``; the sub-conditions ``MainWorkloadReady`` (False ``Progressing`` before the
Deployment reports, then its Available reason, e.g. ``MinimumReplicasUnavailable`` - a crash-looping model
server stays there, nothing marks it failed upstream), ``PrefillWorkloadReady``, ``SchedulerWorkloadReady``,
``HTTPRoutesReady`` (``HTTPRoutesNotReady``), ``InferencePoolReady`` (``WaitingForGateway``); ``WorkloadsReady``
and ``RouterReady`` copy their first False sub-condition, and ``Ready`` its first not-True dependent. No router:
``status.addresses`` holds the workload Service, no ``status.url``; with routes, ``status.url`` and
``addresses`` are the Gateway's address plus ``/<namespace>/<name>``; ``status.address`` is never written.
Same annotations as InferenceService.

Deployment mode (kserve/kserve @ aaac4e294dae2c7b1aa1886447793f3aa1c30912 and the OpenShift AI fork
opendatahub-io/kserve @ 3cf0a0416662e3db328f6ddf4755ce730f41c747, which writes the same names;
pkg/controller/v1beta1/inferenceservice/utils/utils.go GetDeploymentMode): the one in the status, else the
``serving.kserve.io/deploymentMode`` annotation (old and new names), else the ``inferenceservice-config``
ConfigMap's ``deploy.defaultDeploymentMode`` (the kserve addon writes RawDeployment on the openshift profile, as
the fork ships it, Serverless on vanilla; OpenShift AI's DataScienceCluster writes it from KServe's serving
state), else Knative. Knative where no Knative Service is served (``serving.knative.dev/v1``, installed when a
KnativeServing is Ready or by the ``knative-serving`` addon): a ``ServerlessModeRejected`` Warning event, the
conditions left Unknown, nothing deployed, never retried.
"""

import copy
import json

from kubesim.controllers.knative import LivingConditions
from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import (PREFIX, annotation, apply_owned, condition, owner_reference, propagate,
                                      set_condition)

ISVC = ("serving.kserve.io", "inferenceservices")
LLMISVC = ("serving.kserve.io", "llminferenceservices")
RUNTIMES = ("serving.kserve.io", "servingruntimes")
DEPLOYMENTS = ("apps", "deployments")
SERVICES = ("", "services")
PODS = ("", "pods")
GATEWAYS = ("gateway.networking.k8s.io", "gateways")
ROUTES = ("gateway.networking.k8s.io", "httproutes")
POOLS = ("inference.networking.k8s.io", "inferencepools")
DSC = ("datasciencecluster.opendatahub.io", "datascienceclusters")
DEFAULT_GATEWAY = ("openshift-ingress", "openshift-ai-inference")


# pkg/constants/constants.go: Standard and Knative; RawDeployment and Serverless are their deprecated names
STANDARD, KNATIVE = "Standard", "Knative"
MODE_NAMES = {"Serverless": KNATIVE, "Knative": KNATIVE, "RawDeployment": STANDARD, "Standard": STANDARD,
              "ModelMesh": "ModelMesh"}
# the InferenceService's living condition set (inference_service_status.go conditionSet)
ISVC_DEPENDENTS = ("PredictorReady", "IngressReady")
KNATIVE_SERVICES = ("serving.knative.dev", "services")
CONFIGMAPS = ("", "configmaps")
ISVC_CONFIG = "inferenceservice-config"


def configured_mode(cluster):
    """``deploy.defaultDeploymentMode`` of the cluster's ``inferenceservice-config`` ConfigMap, or None."""
    for configmap in cluster.store.list(CONFIGMAPS)[0]:
        if configmap["metadata"]["name"] != ISVC_CONFIG:
            continue
        try:
            mode = (json.loads((configmap.get("data") or {}).get("deploy") or "{}") or {}).get("defaultDeploymentMode")
        except ValueError:
            continue
        if mode in MODE_NAMES:
            return MODE_NAMES[mode]
    return None


def write_isvc_config(cluster, namespace, mode):
    """KServe's ``inferenceservice-config`` in ``namespace`` with ``deploy.defaultDeploymentMode`` (as the
    KServe install, or OpenShift AI's operator for its DataScienceCluster, writes it)."""
    from kubesim.controllers.util import ensure_namespace
    ensure_namespace(cluster, namespace)
    data = {"deploy": json.dumps({"defaultDeploymentMode": mode}),
            "ingress": json.dumps({"disableIngressCreation": MODE_NAMES.get(mode) == STANDARD})}
    resource = cluster.resource_for_key(CONFIGMAPS)
    current = cluster.store.get(CONFIGMAPS, namespace, ISVC_CONFIG)
    if current is None:
        cluster.create(resource, {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": ISVC_CONFIG, "namespace": namespace}, "data": data}, namespace)
    elif (current.get("data") or {}).get("deploy") != data["deploy"]:
        def change(obj):
            obj.setdefault("data", {}).update(data)
        cluster.mutate(resource, namespace, ISVC_CONFIG, change)


def _apps_domain(cluster):
    ingress = cluster.store.get(("config.openshift.io", "ingresses"), "", "cluster")
    return ((ingress or {}).get("spec") or {}).get("domain") or "apps.kubesim.example.com"


class ModelStatus:
    """``status.modelStatus`` as pkg/apis/serving/v1beta1/inference_service_status.go updates it
    (UpdateModelRevisionStates, UpdateModelTransitionStatus, SetModelFailureInfo: a failure info stays until
    another replaces it, also once the model is Loaded)."""

    def __init__(self, current):
        self.value = copy.deepcopy(current) if isinstance(current, dict) else {}
        self.value.setdefault("transitionStatus", "")

    def revision_states(self, state, info=None):
        states = self.value.setdefault("states", {"activeModelState": ""})
        states["targetModelState"] = state
        if state in ("Pending", "Loading"):
            self.value["transitionStatus"] = "InProgress"
        elif state == "Loaded":
            self.value["transitionStatus"] = "UpToDate"
            states["activeModelState"] = "Loaded"
        elif state == "FailedToLoad":
            self.value["transitionStatus"] = "BlockedByFailedLoad"
        if info is not None:
            self.value["lastFailureInfo"] = {k: v for k, v in info.items() if v not in (None, "", 0)}

    def invalid_spec(self, reason, message):
        self.value["transitionStatus"] = "InvalidSpec"
        self.value.setdefault("states", {"activeModelState": ""})["targetModelState"] = "FailedToLoad"
        self.value["lastFailureInfo"] = {"reason": reason, "message": message}


def _ready_count(pods):
    """countReadyPods: Running and Ready."""
    def ready(pod):
        status = pod.get("status") or {}
        return status.get("phase") == "Running" and any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ())
    return sum(1 for p in pods if ready(p))


def propagate_model_status(model, pods, isvc_ready, raw, knative_conditions=(), revisions_current=True):
    """PropagateModelStatus (inference_service_status.go): Pending with no pod (FailedToLoad in Knative mode
    when a Knative condition is False: the revision failed and was scaled to zero); from the first pod,
    Loading while the storage-initializer runs, FailedToLoad (ModelLoadFailed with the termination's
    message and exit code) while it or the kserve-container is terminated with an error or in
    CrashLoopBackOff, Loaded once the InferenceService is Ready, else Pending."""
    model.value.setdefault("copies", {"failedCopies": 0})["totalCopies"] = _ready_count(pods)
    if not model.value["copies"]["totalCopies"]:
        model.value["copies"].pop("totalCopies")
    if not pods:
        if not raw and any(c.get("status") == "False" for c in knative_conditions):
            model.revision_states("FailedToLoad")
            return
        model.revision_states("Pending")
        return
    status = pods[0].get("status") or {}
    for entry in status.get("initContainerStatuses") or ():
        if entry.get("name") != "storage-initializer":
            continue
        state, last = entry.get("state") or {}, (entry.get("lastState") or {}).get("terminated")
        if "running" in state:
            if last:
                return      # requeued: maybe only between an error and the next one
            model.revision_states("Loading")
            return
        if (state.get("terminated") or {}).get("reason") == "Error":
            model.revision_states("FailedToLoad", _failure(state["terminated"]))
            return
        if (state.get("waiting") or {}).get("reason") == "CrashLoopBackOff":
            model.revision_states("FailedToLoad", _failure(last or {}))
            return
    if isvc_ready and (raw or revisions_current):
        model.revision_states("Loaded")
        return
    for entry in status.get("containerStatuses") or ():
        if entry.get("name") != "kserve-container":
            continue
        state, last = entry.get("state") or {}, (entry.get("lastState") or {}).get("terminated")
        if (state.get("terminated") or {}).get("reason") == "Error":
            model.revision_states("FailedToLoad", _failure(state["terminated"]))
        elif (state.get("waiting") or {}).get("reason") == "CrashLoopBackOff":
            model.revision_states("FailedToLoad", _failure(last or {}))
        else:
            model.revision_states("Pending")


def _failure(terminated):
    return {"reason": "ModelLoadFailed", "message": terminated.get("message"), "exitCode": terminated.get("exitCode")}


def _template_annotations(owner, failure):
    meta = propagate(owner, {"annotations": {}})
    if failure:
        # a model server that fails loading never passes its readiness probe between crashes (vLLM's /health
        # answers once the model is loaded): without "ready: false" the Deployment was Available for a moment
        meta["annotations"].update({PREFIX + "outcome": "CrashLoopBackOff", PREFIX + "log": failure,
                                    PREFIX + "exit-code": "1", PREFIX + "ready": "false", PREFIX + "duration-s":
                                        meta["annotations"].get(PREFIX + "duration-s", "2")})
    return meta["annotations"]


def _ensure_deployment(cluster, owner, name, namespace, labels, pod_spec, replicas, annotations):
    body = {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels),
                         "ownerReferences": [owner_reference(owner)]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": labels["app"]}},
                     "template": {"metadata": {"labels": dict(labels), "annotations": dict(annotations)},
                                  "spec": pod_spec}}}

    def update(obj):
        wanted = copy.deepcopy(body["spec"])
        current = obj["spec"]
        same = current.get("replicas") == wanted["replicas"] and \
            current.get("template", {}).get("metadata") == wanted["template"]["metadata"] and \
            all(current.get("template", {}).get("spec", {}).get(k) == v for k, v in pod_spec.items())
        if same:
            return False
        current["replicas"] = wanted["replicas"]
        current["template"]["metadata"] = wanted["template"]["metadata"]
        current["template"]["spec"].update(copy.deepcopy(pod_spec))
        return True
    return apply_owned(cluster, cluster.resource_for_key(DEPLOYMENTS), body, namespace, update)


def _ensure_service(cluster, owner, name, namespace, selector, port=80, target=8080):
    apply_owned(cluster, cluster.resource_for_key(SERVICES), {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "ownerReferences": [owner_reference(owner)]},
        "spec": {"selector": dict(selector), "ports": [{"name": "http", "port": port, "targetPort": target,
                                                        "protocol": "TCP"}]}}, namespace)


def raw_predictor_condition(deployment):
    """PropagateRawStatus (inference_service_status.go) for one Deployment: ``(status, reason, message)`` of
    PredictorReady. Available=True is ready; Progressing=False with a message (ProgressDeadlineExceeded)
    overrides it; Progressing=True NewReplicaSetAvailable is ready, another reason Unknown unless Available
    confirmed it; Available=False (MinimumReplicasUnavailable) overrides all of these, and
    ReplicaFailure=True overrides Available."""
    if deployment is None:
        return "False", None, None
    available = condition(deployment, "Available") or {}
    progressing = condition(deployment, "Progressing") or {}
    failure = condition(deployment, "ReplicaFailure") or {}
    result = ("False", None, None)
    if available.get("status") == "True":
        result = ("True", available.get("reason"), available.get("message"))
    if progressing.get("status") == "False":
        if progressing.get("message"):
            result = ("False", progressing.get("reason"), progressing.get("message"))
    elif progressing.get("status") == "True":
        if progressing.get("reason") == "NewReplicaSetAvailable":
            result = ("True", progressing.get("reason"), progressing.get("message"))
        elif available.get("status") != "True":
            result = ("Unknown", progressing.get("reason"), progressing.get("message"))
    if available.get("status") == "False":
        result = ("False", available.get("reason"), available.get("message"))
    if failure.get("status") == "True":
        result = ("False", failure.get("reason"), failure.get("message"))
    return result


class InferenceServiceController(OperatorReconciler):
    name = "inferenceservice"
    key = ISVC
    default_delay = 2.0
    extra_watches = (DEPLOYMENTS, PODS, RUNTIMES, KNATIVE_SERVICES)

    def related(self, event):
        labels = event.obj["metadata"].get("labels") or {}
        if event.key == RUNTIMES:
            return self.all_refs(event.obj["metadata"]["namespace"])
        name = labels.get("serving.kserve.io/inferenceservice")
        if not name:
            return []
        return [r for r in self.all_refs(event.obj["metadata"]["namespace"]) if r.name == name]

    def _mode(self, isvc):
        """The deployment mode as KServe resolves it (utils.GetDeploymentMode): the one already in the status,
        else the annotation when it names a mode, else ``deploy.defaultDeploymentMode`` of the
        ``inferenceservice-config`` ConfigMap, else Knative (the default of KServe's own configuration); the
        deprecated names RawDeployment and Serverless read as Standard and Knative (ParseDeploymentMode)."""
        current = (isvc.get("status") or {}).get("deploymentMode")
        if current:
            return MODE_NAMES.get(current, current)
        asked = MODE_NAMES.get((isvc["metadata"].get("annotations") or {}).get("serving.kserve.io/deploymentMode"))
        if asked:
            return asked
        return configured_mode(self.cluster) or KNATIVE

    def _runtime(self, isvc):
        """``(runtime object or None, None)`` or ``(None, (reason, message))`` as components/predictor.go's
        reconcileModel writes them in ``modelStatus.lastFailureInfo``."""
        predictor = (isvc.get("spec") or {}).get("predictor") or {}
        model = predictor.get("model") or {}
        namespace = isvc["metadata"]["namespace"]
        if predictor.get("containers") and not model:
            return None, None
        wanted = (model.get("modelFormat") or {}).get("name")
        if model.get("runtime"):
            runtime = self.cluster.store.get(RUNTIMES, namespace, model["runtime"])
            if runtime is None:
                # retried until the runtime exists
                return None, ("RuntimeNotRecognized", "Waiting for runtime to become available")
            if wanted and not any(f.get("name") == wanted for f in
                                  (runtime.get("spec") or {}).get("supportedModelFormats") or ()):
                return None, ("NoSupportingRuntime", "Specified runtime does not support specified framework/version")
            return runtime, None
        for runtime in self.cluster.store.list(RUNTIMES, namespace)[0]:
            for fmt in (runtime.get("spec") or {}).get("supportedModelFormats") or ():
                if fmt.get("name") == wanted and fmt.get("autoSelect", False):
                    return runtime, None
        return None, ("NoSupportingRuntime", "No runtime found to support specified framework/version")

    def _pod_spec(self, isvc, runtime):
        predictor = (isvc.get("spec") or {}).get("predictor") or {}
        model = predictor.get("model") or {}
        if runtime is None:
            containers = copy.deepcopy(predictor.get("containers") or [])
        else:
            containers = copy.deepcopy((runtime.get("spec") or {}).get("containers") or [])
            if containers:
                main = containers[0]
                main["name"] = "kserve-container"
                args = [a.replace("{{.Name}}", isvc["metadata"]["name"]) for a in main.get("args") or ()]
                main["args"] = args + list(model.get("args") or ())
                main["env"] = list(main.get("env") or ()) + list(model.get("env") or ())
                if model.get("storageUri"):
                    main["env"].append({"name": "STORAGE_URI", "value": model["storageUri"]})
                if model.get("resources"):
                    main["resources"] = copy.deepcopy(model["resources"])
        spec = {"containers": containers or [{"name": "kserve-container", "image": "kserve/predictor:kubesim"}]}
        for container in spec["containers"]:
            # the predictor's failure reaches modelStatus.lastFailureInfo through the termination message
            container.setdefault("terminationMessagePolicy", "FallbackToLogsOnError")
        for key in ("nodeSelector", "tolerations", "affinity", "serviceAccountName", "volumes"):
            if predictor.get(key):
                spec[key] = copy.deepcopy(predictor[key])
        return spec

    def _ingress_config(self):
        """``ingress`` of the ``inferenceservice-config`` ConfigMap (disableIngressCreation)."""
        for configmap in self.cluster.store.list(CONFIGMAPS)[0]:
            if configmap["metadata"]["name"] == ISVC_CONFIG:
                try:
                    return json.loads((configmap.get("data") or {}).get("ingress") or "{}") or {}
                except ValueError:
                    return {}
        return {}

    def sync(self, ref, isvc):
        cluster = self.cluster
        now = self.clock.timestamp()
        name, namespace = ref.name, ref.namespace
        mode = self._mode(isvc)
        generation = isvc["metadata"].get("generation", 1)
        override = annotation(isvc, "url") or getattr(getattr(cluster, "settings", None), "inference_url", None)
        if mode == KNATIVE and self.cluster.registry.for_storage_key(*KNATIVE_SERVICES) is None:
            # controller.go: Knative mode where Knative Services are not served is a Warning event and a
            # terminal error - the status keeps its initial Unknown conditions, nothing is deployed
            if (isvc.get("status") or {}).get("deploymentMode") != mode:
                self.cluster.record_event(isvc, "ServerlessModeRejected", "It is not possible to use Knative deployment "
                                          "mode when Knative Services are not available",
                                          event_type="Warning", component="v1beta1Controllers")

            def rejected(status, obj):
                conditions = LivingConditions(status.get("conditions"), ISVC_DEPENDENTS, now)
                conditions.initialize()
                status.update(conditions=conditions.conditions, deploymentMode=mode,
                              modelStatus={"transitionStatus": ""})
            self.write_status(ref, rejected)
            return None
        runtime, invalid = self._runtime(isvc)
        if invalid:
            reason, message = invalid

            def invalid_status(status, obj):
                # the conditions stay as initialized (Unknown); modelStatus says why (the reconcile returns an
                # error: retried with back-off)
                conditions = LivingConditions(status.get("conditions"), ISVC_DEPENDENTS, now)
                conditions.initialize()
                model = ModelStatus(status.get("modelStatus"))
                model.invalid_spec(reason, message)
                status.update(conditions=conditions.conditions, deploymentMode=mode, modelStatus=model.value)
            self.write_status(ref, invalid_status)
            return 10.0 if reason == "RuntimeNotRecognized" else None
        failure = self.fail_message(isvc)
        predictor = (isvc.get("spec") or {}).get("predictor") or {}
        labels = {"app": "isvc.%s-predictor" % name, "component": "predictor",
                  "serving.kserve.io/inferenceservice": name}
        if runtime is not None:
            labels["serving.kserve.io/servingruntime"] = runtime["metadata"]["name"]
        replicas = int(predictor.get("minReplicas", 1) if predictor.get("minReplicas") is not None else 1)
        pod_spec = self._pod_spec(isvc, runtime)
        pod_annotations = _template_annotations(isvc, failure)
        internal = "http://%s-predictor.%s.svc.cluster.local" % (name, namespace)
        if mode == KNATIVE:
            ksvc = self._knative_service(isvc, labels, pod_spec, pod_annotations, replicas)
        else:
            _ensure_deployment(cluster, isvc, "%s-predictor" % name, namespace, labels, pod_spec, replicas,
                               pod_annotations)
            _ensure_service(cluster, isvc, "%s-predictor" % name, namespace, {"app": labels["app"]})
            deployment = cluster.store.get(DEPLOYMENTS, namespace, "%s-predictor" % name)
        pods = [p for p in cluster.store.list(PODS, namespace)[0]
                if (p["metadata"].get("labels") or {}).get("serving.kserve.io/inferenceservice") == name
                and not p["metadata"].get("deletionTimestamp")
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        if mode == KNATIVE:
            latest = ((ksvc or {}).get("status") or {}).get("latestCreatedRevisionName")
            pods = [p for p in pods
                    if (p["metadata"].get("labels") or {}).get("serving.knative.dev/revision") == latest]
        pods.sort(key=lambda p: p["metadata"].get("creationTimestamp") or "")
        left = self.delay_left(isvc)
        ingress = self._ingress_config()
        internal_only = ingress.get("disableIngressCreation") or \
            (isvc["metadata"].get("labels") or {}).get("networking.kserve.io/visibility") == "cluster-local"

        def change(status, obj):
            conditions = LivingConditions(status.get("conditions"), ISVC_DEPENDENTS, now)
            conditions.initialize()
            components = status.get("components") or {}
            component = dict(components.get("predictor") or {})
            knative_conditions = ()
            if mode == KNATIVE:
                # PropagateStatus: the Knative Service's Ready, RoutesReady, ConfigurationsReady
                ksvc_status = (ksvc or {}).get("status") or {}
                knative_conditions = ksvc_status.get("conditions") or []
                by_type = {c.get("type"): c for c in knative_conditions}
                for target, source in (("PredictorReady", "Ready"), ("PredictorRouteReady", "RoutesReady"),
                                       ("PredictorConfigurationReady", "ConfigurationsReady")):
                    conditions.propagate(target, by_type.get(source), keep_reason=True)
                for key, field in (("latestCreatedRevision", "latestCreatedRevisionName"),
                                   ("latestReadyRevision", "latestReadyRevisionName")):
                    if ksvc_status.get(field):
                        component[key] = ksvc_status[field]
                if ksvc_status.get("traffic"):
                    component["traffic"] = ksvc_status["traffic"]
                if (by_type.get("Ready") or {}).get("status") == "True":
                    component["url"] = ksvc_status.get("url")
                    component["address"] = ksvc_status.get("address")
                    component["latestRolledoutRevision"] = ksvc_status.get("latestReadyRevisionName")
            else:
                # PropagateRawStatus: Available=False overrides ProgressDeadlineExceeded
                value, reason, message = raw_predictor_condition(deployment)
                conditions.propagate("PredictorReady", {"status": value, "reason": reason, "message": message},
                                     keep_reason=True)
                if value == "True":
                    component["url"] = internal
            isvc_ready = conditions.status("Ready") == "True"
            model = ModelStatus(status.get("modelStatus"))
            propagate_model_status(model, pods, isvc_ready and left <= 0, mode != KNATIVE, knative_conditions,
                                   component.get("latestCreatedRevision") == component.get("latestReadyRevision"))
            if conditions.get("Stopped") is None:
                conditions.set("Stopped", "False")
            if mode == KNATIVE:
                # PropagateCrossComponentStatus
                for cross, source in (("RoutesReady", "PredictorRouteReady"),
                                      ("LatestDeploymentReady", "PredictorConfigurationReady")):
                    value = conditions.status(source)
                    if value == "True":
                        conditions.set(cross, "True")
                    else:
                        conditions.set(cross, "Unknown" if value in (None, "Unknown") else "False",
                                       "%s not ready" % source)
                # ingress_reconciler.go without Istio's VirtualService: ready once the predictor has its URL
                if component.get("url") and left <= 0:
                    conditions.mark_true("IngressReady")
                    status["url"] = override or "https://%s-%s.%s" % (name, namespace, _apps_domain(cluster))
                    status["address"] = {"url": override or internal}
            elif internal_only and left <= 0:
                # kube_ingress_reconciler.go: no Ingress to create - the URLs are set and IngressReady is True
                conditions.mark_true("IngressReady")
                status["url"] = override or internal
                status["address"] = {"url": override or internal}
            elif conditions.status("PredictorReady") == "True" and left <= 0:
                conditions.mark_true("IngressReady")
                status["url"] = override or internal
                status["address"] = {"url": override or internal}
            else:
                conditions.mark_false("IngressReady", "Predictor ingress not created")
            if component.get("url") and override:
                component["url"] = override
            components["predictor"] = component
            status.update(conditions=conditions.conditions, observedGeneration=generation, deploymentMode=mode,
                          modelStatus=model.value, components=components)
            if runtime is not None:
                status["servingRuntimeName"] = runtime["metadata"]["name"]
        self.write_status(ref, change)
        if left > 0:
            return left
        return None

    def _knative_service(self, isvc, labels, pod_spec, pod_annotations, replicas):
        """The predictor's Knative Service ``<name>-predictor`` (reconcilers/knative/ksvc_reconciler.go): the
        predictor's pods as its template, ``autoscaling.knative.dev/min-scale`` from minReplicas."""
        name, namespace = isvc["metadata"]["name"], isvc["metadata"]["namespace"]
        annotations = dict(pod_annotations, **{"autoscaling.knative.dev/min-scale": str(replicas)})
        for key, value in (isvc["metadata"].get("annotations") or {}).items():
            if key.startswith("serving.knative.dev/"):
                annotations[key] = value
        template = {"metadata": {"labels": dict(labels, **{"component": "predictor"}), "annotations": annotations},
                    "spec": pod_spec}
        body = {"apiVersion": "serving.knative.dev/v1", "kind": "Service",
                "metadata": {"name": "%s-predictor" % name, "namespace": namespace,
                             "labels": {"serving.kserve.io/inferenceservice": name, "component": "predictor"},
                             "ownerReferences": [owner_reference(isvc)]},
                "spec": {"template": template}}

        def update(obj):
            if (obj.get("spec") or {}).get("template") == template:
                return False
            obj["spec"] = {"template": copy.deepcopy(template)}
            obj["metadata"]["generation"] = int(obj["metadata"].get("generation", 1)) + 1
            return True
        return apply_owned(self.cluster, self.cluster.resource_for_key(KNATIVE_SERVICES), body, namespace, update)


class LLMInferenceServiceController(OperatorReconciler):
    name = "llminferenceservice"
    key = LLMISVC
    default_delay = 2.0
    extra_watches = (DEPLOYMENTS, PODS, ROUTES, POOLS, GATEWAYS)

    def related(self, event):
        if event.key == GATEWAYS:
            return self.all_refs()
        labels = event.obj["metadata"].get("labels") or {}
        name = labels.get("app.kubernetes.io/name")
        if labels.get("app.kubernetes.io/part-of") != "llminferenceservice" or not name:
            return []
        return [r for r in self.all_refs(event.obj["metadata"]["namespace"]) if r.name == name]

    def sync(self, ref, llm):
        cluster = self.cluster
        now = self.clock.timestamp()
        name, namespace = ref.name, ref.namespace
        spec = llm.get("spec") or {}
        failure = self.fail_message(llm)
        annotations = _template_annotations(llm, failure)
        base = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "llminferenceservice"}
        template = copy.deepcopy(spec.get("template") or {})
        if not template.get("containers"):
            template["containers"] = [{"name": "main", "image": "ghcr.io/llm-d/llm-d:v0.2.0",
                                       "args": ["--model", (spec.get("model") or {}).get("name") or name]}]
        workloads = [("%s-kserve" % name, "workload", int(spec.get("replicas", 1) or 1), template)]
        prefill = spec.get("prefill")
        if prefill:
            prefill_template = copy.deepcopy(prefill.get("template") or template)
            workloads.append(("%s-kserve-prefill" % name, "prefill", int(prefill.get("replicas", 1) or 1),
                              prefill_template))
        router = spec.get("router") or {}
        scheduler = router.get("scheduler")
        if scheduler is not None:
            scheduler_template = copy.deepcopy(scheduler.get("template") or {"containers": [{
                "name": "main", "image": "ghcr.io/llm-d/llm-d-inference-scheduler:v0.2.0"}]})
            workloads.append(("%s-kserve-router-scheduler" % name, "router-scheduler", 1, scheduler_template))
        for deployment, component, replicas, pod_spec in workloads:
            labels = dict(base, app=deployment, **{"kserve.io/component": component})
            _ensure_deployment(cluster, llm, deployment, namespace, labels, pod_spec, replicas,
                               annotations if component != "router-scheduler" else {})
        _ensure_service(cluster, llm, "%s-kserve-workload-svc" % name, namespace, {"app": "%s-kserve" % name}, 8000, 8000)
        router_problem = self._router(llm, scheduler is not None)
        url = self._url(llm)
        override = annotation(llm, "url") or getattr(getattr(cluster, "settings", None), "inference_url", None)
        left = self.delay_left(llm)
        # the sub-conditions, True or False (pkg/apis/serving/v1alpha2/llm_inference_service_lifecycle.go); a
        # crash-looping workload is only MinimumReplicasUnavailable upstream: nothing marks it failed
        subs = []
        main_ok, main_reason, main_message = self._workload_condition(namespace, "%s-kserve" % name)
        subs.append(("workload", "MainWorkloadReady", main_ok, main_reason, main_message))
        if prefill:
            ok, reason, message = self._workload_condition(namespace, "%s-kserve-prefill" % name)
            subs.append(("workload", "PrefillWorkloadReady", ok, reason, message))
        if router:
            if scheduler is not None:
                ok, reason, message = self._workload_condition(namespace, "%s-kserve-router-scheduler" % name)
                subs.append(("router", "SchedulerWorkloadReady", ok, reason or "Progressing",
                             message or "Deployment rollout in progress"))
            if router_problem is not None:
                kind, text = router_problem
                subs.append(("router", kind, False, {"HTTPRoutesReady": "HTTPRoutesNotReady",
                                                     "InferencePoolReady": "WaitingForGateway"}.get(kind, "RefsInvalid"),
                             text))
            elif "route" in router:
                subs.append(("router", "HTTPRoutesReady", True, None, None))
        workloads_ok = all(s[2] for s in subs if s[0] == "workload")
        router_ok = all(s[2] for s in subs if s[0] == "router")
        ready = workloads_ok and router_ok and left <= 0

        def change(status, obj):
            conditions = status.get("conditions") or []
            conditions = set_condition(conditions, "PresetsCombined", "True", None, None, now)
            for _group, ctype, ok, reason, message in subs:
                conditions = set_condition(conditions, ctype, "True" if ok else "False", None if ok else reason,
                                           None if ok else message, now, severity="Info")
            for group, rollup in (("workload", "WorkloadsReady"), ("router", "RouterReady")):
                first = next((s for s in subs if s[0] == group and not s[2]), None)
                conditions = set_condition(conditions, rollup, "False" if first else "True",
                                           first[3] if first else None, first[4] if first else None, now)
            dependents = [c for c in conditions if c["type"] in ("PresetsCombined", "WorkloadsReady", "RouterReady")]
            first = next((c for c in dependents if c["status"] != "True"), None)
            if first is None and left > 0:
                first = {"reason": "Progressing", "message": "the service is being set up"}
            conditions = set_condition(conditions, "Ready", "False" if first else "True",
                                       first.get("reason") if first else None, first.get("message") if first else None,
                                       now)
            status.update(conditions=conditions, observedGeneration=obj["metadata"].get("generation", 1))
            status.pop("address", None)   # deprecated, never populated upstream
            if router and "route" in router and (override or url):
                status["url"] = override or url
                status["addresses"] = [{"url": override or url}]
            else:
                # no router: only the workload Service's address, no status.url (router.go)
                status.pop("url", None)
                status["addresses"] = [{"url": override or
                                        "http://%s-kserve-workload-svc.%s.svc.cluster.local:8000" % (name, namespace)}]
        self.write_status(ref, change)
        return left if workloads_ok and router_ok and left > 0 else None

    def _workload_condition(self, namespace, deployment_name):
        """``(ok, reason, message)`` of a workload Deployment, as workload_single_node.go reads it."""
        deployment = self.cluster.store.get(DEPLOYMENTS, namespace, deployment_name)
        if deployment is None or not (deployment.get("status") or {}).get("conditions"):
            return False, "Progressing", ""
        available = condition(deployment, "Available") or {}
        if available.get("status") == "True":
            return True, None, None
        return False, available.get("reason") or "MinimumReplicasUnavailable", \
            available.get("message") or "Deployment does not have minimum availability."

    def _gateways(self, llm):
        refs = (((llm.get("spec") or {}).get("router") or {}).get("gateway") or {}).get("refs") or []
        return [(r.get("namespace") or llm["metadata"]["namespace"], r["name"]) for r in refs] or [DEFAULT_GATEWAY]

    def _router(self, llm, with_scheduler):
        """Create the route and pool; None when the router is ready, else ``(condition type, message)`` of
        the router sub-condition that is not (router.go)."""
        cluster = self.cluster
        name, namespace = llm["metadata"]["name"], llm["metadata"]["namespace"]
        router = (llm.get("spec") or {}).get("router") or {}
        if not router:
            return None
        pool_name = "%s-inference-pool" % name
        if with_scheduler and cluster.registry.for_storage_key(*POOLS) is not None:
            apply_owned(cluster, cluster.resource_for_key(POOLS), {
                "apiVersion": "inference.networking.k8s.io/v1", "kind": "InferencePool",
                "metadata": {"name": pool_name, "namespace": namespace, "ownerReferences": [owner_reference(llm)]},
                "spec": {"selector": {"matchLabels": {"app": "%s-kserve" % name}}, "targetPorts": [{"number": 8000}],
                         "endpointPickerRef": {"name": "%s-epp-service" % name, "kind": "Service",
                                               "port": {"number": 9002}}}}, namespace)
        if "route" not in router:
            return None
        if cluster.registry.for_storage_key(*ROUTES) is None:
            return "GatewaysReady", "the Gateway API is not installed"
        backend = ({"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": pool_name}
                   if with_scheduler else {"kind": "Service", "name": "%s-kserve-workload-svc" % name, "port": 8000})
        apply_owned(cluster, cluster.resource_for_key(ROUTES), {
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "%s-kserve-route" % name, "namespace": namespace,
                         "labels": {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "llminferenceservice"},
                         "ownerReferences": [owner_reference(llm)]},
            "spec": {"parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gw,
                                     "namespace": ns} for ns, gw in self._gateways(llm)],
                     "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/%s/%s" % (namespace, name)}}],
                                "backendRefs": [backend]}]}}, namespace)
        route = cluster.store.get(ROUTES, namespace, "%s-kserve-route" % name) or {}
        parents = (route.get("status") or {}).get("parents") or []
        if not parents or not all(any(c.get("type") == "Accepted" and c.get("status") == "True"
                                      for c in p.get("conditions") or ()) for p in parents):
            return "HTTPRoutesReady", "The following HTTPRoutes are not ready: [%s/%s-kserve-route]" % (namespace, name)
        if with_scheduler and cluster.registry.for_storage_key(*POOLS) is not None:
            pool = cluster.store.get(POOLS, namespace, pool_name) or {}
            if not any(any(c.get("type") == "Accepted" and c.get("status") == "True" for c in p.get("conditions") or ())
                       for p in (pool.get("status") or {}).get("parents") or ()):
                return "InferencePoolReady", "Inference Pool %s/%s exists but no Gateway controller has accepted it yet" \
                    % (namespace, pool_name)
        return None

    def _url(self, llm):
        namespace, name = llm["metadata"]["namespace"], llm["metadata"]["name"]
        if "route" in (((llm.get("spec") or {}).get("router")) or {}):
            ns, gw = self._gateways(llm)[0]
            gateway = self.cluster.store.get(GATEWAYS, ns, gw) if self.cluster.registry.for_storage_key(*GATEWAYS) else None
            addresses = ((gateway or {}).get("status") or {}).get("addresses") or []
            if addresses:
                return "http://%s/%s/%s" % (addresses[0]["value"], namespace, name)
        return "http://%s-kserve-workload-svc.%s.svc.cluster.local:8000" % (name, namespace)
