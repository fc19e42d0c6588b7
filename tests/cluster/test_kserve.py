"""The reference's kserve commands end to end on kubesim (OpenShift profile with KServe's CRDs): a vLLM
ServingRuntime and InferenceService deployed and waited for, validated with real HTTP queries against a local
OpenAI-compatible server (the InferenceService's URL pointed at it), a model that fails to load named in one line,
the gRPC parameters refused, the state captured, everything removed."""

import re
import time

from conftest import read
from fake_openai import FakeServerThread

SIM_SETTINGS = dict(addons=["kserve"])
ISVC = "serving.kserve.io/v1beta1"


def test_a_model_deployed_validated_failing_and_removed(toolbox, kube, sim, tmp_path):
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "serving"}})
    args = {"namespace": "serving", "model_name": "granite-3b", "sr_name": "vllm-runtime",
            "sr_kserve_image": "quay.io/modh/vllm:rhoai-2.25", "inference_service_name": "granite", "raw_deployment": True,
            "gpu_count": 0, "delay": 1, "timeout": 120}
    nowhere = toolbox("kserve deploy_model", dict(args, namespace="nowhere"), tmp_path / "nowhere")
    assert nowhere.returncode != 0
    assert "namespace nowhere does not exist" in read(nowhere.command_dir, "FAILURE")

    deployed = toolbox("kserve deploy_model", args, tmp_path / "deploy")
    assert deployed.returncode == 0, deployed.output
    assert read(deployed.command_dir, "url.txt").strip() == "http://granite-predictor.serving.svc.cluster.local"
    runtime = kube.get("ServingRuntime", "vllm-runtime", "serving", "serving.kserve.io/v1alpha1")
    assert "--served-model-name=granite-3b" in runtime["spec"]["containers"][0]["args"]

    services = kube.dynamic.resources.get(api_version=ISVC, kind="InferenceService")
    with FakeServerThread(ttft=0.001, itl=0.001) as server:
        services.patch(name="granite", namespace="serving", content_type="application/merge-patch+json",
                       body={"metadata": {"annotations": {"kubesim.perfscale.io/url": server.url}}})
        for _attempt in range(50):
            if kube.get("InferenceService", "granite", "serving", ISVC)["status"].get("url") == server.url:
                break
            time.sleep(0.1)
        validated = toolbox("kserve validate_model", {"inference_service_names": ["granite"], "query_count": 3,
                                                      "namespace": "serving"}, tmp_path / "validate")
    assert validated.returncode == 0, validated.output
    answers = read(validated.command_dir, "answers.json")["granite"]["answers"]
    assert [a["status"] for a in answers] == [200, 200, 200] and all(a["text"].strip() for a in answers)

    grpc = toolbox("kserve validate_model", {"inference_service_names": ["granite"], "query_count": 1, "namespace": "serving",
                                             "method": "fmaas.GenerationService/Generate"}, tmp_path / "grpc")
    assert grpc.returncode != 0
    assert "method and proto are the reference's gRPC parameters" in " ".join(read(grpc.command_dir, "FAILURE").split())

    sim.faults.add("controller", controller="inferenceservice", match={"name": "broken"},
                   message="ValueError: The model's max seq len (32768) is larger than the KV cache")
    try:
        broken = toolbox("kserve deploy_model", dict(args, inference_service_name="broken", delete_others=False),
                         tmp_path / "broken")
    finally:
        sim.faults.remove()
    assert broken.returncode != 0
    assert "InferenceService serving/broken" in " ".join(read(broken.command_dir, "FAILURE").split())

    # delete_others (the default): the broken one goes, in one call that waits until it is gone
    again = toolbox("kserve deploy_model", args, tmp_path / "again")
    assert again.returncode == 0, again.output
    assert [isvc["metadata"]["name"] for isvc in kube.get("InferenceService", namespace="serving", api_version=ISVC)] \
        == ["granite"]

    state = toolbox("kserve capture_state", {"namespace": "serving"}, tmp_path / "state")
    assert state.returncode == 0, state.output
    assert "granite ready=True" in read(state.command_dir, "inferenceservices.txt")
    operators = toolbox("kserve capture_operators_state", {"raw_deployment": True}, tmp_path / "operators")
    assert operators.returncode == 0, operators.output

    removed = toolbox("kserve undeploy_model", {"namespace": "serving", "all": True}, tmp_path / "undeploy")
    assert removed.returncode == 0, removed.output
    assert kube.get("InferenceService", namespace="serving", api_version=ISVC) == []


def test_a_model_that_crashes_once_is_deployed_and_one_that_keeps_crashing_fails_naming_its_container(
        toolbox, kube, sim, tmp_path):
    """KServe's BlockedByFailedLoad is not final: a vLLM that crashes once (kubesim's crash-once image behaviour)
    is deployed when the kubelet's restart runs; one that crashes at every start fails once it restarted
    max_restarts times, naming the container and its last termination."""
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "flaky"}})
    sim.image_behaviours.add("quay.io/modh/vllm:crash-once", behaviour="crash-once")
    sim.image_behaviours.add("quay.io/modh/vllm:crash-loop", behaviour="crash-loop",
                             log="torch.OutOfMemoryError: CUDA out of memory")
    args = {"namespace": "flaky", "model_name": "granite-3b", "sr_name": "vllm-once", "inference_service_name": "once",
            "sr_kserve_image": "quay.io/modh/vllm:crash-once", "raw_deployment": True, "gpu_count": 0, "delay": 1,
            "timeout": 120, "delete_others": False}
    try:
        recovered = toolbox("kserve deploy_model", args, tmp_path / "once")
        looping = toolbox("kserve deploy_model", dict(args, sr_name="vllm-loop", inference_service_name="loop",
                                                      sr_kserve_image="quay.io/modh/vllm:crash-loop", max_restarts=2),
                          tmp_path / "loop")
    finally:
        sim.image_behaviours.clear()
    assert recovered.returncode == 0, recovered.output
    isvc = kube.get("InferenceService", "once", "flaky", ISVC)
    assert isvc["status"]["modelStatus"]["transitionStatus"] == "UpToDate"
    assert isvc["status"]["modelStatus"]["lastFailureInfo"]["reason"] == "ModelLoadFailed"   # it did crash
    assert looping.returncode != 0
    failure = " ".join(read(looping.command_dir, "FAILURE").split())
    # "model BlockedByFailedLoad: " once KServe has written the crash into modelStatus; its reconcile follows the
    # kubelet's restart, and the wait may look in between (seen on a loaded machine): the pod's crash is named either way
    assert re.search(r"InferenceService flaky/loop: (model BlockedByFailedLoad: )?container kserve-container of pod "
                     r"loop-predictor-", failure), failure
    # the wait fails at the first look that sees the container crashed with at least max_restarts restarts
    crashed = re.search(r"restarted (\d+) time\(s\), last terminated Error exit code 1: torch.OutOfMemoryError: CUDA "
                        r"out of memory; still crashing after (\d+) restarts \(max_restarts 2\)", failure)
    assert crashed and int(crashed.group(1)) == int(crashed.group(2)) >= 2, failure
