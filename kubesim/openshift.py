"""The ``openshift`` addon: OpenShift's APIs and the cluster objects a fresh OpenShift 4.19 has.

APIs: ClusterVersion, Infrastructure (schemas/crds), Ingress, OAuth, ClusterOperator,
MachineSet, Machine (CRDs, as on OpenShift); Route, Project (a view of Namespaces),
BuildConfig (with ``instantiate``), Build, ImageStream, User, Identity, Group
(aggregated APIs: no CRD object, as openshift-apiserver serves them).

Objects: ClusterVersion ``version`` (4.19.9, one Completed history entry, an
available update), Infrastructure ``cluster`` (AWS, ``infrastructureName``),
Ingress ``cluster`` (``apps.kubesim.example.com``), OAuth ``cluster``,
ClusterOperators, the ``openshift-*`` namespaces, the ``cluster-monitoring-config``
ConfigMap, Deployments ``oauth-openshift``, ``router-default``, ``image-registry``,
``prometheus-operator`` (simulated pods), and two MachineSets in
``openshift-machine-api`` whose Machines are the profile's worker nodes.
"""

import uuid

from kubesim import apis
from kubesim.controllers.openshift import (INFRA_NAME, VERSION, instantiate_build_config, machine_body, release_image,
                                           route_host_defaulter)
from kubesim.profiles import ensure

CRD_REFS = ["config.openshift.io/ClusterVersion", "config.openshift.io/Infrastructure", "config.openshift.io/Ingress",
            "config.openshift.io/OAuth", "config.openshift.io/ClusterOperator", "machine.openshift.io/MachineSet",
            "machine.openshift.io/Machine", "machineconfiguration.openshift.io/KubeletConfig",
            "machineconfiguration.openshift.io/MachineConfigPool", "operator.openshift.io/ClusterCSIDriver"]
AGGREGATED = ["route.openshift.io/Route", "build.openshift.io/BuildConfig", "build.openshift.io/Build",
              "image.openshift.io/ImageStream", "user.openshift.io/User", "user.openshift.io/Identity",
              "user.openshift.io/Group"]
NAMESPACES = ["openshift", "openshift-config", "openshift-cluster-csi-drivers", "openshift-config-managed", "openshift-machine-api",
              "openshift-monitoring", "openshift-user-workload-monitoring", "openshift-authentication",
              "openshift-ingress", "openshift-image-registry", "openshift-cluster-version", "openshift-console",
              "openshift-apiserver"]
CLUSTER_OPERATORS = ["authentication", "console", "dns", "image-registry", "ingress", "kube-apiserver", "machine-api",
                     "monitoring", "openshift-apiserver", "operator-lifecycle-manager"]
# the reasons of a settled operator where it does not write library-go's AsExpected ("" for none), as a real
# cluster's ClusterOperators show them (tests/fixtures/upstream/openshift/clusteroperator-success.yaml, the DNS
# operator's; monitoring/clusteroperator-success-rollout-done.yaml, the monitoring operator's SetRollOutDone)
OPERATOR_REASONS = {"dns": {"Degraded": "DNSNotDegraded", "Upgradeable": "DNSUpgradeable"},
                    "monitoring": {"Available": "RollOutDone", "Progressing": "", "Degraded": "", "Upgradeable": ""}}
DOMAIN = "apps.kubesim.example.com"
# (MachineSet suffix, instance type, nodes of the profile it owns)
MACHINE_SETS = [("worker-us-east-1a", "m6i.4xlarge", ["worker-0"]),
                ("gpu-us-east-1a", "g6e.12xlarge", ["worker-gpu-0", "worker-gpu-1"])]


def install_openshift(sim):
    cluster = sim.cluster
    apis.install_crds(cluster, CRD_REFS)
    for ref in AGGREGATED:
        apis.serve_api(cluster, ref)
    apis.serve_api(cluster, "project.openshift.io/Project", alias_of=("v1", "Namespace"),
                   verbs=["create", "delete", "get", "list", "patch", "update", "watch"])
    cluster.subresource_handlers[("build.openshift.io", "buildconfigs", "instantiate")] = instantiate_build_config
    if route_host_defaulter not in cluster.defaulters:
        cluster.defaulters.append(route_host_defaulter)
    for name in NAMESPACES:
        labels = {"openshift.io/cluster-monitoring": "true"} if name.startswith("openshift-") else {}
        ensure(cluster, "v1", "Namespace", {"metadata": {"name": name, "labels": labels,
                                                         "annotations": {"openshift.io/node-selector": ""}}})
    _cluster_objects(cluster)
    _machines(cluster)


def _cluster_objects(cluster):
    now = cluster.clock.timestamp()
    image = release_image(VERSION)
    ensure(cluster, "config.openshift.io/v1", "ClusterVersion", {
        "metadata": {"name": "version"},
        "spec": {"clusterID": str(uuid.uuid4()), "channel": "stable-4.19",
                 "upstream": "https://api.openshift.com/api/upgrades_info/v1/graph"},
        "status": {"desired": {"version": VERSION, "image": image, "channels": ["candidate-4.19", "fast-4.19", "stable-4.19"],
                               "url": "https://access.redhat.com/errata/RHSA-2025:0000"},
                   "history": [{"state": "Completed", "version": VERSION, "image": image, "startedTime": now,
                                "completionTime": now, "verified": False}],
                   "observedGeneration": 1, "versionHash": "kubesim", "capabilities": {},
                   "availableUpdates": [{"version": "4.19.10", "image": release_image("4.19.10"),
                                         "channels": ["candidate-4.19", "fast-4.19", "stable-4.19"]}],
                   "conditions": [
                       {"type": "Available", "status": "True", "lastTransitionTime": now,
                        "message": "Done applying %s" % VERSION},
                       {"type": "Failing", "status": "False", "lastTransitionTime": now},
                       {"type": "Progressing", "status": "False", "lastTransitionTime": now,
                        "message": "Cluster version is %s" % VERSION},
                       {"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": now},
                       {"type": "ImplicitlyEnabledCapabilities", "status": "False", "lastTransitionTime": now,
                        "reason": "AsExpected", "message": "Capabilities match configured spec"},
                       {"type": "ReleaseAccepted", "status": "True", "lastTransitionTime": now, "reason": "PayloadLoaded",
                        "message": "Payload loaded version=\"%s\" image=\"%s\" architecture=\"amd64\"" % (VERSION, image)}]}},
        keep_status=True)
    ensure(cluster, "config.openshift.io/v1", "Infrastructure", {
        "metadata": {"name": "cluster"},
        "spec": {"cloudConfig": {"name": ""}, "platformSpec": {"type": "AWS", "aws": {}}},
        "status": {"apiServerInternalURI": "https://api-int.kubesim.example.com:6443",
                   "apiServerURL": "https://api.kubesim.example.com:6443", "controlPlaneTopology": "HighlyAvailable",
                   "cpuPartitioning": "None", "etcdDiscoveryDomain": "", "infrastructureName": INFRA_NAME,
                   "infrastructureTopology": "HighlyAvailable", "platform": "AWS",
                   "platformStatus": {"type": "AWS", "aws": {"region": "us-east-1"}}}}, keep_status=True)
    ensure(cluster, "config.openshift.io/v1", "Ingress", {"metadata": {"name": "cluster"}, "spec": {"domain": DOMAIN}})
    ensure(cluster, "config.openshift.io/v1", "OAuth", {"metadata": {"name": "cluster"}, "spec": {}})
    for name in CLUSTER_OPERATORS:
        reasons = OPERATOR_REASONS.get(name, {})
        conditions = []
        for ctype, value in (("Available", "True"), ("Progressing", "False"), ("Degraded", "False"),
                             ("Upgradeable", "True")):
            condition = {"type": ctype, "status": value, "lastTransitionTime": now}
            reason = reasons.get(ctype, "AsExpected")
            if reason:
                condition["reason"] = reason
            conditions.append(condition)
        ensure(cluster, "config.openshift.io/v1", "ClusterOperator", {
            "metadata": {"name": name}, "spec": {},
            "status": {"versions": [{"name": "operator", "version": VERSION}], "conditions": conditions}},
            keep_status=True)
    for pool in ("master", "worker"):
        ensure(cluster, "machineconfiguration.openshift.io/v1", "MachineConfigPool", {
            "metadata": {"name": pool, "labels": {"pools.operator.machineconfiguration.openshift.io/%s" % pool: "",
                                                  "machineconfiguration.openshift.io/mco-built-in": ""}},
            "spec": {"machineConfigSelector": {"matchLabels": {"machineconfiguration.openshift.io/role": pool}},
                     "nodeSelector": {"matchLabels": {"node-role.kubernetes.io/%s" % pool: ""}}, "paused": False}})
    ensure(cluster, "v1", "ConfigMap", {"metadata": {"name": "cluster-monitoring-config", "namespace": "openshift-monitoring"},
                                        "data": {"config.yaml": ""}}, "openshift-monitoring")
    ensure(cluster, "v1", "Secret", {"metadata": {"name": "htpass-secret", "namespace": "openshift-config"},
                                     "type": "Opaque", "data": {}}, "openshift-config")
    for namespace, name, replicas in (("openshift-authentication", "oauth-openshift", 2),
                                      ("openshift-ingress", "router-default", 2),
                                      ("openshift-image-registry", "image-registry", 1),
                                      ("openshift-monitoring", "prometheus-operator", 1)):
        labels = {"app": name}
        ensure(cluster, "apps/v1", "Deployment", {
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "nodeSelector": {"node-role.kubernetes.io/master": ""} if name == "oauth-openshift" else {},
                         "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                                          "effect": "NoSchedule"}],
                         "containers": [{"name": name, "image": "quay.io/openshift/origin-%s:4.19" % name,
                                         "resources": {"requests": {"cpu": "10m", "memory": "50Mi"}}}]}}}}, namespace)


def _machines(cluster):
    namespace = "openshift-machine-api"
    for suffix, instance_type, nodes in MACHINE_SETS:
        owned = cluster.store.get(("", "nodes"), "", nodes[0])
        # the profile's instance type of these nodes (profiles.Profile.gpu_instance_type) when it has them
        instance_type = ((owned or {}).get("metadata", {}).get("labels") or {}).get(
            "node.kubernetes.io/instance-type", instance_type)
        name = "%s-%s" % (INFRA_NAME, suffix)
        role = "worker"
        selector = {"machine.openshift.io/cluster-api-cluster": INFRA_NAME,
                    "machine.openshift.io/cluster-api-machineset": name}
        machineset = ensure(cluster, "machine.openshift.io/v1beta1", "MachineSet", {
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"machine.openshift.io/cluster-api-cluster": INFRA_NAME},
                         "annotations": {"capacity.cluster-autoscaler.kubernetes.io/labels": "kubernetes.io/arch=amd64",
                                         "machine.openshift.io/memoryMb": "0", "machine.openshift.io/vCPU": "0"}},
            "spec": {"replicas": len(nodes), "selector": {"matchLabels": dict(selector)},
                     "template": {"metadata": {"labels": dict(selector, **{
                         "machine.openshift.io/cluster-api-machine-role": role,
                         "machine.openshift.io/cluster-api-machine-type": role})},
                         "spec": {"metadata": {"labels": {}},
                                  "providerSpec": {"value": {
                                      "apiVersion": "machine.openshift.io/v1beta1", "kind": "AWSMachineProviderConfig",
                                      "instanceType": instance_type, "placement": {"region": "us-east-1",
                                                                                   "availabilityZone": "us-east-1a"},
                                      "ami": {"id": "ami-0kubesim"}, "credentialsSecret": {"name": "aws-cloud-credentials"},
                                      "userDataSecret": {"name": "worker-user-data"},
                                      # as the installer writes an AWS MachineSet (openshift/installer
                                      # pkg/asset/machines/aws/machines.go): the owned tag, the subnet and
                                      # security groups by their Name tags
                                      "tags": [{"name": "kubernetes.io/cluster/" + INFRA_NAME, "value": "owned"}],
                                      "subnet": {"filters": [{"name": "tag:Name",
                                                              "values": [INFRA_NAME + "-subnet-private-us-east-1a"]}]},
                                      "securityGroups": [{"filters": [{"name": "tag:Name",
                                                                       "values": [INFRA_NAME + "-node"]}]}]}}}}}}, namespace)
        if machineset is None:
            continue  # a reloaded state: its Machines exist
        for node in nodes:
            body = machine_body(machineset, node, "Running")
            machine = ensure(cluster, "machine.openshift.io/v1beta1", "Machine", body, namespace, keep_status=True)
            if machine is None:
                continue

            def annotate(obj, machine=machine):
                obj["metadata"].setdefault("annotations", {})["machine.openshift.io/machine"] = \
                    "%s/%s" % (namespace, machine["metadata"]["name"])
            cluster.mutate(cluster.resource_for_key(("", "nodes")), "", node, annotate)
