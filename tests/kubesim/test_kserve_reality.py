"""KServe and Knative Serving on kubesim as upstream writes them (kserve/kserve @ aaac4e29, knative/serving @
69aa052f): a model that crashes once is BlockedByFailedLoad then Loaded, Available=False overrides a progress
deadline, Knative mode runs a Knative Service whose conditions KServe propagates, a revision never ready is
scaled to zero, the deployment modes and runtime messages are upstream's. In-process kubesim, time 50x."""

import time

import pytest

from kube_fixtures import kubesim_cluster, recorded_states

ISVCS = ("serving.kserve.io", "inferenceservices")
RUNTIMES = ("serving.kserve.io", "servingruntimes")
DEPLOYMENTS = ("apps", "deployments")
PODS = ("", "pods")
KSVC = ("serving.knative.dev", "services")
REVISIONS = ("serving.knative.dev", "revisions")
CONFIGURATIONS = ("serving.knative.dev", "configurations")
ROUTES = ("serving.knative.dev", "routes")
IMAGE = "quay.io/modh/vllm:%s"


def runtime(namespace, image):
    return {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "ServingRuntime",
            "metadata": {"name": "vllm-" + image.rsplit(":", 1)[1], "namespace": namespace},
            "spec": {"supportedModelFormats": [{"name": "vLLM", "autoSelect": False}],
                     "containers": [{"name": "kserve-container", "image": image}]}}


def isvc(name, namespace, mode, runtime_name, annotations=None, fmt="vLLM"):
    return {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": name, "namespace": namespace,
                         "annotations": dict({"serving.kserve.io/deploymentMode": mode}, **(annotations or {}))},
            "spec": {"predictor": {"model": {"modelFormat": {"name": fmt}, "runtime": runtime_name,
                                             "storageUri": "pvc://models/granite"}}}}


def create(sim, key, body):
    sim.cluster.create(sim.cluster.resource_for_key(key), body, body["metadata"].get("namespace"))


def wait_for(sim, key, namespace, name, check, timeout=30):
    deadline = time.monotonic() + timeout
    obj = None
    while time.monotonic() < deadline:
        obj = sim.cluster.store.get(key, namespace, name)
        if obj is not None and check(obj):
            return obj
        time.sleep(0.05)
    raise AssertionError("%s %s/%s: not as expected after %s s: %s" % (key[1], namespace, name, timeout,
                                                                         (obj or {}).get("status")))


def conditions(obj, *types):
    by_type = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or ()}
    return {t: (by_type[t]["status"], by_type[t].get("reason")) for t in types if t in by_type}


def cond_is(obj, ctype, status):
    return conditions(obj, ctype).get(ctype, (None,))[0] == status


def model_state(obj):
    if "modelStatus" not in (obj.get("status") or {}):
        return None
    model = obj["status"]["modelStatus"]
    return "%s/%s" % (model.get("transitionStatus"), (model.get("states") or {}).get("activeModelState"))


@pytest.fixture(scope="module")
def sim():
    with kubesim_cluster(profile="vanilla", addons=["kserve", "knative-serving"], time_scale=50,
                         pod_start_delay=0.1) as server:
        for tag in ("once", "loop", "fine"):
            create(server, RUNTIMES, runtime("default", IMAGE % tag))
        server.image_behaviours.add(IMAGE % "once", behaviour="crash-once")
        server.image_behaviours.add(IMAGE % "loop", behaviour="crash-loop")
        yield server


def test_a_model_that_crashes_once_is_blocked_by_failed_load_then_loaded(sim):
    """PropagateModelStatus: BlockedByFailedLoad while the kserve-container is in CrashLoopBackOff, then Loaded
    once the kubelet's restart runs, the failure kept in lastFailureInfo."""
    with recorded_states(sim, ISVCS, "once", model_state) as states:
        create(sim, ISVCS, isvc("once", "default", "Standard", "vllm-once"))
        done = wait_for(sim, ISVCS, "default", "once", lambda o: model_state(o) == "UpToDate/Loaded")
    assert states == ["InProgress/", "BlockedByFailedLoad/", "InProgress/", "UpToDate/Loaded"], states
    status = done["status"]
    assert conditions(done, "Ready", "PredictorReady") == {"Ready": ("True", None),
                                                           "PredictorReady": ("True", "NewReplicaSetAvailable")}
    assert status["deploymentMode"] == "Standard"
    failure = status["modelStatus"]["lastFailureInfo"]
    assert failure["reason"] == "ModelLoadFailed" and failure["exitCode"] == 1 and "CUDA error" in failure["message"]
    pod = next(p for p in sim.cluster.store.list(PODS, "default")[0]
               if p["metadata"]["labels"].get("serving.kserve.io/inferenceservice") == "once")
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 1


def test_a_model_that_crashes_at_every_start_stays_blocked_and_its_restarts_grow(sim):
    create(sim, ISVCS, isvc("loop", "default", "Standard", "vllm-loop"))

    def restarts(obj):
        pods = [p for p in sim.cluster.store.list(PODS, "default")[0]
                if p["metadata"]["labels"].get("serving.kserve.io/inferenceservice") == "loop"]
        return max([(p.get("status") or {}).get("containerStatuses", [{}])[0].get("restartCount") or 0
                    for p in pods] or [0])
    looping = wait_for(sim, ISVCS, "default", "loop",
                       lambda o: str(model_state(o)).startswith("BlockedByFailedLoad/") and restarts(o) >= 3,
                       timeout=40)
    assert conditions(looping, "PredictorReady")["PredictorReady"] == ("False", "MinimumReplicasUnavailable")


def test_available_false_overrides_a_progress_deadline_as_propagate_raw_status_does():
    """The Deployment past its deadline says Progressing=False ProgressDeadlineExceeded and Available=False
    MinimumReplicasUnavailable: KServe's PredictorReady says MinimumReplicasUnavailable; ReplicaFailure wins
    over both."""
    with kubesim_cluster(profile="vanilla", addons=["kserve"], time_scale=50, pod_start_delay=0.1,
                         disabled_controllers=["deployment"]) as sim:
        create(sim, RUNTIMES, runtime("default", IMAGE % "fine"))
        create(sim, ISVCS, isvc("stuck", "default", "RawDeployment", "vllm-fine"))
        wait_for(sim, DEPLOYMENTS, "default", "stuck-predictor", lambda o: True)

        def deployment_conditions(items):
            def write(obj):
                obj["status"] = {"observedGeneration": 1, "replicas": 1, "unavailableReplicas": 1, "conditions": [
                    dict(item, lastTransitionTime="2026-01-01T00:00:00Z", lastUpdateTime="2026-01-01T00:00:00Z")
                    for item in items]}
            sim.cluster.mutate(sim.cluster.resource_for_key(DEPLOYMENTS), "default", "stuck-predictor", write,
                               subresource="status")
        unavailable = {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                       "message": "Deployment does not have minimum availability."}
        deadline = {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                    "message": 'ReplicaSet "stuck-predictor-6d4b" has timed out progressing.'}
        deployment_conditions([unavailable, deadline])
        stuck = wait_for(sim, ISVCS, "default", "stuck",
                         lambda o: conditions(o, "PredictorReady").get("PredictorReady", (0, 0))[1] is not None)
        assert conditions(stuck, "PredictorReady", "IngressReady", "Ready") == {
            "PredictorReady": ("False", "MinimumReplicasUnavailable"),
            # the vanilla configuration creates an Ingress: not before the predictor is ready
            "IngressReady": ("False", "Predictor ingress not created"),
            "Ready": ("False", "Predictor ingress not created")}
        assert stuck["status"]["deploymentMode"] == "Standard"
        ingress = next(c for c in stuck["status"]["conditions"] if c["type"] == "IngressReady")
        assert "message" not in ingress
        # a stalled rollout beside an available one: the deadline is what KServe reports
        deployment_conditions([dict(unavailable, status="True", reason="MinimumReplicasAvailable",
                                    message="Deployment has minimum availability."), deadline])
        wait_for(sim, ISVCS, "default", "stuck",
                 lambda o: conditions(o, "PredictorReady")["PredictorReady"] == ("False", "ProgressDeadlineExceeded"))
        deployment_conditions([unavailable, deadline, {"type": "ReplicaFailure", "status": "True",
                                                       "reason": "FailedCreate", "message": "quota exceeded"}])
        wait_for(sim, ISVCS, "default", "stuck",
                 lambda o: conditions(o, "PredictorReady")["PredictorReady"] == ("False", "FailedCreate"))


def test_knative_mode_runs_a_knative_service_whose_conditions_kserve_propagates(sim):
    with recorded_states(sim, ISVCS, "serverless", lambda o: conditions(
            o, "PredictorReady", "PredictorRouteReady", "RoutesReady", "LatestDeploymentReady", "Ready")) as states:
        create(sim, ISVCS, isvc("serverless", "default", "Serverless", "vllm-fine"))
        done = wait_for(sim, ISVCS, "default", "serverless", lambda o: cond_is(o, "Ready", "True"))
    assert any(s.get("PredictorReady") == ("Unknown", "RevisionMissing") and
               s.get("RoutesReady") == ("Unknown", "PredictorRouteReady not ready") and
               s.get("LatestDeploymentReady") == ("Unknown", "PredictorConfigurationReady not ready")
               for s in states), states
    assert states[-1] == {"PredictorReady": ("True", None), "PredictorRouteReady": ("True", None),
                          "RoutesReady": ("True", None), "LatestDeploymentReady": ("True", None),
                          "Ready": ("True", None)}
    status = done["status"]
    assert status["deploymentMode"] == "Knative"
    assert status["components"]["predictor"]["latestReadyRevision"] == "serverless-predictor-00001"
    assert status["components"]["predictor"]["url"] == "http://serverless-predictor.default.example.com"
    ksvc = sim.cluster.store.get(KSVC, "default", "serverless-predictor")
    assert ksvc["metadata"]["ownerReferences"][0]["name"] == "serverless"
    assert conditions(ksvc, "ConfigurationsReady", "RoutesReady", "Ready") == {
        "ConfigurationsReady": ("True", None), "RoutesReady": ("True", None), "Ready": ("True", None)}
    revision = sim.cluster.store.get(REVISIONS, "default", "serverless-predictor-00001")
    assert conditions(revision, "ResourcesAvailable", "ContainerHealthy", "Ready") == {
        "ResourcesAvailable": ("True", None), "ContainerHealthy": ("True", None), "Ready": ("True", None)}
    route = sim.cluster.store.get(ROUTES, "default", "serverless-predictor")
    assert route["status"]["traffic"] == [{"revisionName": "serverless-predictor-00001", "latestRevision": True,
                                           "percent": 100}]
    assert sim.cluster.store.get(DEPLOYMENTS, "default", "serverless-predictor-00001-deployment") is not None
    assert sim.cluster.store.get(DEPLOYMENTS, "default", "serverless-predictor") is None   # no raw Deployment


def test_a_knative_revision_whose_container_crashes_once_fails_then_recovers(sim):
    def summary(obj):
        return conditions(obj, "ContainerHealthy", "Ready")
    with recorded_states(sim, REVISIONS, "kn-once-predictor-00001", summary) as revision, \
            recorded_states(sim, CONFIGURATIONS, "kn-once-predictor", lambda o: conditions(o, "Ready")) as config, \
            recorded_states(sim, ROUTES, "kn-once-predictor", lambda o: conditions(o, "AllTrafficAssigned")) as route, \
            recorded_states(sim, ISVCS, "kn-once", model_state) as model:
        create(sim, ISVCS, isvc("kn-once", "default", "Knative", "vllm-once"))
        wait_for(sim, ISVCS, "default", "kn-once", lambda o: model_state(o) == "UpToDate/Loaded")
    assert {"ContainerHealthy": ("False", "ExitCode1"), "Ready": ("False", "ExitCode1")} in revision
    assert revision[-1] == {"ContainerHealthy": ("True", None), "Ready": ("True", None)}
    assert {"Ready": ("False", "RevisionFailed")} in config and config[-1] == {"Ready": ("True", None)}
    assert {"AllTrafficAssigned": ("False", "RevisionMissing")} in route
    assert "BlockedByFailedLoad/" in model


def test_a_knative_revision_never_ready_is_scaled_to_zero_and_never_retried(sim):
    create(sim, ISVCS, isvc("never", "default", "Knative", "vllm-fine", annotations={
        "kubesim.perfscale.io/ready": "false", "serving.knative.dev/progress-deadline": "60s"}))
    revision = wait_for(sim, REVISIONS, "default", "never-predictor-00001",
                        lambda o: cond_is(o, "ResourcesAvailable", "False"), timeout=30)
    resources = next(c for c in revision["status"]["conditions"] if c["type"] == "ResourcesAvailable")
    assert (resources["reason"], resources["message"]) == ("ProgressDeadlineExceeded",
                                                           "Initial scale was never achieved")
    assert sim.cluster.store.get(DEPLOYMENTS, "default", "never-predictor-00001-deployment")["spec"]["replicas"] == 0
    gone = wait_for(sim, ISVCS, "default", "never", lambda o: str(model_state(o)).startswith("BlockedByFailedLoad/"))
    assert conditions(gone, "PredictorConfigurationReady")["PredictorConfigurationReady"] == ("False", "RevisionFailed")
    message = next(c for c in gone["status"]["conditions"] if c["type"] == "PredictorConfigurationReady")["message"]
    assert message == ('Revision "never-predictor-00001" failed with message: Initial scale was never achieved.')


def test_runtime_messages_and_a_runtime_created_after_its_inference_service():
    with kubesim_cluster(profile="vanilla", addons=["kserve"], time_scale=50, pod_start_delay=0.1) as sim:
        create(sim, ISVCS, isvc("early", "default", "Standard", "vllm-late"))
        early = wait_for(sim, ISVCS, "default", "early", lambda o: str(model_state(o)).startswith("InvalidSpec"))
        assert early["status"]["modelStatus"]["lastFailureInfo"] == {
            "reason": "RuntimeNotRecognized", "message": "Waiting for runtime to become available"}
        create(sim, RUNTIMES, dict(runtime("default", IMAGE % "late"), metadata={"name": "vllm-late",
                                                                                 "namespace": "default"}))
        wait_for(sim, ISVCS, "default", "early", lambda o: cond_is(o, "Ready", "True"))
        create(sim, ISVCS, isvc("wrong-format", "default", "Standard", "vllm-late", fmt="sklearn"))
        wrong = wait_for(sim, ISVCS, "default", "wrong-format", lambda o: str(model_state(o)).startswith("InvalidSpec"))
        assert wrong["status"]["modelStatus"]["lastFailureInfo"] == {
            "reason": "NoSupportingRuntime",
            "message": "Specified runtime does not support specified framework/version"}
        body = isvc("auto", "default", "Standard", None, fmt="onnx")
        del body["spec"]["predictor"]["model"]["runtime"]
        create(sim, ISVCS, body)
        auto = wait_for(sim, ISVCS, "default", "auto", lambda o: str(model_state(o)).startswith("InvalidSpec"))
        assert auto["status"]["modelStatus"]["lastFailureInfo"] == {
            "reason": "NoSupportingRuntime", "message": "No runtime found to support specified framework/version"}
