"""gpu_operator deploy_from_bundle on kubesim (OpenShift profile): the bundle's registry pod, Service and
grpc CatalogSource, then the operator subscribed from it and its CSV Succeeded; a bundle the registry cannot
serve fails naming the CatalogSource and its state, with the registry captured."""

import os

from conftest import read

BUNDLE = "registry.connect.redhat.com/nvidia/gpu-operator-bundle:v25.3.4"


def test_the_operator_from_its_bundle_and_a_bundle_that_cannot_be_served(toolbox, kube, tmp_path):
    unknown = toolbox("gpu_operator deploy_from_bundle", {"bundle": "quay.io/example/unknown-bundle:1", "timeout": 15},
                      tmp_path / "unknown")
    assert unknown.returncode != 0
    failure = " ".join(read(unknown.command_dir, "FAILURE").split())
    # the gRPC channel retries for ever: the wait takes its timeout and names the connection state
    assert "bundle quay.io/example/unknown-bundle:1: not ready after 15 s; last state: CatalogSource " \
           "nvidia-gpu-operator/gpu-operator-bundle: connection TRANSIENT_FAILURE" in failure, failure
    captured = os.path.join(unknown.command_dir, "failure_state", "nvidia-gpu-operator")
    assert "gpu-operator-bundle-registry" in read(captured, "pod.yaml")
    assert "TRANSIENT_FAILURE" in read(captured, "catalogsource.yaml")
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").delete(name="nvidia-gpu-operator")

    run = toolbox("gpu_operator deploy_from_bundle", {"bundle": BUNDLE, "timeout": 300}, tmp_path / "bundle")
    assert run.returncode == 0, run.output[-3000:]
    source = kube.get("CatalogSource", "gpu-operator-bundle", "nvidia-gpu-operator", "operators.coreos.com/v1alpha1")
    assert source["spec"]["address"] == "gpu-operator-bundle-registry.nvidia-gpu-operator.svc:50051"
    pod = kube.get("Pod", "gpu-operator-bundle-registry", "nvidia-gpu-operator")
    assert pod["spec"]["initContainers"][0]["command"][-2:] == ["-b", BUNDLE]
    subscription = kube.get("Subscription", "gpu-operator-certified", "nvidia-gpu-operator", "operators.coreos.com/v1alpha1")
    assert subscription["spec"]["source"] == "gpu-operator-bundle"
    csvs = kube.get("ClusterServiceVersion", namespace="nvidia-gpu-operator", api_version="operators.coreos.com/v1alpha1")
    assert [c["status"]["phase"] for c in csvs if c["metadata"]["name"].startswith("gpu-operator-certified")] == ["Succeeded"]
