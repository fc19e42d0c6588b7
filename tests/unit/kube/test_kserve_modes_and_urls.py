"""Which deployment mode KServe gives an InferenceService on a cluster, and which URL a load targets."""

import json

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import kserve


def config(mode, namespace="redhat-ods-applications"):
    return {"metadata": {"name": "inferenceservice-config", "namespace": namespace},
            "data": {"deploy": json.dumps({"defaultDeploymentMode": mode})}}


def test_the_clusters_default_is_taken_when_the_user_says_nothing():
    got = kserve.resolve_deployment_mode(None, [config("RawDeployment")], knative_served=False)
    assert got == {"mode": "RawDeployment", "annotation": None, "source":
                   "the cluster's default (redhat-ods-applications/inferenceservice-config deploy.defaultDeploymentMode)"}
    # the new names of upstream KServe are the same modes
    assert kserve.resolve_deployment_mode(None, [config("Standard")], False)["mode"] == "RawDeployment"
    assert kserve.resolve_deployment_mode(None, [config("Knative")], True)["mode"] == "Serverless"


def test_serverless_without_knative_is_refused_in_one_line_naming_mode_source_and_what_is_missing():
    with pytest.raises(kserve.KServeError) as refused:
        kserve.resolve_deployment_mode(False, [config("RawDeployment")], knative_served=False)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("deployment mode Serverless (raw_deployment: false) needs Knative Serving, and this "
                              "cluster serves no serving.knative.dev/v1 Service")
    with pytest.raises(kserve.KServeError, match=r"deployment mode Serverless \(the cluster's default \(kserve/"):
        kserve.resolve_deployment_mode(None, [config("Serverless", "kserve")], knative_served=False)
    with pytest.raises(kserve.KServeError, match=r"Serverless \(KServe's default \(no inferenceservice-config"):
        kserve.resolve_deployment_mode(None, [], knative_served=False)
    # with Knative served it is what was asked
    assert kserve.resolve_deployment_mode(False, [], knative_served=True) == {
        "mode": "Serverless", "annotation": "Serverless", "source": "raw_deployment: false"}
    assert kserve.resolve_deployment_mode(True, [], knative_served=False)["annotation"] == "RawDeployment"


def test_a_configuration_that_cannot_be_read_is_not_a_default():
    broken = {"metadata": {"name": "inferenceservice-config", "namespace": "x"}, "data": {"deploy": "{not json"}}
    assert kserve.cluster_default_mode([broken, {"data": {}}]) == (None, None)


RAW = {"status": {"url": "http://granite-predictor.serving.svc.cluster.local",
                  "address": {"url": "http://granite-predictor.serving.svc.cluster.local"}}}
EXPOSED = {"status": {"url": "https://granite-serving.apps.example.com",
                      "address": {"url": "http://granite-predictor.serving.svc.cluster.local"}}}
LLMISVC = {"status": {"addresses": [{"url": "http://llm-kserve-workload-svc.serving.svc.cluster.local:8000"}]}}


def test_a_load_targets_the_external_url_from_outside_and_the_internal_one_from_inside():
    expected = {"url": "https://granite-serving.apps.example.com", "kind": "status.url", "note": ""}
    assert kserve.inference_url(EXPOSED) == expected
    inside = kserve.inference_url(EXPOSED, in_cluster=True)
    assert (inside["url"], inside["kind"]) == ("http://granite-predictor.serving.svc.cluster.local", "status.address.url")
    # OpenShift AI publishes the internal Service as status.url unless exposed: said, not hidden
    outside = kserve.inference_url(RAW)
    assert outside["url"] == "http://granite-predictor.serving.svc.cluster.local"
    assert "status.url is cluster-internal" in outside["note"] and "networking.kserve.io/visibility=exposed" in outside["note"]
    assert kserve.inference_url(RAW, in_cluster=True)["note"] == ""
    # an LLMInferenceService without a router has only addresses
    assert kserve.inference_url(LLMISVC)["kind"] == "status.addresses[0].url"
    assert kserve.inference_url({})["url"] == ""
