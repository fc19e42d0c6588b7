"""Clusters as they really behave (issue 44): which Gateway API controllers run, and MIG GPUs.

- A GatewayClass is only answered by a controller the profile runs (openshift:
  ``openshift.io/gateway-controller/v1``); any other class, its Gateways and their routes keep what the
  API server defaulted (gateway-api apis/v1/gatewayclass_types.go, gateway_types.go).
- On a MIG profile the MIG manager partitions the H100s (mig-parted's config-default.yaml) and the device
  plugin and GFD advertise the slices as the ClusterPolicy's ``spec.mig.strategy`` says
  (k8s-device-plugin internal/lm/mig-strategy.go).
"""

import copy
import os
import time

import pytest
import yaml

from kube_fixtures import kubesim_cluster
from kubesim import apis
from kubesim.controllers.nfd import label_node_features

GW = "gateway.networking.k8s.io/v1"
CLASSES = ("gateway.networking.k8s.io", "gatewayclasses")
GATEWAYS = ("gateway.networking.k8s.io", "gateways")
ROUTES = ("gateway.networking.k8s.io", "httproutes")
POOLS = ("inference.networking.k8s.io", "inferencepools")
NODES = ("", "nodes")
# the CRD's default status (apis/v1/gatewayclass_types.go:68, gateway_types.go:48)
PENDING = {"lastTransitionTime": "1970-01-01T00:00:00Z", "message": "Waiting for controller", "reason": "Pending",
           "status": "Unknown"}


def eventually(read, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def create(sim, api_version, kind, body, namespace=None):
    return sim.cluster.create(sim.cluster.resource(api_version, kind), body, namespace)


def gateway_objects(sim, suffix, controller):
    create(sim, GW, "GatewayClass", {"metadata": {"name": "class-" + suffix}, "spec": {"controllerName": controller}})
    create(sim, GW, "Gateway", {"metadata": {"name": "gw-" + suffix, "namespace": "default"},
                                "spec": {"gatewayClassName": "class-" + suffix,
                                         "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}, "default")
    create(sim, "v1", "Service", {"metadata": {"name": "svc-" + suffix, "namespace": "default"},
                                  "spec": {"ports": [{"port": 80}]}}, "default")
    create(sim, GW, "HTTPRoute", {"metadata": {"name": "route-" + suffix, "namespace": "default"},
                                  "spec": {"parentRefs": [{"name": "gw-" + suffix}],
                                           "rules": [{"backendRefs": [{"name": "svc-" + suffix, "port": 80}]}]}},
               "default")


def conditions(obj):
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or ()}


@pytest.fixture(scope="module")
def openshift():
    with kubesim_cluster(profile="openshift", time_scale=50, pod_start_delay=0.05) as sim:
        yield sim


def test_a_gateway_class_of_the_profile_s_controller_is_accepted_and_its_gateway_programmed(openshift):
    sim = openshift
    gateway_objects(sim, "served", "openshift.io/gateway-controller/v1")
    store = sim.cluster.store
    gateway = eventually(lambda: (conditions(store.get(GATEWAYS, "default", "gw-served")).get("Programmed") or {})
                         .get("status") == "True" and store.get(GATEWAYS, "default", "gw-served"))
    assert gateway, store.get(GATEWAYS, "default", "gw-served")
    accepted = conditions(store.get(CLASSES, "", "class-served"))["Accepted"]
    assert (accepted["status"], accepted["reason"], accepted["message"]) == (
        "True", "Accepted", "Handled by openshift.io/gateway-controller/v1")
    route = eventually(lambda: (store.get(ROUTES, "default", "route-served").get("status") or {}).get("parents"))
    assert [p["controllerName"] for p in route] == ["openshift.io/gateway-controller/v1"]


def test_a_gateway_class_no_running_controller_claims_keeps_the_api_server_s_default(openshift):
    sim = openshift
    gateway_objects(sim, "orphan", "example.com/no-such-controller")
    # a served class created after it is answered: the controllers have looked at the orphan meanwhile
    gateway_objects(sim, "witness", "openshift.io/gateway-controller/v1")
    store = sim.cluster.store
    assert eventually(lambda: (conditions(store.get(GATEWAYS, "default", "gw-witness")).get("Programmed") or {})
                      .get("status") == "True")
    assert sim.wait_idle()
    assert store.get(CLASSES, "", "class-orphan")["status"] == {"conditions": [dict(PENDING, type="Accepted")]}
    assert store.get(GATEWAYS, "default", "gw-orphan")["status"] == {
        "conditions": [dict(PENDING, type="Accepted"), dict(PENDING, type="Programmed")]}
    assert not (store.get(ROUTES, "default", "route-orphan").get("status") or {}).get("parents")


def test_an_inference_pool_behind_an_unserved_gateway_has_no_parent(openshift):
    sim = openshift
    sim.install_addon("kserve")
    gateway_objects(sim, "pool", "example.com/no-such-controller")
    create(sim, "inference.networking.k8s.io/v1", "InferencePool", {
        "metadata": {"name": "pool", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "targetPorts": [{"number": 8000}],
                 "endpointPickerRef": {"name": "epp", "port": {"number": 9002}}}}, "default")
    create(sim, GW, "HTTPRoute", {"metadata": {"name": "to-pool", "namespace": "default"},
                                  "spec": {"parentRefs": [{"name": "gw-pool"}], "rules": [{"backendRefs": [
                                      {"group": "inference.networking.k8s.io", "kind": "InferencePool",
                                       "name": "pool"}]}]}}, "default")
    assert sim.wait_idle()
    assert not (sim.cluster.store.get(POOLS, "default", "pool").get("status") or {}).get("parents")
    assert not (sim.cluster.store.get(ROUTES, "default", "to-pool").get("status") or {}).get("parents")


def test_a_gateway_class_whose_parameters_ref_names_no_object_is_refused_until_the_object_exists(openshift):
    """gatewayclass_types.go GatewayClassReasonInvalidParameters: a parametersRef naming a nonexistent object (or
    a kind the cluster does not serve) makes the class Accepted=False; its Gateways are not provisioned."""
    sim = openshift
    store = sim.cluster.store
    served = "openshift.io/gateway-controller/v1"
    create(sim, GW, "GatewayClass", {"metadata": {"name": "class-params"}, "spec": {
        "controllerName": served, "parametersRef": {"group": "", "kind": "ConfigMap", "name": "gw-params",
                                                    "namespace": "default"}}})
    create(sim, GW, "GatewayClass", {"metadata": {"name": "class-kind"}, "spec": {
        "controllerName": served, "parametersRef": {"group": "example.com", "kind": "Params", "name": "p"}}})
    create(sim, GW, "Gateway", {"metadata": {"name": "gw-params", "namespace": "default"},
                                "spec": {"gatewayClassName": "class-params",
                                         "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}, "default")
    refused = eventually(lambda: conditions(store.get(CLASSES, "", "class-params")).get("Accepted", {}).get(
        "status") == "False" and conditions(store.get(CLASSES, "", "class-params"))["Accepted"])
    assert refused, store.get(CLASSES, "", "class-params")["status"]
    assert (refused["reason"], refused["message"], refused["observedGeneration"]) == (
        "InvalidParameters", "ConfigMap default/gw-params not found", 1)
    unsupported = eventually(lambda: conditions(store.get(CLASSES, "", "class-kind"))["Accepted"]["status"] == "False"
                             and conditions(store.get(CLASSES, "", "class-kind"))["Accepted"])
    assert unsupported, store.get(CLASSES, "", "class-kind")["status"]
    assert (unsupported["status"], unsupported["reason"], unsupported["message"]) == (
        "False", "InvalidParameters", "parametersRef kind Params.example.com is not supported")
    assert sim.wait_idle()
    assert store.get(GATEWAYS, "default", "gw-params")["status"] == {
        "conditions": [dict(PENDING, type="Accepted"), dict(PENDING, type="Programmed")]}
    # the ConfigMap created: the class is accepted and its Gateway programmed
    create(sim, "v1", "ConfigMap", {"metadata": {"name": "gw-params", "namespace": "default"}, "data": {}}, "default")
    accepted = eventually(lambda: conditions(store.get(CLASSES, "", "class-params"))["Accepted"]["status"] == "True")
    assert accepted, store.get(CLASSES, "", "class-params")["status"]
    assert eventually(lambda: (conditions(store.get(GATEWAYS, "default", "gw-params")).get("Programmed") or {})
                      .get("status") == "True"), store.get(GATEWAYS, "default", "gw-params")["status"]


def test_vanilla_runs_no_gateway_controller():
    with kubesim_cluster(profile="vanilla", addons=["gateway-api"], time_scale=50) as sim:
        create(sim, GW, "GatewayClass", {"metadata": {"name": "openshift"},
                                         "spec": {"controllerName": "openshift.io/gateway-controller/v1"}})
        assert sim.wait_idle()
        assert conditions(sim.cluster.store.get(CLASSES, "", "openshift"))["Accepted"]["reason"] == "Pending"


# -- MIG ---------------------------------------------------------------------------------------------------

def node(sim, name="worker-gpu-0"):
    return sim.cluster.store.get(NODES, "", name)


def nvidia(obj):
    return {k: v for k, v in obj["metadata"]["labels"].items() if k.startswith("nvidia.com/")}


def gpu_resources(obj):
    return {k: v for k, v in obj["status"]["allocatable"].items() if k.startswith("nvidia.com/")}


def test_gpu_ready_on_the_mixed_profile_advertises_each_mig_profile_as_its_own_resource():
    with kubesim_cluster(profile="openshift-mig-mixed", addons=["gpu-ready"]) as sim:
        gpu = node(sim)
        # all-balanced on an H100 80GB: 2 x 1g.10gb, 2g.20gb, 3g.40gb per GPU, 8 GPUs
        assert gpu_resources(gpu) == {"nvidia.com/mig-1g.10gb": "16", "nvidia.com/mig-2g.20gb": "8",
                                      "nvidia.com/mig-3g.40gb": "8"}
        labels = nvidia(gpu)
        assert labels["nvidia.com/mig.strategy"] == "mixed" and labels["nvidia.com/mig.config.state"] == "success"
        assert labels["nvidia.com/mig-1g.10gb.count"] == "16"
        assert labels["nvidia.com/mig-3g.40gb.product"] == "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb"
        assert labels["nvidia.com/mig-2g.20gb.slices.gi"] == "2" and labels["nvidia.com/mig-1g.10gb.memory"] == "10240"
        # the full GPUs' labels stay, without sharing (NewGPUResourceLabelerWithoutSharing: replicas 0)
        full = (labels["nvidia.com/gpu.count"], labels["nvidia.com/gpu.product"], labels["nvidia.com/gpu.replicas"])
        assert full == ("8", "NVIDIA-H100-80GB-HBM3", "0")
        assert labels["nvidia.com/mig.capable"] == "true"
        assert "nvidia.com/gpu" not in gpu_resources(node(sim, "worker-0"))


def test_gpu_ready_on_the_single_profile_advertises_the_slices_as_nvidia_com_gpu():
    with kubesim_cluster(profile="openshift-mig-single", addons=["gpu-ready"]) as sim:
        gpu = node(sim)
        assert gpu_resources(gpu) == {"nvidia.com/gpu": "56"}
        labels = nvidia(gpu)
        assert (labels["nvidia.com/gpu.product"], labels["nvidia.com/gpu.count"], labels["nvidia.com/gpu.memory"],
                labels["nvidia.com/mig.strategy"]) == ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "56", "10240", "single")
        assert not any(k.startswith("nvidia.com/mig-") for k in labels)


@pytest.fixture(scope="module")
def mixed():
    with kubesim_cluster(profile="openshift-mig-mixed", time_scale=50, pod_start_delay=0.05) as sim:
        apis.install_crds(sim.cluster, ["nvidia.com/ClusterPolicy"])
        for name in ("worker-0", "worker-gpu-0", "worker-gpu-1"):
            label_node_features(sim.cluster, name)
        yield sim


def csv_example_policy():
    """The ClusterPolicy of the GPU operator's CSV ``alm-examples`` (kubesim's certified-operators catalog)."""
    path = os.path.join(os.path.dirname(apis.HERE), "kubesim", "catalogs", "certified-operators.yaml")
    with open(path, encoding="utf-8") as handle:
        package = next(p for p in yaml.safe_load(handle)["packages"] if p["name"] == "gpu-operator-certified")
    return copy.deepcopy(next(e for e in package["almExamples"] if e["kind"] == "ClusterPolicy"))


def test_the_gpu_operator_partitions_then_advertises_mig_as_the_cluster_policy_s_strategy_says(mixed):
    sim = mixed
    policy = csv_example_policy()
    assert policy["spec"]["mig"] == {"strategy": "single"}
    policy["spec"]["mig"] = {"strategy": "mixed"}
    create(sim, "nvidia.com/v1", "ClusterPolicy", policy)
    assert eventually(lambda: gpu_resources(node(sim)).get("nvidia.com/mig-1g.10gb") == "16", timeout=30), \
        nvidia(node(sim))
    assert nvidia(node(sim))["nvidia.com/mig.config.state"] == "success"
    assert "nvidia.com/gpu" not in gpu_resources(node(sim))
    # the CSV's example says single: with several MIG profiles per GPU, GFD's MIG-INVALID and no resource
    sim.cluster.mutate(sim.cluster.resource_for_key(("nvidia.com", "clusterpolicies")), "", "gpu-cluster-policy",
                       lambda obj: obj["spec"].update(mig={"strategy": "single"}))
    assert eventually(lambda: nvidia(node(sim))["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3-MIG-INVALID",
                      timeout=30), nvidia(node(sim))
    assert gpu_resources(node(sim)) == {}
    assert nvidia(node(sim))["nvidia.com/gpu.count"] == "0"
    assert not any(k.startswith("nvidia.com/mig-") for k in nvidia(node(sim)))
