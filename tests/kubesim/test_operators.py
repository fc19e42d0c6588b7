"""The operators the toolbox drives, installed through OLM on the openshift profile (real kubectl).

NFD -> GPU operator -> ClusterPolicy -> nvidia.com/gpu; RHOAI -> DSCInitialization
-> DataScienceCluster -> KServe and training CRDs -> InferenceService,
LLMInferenceService behind a Gateway, PyTorchJob, TrainJob. Success and failure paths.
"""

import json
import os
import urllib.parse

import pytest
import yaml

from kube_fixtures import kubesim_cluster, recorded_states, true_conditions

PREFIX = "kubesim.perfscale.io/"


@pytest.fixture(scope="module")
def sim():
    with kubesim_cluster(profile="openshift", pod_start_delay=0.2, time_scale=50) as server:
        yield server


def get(kubectl, *args):
    return json.loads(kubectl("get", *args, "-o", "json").stdout)


def apply(kubectl, *manifests):
    return kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(m) for m in manifests))


def install(kubectl, namespace, package, source, own_namespace=True, channel=None):
    """What a deploy_operator role does; returns the installed CSV."""
    group = {"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
             "metadata": {"name": namespace, "namespace": namespace},
             "spec": {"targetNamespaces": [namespace]} if own_namespace else {}}
    spec = {"name": package, "source": source, "sourceNamespace": "openshift-marketplace"}
    if channel:
        spec["channel"] = channel
    apply(kubectl, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, group,
          {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
           "metadata": {"name": package, "namespace": namespace}, "spec": spec})
    kubectl("wait", "--for=jsonpath={.status.state}=AtLatestKnown", "subscription/" + package, "-n", namespace,
            "--timeout=60s")
    name = get(kubectl, "subscription", package, "-n", namespace)["status"]["installedCSV"]
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "csv/" + name, "-n", namespace, "--timeout=60s")
    return get(kubectl, "csv", name, "-n", namespace)


def alm_example(csv, kind):
    return next(e for e in json.loads(csv["metadata"]["annotations"]["alm-examples"]) if e["kind"] == kind)


def gpu_nodes(kubectl):
    return {n["metadata"]["name"]: n for n in get(kubectl, "nodes")["items"] if "gpu" in n["metadata"]["name"]}


def policy_state(obj):
    status = obj.get("status") or {}
    ready = next((c for c in status.get("conditions") or () if c["type"] == "Ready"), {})
    error = next((c for c in status.get("conditions") or () if c["type"] == "Error"), {})
    return "%s/%s/%s" % (status.get("state"), ready.get("reason"), error.get("reason")) if status else None


def test_nfd_and_the_gpu_operator(kubectl, sim):
    assert not any(k.startswith("feature.node.kubernetes.io/") for n in get(kubectl, "nodes")["items"]
                   for k in n["metadata"]["labels"])
    gpu_csv = install(kubectl, "nvidia-gpu-operator", "gpu-operator-certified", "certified-operators")
    policy = alm_example(gpu_csv, "ClusterPolicy")
    with recorded_states(sim, ("nvidia.com", "clusterpolicies"), "gpu-cluster-policy", policy_state) as policy_states:
        apply(kubectl, policy)
        # the GPU operator without NFD's labels: ready, Ready=True reason NFDLabelsMissing, nothing deployed
        kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type=='Ready')].reason}=NFDLabelsMissing",
                "clusterpolicy/gpu-cluster-policy", "--timeout=30s")
        status = get(kubectl, "clusterpolicy", "gpu-cluster-policy")["status"]
        assert status["state"] == "ready"
        assert get(kubectl, "daemonsets", "-n", "nvidia-gpu-operator")["items"] == []
        nfd_csv = install(kubectl, "openshift-nfd", "nfd", "redhat-operators")
        with recorded_states(sim, ("nfd.openshift.io", "nodefeaturediscoveries"), "nfd-instance",
                             true_conditions) as nfd_states:
            apply(kubectl, alm_example(nfd_csv, "NodeFeatureDiscovery"))
            kubectl("wait", "--for=condition=Available", "nodefeaturediscovery/nfd-instance", "-n", "openshift-nfd",
                    "--timeout=30s")
        # a fresh install is Degraded first (no worker scheduled), then progresses (upstream's status.go)
        assert nfd_states[0] == "Degraded=NFDWorkerDaemonSetDegraded;OperandImagePinned=OperandImageSetExplicitly", nfd_states
        assert nfd_states[-1] == "Available=AllInstanceComponentsAreDeployedSuccessfuly;Upgradeable=CanBeUpgraded;" \
                                 "OperandImagePinned=OperandImageSetExplicitly", nfd_states
        labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in get(kubectl, "nodes")["items"]}
        assert labels["worker-gpu-0"]["feature.node.kubernetes.io/pci-10de.present"] == "true"  # deviceLabelFields [vendor]
        assert "feature.node.kubernetes.io/pci-10de.present" not in labels["worker-0"]
        kubectl("rollout", "status", "daemonset/nfd-worker", "-n", "openshift-nfd", "--timeout=30s")
        kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type=='Ready')].reason}=Reconciled",
                "clusterpolicy/gpu-cluster-policy", "--timeout=90s")
    # the states a real rollout goes through: no NFD label, no GPU node yet (the node labelling runs
    # beside the policy), operands not ready (the driver longest), then reconciled
    assert policy_states[0] == "ready/NFDLabelsMissing/Ready", policy_states
    assert "ready/NoGPUNodes/Ready" in policy_states, policy_states
    assert "notReady/Error/OperandNotReady" in policy_states, policy_states
    assert policy_states[-1] == "ready/Reconciled/Ready", policy_states
    status = get(kubectl, "clusterpolicy", "gpu-cluster-policy")["status"]
    assert status["namespace"] == "nvidia-gpu-operator"
    for name, node in gpu_nodes(kubectl).items():
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "4", name
        assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-L40S"
        assert node["metadata"]["labels"]["nvidia.com/gpu.deploy.operator-validator"] == "true"
    assert "nvidia.com/gpu" not in next(n for n in get(kubectl, "nodes")["items"]
                                        if n["metadata"]["name"] == "worker-0")["status"]["allocatable"]
    validator = get(kubectl, "daemonset", "nvidia-operator-validator", "-n", "nvidia-gpu-operator")["status"]
    assert validator["desiredNumberScheduled"] == validator["numberAvailable"] == 2
    plugin = get(kubectl, "daemonset", "nvidia-device-plugin-daemonset", "-n", "nvidia-gpu-operator")["status"]
    assert plugin["desiredNumberScheduled"] == plugin["numberReady"] == 2
    # device-plugin time-slicing: replicas multiply the GPUs, GFD marks the product -SHARED
    apply(kubectl, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "time-slicing-config-all",
                                                                          "namespace": "nvidia-gpu-operator"},
                    "data": {"any": "version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n"
                                    "    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"}})
    kubectl("patch", "clusterpolicy", "gpu-cluster-policy", "--type=merge", "-p",
            json.dumps({"spec": {"devicePlugin": {"config": {"name": "time-slicing-config-all", "default": "any"}}}}))
    kubectl("wait", "--for=jsonpath={.status.allocatable.nvidia\\.com/gpu}=16", "node/worker-gpu-0", "--timeout=30s")
    node = gpu_nodes(kubectl)["worker-gpu-0"]
    assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-L40S-SHARED"
    assert node["metadata"]["labels"]["nvidia.com/gpu.replicas"] == "4"
    # a failing operator: notReady, Error=True ReconcileFailed (retried), no GPU advertised
    kubectl("annotate", "clusterpolicy", "gpu-cluster-policy", PREFIX + "fail=driver build failed: kernel headers missing")
    kubectl("wait", "--for=jsonpath={.status.state}=notReady", "clusterpolicy/gpu-cluster-policy", "--timeout=30s")
    error = next(c for c in get(kubectl, "clusterpolicy", "gpu-cluster-policy")["status"]["conditions"]
                 if c["type"] == "Error")
    assert (error["status"], error["reason"]) == ("True", "ReconcileFailed") and "kernel headers" in error["message"]
    assert "nvidia.com/gpu" not in gpu_nodes(kubectl)["worker-gpu-0"]["status"]["allocatable"]
    kubectl("annotate", "clusterpolicy", "gpu-cluster-policy", PREFIX + "fail-")
    kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type=='Ready')].reason}=Reconciled",
            "clusterpolicy/gpu-cluster-policy", "--timeout=30s")
    # a NodeFeatureDiscovery whose worker cannot run: Degraded=True, Available=False, and never final upstream:
    # once the worker runs again it is Available
    kubectl("annotate", "nodefeaturediscovery", "nfd-instance", "-n", "openshift-nfd", PREFIX + "fail=no node for the worker")
    kubectl("wait", "--for=condition=Degraded", "nodefeaturediscovery/nfd-instance", "-n", "openshift-nfd", "--timeout=30s")
    broken = get(kubectl, "nodefeaturediscovery", "nfd-instance", "-n", "openshift-nfd")
    degraded = next(c for c in broken["status"]["conditions"] if c["type"] == "Degraded")
    assert (degraded["reason"], degraded["message"]) == ("NFDWorkerDaemonSetDegraded", "no node for the worker")
    kubectl("annotate", "nodefeaturediscovery", "nfd-instance", "-n", "openshift-nfd", PREFIX + "fail-")
    kubectl("wait", "--for=condition=Available", "nodefeaturediscovery/nfd-instance", "-n", "openshift-nfd",
            "--timeout=30s")


def dsci_phase(obj):
    return (obj.get("status") or {}).get("phase")


def test_openshift_ai_data_science_cluster(kubectl, sim):
    with recorded_states(sim, ("dscinitialization.opendatahub.io", "dscinitializations"), "default-dsci",
                         dsci_phase) as phases:
        install(kubectl, "redhat-ods-operator", "rhods-operator", "redhat-operators", own_namespace=False,
                channel="stable")
        # the operator creates default-dsci at start-up (no DISABLE_DSC_CONFIG)
        kubectl("wait", "--for=jsonpath={.status.phase}=Ready", "dsci/default-dsci", "--timeout=60s")
    assert phases == ["Progressing", "Ready"], phases
    dsci = get(kubectl, "dsci", "default-dsci")
    assert dsci["spec"]["applicationsNamespace"] == "redhat-ods-applications"
    # 2.x's default: the service mesh Managed; without its operator the capability is missing, the DSCI still Ready
    assert dsci["spec"]["serviceMesh"]["managementState"] == "Managed"
    mesh = next(c for c in dsci["status"]["conditions"] if c["type"] == "CapabilityServiceMesh")
    assert (mesh["status"], mesh["reason"]) == ("False", "MissingOperator")
    assert dsci["status"]["release"] == {"name": "OpenShift AI Self-Managed", "version": "2.22.2"}
    kubectl("get", "namespace", "redhat-ods-applications")
    kubectl("annotate", "dsci", "default-dsci", PREFIX + "fail=failed to create the monitoring stack")
    kubectl("wait", "--for=jsonpath={.status.phase}=Error", "dsci/default-dsci", "--timeout=30s")
    kubectl("annotate", "dsci", "default-dsci", PREFIX + "fail-")
    kubectl("wait", "--for=jsonpath={.status.phase}=Ready", "dsci/default-dsci", "--timeout=30s")
    dsc = alm_example(install_csv(kubectl), "DataScienceCluster")
    apply(kubectl, dsc)
    # kserve with serving Managed needs the Serverless operator (RHOAI 2.x): KserveReady=False, DSC Not Ready
    kubectl("wait", "--for=condition=KserveReady=False", "dsc/default-dsc", "--timeout=30s")
    kubectl("wait", "--for=jsonpath={.status.phase}=Not Ready", "dsc/default-dsc", "--timeout=30s")
    kserve = next(c for c in get(kubectl, "dsc", "default-dsc")["status"]["conditions"] if c["type"] == "KserveReady")
    assert "Serverless operator must be installed for this component's configuration" in kserve["message"]
    ready = next(c for c in get(kubectl, "dsc", "default-dsc")["status"]["conditions"] if c["type"] == "Ready")
    assert ready["message"].startswith("Some components are not ready: ") and "kserve" in ready["message"].split(": ")[1].split(",")
    kubectl("patch", "dsc", "default-dsc", "--type=merge", "-p", json.dumps({"spec": {"components": {
        "kserve": {"serving": {"managementState": "Removed"}, "defaultDeploymentMode": "RawDeployment"},
        "trainingoperator": {"managementState": "Managed"}}}}))
    kubectl("wait", "--for=condition=Ready", "dsc/default-dsc", "--timeout=60s")
    status = get(kubectl, "dsc", "default-dsc")["status"]
    assert status["phase"] == "Ready" and status["components"]["kserve"]["managementState"] == "Managed"
    assert status["components"]["modelmeshserving"]["managementState"] == "Removed"
    removed = next(c for c in status["conditions"] if c["type"] == "ModelMeshServingReady")
    assert (removed["status"], removed["reason"]) == ("False", "Removed")
    kubectl("wait", "--for=condition=Available", "deployment/kserve-controller-manager", "-n", "redhat-ods-applications",
            "--timeout=30s")
    # serving Removed: KServe's default deployment mode is RawDeployment (what the operator writes for KServe)
    config = get(kubectl, "configmap", "inferenceservice-config", "-n", "redhat-ods-applications")
    assert json.loads(config["data"]["deploy"]) == {"defaultDeploymentMode": "RawDeployment"}
    for crd in ("inferenceservices.serving.kserve.io", "llminferenceservices.serving.kserve.io",
                "pytorchjobs.kubeflow.org", "trainjobs.trainer.kubeflow.org"):
        kubectl("wait", "--for=condition=Established", "crd/" + crd, "--timeout=30s")


def install_csv(kubectl):
    return get(kubectl, "csv", "rhods-operator.2.22.2", "-n", "redhat-ods-operator")


RUNTIME = {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "ServingRuntime",
           "metadata": {"name": "vllm-runtime", "namespace": "llm"},
           "spec": {"supportedModelFormats": [{"name": "vLLM", "autoSelect": True}],
                    "containers": [{"name": "kserve-container", "image": "quay.io/vllm/vllm:0.11",
                                    "args": ["--model=/mnt/models", "--served-model-name={{.Name}}"]}]}}


def isvc(name, annotations=None, runtime=None, gpus=None):
    model = {"modelFormat": {"name": "vLLM"}, "storageUri": "oci://quay.io/models/granite:3.3"}
    if runtime:
        model["runtime"] = runtime
    if gpus:
        model["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": name, "namespace": "llm", "annotations": dict(
                {"serving.kserve.io/deploymentMode": "RawDeployment"}, **(annotations or {}))},
            "spec": {"predictor": {"model": model}}}


def ready_state(obj):
    ready = next((c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == "Ready"), None)
    return ready and ready["status"]


def test_inference_services(kubectl, sim):
    broken = recorded_states(sim, ("serving.kserve.io", "inferenceservices"), "broken", ready_state)
    with broken as broken_states:
        apply(kubectl, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "llm"}}, RUNTIME,
              isvc("granite", annotations={PREFIX + "url": "http://127.0.0.1:8765"}, gpus=1),
              isvc("broken", annotations={PREFIX + "fail": "CUDA out of memory"}),
              isvc("nowhere", runtime="tgis-runtime"))
        kubectl("wait", "--for=condition=Ready", "isvc/granite", "-n", "llm", "--timeout=60s")
        status = get(kubectl, "isvc", "granite", "-n", "llm")["status"]
        # the URL steering annotation points clients at a local OpenAI-compatible server
        assert status["url"] == status["address"]["url"] == "http://127.0.0.1:8765"
        # the deprecated RawDeployment reads as Standard, the name KServe writes (pkg/constants/constants.go)
        assert status["modelStatus"]["states"]["activeModelState"] == "Loaded" and status["deploymentMode"] == "Standard"
        assert {c["type"] for c in status["conditions"] if c["status"] == "True"} >= {"IngressReady", "PredictorReady", "Ready"}
        pod = get(kubectl, "pods", "-n", "llm", "-l", "serving.kserve.io/inferenceservice=granite")["items"][0]
        container = pod["spec"]["containers"][0]
        assert container["name"] == "kserve-container" and "--served-model-name=granite" in container["args"]
        assert pod["spec"]["nodeName"].startswith("worker-gpu-")
        # a predictor that crashes: KServe's ModelLoadFailed / BlockedByFailedLoad
        kubectl("wait", "--for=jsonpath={.status.modelStatus.transitionStatus}=BlockedByFailedLoad", "isvc/broken", "-n",
                "llm", "--timeout=60s")
        # the Deployment's Available=False comes from another controller: KServe copies it on a later reconcile
        kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type=='Ready')].reason}=MinimumReplicasUnavailable",
                "isvc/broken", "-n", "llm", "--timeout=60s")
        status = get(kubectl, "isvc", "broken", "-n", "llm")["status"]
        ready = next(c for c in status["conditions"] if c["type"] == "Ready")
        # PropagateRawStatus: the Deployment's Available reason; the crash is in modelStatus (PropagateModelStatus)
        assert (ready["status"], ready.get("reason")) == ("False", "MinimumReplicasUnavailable"), status
        failure = status["modelStatus"]["lastFailureInfo"]
        assert failure["reason"] == "ModelLoadFailed" and "CUDA out of memory" in failure["message"]
        kubectl("wait", "--for=jsonpath={.status.modelStatus.lastFailureInfo.reason}=RuntimeNotRecognized", "isvc/nowhere",
                "-n", "llm", "--timeout=30s")
        nowhere = get(kubectl, "isvc", "nowhere", "-n", "llm")["status"]
        assert nowhere["modelStatus"]["transitionStatus"] == "InvalidSpec"
        assert {c["status"] for c in nowhere["conditions"]} == {"Unknown"}     # KServe leaves them Unknown
        # Knative mode where no Knative Service is served: one Warning event, the status as new, nothing deployed
        apply(kubectl, dict(isvc("knative"), metadata={"name": "knative", "namespace": "llm", "annotations": {
            "serving.kserve.io/deploymentMode": "Serverless"}}))
        kubectl("wait", "--for=jsonpath={.status.deploymentMode}=Knative", "isvc/knative", "-n", "llm", "--timeout=30s")
        rejected = get(kubectl, "isvc", "knative", "-n", "llm")["status"]
        assert {c["type"]: c["status"] for c in rejected["conditions"]} == {
            "IngressReady": "Unknown", "PredictorReady": "Unknown", "Ready": "Unknown"}
        events = get(kubectl, "events", "-n", "llm", "--field-selector", "involvedObject.name=knative")["items"]
        assert [(e["type"], e["reason"]) for e in events] == [("Warning", "ServerlessModeRejected")]
        assert get(kubectl, "deployments", "-n", "llm", "-l", "serving.kserve.io/inferenceservice=knative")["items"] == []
    # a model server that crashes at every start is never Ready, not even between two crashes
    assert "True" not in broken_states, broken_states


def test_llm_inference_service_behind_a_gateway(kubectl):
    apply(kubectl,
          {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": "openshift-default"},
           "spec": {"controllerName": "openshift.io/gateway-controller/v1"}},
          {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
           "metadata": {"name": "openshift-ai-inference", "namespace": "openshift-ingress"},
           "spec": {"gatewayClassName": "openshift-default",
                    "listeners": [{"name": "http", "port": 80, "protocol": "HTTP",
                                   "allowedRoutes": {"namespaces": {"from": "All"}}}]}},
          {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "LLMInferenceService",
           "metadata": {"name": "qwen", "namespace": "llm"},
           "spec": {"model": {"uri": "hf://Qwen/Qwen3-0.6B", "name": "Qwen/Qwen3-0.6B"}, "replicas": 2,
                    "router": {"route": {}, "gateway": {}, "scheduler": {}},
                    "template": {"containers": [{"name": "main", "image": "ghcr.io/llm-d/llm-d:v0.2.0"}]}}})
    kubectl("wait", "--for=condition=Programmed", "gateway/openshift-ai-inference", "-n", "openshift-ingress",
            "--timeout=30s")
    kubectl("wait", "--for=condition=Ready", "llminferenceservice/qwen", "-n", "llm", "--timeout=60s")
    status = get(kubectl, "llminferenceservice", "qwen", "-n", "llm")["status"]
    assert status["url"] == "http://openshift-ai-inference.openshift-ingress.gateway.kubesim.example.com/llm/qwen"
    pool = get(kubectl, "inferencepool", "qwen-inference-pool", "-n", "llm")["status"]["parents"][0]
    assert pool["parentRef"]["name"] == "openshift-ai-inference" and \
        {c["type"]: c["status"] for c in pool["conditions"]} == {"Accepted": "True", "ResolvedRefs": "True"}
    listener = get(kubectl, "gateway", "openshift-ai-inference", "-n", "openshift-ingress")["status"]["listeners"][0]
    assert listener["attachedRoutes"] == 1
    assert get(kubectl, "deployment", "qwen-kserve", "-n", "llm")["status"]["readyReplicas"] == 2
    # failure paths: a gateway that cannot be programmed, a model server that crashes
    apply(kubectl, {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                    "metadata": {"name": "broken-gw", "namespace": "openshift-ingress",
                                 "annotations": {PREFIX + "fail": "no load balancer available"}},
                    "spec": {"gatewayClassName": "openshift-default",
                             "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}},
          {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "LLMInferenceService",
           "metadata": {"name": "oom", "namespace": "llm", "annotations": {PREFIX + "fail": "CUDA out of memory"}},
           "spec": {"model": {"uri": "hf://Qwen/Qwen3-32B"}}})
    kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type=='Programmed')].reason}=Invalid", "gateway/broken-gw",
            "-n", "openshift-ingress", "--timeout=30s")
    # a crash-looping model server: upstream only says the Deployment is short of replicas (never failed)
    kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type=='MainWorkloadReady')].reason}=MinimumReplicasUnavailable",
            "llminferenceservice/oom", "-n", "llm", "--timeout=60s")
    oom = get(kubectl, "llminferenceservice", "oom", "-n", "llm")["status"]
    ready = next(c for c in oom["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready.get("reason")) == ("False", "MinimumReplicasUnavailable"), oom
    # no router: only the workload Service's address, no status.url
    assert "url" not in oom and oom["addresses"] == [{"url": "http://oom-kserve-workload-svc.llm.svc.cluster.local:8000"}]
    # a Gateway no controller picks up keeps its CRD's default status
    apply(kubectl, {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                    "metadata": {"name": "orphan", "namespace": "openshift-ingress"},
                    "spec": {"gatewayClassName": "no-such-class",
                             "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}})
    orphan = get(kubectl, "gateway", "orphan", "-n", "openshift-ingress")["status"]
    assert {(c["type"], c["status"], c["reason"], c["message"]) for c in orphan["conditions"]} == {
        ("Accepted", "Unknown", "Pending", "Waiting for controller"),
        ("Programmed", "Unknown", "Pending", "Waiting for controller")}


def test_operand_operators(sim, kubectl):
    from kubesim import apis
    apis.install_crds(sim.cluster, ["kueue.openshift.io/Kueue", "maistra.io/ServiceMeshControlPlane",
                                    "operator.knative.dev/KnativeServing", "operator.authorino.kuadrant.io/Authorino"])
    kubectl("wait", "--for=condition=Established", "crd/knativeservings.operator.knative.dev", "--timeout=30s")
    assert kubectl("get", "ksvc", check=False).returncode != 0   # Knative's own kinds: not before it runs
    with recorded_states(sim, ("operator.knative.dev", "knativeservings"), "knative-serving", true_conditions) as knative, \
            recorded_states(sim, ("kueue.openshift.io", "kueues"), "cluster", true_conditions) as kueue:
        apply(kubectl, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "knative-serving"}},
              {"apiVersion": "operator.knative.dev/v1beta1", "kind": "KnativeServing",
               "metadata": {"name": "knative-serving", "namespace": "knative-serving"}, "spec": {}},
              {"apiVersion": "kueue.openshift.io/v1", "kind": "Kueue", "metadata": {"name": "cluster"},
               "spec": {"managementState": "Managed"}},
              {"apiVersion": "operator.authorino.kuadrant.io/v1beta1", "kind": "Authorino",
               "metadata": {"name": "authorino", "namespace": "knative-serving",
                            "annotations": {PREFIX + "fail": "TLS secret authorino-server-cert not found"}}, "spec": {}})
        kubectl("wait", "--for=condition=Ready", "knativeserving/knative-serving", "-n", "knative-serving",
                "--timeout=30s")
        kubectl("wait", "--for=condition=InstallSucceeded", "knativeserving/knative-serving", "-n", "knative-serving",
                "--timeout=30s")
        kubectl("wait", "--for=condition=Available", "kueue/cluster", "--timeout=30s")
    # as the upstream operators roll out: Knative waits on its deployments, Kueue is Degraded until a replica runs
    assert "TargetClusterResolved=None;VersionMigrationEligible=None" in knative[0], knative
    assert kueue[0] == "Progressing=Reconciling;Degraded=NoReplicasReady", kueue
    assert kueue[-1] == "Available=AllReplicasReady", kueue
    kubectl("get", "ksvc", "-A")   # now Knative's Service kind is served (what KServe checks for Serverless)
    kubectl("wait", "--for=condition=Ready=False", "authorino/authorino", "-n", "knative-serving", "--timeout=30s")
    assert "authorino-server-cert" in get(kubectl, "authorino", "authorino", "-n", "knative-serving")[
        "status"]["conditions"][0]["message"]


SUMMARY = {"train_runtime": 123.4567, "train_samples_per_second": 8.101, "train_steps_per_second": 0.506,
           "train_loss": 1.2345, "epoch": 1.0}


def pytorchjob(name, annotations):
    def replica(count):
        return {"replicas": count, "restartPolicy": "Never", "template": {"spec": {"containers": [
            {"name": "pytorch", "image": "quay.io/modh/fms-hf-tuning:release", "command": ["python", "-m", "tuning"]}]}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "namespace": "llm", "annotations": annotations},
            "spec": {"pytorchReplicaSpecs": {"Master": replica(1), "Worker": replica(1)}}}


def test_pytorchjob_prints_a_trainer_summary(kubectl):
    apply(kubectl, pytorchjob("tune", {PREFIX + "trainer-summary": json.dumps(SUMMARY), PREFIX + "duration-s": "20"}),
          pytorchjob("tune-bad", {PREFIX + "fail": "torch.OutOfMemoryError: CUDA out of memory"}))
    kubectl("wait", "--for=condition=Succeeded", "pytorchjob/tune", "-n", "llm", "--timeout=60s")
    status = get(kubectl, "pytorchjob", "tune", "-n", "llm")["status"]
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert conditions == {"Created": ("True", "PyTorchJobCreated"), "Running": ("False", "PyTorchJobRunning"),
                          "Succeeded": ("True", "PyTorchJobSucceeded")}
    assert status["replicaStatuses"]["Master"]["succeeded"] == 1 and status["completionTime"]
    master_log = kubectl("logs", "tune-master-0", "-n", "llm").stdout.splitlines()
    # HF Trainer's summary record, as ProgressCallback writes it (str() of the metrics dict), rank 0 only
    assert master_log[-1] == str(SUMMARY) and master_log[0] == "***** Running training *****"
    assert kubectl("logs", "tune-worker-0", "-n", "llm").stdout == ""
    env = {e["name"]: e.get("value") for e in get(kubectl, "pod", "tune-worker-0", "-n", "llm")["spec"]["containers"][0]["env"]}
    assert (env["MASTER_ADDR"], env["WORLD_SIZE"], env["RANK"]) == ("tune-master-0", "2", "1")
    kubectl("wait", "--for=condition=Failed", "pytorchjob/tune-bad", "-n", "llm", "--timeout=60s")
    failed = next(c for c in get(kubectl, "pytorchjob", "tune-bad", "-n", "llm")["status"]["conditions"]
                  if c["type"] == "Failed")
    assert failed["reason"] == "PyTorchJobFailed" and "Master replica(s) failed" in failed["message"]


def test_trainjob(kubectl):
    def trainjob(name, runtime="torch-distributed", annotations=None):
        return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": name, "namespace": "llm", "annotations": annotations or {}},
                "spec": {"runtimeRef": {"name": runtime},
                         "trainer": {"numNodes": 2, "image": "quay.io/modh/training:py311"}}}
    apply(kubectl, trainjob("train", annotations={PREFIX + "trainer-summary": json.dumps(SUMMARY)}),
          trainjob("train-nowhere", runtime="deepspeed-distributed"))
    kubectl("wait", "--for=condition=Complete", "trainjob/train", "-n", "llm", "--timeout=60s")
    status = get(kubectl, "trainjob", "train", "-n", "llm")["status"]
    assert status["jobsStatus"][0]["succeeded"] == 1
    rank0 = next(p for p in get(kubectl, "pods", "-n", "llm", "-l", "jobset.sigs.k8s.io/jobset-name=train")["items"]
                 if p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0")
    assert kubectl("logs", rank0["metadata"]["name"], "-n", "llm").stdout.splitlines()[-1] == str(SUMMARY)
    kubectl("wait", "--for=condition=Failed", "trainjob/train-nowhere", "-n", "llm", "--timeout=30s")
    failed = next(c for c in get(kubectl, "trainjob", "train-nowhere", "-n", "llm")["status"]["conditions"])
    assert failed["reason"] == "TrainingRuntimeNotSupported"


def rayjob(name, annotations, workers=1):
    template = {"spec": {"containers": [{"name": "ray-head", "image": "quay.io/rhoai/ray:2.35.0-py311-cu121",
                                         "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}
    return {"apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": name, "namespace": "llm", "annotations": annotations},
            "spec": {"entrypoint": "python3 /mnt/entrypoint/entrypoint.py", "shutdownAfterJobFinishes": True,
                     "rayClusterSpec": {"rayVersion": "2.35.0",
                                        "headGroupSpec": {"rayStartParams": {"dashboard-host": "0.0.0.0"},
                                                          "template": template},
                                        "workerGroupSpecs": [{"groupName": "workers", "replicas": workers,
                                                              "minReplicas": workers, "maxReplicas": workers,
                                                              "rayStartParams": {}, "template": template}]}}}


def rayjob_state(obj):
    status = obj.get("status") or {}
    return "%s/%s" % (status.get("jobDeploymentStatus") or "", status.get("jobStatus") or "") if status else None


def test_rayjob_through_kuberay(sim, kubectl):
    kubectl("patch", "dsc", "default-dsc", "--type=merge", "-p",
            json.dumps({"spec": {"components": {"ray": {"managementState": "Managed"}}}}))
    kubectl("wait", "--for=condition=RayReady", "dsc/default-dsc", "--timeout=60s")
    kubectl("wait", "--for=condition=Established", "crd/rayjobs.ray.io", "--timeout=60s")
    kubectl("wait", "--for=condition=Available", "deployment/kuberay-operator", "-n", "redhat-ods-applications",
            "--timeout=60s")
    with recorded_states(sim, ("ray.io", "rayjobs"), "bench", rayjob_state) as states:
        apply(kubectl, rayjob("bench", {PREFIX + "log": "iperf Done.\nSCRIPT SUCCEEDED", PREFIX + "duration-s": "20"}),
              rayjob("bench-bad", {PREFIX + "fail": "ValueError: no GPU"}))
        kubectl("wait", "--for=jsonpath={.status.jobDeploymentStatus}=Complete", "rayjob/bench", "-n", "llm",
                "--timeout=90s")
    # the rollout KubeRay goes through: the cluster first, then the submitter, the Ray job's own states,
    # and SUCCEEDED seen while the deployment is still Running (until the submitter Job completes)
    assert states == ["Initializing/", "Running/", "Running/PENDING", "Running/RUNNING", "Running/SUCCEEDED",
                      "Complete/SUCCEEDED"], states
    status = get(kubectl, "rayjob", "bench", "-n", "llm")["status"]
    cluster_name = status["rayClusterName"]
    assert cluster_name.startswith("bench-") and status["jobId"].startswith("bench-")
    assert status["dashboardURL"] == "%s-head-svc.llm.svc.cluster.local:8265" % cluster_name
    assert (status["succeeded"], status["failed"], status["message"]) == (1, 0, "Job finished successfully.")
    assert status["rayClusterStatus"]["state"] == "ready" and status["endTime"]
    log = kubectl("logs", "job/bench", "-n", "llm").stdout
    assert "Job '%s' submitted successfully" % status["jobId"] in log and log.rstrip().endswith("SCRIPT SUCCEEDED")
    submitter = get(kubectl, "job", "bench", "-n", "llm")
    container = submitter["spec"]["template"]["spec"]["containers"][0]
    assert container["name"] == "ray-job-submitter" and submitter["spec"]["backoffLimit"] == 2
    assert "ray job submit --address http://%s --no-wait" % status["dashboardURL"] in container["args"][0]
    # shutdownAfterJobFinishes: the cluster is deleted, the submitter Job kept for its logs
    kubectl("wait", "--for=delete", "raycluster/" + cluster_name, "-n", "llm", "--timeout=30s")
    kubectl("wait", "--for=jsonpath={.status.jobDeploymentStatus}=Failed", "rayjob/bench-bad", "-n", "llm",
            "--timeout=90s")
    bad = get(kubectl, "rayjob", "bench-bad", "-n", "llm")["status"]
    assert (bad["jobStatus"], bad["reason"], bad["failed"]) == ("FAILED", "AppFailed", 1)
    assert "ValueError: no GPU" in bad["message"]


def test_raycluster_status_as_kuberay_writes_it(sim, kubectl):
    spec = rayjob("x", {}, workers=2)["spec"]["rayClusterSpec"]
    with recorded_states(sim, ("ray.io", "rayclusters"), "standalone",
                         lambda o: ((o.get("status") or {}).get("state", ""), next(
                             (c["status"] for c in (o.get("status") or {}).get("conditions") or ()
                              if c["type"] == "RayClusterProvisioned"), None))) as states:
        apply(kubectl, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
                        "metadata": {"name": "standalone", "namespace": "llm"}, "spec": spec})
        kubectl("wait", "--for=jsonpath={.status.state}=ready", "raycluster/standalone", "-n", "llm", "--timeout=60s")
    assert states == [("", None), ("", "False"), ("ready", "True")], states
    status = get(kubectl, "raycluster", "standalone", "-n", "llm")["status"]
    assert (status["desiredWorkerReplicas"], status["readyWorkerReplicas"], status["availableWorkerReplicas"]) == (2, 2, 2)
    assert (status["desiredCPU"], status["desiredMemory"], status["desiredGPU"]) == ("3", "6Gi", "0")
    assert status["head"]["serviceName"] == "standalone-head-svc" and status["head"]["podIP"] == status["head"]["serviceIP"]
    assert status["endpoints"]["dashboard"] == "8265"
    pods = get(kubectl, "pods", "-n", "llm", "-l", "ray.io/cluster=standalone")["items"]
    assert sorted(p["metadata"]["labels"]["ray.io/node-type"] for p in pods) == ["head", "worker", "worker"]
    head = next(p for p in pods if p["metadata"]["labels"]["ray.io/node-type"] == "head")
    assert head["metadata"]["name"].startswith("standalone-head-")
    assert "ray start --head --block --dashboard-host=0.0.0.0" in head["spec"]["containers"][0]["args"][0]
    conditions = {c["type"]: c["reason"] for c in status["conditions"]}
    assert conditions["HeadPodReady"] == "HeadPodRunningAndReady"
    assert conditions["RayClusterProvisioned"] == "AllPodRunningAndReadyFirstTime"


def dspa(name, **spec):
    body = {"dspVersion": "v2",
            "database": {"mariaDB": {"deploy": True, "pipelineDBName": "mlpipeline", "pvcSize": "10Gi",
                                     "username": "mlpipeline"}},
            "objectStorage": {"minio": {"image": "quay.io/opendatahub/minio:RELEASE.2019-08-14T20-37-41Z-license-compliance"}}}
    body.update(spec)
    return {"apiVersion": "datasciencepipelinesapplications.opendatahub.io/v1", "kind": "DataSciencePipelinesApplication",
            "metadata": {"name": name, "namespace": "llm"}, "spec": body}


def dspa_state(obj):
    conditions = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or ()}
    if not conditions:
        return None
    types = ("DatabaseAvailable", "APIServerReady", "MLMDProxyReady", "Ready")
    return tuple("%s=%s" % (t, conditions[t]["reason"]) for t in types if t in conditions) + (conditions["Ready"]["status"],)


def test_dspa_through_the_data_science_pipelines_operator(sim, kubectl):
    kubectl("patch", "dsc", "default-dsc", "--type=merge", "-p",
            json.dumps({"spec": {"components": {"datasciencepipelines": {"managementState": "Managed"}}}}))
    kubectl("wait", "--for=condition=DataSciencePipelinesReady", "dsc/default-dsc", "--timeout=60s")
    kubectl("wait", "--for=condition=Established",
            "crd/datasciencepipelinesapplications.datasciencepipelinesapplications.opendatahub.io", "--timeout=60s")
    kubectl("wait", "--for=condition=Available", "deployment/data-science-pipelines-operator-controller-manager",
            "-n", "redhat-ods-applications", "--timeout=60s")
    with recorded_states(sim, ("datasciencepipelinesapplications.opendatahub.io", "datasciencepipelinesapplications"),
                         "sample", dspa_state) as states:
        apply(kubectl, dspa("sample"), dspa("old", dspVersion="v1"))
        kubectl("wait", "--for=condition=Ready", "dspa/sample", "-n", "llm", "--timeout=120s")
    # the database first (connection refused while mariadb starts), then the components deploying, MLMD
    # waiting once for the service-ca's secret, then ready
    assert states[0][0] == "DatabaseAvailable=FailingToDeploy" and states[0][-1] == "False", states
    assert any("APIServerReady=Deploying" in s for s in states), states
    assert any("MLMDProxyReady=FailingToDeploy" in s for s in states), states
    assert states[-1] == ("DatabaseAvailable=DatabaseAvailable", "APIServerReady=MinimumReplicasAvailable",
                          "MLMDProxyReady=MinimumReplicasAvailable", "Ready=MinimumReplicasAvailable", "True"), states
    status = get(kubectl, "dspa", "sample", "-n", "llm")["status"]
    assert [c["type"] for c in status["conditions"]] == [
        "DatabaseAvailable", "ObjectStoreAvailable", "APIServerReady", "PersistenceAgentReady", "ScheduledWorkflowReady",
        "WorkflowControllerReady", "MLMDProxyReady", "WebhookReady", "ManagedPipelineValid", "Ready"]
    by_type = {c["type"]: c for c in status["conditions"]}
    assert by_type["MLMDProxyReady"]["message"] == "Component [ds-pipeline-scheduledworkflow-sample] is minimally available."
    assert (by_type["WebhookReady"]["status"], by_type["WebhookReady"]["reason"]) == ("False", "NotApplicable")
    assert by_type["Ready"]["message"] == "All components are ready."
    assert status["components"]["apiServer"]["url"] == "https://ds-pipeline-sample.llm.svc.cluster.local:8443"
    assert status["components"]["apiServer"]["externalUrl"].startswith("https://ds-pipeline-sample-llm.")
    deployments = {d["metadata"]["name"] for d in get(kubectl, "deployments", "-n", "llm", "-l", "dspa=sample")["items"]}
    assert deployments == {"mariadb-sample", "minio-sample", "ds-pipeline-sample", "ds-pipeline-persistenceagent-sample",
                           "ds-pipeline-scheduledworkflow-sample", "ds-pipeline-workflow-controller-sample",
                           "ds-pipeline-metadata-grpc-sample", "ds-pipeline-metadata-envoy-sample"}
    kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type=='Ready')].reason}=UnsupportedVersion", "dspa/old",
            "-n", "llm", "--timeout=30s")
    old = {c["type"]: c for c in get(kubectl, "dspa", "old", "-n", "llm")["status"]["conditions"]}
    assert old["Ready"]["message"].startswith("unsupported DSP version v1 detected.")


HELLO_WORLD = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "pipelines_run_kfp_notebook", "files",
                           "notebooks", "hello-world", "pipeline.yaml")
KFP = "/api/v1/namespaces/llm/services/https:ds-pipeline-sample:8888/proxy/apis/v2beta1/"


def kfp(http, path, body=None, expect=200):
    status, _headers, document = http("GET" if body is None else "POST", KFP + path, body)
    assert status == expect, (status, document)
    return document


def upload(http, path, content):
    boundary = "kubesim-test-boundary"
    body = (("--%s\r\nContent-Disposition: form-data; name=\"uploadfile\"; filename=\"pipeline.yaml\"\r\n"
             "Content-Type: application/octet-stream\r\n\r\n" % boundary).encode() + content
            + ("\r\n--%s--\r\n" % boundary).encode())
    return http("POST", KFP + path, body, content_type="multipart/form-data; boundary=" + boundary)


def test_kfp_runs_become_argo_workflows(sim, kubectl, http):
    """After the DSPA above: KFP's v2beta1 API through the service proxy; a run's Argo Workflow runs a pod per
    task in the DAG's order; the persistence agent brings the run PENDING -> RUNNING -> SUCCEEDED."""
    with open(HELLO_WORLD, encoding="utf-8") as handle:
        assert yaml.safe_load(handle)["pipelineInfo"]["name"] == "hello-world"
    assert kfp(http, "healthz")["pipeline_store"] == "database"
    status, _headers, plain = http("GET", KFP.replace("https:", "") + "healthz")
    assert status == 400 and "HTTP request to an HTTPS server" in plain, plain
    with open(HELLO_WORLD, "rb") as handle:
        raw = handle.read()
    status, _headers, pipeline = upload(http, "pipelines/upload?name=hello", raw)
    assert status == 200 and pipeline["name"] == "hello", pipeline
    status, _headers, again = upload(http, "pipelines/upload?name=hello", raw)
    assert status == 409 and "already exists" in again["error_message"], again
    status, _headers, broken = upload(http, "pipelines/upload?name=broken", b"pipelineInfo: {name: x}\n")
    assert status == 400 and "root.dag has no tasks" in broken["error_message"], broken
    status, _headers, second = upload(http, "pipelines/upload_version?name=v2&pipelineid=" + pipeline["pipeline_id"], raw)
    assert status == 200 and second["pipeline_id"] == pipeline["pipeline_id"], second
    unknown = kfp(http, "experiments", {"display_name": "x", "colour": "red"}, expect=400)
    assert unknown["code"] == 3 and 'unknown field "colour"' in unknown["message"], unknown
    versions = kfp(http, "pipelines/%s/versions" % pipeline["pipeline_id"])["pipeline_versions"]
    assert [v["name"] for v in versions] == ["hello", "v2"]
    version = versions[0]
    experiment = kfp(http, "experiments", {"display_name": "exp-hello"})
    found = kfp(http, "experiments?filter=" + urllib.parse.quote(json.dumps(
        {"predicates": [{"key": "display_name", "operation": "EQUALS", "string_value": "exp-hello"}]})))
    assert [e["experiment_id"] for e in found["experiments"]] == [experiment["experiment_id"]]
    run = kfp(http, "runs", {"display_name": "hello-run0", "experiment_id": experiment["experiment_id"],
                             "pipeline_version_reference": {"pipeline_id": pipeline["pipeline_id"],
                                                            "pipeline_version_id": version["pipeline_version_id"]}})
    assert run["state"] == "PENDING" and run["finished_at"] == "1970-01-01T00:00:00Z"
    workflows = get(kubectl, "workflows.argoproj.io", "-n", "llm", "-l", "pipeline/runid=" + run["run_id"])["items"]
    assert len(workflows) == 1
    name = workflows[0]["metadata"]["name"]
    assert name.startswith("hello-world-")
    assert workflows[0]["metadata"]["annotations"]["pipelines.kubeflow.org/run_name"] == "hello-run0"
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "workflow.argoproj.io/" + name, "-n", "llm",
            "--timeout=90s")
    status = get(kubectl, "workflow.argoproj.io", name, "-n", "llm")["status"]
    nodes = status["nodes"]
    root = next(n for n in nodes.values() if n["templateName"] == "root")
    tasks = {n["displayName"]: n for n in nodes.values() if n["type"] == "Pod"}
    assert sorted(tasks) == ["stage1", "stage2", "stage2-2", "stage2-3", "stage3"]
    assert all(n["phase"] == "Succeeded" for n in tasks.values()) and status["progress"] == "5/5"
    # the DAG's order: the middle stages start once stage1 finished, stage3 once all of them did
    assert all(tasks[m]["startedAt"] >= tasks["stage1"]["finishedAt"] for m in ("stage2", "stage2-2", "stage2-3"))
    assert tasks["stage3"]["startedAt"] >= max(tasks[m]["finishedAt"] for m in ("stage2", "stage2-2", "stage2-3"))
    assert root["startedAt"] <= tasks["stage1"]["startedAt"]
    pods = get(kubectl, "pods", "-n", "llm", "-l", "workflows.argoproj.io/workflow=" + name)["items"]
    assert len(pods) == 5 and all(p["metadata"]["name"].startswith(name + "-system-container-impl-") for p in pods)
    done = get(kubectl, "workflow.argoproj.io", name, "-n", "llm")["metadata"]["labels"]
    assert done["workflows.argoproj.io/completed"] == "true" and done["workflows.argoproj.io/phase"] == "Succeeded"
    assert done["pipeline/persistedFinalState"] == "true"
    finished = kfp(http, "runs/" + run["run_id"])
    assert finished["state"] == "SUCCEEDED"
    assert [h["state"] for h in finished["state_history"]] == ["PENDING", "RUNNING", "SUCCEEDED"]
    assert finished["finished_at"] == status["finishedAt"]
    # a failing task: the workflow Failed once nothing runs, the tasks after it never started, the run FAILED
    sim.image_behaviours.add("*/ubi9/python-311:*", outcome="Failed", **{"exit-code": "3"})
    try:
        bad = kfp(http, "runs", {"display_name": "hello-bad", "pipeline_version_reference": {
            "pipeline_id": pipeline["pipeline_id"], "pipeline_version_id": version["pipeline_version_id"]}})
        bad_name = get(kubectl, "workflows.argoproj.io", "-n", "llm", "-l",
                       "pipeline/runid=" + bad["run_id"])["items"][0]["metadata"]["name"]
        kubectl("wait", "--for=jsonpath={.status.phase}=Failed", "workflow.argoproj.io/" + bad_name, "-n", "llm",
                "--timeout=60s")
    finally:
        sim.image_behaviours.clear()
    bad_status = get(kubectl, "workflow.argoproj.io", bad_name, "-n", "llm")["status"]
    assert bad_status["progress"] == "0/5" and "message" not in bad_status
    assert {n["displayName"]: n.get("message") for n in bad_status["nodes"].values() if n["type"] == "Pod"} == {
        "stage1": "Error (exit code 3)"}
    assert kfp(http, "runs/" + bad["run_id"])["state"] == "FAILED"
    # the default experiment took the run without one
    assert "Default" in {e["display_name"] for e in kfp(http, "experiments")["experiments"]}
