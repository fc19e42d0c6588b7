"""OpenShift's kinds on the openshift profile through the real kubectl.

ClusterVersion updates (the cluster-version operator), MachineSets -> Machines ->
Nodes (the machine API), BuildConfig/Build/ImageStream, Route admission, Projects
as a view of Namespaces, OAuth roll-outs and user workload monitoring.
"""

import json

import pytest

from kube_fixtures import kubesim_cluster

PREFIX = "kubesim.perfscale.io/"


@pytest.fixture(scope="module")
def sim():
    with kubesim_cluster(profile="openshift", pod_start_delay=0.2, time_scale=50) as server:
        yield server


def get(kubectl, *args):
    return json.loads(kubectl("get", *args, "-o", "json").stdout)


def apply(kubectl, *manifests):
    return kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(m) for m in manifests))


def test_cluster_objects(kubectl):
    infra = get(kubectl, "infrastructure", "cluster")["status"]
    assert (infra["platform"], infra["infrastructureName"]) == ("AWS", "kubesim-x7k2p")
    assert get(kubectl, "ingresses.config.openshift.io", "cluster")["spec"]["domain"] == "apps.kubesim.example.com"
    version = get(kubectl, "clusterversion", "version")["status"]
    assert version["desired"]["version"] == "4.19.9" and version["history"][0]["state"] == "Completed"
    # Projects are the namespaces (project.openshift.io is a view, not a CRD)
    projects = {p["metadata"]["name"] for p in get(kubectl, "projects")["items"]}
    assert {"default", "openshift-monitoring", "openshift-marketplace"} <= projects
    assert "routes.route.openshift.io" not in kubectl("get", "crd", "-o", "name").stdout
    apply(kubectl, {"apiVersion": "project.openshift.io/v1", "kind": "Project", "metadata": {"name": "my-project"}})
    assert get(kubectl, "namespace", "my-project")["status"]["phase"] == "Active"
    kubectl("get", "configmap", "cluster-monitoring-config", "-n", "openshift-monitoring")


def test_cluster_version_update(kubectl):
    kubectl("patch", "clusterversion", "version", "--type=merge", "-p",
            '{"spec":{"desiredUpdate":{"version":"4.19.10"}}}')
    kubectl("wait", "--for=condition=Progressing", "clusterversion/version", "--timeout=30s")
    status = get(kubectl, "clusterversion", "version")["status"]
    assert status["desired"]["version"] == "4.19.10" and status["history"][0]["state"] in ("Partial", "Completed")
    kubectl("wait", "--for=condition=Progressing=False", "clusterversion/version", "--timeout=60s")
    status = get(kubectl, "clusterversion", "version")["status"]
    assert [(h["version"], h["state"]) for h in status["history"]] == [("4.19.10", "Completed"), ("4.19.9", "Completed")]
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert progressing["message"] == "Cluster version is 4.19.10"
    operator = get(kubectl, "clusteroperator", "authentication")["status"]["versions"][0]
    assert operator["version"] == "4.19.10"
    # an update that cannot be applied: Failing=True, the history entry stays Partial
    kubectl("annotate", "clusterversion", "version", PREFIX + "fail=could not download the update: 403 Forbidden")
    kubectl("patch", "clusterversion", "version", "--type=merge", "-p", json.dumps({"spec": {"desiredUpdate": {
        "version": None, "image": "quay.io/openshift-release-dev/ocp-release:4.20.1-x86_64", "force": True}}}))
    kubectl("wait", "--for=condition=Failing", "clusterversion/version", "--timeout=30s")
    status = get(kubectl, "clusterversion", "version")["status"]
    assert (status["history"][0]["version"], status["history"][0]["state"]) == ("4.20.1", "Partial")
    kubectl("annotate", "clusterversion", "version", PREFIX + "fail-")


def test_machine_sets_add_and_remove_nodes(kubectl):
    base = get(kubectl, "machineset", "-n", "openshift-machine-api")["items"][0]
    assert base["status"]["readyReplicas"] >= 1
    # what cluster set_scale does: a MachineSet of another instance type, tainted, from the first one
    new = {"apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineSet",
           "metadata": {"name": "kubesim-x7k2p-g5-2xlarge", "namespace": "openshift-machine-api",
                        "annotations": {PREFIX + "provision-s": "20", PREFIX + "node-ready-s": "10"}},
           "spec": base["spec"]}
    new["spec"] = json.loads(json.dumps(base["spec"]))
    new["spec"]["replicas"] = 2
    new["spec"]["selector"]["matchLabels"]["machine.openshift.io/cluster-api-machineset"] = "kubesim-x7k2p-g5-2xlarge"
    new["spec"]["template"]["metadata"]["labels"]["machine.openshift.io/cluster-api-machineset"] = "kubesim-x7k2p-g5-2xlarge"
    new["spec"]["template"]["spec"]["providerSpec"]["value"]["instanceType"] = "g5.2xlarge"
    new["spec"]["template"]["spec"]["taints"] = [{"key": "only-gpu", "value": "true", "effect": "NoSchedule"}]
    new["spec"]["template"]["spec"]["metadata"] = {"labels": {"team": "perf"}}
    apply(kubectl, new)
    kubectl("wait", "--for=jsonpath={.status.readyReplicas}=2", "machineset/kubesim-x7k2p-g5-2xlarge", "-n",
            "openshift-machine-api", "--timeout=60s")
    machines = get(kubectl, "machines", "-n", "openshift-machine-api", "-l",
                   "machine.openshift.io/cluster-api-machineset=kubesim-x7k2p-g5-2xlarge")["items"]
    assert {m["status"]["phase"] for m in machines} == {"Running"}
    node = get(kubectl, "node", machines[0]["status"]["nodeRef"]["name"])
    assert node["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "g5.2xlarge"
    assert node["metadata"]["labels"]["team"] == "perf"
    assert node["spec"]["taints"] == [{"key": "only-gpu", "value": "true", "effect": "NoSchedule"}]
    kubectl("wait", "--for=condition=Ready", "node/" + node["metadata"]["name"], "--timeout=10s")
    # scaling down deletes the newest Machine and its Node
    kubectl("scale", "machineset/kubesim-x7k2p-g5-2xlarge", "-n", "openshift-machine-api", "--replicas=1")
    kubectl("wait", "--for=jsonpath={.status.replicas}=1", "machineset/kubesim-x7k2p-g5-2xlarge", "-n",
            "openshift-machine-api", "--timeout=30s")
    names = {m["status"]["nodeRef"]["name"] for m in machines}
    remaining = {n["metadata"]["name"] for n in get(kubectl, "nodes")["items"]} & names
    assert len(remaining) == 1
    # an instance type the cloud does not have: the Machine fails
    broken = json.loads(json.dumps(new))
    broken["metadata"] = {"name": "kubesim-x7k2p-bogus", "namespace": "openshift-machine-api"}
    broken["spec"]["replicas"] = 1
    broken["spec"]["template"]["spec"]["providerSpec"]["value"]["instanceType"] = "z9.mega"
    apply(kubectl, broken)
    kubectl("wait", "--for=jsonpath={.status.phase}=Failed", "machines", "-n", "openshift-machine-api", "-l",
            "machine.openshift.io/instance-type=z9.mega", "--timeout=30s")
    machine = get(kubectl, "machines", "-n", "openshift-machine-api", "-l", "machine.openshift.io/instance-type=z9.mega")
    assert machine["items"][0]["status"]["errorReason"] == "InvalidConfiguration"


def build_config(name, annotations=None):
    return {"apiVersion": "build.openshift.io/v1", "kind": "BuildConfig",
            "metadata": {"name": name, "namespace": "builds", "annotations": annotations or {}},
            "spec": {"triggers": [{"type": "ConfigChange"}], "runPolicy": "Serial",
                     "source": {"type": "Git", "git": {"uri": "https://github.com/example/bench.git"}},
                     "strategy": {"type": "Docker", "dockerStrategy": {"dockerfilePath": "Dockerfile"}},
                     "output": {"to": {"kind": "ImageStreamTag", "name": "%s:latest" % name}}}}


def test_builds_and_image_streams(kubectl):
    apply(kubectl, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "builds"}},
          {"apiVersion": "image.openshift.io/v1", "kind": "ImageStream", "metadata": {"name": "bench", "namespace": "builds"},
           "spec": {"lookupPolicy": {"local": False}}},
          build_config("bench"), build_config("broken", {PREFIX + "fail": "error building at STEP 3/3: exit status 2"}))
    kubectl("wait", "--for=jsonpath={.status.phase}=Complete", "build/bench-1", "-n", "builds", "--timeout=60s")
    build = get(kubectl, "build", "bench-1", "-n", "builds")["status"]
    assert build["outputDockerImageReference"].startswith("image-registry.openshift-image-registry.svc:5000/builds/bench")
    stream = get(kubectl, "imagestream", "bench", "-n", "builds")["status"]
    assert stream["tags"][0]["tag"] == "latest" and stream["tags"][0]["items"][0]["image"].startswith("sha256:")
    assert "Push successful" in kubectl("logs", "bench-1-build", "-n", "builds").stdout
    kubectl("wait", "--for=jsonpath={.status.phase}=Failed", "build/broken-1", "-n", "builds", "--timeout=60s")
    assert get(kubectl, "build", "broken-1", "-n", "builds")["status"]["reason"] == "GenericBuildFailed"
    assert "exit status 2" in kubectl("logs", "broken-1-build", "-n", "builds").stdout


def test_start_build_routes_oauth_and_monitoring(sim, http_admin, kubectl):
    # oc start-build: POST buildconfigs/<name>/instantiate
    code, body = http_admin("POST", "/apis/build.openshift.io/v1/namespaces/builds/buildconfigs/bench/instantiate",
                            {"kind": "BuildRequest", "apiVersion": "build.openshift.io/v1", "metadata": {"name": "bench"}})
    assert code == 201 and body["metadata"]["name"] == "bench-2"
    apply(kubectl, {"apiVersion": "route.openshift.io/v1", "kind": "Route", "metadata": {"name": "web", "namespace": "builds"},
                    "spec": {"to": {"kind": "Service", "name": "web"}, "port": {"targetPort": 8080}}})
    kubectl("wait", "--for=jsonpath={.status.ingress[0].conditions[0].status}=True", "route/web", "-n", "builds",
            "--timeout=30s")
    assert get(kubectl, "route", "web", "-n", "builds")["spec"]["host"] == "web-builds.apps.kubesim.example.com"
    # create_htpasswd_adminuser: an identity provider rolls oauth-openshift out
    generation = get(kubectl, "deployment", "oauth-openshift", "-n", "openshift-authentication")["metadata"]["generation"]
    kubectl("patch", "oauth", "cluster", "--type=merge", "-p", json.dumps({"spec": {"identityProviders": [
        {"name": "htpasswd", "mappingMethod": "claim", "type": "HTPasswd",
         "htpasswd": {"fileData": {"name": "htpass-secret"}}}]}}))
    kubectl("wait", "--for=jsonpath={.metadata.generation}=%d" % (generation + 1), "deployment/oauth-openshift", "-n",
            "openshift-authentication", "--timeout=30s")
    kubectl("rollout", "status", "deployment/oauth-openshift", "-n", "openshift-authentication", "--timeout=30s")
    kubectl("wait", "--for=condition=Progressing=False", "clusteroperator/authentication", "--timeout=30s")
    # enable_userworkload_monitoring
    kubectl("patch", "configmap", "cluster-monitoring-config", "-n", "openshift-monitoring", "--type=merge", "-p",
            json.dumps({"data": {"config.yaml": "enableUserWorkload: true\n"}}))
    kubectl("wait", "--for=jsonpath={.status.readyReplicas}=2", "statefulset/prometheus-user-workload", "-n",
            "openshift-user-workload-monitoring", "--timeout=30s")


@pytest.fixture
def http_admin(http):
    def call(method, path, body=None):
        code, _, answer = http(method, path, body)
        return code, answer
    return call


def test_the_efs_csi_driver_operator_deploys_the_driver(sim, kubectl):
    from kube_fixtures import recorded_states

    def state(obj):
        conditions = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or ()}
        available = conditions.get("AWSEFSDriverControllerServiceControllerAvailable")
        return (available["status"], available["reason"]) if available else None

    # no operator yet: the ClusterCSIDriver is served (OpenShift's own kind) but nobody writes its status
    driver = {"apiVersion": "operator.openshift.io/v1", "kind": "ClusterCSIDriver",
              "metadata": {"name": "efs.csi.aws.com"}, "spec": {"managementState": "Managed"}}
    with recorded_states(sim, ("operator.openshift.io", "clustercsidrivers"), "efs.csi.aws.com", state) as states:
        apply(kubectl, driver)
        assert "status" not in get(kubectl, "clustercsidriver", "efs.csi.aws.com")
        apply(kubectl, {"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": "aws-efs-csi-driver-operator", "namespace": "openshift-cluster-csi-drivers"},
                        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "aws-efs-csi-driver-operator"}},
                                 "template": {"metadata": {"labels": {"app": "aws-efs-csi-driver-operator"}},
                                              "spec": {"containers": [{"name": "operator", "image": "x"}]}}}})
        kubectl("wait", "--for=condition=AWSEFSDriverNodeServiceControllerAvailable", "clustercsidriver/efs.csi.aws.com",
                "--timeout=60s")
        kubectl("wait", "--for=condition=AWSEFSDriverControllerServiceControllerAvailable",
                "clustercsidriver/efs.csi.aws.com", "--timeout=60s")
    assert states[0] == ("False", "Deploying") and states[-1] == ("True", "AsExpected"), states
    assert get(kubectl, "csidriver", "efs.csi.aws.com")["spec"]["attachRequired"] is False
    assert get(kubectl, "daemonset", "aws-efs-csi-driver-node", "-n", "openshift-cluster-csi-drivers")
    status = get(kubectl, "clustercsidriver", "efs.csi.aws.com")["status"]
    assert "observedGeneration" not in status and {g["name"] for g in status["generations"]} == {
        "aws-efs-csi-driver-controller", "aws-efs-csi-driver-node"}
    # deleted: the operands first, then the operator's finalizers
    kubectl("delete", "clustercsidriver", "efs.csi.aws.com", "--timeout=60s")
    assert kubectl("get", "deployment", "aws-efs-csi-driver-controller", "-n", "openshift-cluster-csi-drivers",
                   check=False).returncode != 0
