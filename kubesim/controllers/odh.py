"""DSCInitialization and DataScienceCluster: the Red Hat OpenShift AI / Open Data Hub operator.

- When the ``rhods-operator`` or ``opendatahub-operator`` CSV succeeds, the operator
  creates the ``default-dsci`` DSCInitialization (applications namespace
  ``redhat-ods-applications`` or ``opendatahub``), unless its Deployment has
  ``DISABLE_DSC_CONFIG=true`` (a Subscription ``spec.config.env``).
- DSCInitialization: creates the applications and monitoring namespaces; status
  ``phase: Ready`` after its delay (default 3 s), ``release`` (product name and the
  CSV's version), conditions ``Available``, ``Progressing``, ``Degraded``,
  ``ReconcileComplete`` (the first write: ``ReconcileInit`` alone) and ``CapabilityServiceMesh``
  (``False``/``MissingOperator`` when ``serviceMesh.managementState: Managed`` and no Service Mesh
  operator CSV succeeded).
- DataScienceCluster: per component of ``spec.components`` with
  ``managementState: Managed``, the component's Deployments in the applications
  namespace and the CRDs it brings (kserve: InferenceService, ServingRuntime,
  LLMInferenceService, InferencePool; trainingoperator: PyTorchJob and, in
  kubesim, TrainJob; kueue: Kueue's queues; ray: RayCluster); ``Removed`` deletes
  them. Conditions rebuilt each reconcile as the generic reconciler does: ``Ready`` (True with no
  reason, or the first unhappy dependent's reason and message), ``ProvisioningSucceeded`` (True with
  ``observedGeneration``, False ``Error``), ``ComponentsReady`` (False ``NotReady`` "Some components
  are not ready: a,b"), then ``<Component>Ready`` alphabetically (True with no reason, False
  ``DeploymentsNotReady``/``Error``, ``False``/``Removed`` severity Info for removed ones) and
  ``ModelControllerReady`` while kserve or modelmeshserving is Managed; ``status.phase`` ``Ready`` or ``Not Ready``,
  ``status.components.<name>.managementState``, ``installedComponents``, ``release``.
  kserve with ``serving.managementState: Managed`` needs the Serverless and Service
  Mesh operators (CSVs Succeeded), as RHOAI 2.x does; otherwise ``KserveReady=False``.
  ``kubesim.perfscale.io/fail`` fails the whole DSC, ``kubesim.perfscale.io/fail-<component>``
  one component.

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``dscinitialization``: opendatahub-io/opendatahub-operator @ 6d30a3241082501fd5b930408906eaeb62f99d59
  (branch stable-2.x); files: internal/controller/dscinitialization/dscinitialization_controller.go,
  internal/controller/dscinitialization/servicemesh.go,
  internal/controller/services/servicemesh/servicemesh_controller_actions.go, pkg/upgrade/upgrade.go.
- ``datasciencecluster``: opendatahub-io/opendatahub-operator @ 6d30a3241082501fd5b930408906eaeb62f99d59;
  files: internal/controller/datasciencecluster/datasciencecluster_controller.go,
  internal/controller/datasciencecluster/datasciencecluster_controller_support.go,
  internal/controller/components/kserve/kserve_controller_actions.go,
  internal/controller/components/modelcontroller, pkg/controller/reconciler/reconciler.go,
  pkg/controller/conditions/conditions.go.
"""

from kubesim import apis
from kubesim.controllers.base import Ref
from kubesim.controllers.olm import CSVS, INSTALLED_BY
from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.kserve import write_isvc_config
from kubesim.controllers.util import (annotation, condition_true, create_or_skip, delete_quietly, ensure_namespace,
                                      owner_reference, set_condition)

DSCI = ("dscinitialization.opendatahub.io", "dscinitializations")
DSC = ("datasciencecluster.opendatahub.io", "datascienceclusters")
SMCP = ("maistra.io", "servicemeshcontrolplanes")
KNATIVE_SERVINGS = ("operator.knative.dev", "knativeservings")
DEPLOYMENTS = ("apps", "deployments")
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
# package -> (release name, applications namespace, monitoring namespace)
PRODUCTS = {"rhods-operator": ("OpenShift AI Self-Managed", "redhat-ods-applications", "redhat-ods-monitoring"),
            "opendatahub-operator": ("Open Data Hub", "opendatahub", "opendatahub")}


class Component:
    def __init__(self, condition, deployments, crds=()):
        self.condition = condition
        self.deployments = deployments
        self.crds = crds


COMPONENTS = {
    "codeflare": Component("CodeFlareReady", ["codeflare-operator-manager"]),
    "dashboard": Component("DashboardReady", ["rhods-dashboard"]),
    "datasciencepipelines": Component("DataSciencePipelinesReady",
                                      ["data-science-pipelines-operator-controller-manager"],
                                      ["datasciencepipelinesapplications.opendatahub.io/DataSciencePipelinesApplication",
                                       "argoproj.io/Workflow"]),
    "feastoperator": Component("FeastOperatorReady", ["feast-operator-controller-manager"]),
    "kserve": Component("KserveReady", ["kserve-controller-manager"],
                        ["serving.kserve.io/InferenceService", "serving.kserve.io/ServingRuntime",
                         "serving.kserve.io/LLMInferenceService", "inference.networking.k8s.io/InferencePool"]),
    "kueue": Component("KueueReady", ["kueue-controller-manager"],
                       ["kueue.x-k8s.io/ClusterQueue", "kueue.x-k8s.io/LocalQueue", "kueue.x-k8s.io/ResourceFlavor"]),
    "llamastackoperator": Component("LlamaStackOperatorReady", ["llama-stack-k8s-operator-controller-manager"]),
    "modelmeshserving": Component("ModelMeshServingReady", ["modelmesh-controller"]),
    "modelregistry": Component("ModelRegistryReady", ["model-registry-operator-controller-manager"]),
    "ray": Component("RayReady", ["kuberay-operator"], ["ray.io/RayCluster", "ray.io/RayJob"]),
    "trainingoperator": Component("TrainingOperatorReady", ["kubeflow-training-operator"],
                                  ["kubeflow.org/PyTorchJob", "trainer.kubeflow.org/TrainJob",
                                   "trainer.kubeflow.org/ClusterTrainingRuntime", "trainer.kubeflow.org/TrainingRuntime"]),
    "trustyai": Component("TrustyAIReady", ["trustyai-service-operator-controller-manager"]),
    "workbenches": Component("WorkbenchesReady", ["notebook-controller-deployment", "odh-notebook-controller-manager"]),
}
# the model controller is no component of the spec: Managed when kserve or modelmeshserving is
# (internal/controller/components/modelcontroller), with a condition but no installedComponents entry
MODEL_CONTROLLER = Component("ModelControllerReady", ["odh-model-controller"])


def _reset_condition(previous, conditions, ctype, value, reason, message, now, **extra):
    """``conditions`` with ``ctype`` appended, its ``lastTransitionTime`` kept from ``previous`` when the status
    did not change (conditions rebuilt from nothing each reconcile)."""
    old = next((c for c in previous if c.get("type") == ctype), {})
    condition = {"type": ctype, "status": value,
                 "lastTransitionTime": old.get("lastTransitionTime") if old.get("status") == value else now}
    for key, item in dict(extra, reason=reason, message=message).items():
        if item is not None:
            condition[key] = item
    return conditions + [condition]


def _package_of(csv):
    for key in csv["metadata"].get("labels") or {}:
        if key.startswith("operators.coreos.com/"):
            return key.split("/", 1)[1].rsplit(".", 1)[0]
    return None


def csv_succeeded(cluster, package):
    return any(_package_of(c) == package and (c.get("status") or {}).get("phase") == "Succeeded"
               for c in cluster.store.list(CSVS)[0])


def product(cluster):
    """``(package, release name, apps namespace, monitoring namespace, version)`` of the installed ODH/RHOAI operator."""
    crd = cluster.store.get(CRDS, "", "dscinitializations.dscinitialization.opendatahub.io") or {}
    owner = (crd.get("metadata", {}).get("annotations") or {}).get(INSTALLED_BY, "")
    namespace, _, name = owner.partition("/")
    csv = cluster.store.get(CSVS, namespace, name) if owner else None
    package = _package_of(csv) if csv else None
    name_, apps, monitoring = PRODUCTS.get(package, PRODUCTS["opendatahub-operator"])
    version = ((csv or {}).get("spec") or {}).get("version", "0.0.0")
    return package, name_, apps, monitoring, version


class DSCInitializationController(OperatorReconciler):
    name = "dscinitialization"
    key = DSCI
    default_delay = 3.0
    extra_watches = (CSVS, SMCP)

    def related(self, event):
        if event.key == SMCP:
            return self.all_refs()
        csv = event.obj
        if _package_of(csv) in PRODUCTS and (csv.get("status") or {}).get("phase") == "Succeeded":
            return [Ref(CSVS, csv["metadata"]["namespace"], csv["metadata"]["name"])]
        return self.all_refs() if _package_of(csv) == "servicemeshoperator" else []

    def reconcile(self, ref):
        if ref.key == CSVS:
            return self._default_dsci(ref)
        return super().reconcile(ref)

    def _default_dsci(self, ref):
        """The operator's start-up: a default DSCInitialization unless DISABLE_DSC_CONFIG is set."""
        cluster = self.cluster
        csv = cluster.store.get(CSVS, ref.namespace, ref.name)
        if csv is None or cluster.registry.for_storage_key(*DSCI) is None or cluster.store.list(DSCI)[0]:
            return None
        for deployment in cluster.store.list(DEPLOYMENTS, ref.namespace)[0]:
            if (deployment["metadata"].get("labels") or {}).get("olm.owner") != ref.name:
                continue
            for container in deployment["spec"]["template"]["spec"].get("containers") or ():
                if any(e.get("name") == "DISABLE_DSC_CONFIG" and str(e.get("value")).lower() == "true"
                       for e in container.get("env") or ()):
                    return None
        _, apps, monitoring = PRODUCTS[_package_of(csv)]
        create_or_skip(cluster, cluster.resource_for_key(DSCI), {
            "apiVersion": "dscinitialization.opendatahub.io/v1", "kind": "DSCInitialization",
            "metadata": {"name": "default-dsci"},
            "spec": {"applicationsNamespace": apps,
                     "monitoring": {"managementState": "Managed", "namespace": monitoring},
                     "serviceMesh": {"managementState": "Managed",
                                     "controlPlane": {"name": "data-science-smcp", "namespace": "istio-system",
                                                      "metricsCollection": "Istio"}},
                     "trustedCABundle": {"managementState": "Managed", "customCABundle": ""}}})
        return None

    def sync(self, ref, dsci):
        cluster = self.cluster
        now = self.clock.timestamp()
        package, release, default_apps, default_monitoring, version = product(cluster)
        spec = dsci.get("spec") or {}
        apps = spec.get("applicationsNamespace") or default_apps
        monitoring = (spec.get("monitoring") or {}).get("namespace") or default_monitoring
        for namespace in {apps, monitoring}:
            ensure_namespace(cluster, namespace, {"opendatahub.io/generated-namespace": "true"})
        if package == "rhods-operator":
            ensure_namespace(cluster, "rhods-notebooks", {"opendatahub.io/generated-namespace": "true"})
        failure = self.fail_message(dsci)
        left = self.delay_left(dsci)
        mesh = self._mesh(spec)

        first = not (dsci.get("status") or {}).get("conditions")

        def change(status, obj):
            conditions = status.get("conditions") or []
            if failure:
                # a setup error: phase Error, reason ReconcileFailed, retried (Progressing stays True)
                status["phase"] = "Error"
                for ctype, value in (("ReconcileComplete", "Unknown"), ("Available", "False"), ("Progressing", "True"),
                                     ("Degraded", "False"), ("Upgradeable", "Unknown")):
                    conditions = set_condition(conditions, ctype, value, "ReconcileFailed", failure, now)
            elif left > 0 and status.get("phase") != "Ready":
                status["phase"] = "Progressing"
                for ctype, value in (("ReconcileComplete", "Unknown"), ("Available", "False"), ("Progressing", "True"),
                                     ("Degraded", "False"), ("Upgradeable", "Unknown")):
                    conditions = set_condition(conditions, ctype, value, "ReconcileInit",
                                               "Initializing DSCInitialization resource", now)
            else:
                status["phase"] = "Ready"
                for ctype, value in (("ReconcileComplete", "True"), ("Available", "True"), ("Progressing", "False"),
                                     ("Degraded", "False"), ("Upgradeable", "True")):
                    conditions = set_condition(conditions, ctype, value, "ReconcileCompleted",
                                               "Reconcile completed successfully", now)
            if mesh is not None and not (first and not failure):
                # the service mesh is set up after the first status write (ReconcileInit alone)
                for ctype in ("CapabilityServiceMesh", "CapabilityServiceMeshAuthorization"):
                    conditions = set_condition(conditions, ctype, mesh[0], mesh[1], mesh[2], now)
            status.pop("errorMessage", None)
            status.update(conditions=conditions, release={"name": release, "version": version})
        self.write_status(ref, change)
        if failure:
            return 10.0
        if first and mesh is not None:
            return 0.1
        return left or (5.0 if mesh is not None and mesh[0] != "True" else None)

    def _mesh(self, spec):
        """``(status, reason, message)`` of the service mesh capability, or None when mesh is not Managed
        (internal/controller/dscinitialization/servicemesh.go, stable-2.x): the Service Mesh operator missing is
        MissingOperator (the DSCInitialization still Ready); its control plane created, NotReady until Ready."""
        mesh = spec.get("serviceMesh") or {}
        if mesh.get("managementState") != "Managed":
            return None
        if not csv_succeeded(self.cluster, "servicemeshoperator"):
            return ("False", "MissingOperator", "OpenShift ServiceMesh v2 operator not found / not setup properly on the "
                    "cluster, cannot setup ServiceMesh. Please install the operator or set ServiceMesh to Removed")
        plane = mesh.get("controlPlane") or {}
        name, namespace = plane.get("name") or "data-science-smcp", plane.get("namespace") or "istio-system"
        if self.cluster.registry.for_storage_key(*SMCP) is None:
            return "False", "NotReady", "ServiceMeshControlPlane not found, SMCP may be initializing"
        ensure_namespace(self.cluster, namespace)
        create_or_skip(self.cluster, self.cluster.resource_for_key(SMCP), {
            "apiVersion": "maistra.io/v2", "kind": "ServiceMeshControlPlane",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"version": "v2.6"}}, namespace)
        smcp = self.cluster.store.get(SMCP, namespace, name) or {}
        if not condition_true(smcp, "Ready"):
            return "False", "NotReady", "ServiceMeshControlPlane is not ready: SMCP readiness status not found, " \
                                        "SMCP may be initializing"
        return "True", "Ready", "ServiceMeshControlPlane is ready"


class DataScienceClusterController(OperatorReconciler):
    name = "datasciencecluster"
    key = DSC
    default_delay = 5.0
    extra_watches = (DSCI, DEPLOYMENTS, CSVS)

    def related(self, event):
        if event.key == DEPLOYMENTS:
            labels = event.obj["metadata"].get("labels") or {}
            return self.all_refs() if any(k.startswith("app.opendatahub.io/") for k in labels) else []
        return self.all_refs()

    def sync(self, ref, dsc):
        cluster = self.cluster
        now = self.clock.timestamp()
        dscis = cluster.store.list(DSCI)[0] if cluster.registry.for_storage_key(*DSCI) else []
        _, release, _, _, version = product(cluster)
        components = (dsc.get("spec") or {}).get("components") or {}
        failure = self.fail_message(dsc)
        if not dscis or (dscis[0].get("status") or {}).get("phase") != "Ready":
            message = "failed to get a valid DSCInitialization instance" if not dscis else \
                "DSCInitialization %s is not ready" % dscis[0]["metadata"]["name"]

            def not_yet(status, obj):
                conditions = set_condition(status.get("conditions"), "ProvisioningSucceeded", "False", "Error", message,
                                           now)
                status.update(phase="Not Ready", conditions=set_condition(conditions, "Ready", "False", "Error",
                                                                          message, now))
            self.write_status(ref, not_yet)
            return 5.0
        apps = (dscis[0].get("spec") or {}).get("applicationsNamespace") or "opendatahub"
        results = {}
        requeue = None
        serving = any((components.get(n) or {}).get("managementState") == "Managed"
                      for n in ("kserve", "modelmeshserving"))
        every = dict(COMPONENTS, modelcontroller=MODEL_CONTROLLER)
        for name, component in every.items():
            spec = components.get(name) or {} if name != "modelcontroller" else {
                "managementState": "Managed" if serving else "Removed"}
            state = spec.get("managementState") or "Removed"
            if state != "Managed":
                for deployment in component.deployments:
                    delete_quietly(cluster, cluster.resource_for_key(DEPLOYMENTS), apps, deployment)
                results[name] = (state, "False", "Removed", "Component ManagementState is set to Removed")
                continue
            apis.install_crds(cluster, component.crds)
            if name == "trainingoperator":
                from kubesim.addons import install_default_training_runtime
                install_default_training_runtime(cluster)
            injected = annotation(dsc, "fail-" + name)
            problem = ("Error", injected) if injected else self._prerequisite(name, spec, dscis[0], apps)
            if not problem:
                # a failed precondition stops the component's actions before its deploy action
                # (kserve_controller_actions.go checkPreConditions: StopError)
                for deployment in component.deployments:
                    self._deployment(dsc, apps, name, deployment)
            unavailable = [d for d in component.deployments
                           if not condition_true(cluster.store.get(DEPLOYMENTS, apps, d) or {}, "Available")]
            left = self.delay_left(dsc)
            if problem:
                results[name] = (state, "False", problem[0], problem[1])
                requeue = 10.0   # retried with back-off, never final (upstream)
            elif unavailable or left > 0:
                total = len(component.deployments)
                results[name] = (state, "False", "DeploymentsNotReady", "%d/%d deployments ready" % (
                    total - len(unavailable), total))
                requeue = left if not unavailable else requeue
            else:
                # a copy of the component CR's Ready, True with no reason (kserve.go UpdateDSCStatus)
                results[name] = (state, "True", None, None)
        not_ready = [n for n, r in sorted(results.items()) if r[0] == "Managed" and r[1] != "True"
                     and n != "modelcontroller"]
        model_controller = results.pop("modelcontroller")

        def change(status, obj):
            # the generic reconciler resets the conditions each reconcile (pkg/controller/reconciler/reconciler.go):
            # Ready, ProvisioningSucceeded, ComponentsReady, then the components' in alphabetical order
            previous = status.get("conditions") or []
            if not any(state == "Managed" for state, _v, _r, _m in results.values()):
                components_ready = ("True", "NoManagedComponents", "No components are managed")
            elif not_ready:
                components_ready = ("False", "NotReady", "Some components are not ready: " + ",".join(not_ready))
            else:
                components_ready = ("True", None, None)
            provisioned = ("False", "Error", failure) if failure else ("True", None, None)
            # Ready: the first unhappy dependent's reason and message, else True with none (conditions.go)
            ready = next((c for c in (provisioned, components_ready) if c[0] == "False"), ("True", None, None))
            generation = obj["metadata"].get("generation", 1)
            conditions = []
            for ctype, (value, reason, message) in (("Ready", ready), ("ProvisioningSucceeded", provisioned),
                                                    ("ComponentsReady", components_ready)):
                conditions = _reset_condition(previous, conditions, ctype, value, reason, message, now,
                                              observedGeneration=generation if ctype == "ProvisioningSucceeded"
                                              else None)
            rows = [(COMPONENTS[name].condition, result) for name, result in results.items()]
            if model_controller[0] == "Managed":
                rows.append((MODEL_CONTROLLER.condition, model_controller))
            for ctype, (state, value, reason, message) in sorted(rows):
                conditions = _reset_condition(previous, conditions, ctype, value, reason, message, now,
                                              severity="Info" if reason == "Removed" else None)
            ready = ready[0]
            status["conditions"] = conditions
            status["phase"] = "Ready" if ready == "True" else "Not Ready"
            if failure:
                status["errorMessage"] = failure
            else:
                status.pop("errorMessage", None)
            summary = {}
            for name, (state, value, _, _) in results.items():
                allowed = ("Managed", "Unmanaged", "Removed") if name == "kueue" else ("Managed", "Removed")
                entry = {"managementState": state if state in allowed else "Removed"}
                if name == "kserve" and state == "Managed":
                    kserve = components.get("kserve") or {}
                    entry["defaultDeploymentMode"] = kserve.get("defaultDeploymentMode") or (
                        "Serverless" if (kserve.get("serving") or {}).get("managementState", "Managed") == "Managed"
                        else "RawDeployment")
                    entry["serverlessMode"] = (kserve.get("serving") or {}).get("managementState", "Managed")
                summary[name] = entry
            status["components"] = summary
            status["installedComponents"] = {n: r[0] == "Managed" for n, r in results.items()}
            status["release"] = {"name": release, "version": version}
            status["observedGeneration"] = obj["metadata"].get("generation", 1)
        self.write_status(ref, change)
        return requeue

    def _prerequisite(self, name, spec, dsci, apps):
        """What keeps a managed component from being ready (None: nothing). KServe in 2.x
        (internal/controller/components/kserve/kserve_controller_actions.go checkPreConditions,
        customizeKserveConfigMap):
        with ``serving`` Managed its default mode is Serverless, which needs the DSCInitialization's
        service mesh Managed, the Service Mesh and Serverless operators, and the mesh capability Ready;
        with ``serving`` Removed it is RawDeployment. The mode goes into KServe's inferenceservice-config,
        and a managed serving gets its KnativeServing."""
        if name != "kserve":
            return None
        serving = (spec.get("serving") or {}).get("managementState", "Managed")
        asked = spec.get("defaultDeploymentMode")
        if serving == "Removed":
            if asked == "Serverless":
                return "Error", ("setting defaultdeployment mode as Serverless is incompatible with having Serving "
                                 "'Removed'")
            write_isvc_config(self.cluster, apps, "RawDeployment")
            return None
        mode = asked or "Serverless"
        if (((dsci.get("spec") or {}).get("serviceMesh") or {}).get("managementState")) != "Managed":
            return "ServiceMeshNotConfigured", "ServiceMesh needs to be set to 'Managed' in DSCI CR"
        missing = ["%s operator must be installed for this component's configuration" % what
                   for package, what in (("servicemeshoperator", "ServiceMesh"), ("serverless-operator", "Serverless"))
                   if not csv_succeeded(self.cluster, package)]
        if missing:
            return "Error", "%d error%s occurred:\n%s\n\n" % (len(missing), "" if len(missing) == 1 else "s",
                                                            "\n".join("\t* " + m for m in missing))
        if not condition_true(dsci, "CapabilityServiceMesh"):
            return "ServiceMeshNotReady", "ServiceMesh is not ready"
        write_isvc_config(self.cluster, apps, mode)
        serving_name = (spec.get("serving") or {}).get("name") or "knative-serving"
        if self.cluster.registry.for_storage_key(*KNATIVE_SERVINGS) is not None:
            ensure_namespace(self.cluster, "knative-serving")
            create_or_skip(self.cluster, self.cluster.resource_for_key(KNATIVE_SERVINGS), {
                "apiVersion": "operator.knative.dev/v1beta1", "kind": "KnativeServing",
                "metadata": {"name": serving_name, "namespace": "knative-serving"}, "spec": {}}, "knative-serving")
        return None

    def _deployment(self, dsc, namespace, component, name):
        cluster = self.cluster
        ensure_namespace(cluster, namespace)
        labels = {"app": name, "app.opendatahub.io/%s" % component: "true"}
        create_or_skip(cluster, cluster.resource_for_key(DEPLOYMENTS), {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels),
                         "ownerReferences": [owner_reference(dsc)]},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "manager", "image": "quay.io/opendatahub/%s:kubesim" % name,
                                                           "resources": {"requests": {"cpu": "10m",
                                                                                      "memory": "64Mi"}}}]}}}}, namespace)
