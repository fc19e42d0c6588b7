"""The reference's llmd commands end to end on kubesim (OpenShift profile with KServe's and the Gateway API's
CRDs): the inference gateway, an LLMInferenceService from a YAML file (a misspelt key refused before anything is
sent) routed through it, and its state captured."""

import yaml
from conftest import read

SIM_SETTINGS = dict(addons=["kserve", "gpu-ready"])
LLMISVC = {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "LLMInferenceService", "metadata": {"name": "from-file"},
           "spec": {"model": {"uri": "hf://Qwen/Qwen3-0.6B", "name": "Qwen/Qwen3-0.6B"}, "replicas": 2,
                    "router": {"route": {}, "gateway": {}, "scheduler": {}},
                    "template": {"containers": [{"name": "main", "image": "quay.io/vllm/vllm:0.11"}]}}}


def test_the_gateway_and_an_llm_inference_service_behind_it(toolbox, kube, tmp_path):
    gateway = toolbox("llmd deploy_gateway", {"delay": 1, "timeout": 60}, tmp_path / "gateway")
    assert gateway.returncode == 0, gateway.output
    assert read(gateway.command_dir, "address.txt").strip() == "openshift-ai-inference.openshift-ingress.gateway.kubesim.example.com"
    assert kube.get("GatewayClass", "data-science-gateway-class", api_version="gateway.networking.k8s.io/v1")

    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "llm"}})
    manifest = tmp_path / "llmisvc.yaml"
    misspelt = dict(LLMISVC, spec=dict(LLMISVC["spec"], replicass=2))
    manifest.write_text(yaml.safe_dump(misspelt))
    refused = toolbox("llmd deploy_llm_inference_service", {"name": "qwen", "namespace": "llm", "yaml_file": str(manifest)},
                      tmp_path / "refused")
    assert refused.returncode != 0
    assert "LLMInferenceService from-file: spec.replicass: unknown field" in read(refused.command_dir, "FAILURE")

    manifest.write_text(yaml.safe_dump(LLMISVC))
    deployed = toolbox("llmd deploy_llm_inference_service", {"name": "qwen", "namespace": "llm", "yaml_file": str(manifest),
                                                             "delay": 1, "timeout": 120}, tmp_path / "deploy")
    assert deployed.returncode == 0, deployed.output
    assert read(deployed.command_dir, "url.txt").strip() == \
        "http://openshift-ai-inference.openshift-ingress.gateway.kubesim.example.com/llm/qwen"
    assert kube.get("Deployment", "qwen-kserve", "llm", "apps/v1")["spec"]["replicas"] == 2

    state = toolbox("llmd capture_isvc_state", {"llmisvc_name": "qwen", "namespace": "llm"}, tmp_path / "state")
    assert state.returncode == 0, state.output
    assert "Ready=True" in read(state.command_dir, "conditions.txt")


def test_a_gateway_class_no_running_controller_claims_fails_fast_naming_it(toolbox, kube, tmp_path):
    """kubesim's openshift profile runs OpenShift's gateway controller only: a class of another controllerName stays
    Pending for ever (as on a real cluster), and the command says so after class_grace, not after its timeout."""
    import time
    started = time.monotonic()
    run = toolbox("llmd deploy_gateway", {"name": "unserved", "gateway_class": "unserved-class", "delay": 1,
                                          "timeout": 300, "class_grace": 8,
                                          "gateway_controller": "example.com/no-such-controller"}, tmp_path / "unserved")
    assert run.returncode != 0
    assert time.monotonic() - started < 120
    failure = " ".join(read(run.command_dir, "FAILURE").split())
    assert ("llmd deploy_gateway: GatewayClass unserved-class not Accepted within 8 s (class_grace): GatewayClass "
            "unserved-class (controllerName example.com/no-such-controller): Accepted=Unknown (Pending: Waiting for "
            "controller) - no controller named example.com/no-such-controller has answered") in failure, failure
    gateway = kube.get("Gateway", "unserved", "openshift-ingress", "gateway.networking.k8s.io/v1")
    assert {c["type"]: c["reason"] for c in gateway["status"]["conditions"]} == {"Accepted": "Pending",
                                                                                 "Programmed": "Pending"}


def test_a_guidellm_job_gives_llm_d_benchmark_reports(toolbox, sim, tmp_path):
    import json
    import os

    from helpers import REPO
    with open(os.path.join(REPO, "tests", "fixtures", "llm_load", "guidellm_report_v2.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    marker = "--- perfscale.topsail: guidellm report ---"
    sim.image_behaviours.add("ghcr.io/vllm-project/guidellm:*", log="Benchmarks completed\n%s\n%s" % (marker, json.dumps(report)),
                             **{"duration-s": "5"})
    args = {"endpoint_url": "http://openshift-ai-inference.openshift-ingress.gateway.kubesim.example.com/llm/qwen",
            "guidellm_args": ["--rate-type=synchronous", "--max-requests=20"], "timeout": 120}
    run = toolbox("llmd run_guidellm_benchmark", args, tmp_path / "ok")
    assert run.returncode == 0, run.output
    assert read(run.command_dir, "guidellm_report.json") == report
    converted = read(run.command_dir, "benchmark_report_guidellm_0.json")
    assert converted["version"] == "0.2.1"

    sim.image_behaviours.add("ghcr.io/vllm-project/guidellm:*", log="Traceback: ConnectError: connection refused",
                             outcome="Failed")
    failed = toolbox("llmd run_guidellm_benchmark", args, tmp_path / "failed")
    assert failed.returncode != 0
    failure = " ".join(read(failed.command_dir, "FAILURE").split())
    assert "Job default/guidellm-benchmark: Failed=True (BackoffLimitExceeded: " in failure, failure
    assert " / Traceback: ConnectError: connection refused (log in guidellm.log)" in failure, failure


def test_model_servers_and_an_inference_pool_with_its_plugin_configuration(toolbox, kube, tmp_path):
    if kube.get("Namespace", "pool") is None:
        kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "pool"}})
    if kube.get("Gateway", "openshift-ai-inference", "openshift-ingress", "gateway.networking.k8s.io/v1") is None:
        assert toolbox("llmd deploy_gateway", {"delay": 1}, tmp_path / "gateway").returncode == 0
    servers = toolbox("llmd deploy_model_server", {"name": "qwen", "namespace": "pool", "model": "Qwen/Qwen3-0.6B",
                                                   "replicas": 2, "prefill_replicas": 1, "delay": 1, "timeout": 120},
                      tmp_path / "servers")
    assert servers.returncode == 0, servers.output
    assert read(servers.command_dir, "deployments.txt").split() == ["qwen-decode", "2/2", "qwen-prefill", "1/1"]
    pod = [p for p in kube.get("Pod", namespace="pool") if p["metadata"]["labels"].get("llm-d.ai/role") == "prefill"][0]
    assert pod["metadata"]["labels"]["llm-d.ai/inferenceServing"] == "true"

    pool = toolbox("llmd deploy_inference_pool", {"name": "qwen-pool", "namespace": "pool", "delay": 1, "timeout": 60,
                                                  "plugin_config": "prefix-cache-plugins.yaml"}, tmp_path / "pool")
    assert pool.returncode == 0, pool.output
    config = kube.get("ConfigMap", "qwen-pool-epp-config", "pool")["data"]["plugins.yaml"]
    assert "prefix-cache-scorer" in config
    parents = read(pool.command_dir, "inferencepool.yaml")
    assert "openshift-ai-inference" in parents and "Accepted" in parents

    bad = toolbox("llmd deploy_inference_pool", {"name": "qwen-pool", "namespace": "pool", "plugin_config": "fast-plugins.yaml"},
                  tmp_path / "bad")
    assert bad.returncode != 0
    assert "plugin_config fast-plugins.yaml: expected default-plugins.yaml or prefix-cache-plugins.yaml" in " ".join(
        read(bad.command_dir, "FAILURE").split())
