"""Addons: bundles of APIs and cluster objects a profile (or ``--addon NAME``) installs at start.

Each addon is idempotent (it runs at every start, also on a reloaded state,
because aggregated APIs are not stored) and registered by name in an
:class:`AddonRegistry`:

- ``olm``: OLM's CRDs (Subscription, ClusterServiceVersion, InstallPlan,
  CatalogSource, OperatorGroup), the packagemanifests API, OLM's Deployments and,
  as OpenShift lays it out, the ``redhat-operators``, ``certified-operators`` and
  ``community-operators`` CatalogSources in ``openshift-marketplace`` plus the
  ``global-operators`` OperatorGroup in ``openshift-operators``; on ``vanilla``
  as ``operator-sdk olm install`` does: ``operatorhubio-catalog`` (every fixture) in
  ``olm`` and ``global-operators`` in ``operators``;
- ``openshift``: OpenShift's APIs (ClusterVersion, Infrastructure, Ingress,
  OAuth, ClusterOperator, MachineSet, Machine as CRDs; Route, Project, BuildConfig,
  Build, ImageStream, User, Identity, Group as aggregated APIs) and its cluster
  objects (``version``, ``cluster``, MachineSets owning the worker nodes,
  ``openshift-*`` namespaces, ``cluster-monitoring-config``, ``oauth-openshift``);
- ``gateway-api``: GatewayClass, Gateway, HTTPRoute CRDs;
- ``kserve``: KServe's InferenceService, ServingRuntime, LLMInferenceService and
  InferencePool CRDs (with ``gateway-api``), as a KServe install brings them;
- ``knative-serving``: Knative Serving's Service, Configuration, Route and Revision CRDs and its
  controller's Deployment in ``knative-serving``, as an installed Knative Serving leaves them (run by
  :mod:`kubesim.controllers.knative`; with ``kserve``, KServe's Knative mode is served);
- ``kubeflow``: PyTorchJob, TrainJob, (Cluster)TrainingRuntime CRDs and a
  ``torch-distributed`` ClusterTrainingRuntime;
- ``kuberay``: RayCluster and RayJob CRDs and a ``kuberay-operator`` Deployment (run by
  :mod:`kubesim.controllers.ray`);
- ``tekton``: Tekton Pipelines' Pipeline, PipelineRun, Task and TaskRun CRDs (run by
  :mod:`kubesim.controllers.tekton`);
- ``gpu-ready``: the GPU nodes as NFD and the GPU operator leave them (labels,
  ``nvidia.com/gpu`` capacity; on a MIG profile the MIG manager's partitions and the profile's MIG
  strategy's resources) without deploying either.
"""

from kubesim import apis, olm
from kubesim.profiles import ensure, profile

OLM_CRDS = ["operators.coreos.com/CatalogSource", "operators.coreos.com/OperatorGroup",
            "operators.coreos.com/Subscription", "operators.coreos.com/InstallPlan",
            "operators.coreos.com/ClusterServiceVersion"]
GATEWAY_CRDS = ["gateway.networking.k8s.io/GatewayClass", "gateway.networking.k8s.io/Gateway",
                "gateway.networking.k8s.io/HTTPRoute"]
KSERVE_CRDS = ["serving.kserve.io/InferenceService", "serving.kserve.io/ServingRuntime",
               "serving.kserve.io/LLMInferenceService", "inference.networking.k8s.io/InferencePool"]
KUBERAY_CRDS = ["ray.io/RayCluster", "ray.io/RayJob"]
TEKTON_CRDS = ["tekton.dev/Pipeline", "tekton.dev/PipelineRun", "tekton.dev/Task", "tekton.dev/TaskRun"]
KUBEFLOW_CRDS = ["kubeflow.org/PyTorchJob", "trainer.kubeflow.org/TrainJob",
                 "trainer.kubeflow.org/ClusterTrainingRuntime", "trainer.kubeflow.org/TrainingRuntime"]


class OLMLayout:
    """Where OLM lives: OpenShift's namespaces and catalogs, or upstream OLM's."""

    def __init__(self, olm_namespace, global_namespace, operators_namespace, catalogs):
        self.olm_namespace = olm_namespace
        self.global_namespace = global_namespace            # the packageserver's global catalog namespace
        self.operators_namespace = operators_namespace      # holds the global OperatorGroup
        self.catalogs = catalogs                             # [(name, display name, publisher, image, fixtures)]


OLM_LAYOUTS = {
    "openshift": OLMLayout("openshift-operator-lifecycle-manager", "openshift-marketplace", "openshift-operators", [
        ("redhat-operators", "Red Hat Operators", "Red Hat", "registry.redhat.io/redhat/redhat-operator-index:v4.19",
         None),
        ("certified-operators", "Certified Operators", "Red Hat",
         "registry.redhat.io/redhat/certified-operator-index:v4.19", None),
        ("community-operators", "Community Operators", "Red Hat",
         "registry.redhat.io/redhat/community-operator-index:v4.19", None)]),
    "vanilla": OLMLayout("olm", "olm", "operators", [
        ("operatorhubio-catalog", "Community Operators", "OperatorHub.io", "quay.io/operatorhubio/catalog:latest",
         "redhat-operators,certified-operators,community-operators")]),
}


def olm_layout(profile):
    return OLM_LAYOUTS.get(profile, OLM_LAYOUTS["vanilla"])


def _namespace(cluster, name, labels=None):
    ensure(cluster, "v1", "Namespace", {"metadata": {"name": name, "labels": dict(labels or {})}})


def _simulated_deployment(cluster, namespace, name, replicas=1, labels=None, image=None):
    labels = dict(labels or {"app": name})
    ensure(cluster, "apps/v1", "Deployment", {
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                 "template": {"metadata": {"labels": dict(labels)},
                              "spec": {"containers": [{"name": name, "image": image or "registry.kubesim.example.com/"
                                                                                       + name + ":latest",
                                                       "resources": {"requests": {"cpu": "10m", "memory": "50Mi"}}}]}}}},
        namespace)


class Addon:
    name = ""
    requires = ()

    def install(self, sim):
        raise NotImplementedError


class OLMAddon(Addon):
    name = "olm"

    def install(self, sim):
        cluster = sim.cluster
        layout = olm_layout(profile(sim.settings.profile).platform)
        apis.install_crds(cluster, OLM_CRDS)
        catalogs = olm.Catalogs(sim.settings.catalog_dirs)
        cluster.catalogs = catalogs
        cluster.olm_layout = layout
        apis.serve_api(cluster, "packages.operators.coreos.com/PackageManifest",
                       provider=olm.PackageManifestProvider(cluster, catalogs, layout.global_namespace),
                       verbs=["get", "list"])
        for namespace in {layout.olm_namespace, layout.global_namespace, layout.operators_namespace}:
            _namespace(cluster, namespace, {"openshift.io/cluster-monitoring": "true"})
        for name in ("olm-operator", "catalog-operator", "packageserver"):
            _simulated_deployment(cluster, layout.olm_namespace, name)
        ensure(cluster, "operators.coreos.com/v1", "OperatorGroup",
               {"metadata": {"name": "global-operators", "namespace": layout.operators_namespace,
                             "annotations": {"olm.providedAPIs": ""}}, "spec": {}}, layout.operators_namespace)
        for name, display, publisher, image, fixtures in layout.catalogs:
            annotations = {olm.CATALOG_ANNOTATION: fixtures} if fixtures else {}
            ensure(cluster, "operators.coreos.com/v1alpha1", "CatalogSource", {
                "metadata": {"name": name, "namespace": layout.global_namespace, "annotations": annotations},
                "spec": {"sourceType": "grpc", "image": image, "displayName": display, "publisher": publisher,
                         "updateStrategy": {"registryPoll": {"interval": "10m"}}}}, layout.global_namespace)


class GatewayAPIAddon(Addon):
    name = "gateway-api"

    def install(self, sim):
        apis.install_crds(sim.cluster, GATEWAY_CRDS)


class KServeAddon(Addon):
    name = "kserve"
    requires = ("gateway-api",)

    def install(self, sim):
        apis.install_crds(sim.cluster, KSERVE_CRDS)
        _namespace(sim.cluster, "kserve")
        _simulated_deployment(sim.cluster, "kserve", "kserve-controller-manager",
                              labels={"control-plane": "kserve-controller-manager"})
        # KServe's configuration: upstream ships Serverless as the default mode, the OpenShift AI fork
        # (opendatahub-io/kserve) RawDeployment
        from kubesim.controllers.kserve import configured_mode, write_isvc_config
        if configured_mode(sim.cluster) is None:
            openshift = profile(sim.settings.profile).platform == "openshift"
            write_isvc_config(sim.cluster, "kserve", "RawDeployment" if openshift else "Serverless")


class KnativeServingAddon(Addon):
    name = "knative-serving"

    def install(self, sim):
        from kubesim.controllers.knative import CRDS
        apis.install_crds(sim.cluster, CRDS)
        _namespace(sim.cluster, "knative-serving")
        for name in ("activator", "autoscaler", "controller", "webhook"):
            _simulated_deployment(sim.cluster, "knative-serving", name, labels={"app": name})


class KubeflowAddon(Addon):
    name = "kubeflow"

    def install(self, sim):
        apis.install_crds(sim.cluster, KUBEFLOW_CRDS)
        _namespace(sim.cluster, "kubeflow")
        _simulated_deployment(sim.cluster, "kubeflow", "training-operator",
                              labels={"control-plane": "kubeflow-training-operator"})
        install_default_training_runtime(sim.cluster)


class KubeRayAddon(Addon):
    name = "kuberay"

    def install(self, sim):
        apis.install_crds(sim.cluster, KUBERAY_CRDS)
        _namespace(sim.cluster, "ray-system")
        _simulated_deployment(sim.cluster, "ray-system", "kuberay-operator",
                              labels={"app.kubernetes.io/name": "kuberay-operator"})


class TektonAddon(Addon):
    name = "tekton"

    def install(self, sim):
        from kubesim.controllers.tekton import tekton_admission
        apis.install_crds(sim.cluster, TEKTON_CRDS)
        if tekton_admission not in sim.cluster.hooks:   # Tekton's defaulting and validating webhook
            sim.cluster.hooks.append(tekton_admission)
        _namespace(sim.cluster, "tekton-pipelines")
        _simulated_deployment(sim.cluster, "tekton-pipelines", "tekton-pipelines-controller",
                              labels={"app.kubernetes.io/name": "controller"})


def install_default_training_runtime(cluster):
    if cluster.registry.for_storage_key("trainer.kubeflow.org", "clustertrainingruntimes") is None:
        return
    ensure(cluster, "trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", {
        "metadata": {"name": "torch-distributed", "labels": {"trainer.kubeflow.org/framework": "torch"}},
        "spec": {"mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
                 "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                     "containers": [{"name": "node", "image": "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime",
                                     "command": ["/bin/bash", "-c", "torchrun /workspace/train.py"]}]}}}}}]}}}})


class GPUReadyAddon(Addon):
    name = "gpu-ready"

    def install(self, sim):
        from kubesim.controllers.nfd import label_node_features
        from kubesim.controllers.nvidia import set_up_node
        cluster = sim.cluster
        mig = profile(sim.settings.profile).mig or {}
        for node in cluster.store.list(("", "nodes"))[0]:
            label_node_features(cluster, node["metadata"]["name"])
            set_up_node(cluster, node["metadata"]["name"], mig_strategy=mig.get("strategy", "none"))


MONITORING_CRDS = ["monitoring.coreos.com/ServiceMonitor", "monitoring.coreos.com/PodMonitor", "monitoring.coreos.com/Prometheus"]


class PrometheusOperatorAddon(Addon):
    """The Prometheus Operator's monitor kinds (ServiceMonitor, PodMonitor); no Prometheus runs."""
    name = "prometheus-operator"

    def install(self, sim):
        apis.install_crds(sim.cluster, MONITORING_CRDS)


class OpenShiftAddon(Addon):
    name = "openshift"
    requires = ("prometheus-operator",)

    def install(self, sim):
        from kubesim.openshift import install_openshift
        install_openshift(sim)


class AddonRegistry:
    def __init__(self, classes=()):
        self._classes = {}
        for cls in classes:
            self.register(cls)

    def register(self, cls):
        self._classes[cls.name] = cls
        return cls

    def names(self):
        return sorted(self._classes)

    def get(self, name):
        if name not in self._classes:
            raise ValueError("unknown addon %r (known: %s)" % (name, ", ".join(self.names())))
        return self._classes[name]()


BUILTIN_ADDONS = (OLMAddon, GatewayAPIAddon, KServeAddon, KnativeServingAddon, KubeflowAddon, KubeRayAddon, TektonAddon, GPUReadyAddon,
                  PrometheusOperatorAddon, OpenShiftAddon)


def default_addons():
    return AddonRegistry(BUILTIN_ADDONS)


def install(sim, names, registry=None, done=None):
    """Install ``names`` (and what they require) once each, in order; returns the installed names."""
    registry = registry or default_addons()
    done = done if done is not None else []
    for name in names:
        if name in done:
            continue
        addon = registry.get(name)
        install(sim, addon.requires, registry, done)
        addon.install(sim)
        done.append(name)
    return done
