"""KServe: InferenceService (serving.kserve.io/v1beta1) and LLMInferenceService (v1alpha1).

InferenceService (raw deployment, as KServe's RawDeployment mode reconciles it; the
``Serverless`` mode of ``serving.kserve.io/deploymentMode`` or of the DSC only changes
the URL's form):

- the runtime: ``spec.predictor.model.runtime`` (a ServingRuntime of the
  namespace) or the ServingRuntime whose ``supportedModelFormats`` (``autoSelect``)
  match ``model.modelFormat.name``; custom ``spec.predictor.containers`` need none;
- a Deployment ``<name>-predictor`` (``minReplicas``, default 1) whose
  ``kserve-container`` is the runtime's container with the model's ``args``,
  ``env`` and ``resources`` (GPU requests are scheduled like any pod), and a
  Service ``<name>-predictor``;
- status: conditions ``IngressReady``, ``PredictorReady`` (the Deployment's
  ``Available``), ``Ready``; ``modelStatus`` (``Loaded``/``UpToDate``, ``Pending``/
  ``InProgress``, or ``BlockedByFailedLoad`` with ``lastFailureInfo`` when a
  predictor container fails, ``InvalidSpec`` with ``NoSupportingRuntime``/
  ``RuntimeNotRecognized`` when no runtime fits); ``url``, ``address.url``,
  ``components.predictor.url``, ``deploymentMode``, ``observedGeneration``.

``kubesim.perfscale.io/url`` on the InferenceService (or ``--inference-url``)
sets ``status.url`` and ``status.address.url``: point them at a local
OpenAI-compatible server. ``kubesim.perfscale.io/fail``: the predictor's
containers crash with that message (``CrashLoopBackOff``), so the InferenceService
stays not Ready with ``ModelLoadFailed``. Other steering annotations (``log``,
``ready``, ``ready-delay-s``, ``start-delay-s``) pass to the predictor pods.

LLMInferenceService: a workload Deployment ``<name>-kserve`` (``spec.template``,
``spec.replicas``), ``<name>-kserve-prefill`` for ``spec.prefill``, and with
``spec.router.scheduler`` an ``<name>-kserve-router-scheduler`` Deployment and an
InferencePool ``<name>-inference-pool``; with ``spec.router.route`` an HTTPRoute
``<name>-kserve-route`` to the gateways of ``spec.router.gateway.refs`` (default
``openshift-ai-inference`` in ``openshift-ingress``). Conditions
``MainWorkloadReady``, ``WorkloadsReady``, ``RouterReady``, ``Ready``; ``url``,
``address.url``, ``addresses``; same annotations as InferenceService.
"""

import copy

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


def _apps_domain(cluster):
    ingress = cluster.store.get(("config.openshift.io", "ingresses"), "", "cluster")
    return ((ingress or {}).get("spec") or {}).get("domain") or "apps.kubesim.example.com"


def _failure_info(pods):
    """KServe's model status from the predictor pods: a failed container's termination, or None."""
    for pod in pods:
        for status in (pod.get("status") or {}).get("containerStatuses") or ():
            for state in (status.get("state") or {}, status.get("lastState") or {}):
                terminated = state.get("terminated")
                if terminated and terminated.get("exitCode"):
                    return {"location": pod["metadata"]["name"], "reason": "ModelLoadFailed",
                            "message": terminated.get("message") or "container %s exited with code %d"
                            % (status.get("name"), terminated["exitCode"]),
                            "exitCode": terminated["exitCode"], "time": terminated.get("finishedAt")}
    return None


def _template_annotations(owner, failure):
    meta = propagate(owner, {"annotations": {}})
    if failure:
        meta["annotations"].update({PREFIX + "outcome": "CrashLoopBackOff", PREFIX + "log": failure,
                                    PREFIX + "exit-code": "1", PREFIX + "duration-s":
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


def _deployment_state(cluster, namespace, name):
    """``(available, reason, message)`` from the Deployment's conditions."""
    deployment = cluster.store.get(DEPLOYMENTS, namespace, name)
    if deployment is None:
        return False, "DeploymentNotFound", "deployment %s not found" % name
    status = deployment.get("status") or {}
    available = condition(deployment, "Available") or {}
    progressing = condition(deployment, "Progressing") or {}
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        return False, progressing["reason"], progressing.get("message")
    ok = available.get("status") == "True" and status.get("updatedReplicas", 0) >= (deployment["spec"].get("replicas") or 0) \
        and status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 1)
    return ok, available.get("reason") or "MinimumReplicasUnavailable", available.get("message") or \
        "Deployment does not have minimum availability."


class InferenceServiceController(OperatorReconciler):
    name = "inferenceservice"
    key = ISVC
    default_delay = 2.0
    extra_watches = (DEPLOYMENTS, PODS, RUNTIMES)

    def related(self, event):
        labels = event.obj["metadata"].get("labels") or {}
        if event.key == RUNTIMES:
            return self.all_refs(event.obj["metadata"]["namespace"])
        name = labels.get("serving.kserve.io/inferenceservice")
        if not name:
            return []
        return [r for r in self.all_refs(event.obj["metadata"]["namespace"]) if r.name == name]

    def _mode(self, isvc):
        mode = (isvc["metadata"].get("annotations") or {}).get("serving.kserve.io/deploymentMode")
        if mode:
            return mode
        if self.cluster.registry.for_storage_key(*DSC):
            for dsc in self.cluster.store.list(DSC)[0]:
                kserve = ((dsc.get("status") or {}).get("components") or {}).get("kserve") or {}
                if kserve.get("defaultDeploymentMode"):
                    return kserve["defaultDeploymentMode"]
        return "RawDeployment"

    def _runtime(self, isvc):
        """``(runtime object or None, None)`` or ``(None, (reason, message))``."""
        predictor = (isvc.get("spec") or {}).get("predictor") or {}
        model = predictor.get("model") or {}
        namespace = isvc["metadata"]["namespace"]
        if predictor.get("containers") and not model:
            return None, None
        if model.get("runtime"):
            runtime = self.cluster.store.get(RUNTIMES, namespace, model["runtime"])
            if runtime is None:
                return None, ("RuntimeNotRecognized", "No ServingRuntimes or ClusterServingRuntimes with the name: %s"
                              % model["runtime"])
            return runtime, None
        wanted = (model.get("modelFormat") or {}).get("name")
        for runtime in self.cluster.store.list(RUNTIMES, namespace)[0]:
            for fmt in (runtime.get("spec") or {}).get("supportedModelFormats") or ():
                if fmt.get("name") == wanted and fmt.get("autoSelect", False):
                    return runtime, None
        return None, ("NoSupportingRuntime", "No runtime found to support predictor with model type: "
                                             "{%s %s}" % (wanted, (model.get("modelFormat") or {}).get("version", "")))

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

    def sync(self, ref, isvc):
        cluster = self.cluster
        now = self.clock.timestamp()
        name, namespace = ref.name, ref.namespace
        mode = self._mode(isvc)
        runtime, invalid = self._runtime(isvc)
        generation = isvc["metadata"].get("generation", 1)
        internal = "http://%s-predictor.%s.svc.cluster.local" % (name, namespace)
        external = internal if mode == "RawDeployment" else "https://%s-%s.%s" % (name, namespace, _apps_domain(cluster))
        override = annotation(isvc, "url") or getattr(getattr(cluster, "settings", None), "inference_url", None)
        if invalid:
            reason, message = invalid

            def invalid_status(status, obj):
                conditions = status.get("conditions") or []
                for ctype in ("PredictorReady", "Ready"):
                    conditions = set_condition(conditions, ctype, "False", reason, message, now)
                status.update(conditions=conditions, observedGeneration=generation, deploymentMode=mode,
                              modelStatus={"transitionStatus": "InvalidSpec", "states": {
                                  "activeModelState": "", "targetModelState": "FailedToLoad"},
                                  "lastFailureInfo": {"reason": reason, "message": message}})
            self.write_status(ref, invalid_status)
            return None
        failure = self.fail_message(isvc)
        predictor = (isvc.get("spec") or {}).get("predictor") or {}
        labels = {"app": "isvc.%s-predictor" % name, "component": "predictor",
                  "serving.kserve.io/inferenceservice": name}
        if runtime is not None:
            labels["serving.kserve.io/servingruntime"] = runtime["metadata"]["name"]
        replicas = int(predictor.get("minReplicas", 1) if predictor.get("minReplicas") is not None else 1)
        _ensure_deployment(cluster, isvc, "%s-predictor" % name, namespace, labels, self._pod_spec(isvc, runtime),
                           replicas, _template_annotations(isvc, failure))
        _ensure_service(cluster, isvc, "%s-predictor" % name, namespace, {"app": labels["app"]})
        available, reason, message = _deployment_state(cluster, namespace, "%s-predictor" % name)
        pods = [p for p in cluster.store.list(PODS, namespace)[0]
                if (p["metadata"].get("labels") or {}).get("serving.kserve.io/inferenceservice") == name]
        failure_info = _failure_info(pods)
        left = self.delay_left(isvc)
        ready = available and not failure_info and left <= 0

        def change(status, obj):
            conditions = status.get("conditions") or []
            conditions = set_condition(conditions, "IngressReady", "True", None, None, now)
            if ready:
                conditions = set_condition(conditions, "PredictorReady", "True", None, None, now)
                conditions = set_condition(conditions, "Ready", "True", None, None, now)
                model_status = {"transitionStatus": "UpToDate",
                                "states": {"activeModelState": "Loaded", "targetModelState": "Loaded"},
                                "copies": {"failedCopies": 0, "totalCopies": replicas}}
            else:
                why, text = (failure_info["reason"], failure_info["message"]) if failure_info else (reason, message)
                conditions = set_condition(conditions, "PredictorReady", "False", why, text, now)
                conditions = set_condition(conditions, "Ready", "False", why, text, now)
                if failure_info:
                    model_status = {"transitionStatus": "BlockedByFailedLoad",
                                    "states": {"activeModelState": "", "targetModelState": "FailedToLoad"},
                                    "lastFailureInfo": failure_info, "copies": {"failedCopies": 1, "totalCopies": 0}}
                else:
                    model_status = {"transitionStatus": "InProgress",
                                    "states": {"activeModelState": "Pending", "targetModelState": "Loaded"}}
            status.update(conditions=conditions, observedGeneration=generation, deploymentMode=mode,
                          modelStatus=model_status, url=override or external, address={"url": override or internal},
                          components={"predictor": {"url": override or internal}})
            if runtime is not None:
                status["servingRuntimeName"] = runtime["metadata"]["name"]
        self.write_status(ref, change)
        if available and not failure_info and left > 0:
            return left
        return None


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
        states = {component: _deployment_state(cluster, namespace, deployment)
                  for deployment, component, _, _ in workloads}
        pods = [p for p in cluster.store.list(PODS, namespace)[0]
                if (p["metadata"].get("labels") or {}).get("app.kubernetes.io/name") == name]
        failure_info = _failure_info(pods)
        router_problem = self._router(llm, scheduler is not None)
        url = self._url(llm)
        override = annotation(llm, "url") or getattr(getattr(cluster, "settings", None), "inference_url", None)
        left = self.delay_left(llm)
        main_ok = states["workload"][0] and not failure_info
        workloads_ok = all(s[0] for s in states.values()) and not failure_info
        ready = workloads_ok and router_problem is None and left <= 0

        def change(status, obj):
            conditions = status.get("conditions") or []

            def mark(ctype, ok, reason, message):
                return set_condition(conditions, ctype, "True" if ok else "False", None if ok else reason,
                                     None if ok else message, now)
            why = failure_info["message"] if failure_info else states["workload"][2]
            conditions = mark("MainWorkloadReady", main_ok, "ModelLoadFailed" if failure_info else states["workload"][1], why)
            conditions = mark("WorkloadsReady", workloads_ok, "ModelLoadFailed" if failure_info else "WorkloadsNotReady", why)
            conditions = mark("RouterReady", router_problem is None, "RouterNotReady", router_problem)
            conditions = mark("Ready", ready, "NotReady", why if not workloads_ok else router_problem or
                              "the service is being set up")
            status.update(conditions=conditions, observedGeneration=obj["metadata"].get("generation", 1),
                          url=override or url, address={"url": override or url}, addresses=[{"url": override or url}])
        self.write_status(ref, change)
        return left if workloads_ok and router_problem is None and left > 0 else None

    def _gateways(self, llm):
        refs = (((llm.get("spec") or {}).get("router") or {}).get("gateway") or {}).get("refs") or []
        return [(r.get("namespace") or llm["metadata"]["namespace"], r["name"]) for r in refs] or [DEFAULT_GATEWAY]

    def _router(self, llm, with_scheduler):
        """Create the route and pool; None when the router is ready, else why not."""
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
            return "the Gateway API is not installed"
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
            return "HTTPRoute %s-kserve-route is not accepted by its gateways" % name
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
