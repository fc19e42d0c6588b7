"""OLM on the openshift profile through the real kubectl: catalogs, PackageManifests, the install flow, failures.

Conventions: OLM's packageserver (``pkg/package-server/provider/registry.go``) for
PackageManifests; the catalog operator for Subscriptions and InstallPlans
(``RequiresApproval`` -> ``Installing`` -> ``Complete``); the OLM operator for
ClusterServiceVersion phases and reasons.
"""

import json

import pytest

from kube_fixtures import kubesim_cluster, recorded_states


@pytest.fixture(scope="module")
def sim():
    with kubesim_cluster(profile="openshift", pod_start_delay=0.2, time_scale=30) as server:
        yield server


def get(kubectl, *args):
    return json.loads(kubectl("get", *args, "-o", "json").stdout)


def apply(kubectl, *manifests):
    return kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(m) for m in manifests))


def subscription(namespace, package, channel=None, starting=None, approval="Automatic", source="community-operators",
                 annotations=None):
    spec = {"name": package, "source": source, "sourceNamespace": "openshift-marketplace",
            "installPlanApproval": approval}
    if channel:
        spec["channel"] = channel
    if starting:
        spec["startingCSV"] = starting
    return {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": package, "namespace": namespace, "annotations": annotations or {}}, "spec": spec}


def operator_namespace(name, own=True):
    group = {"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
             "metadata": {"name": name, "namespace": name}, "spec": {"targetNamespaces": [name]} if own else {}}
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, group]


def test_catalogs_and_package_manifests(kubectl):
    kubectl("wait", "--for=jsonpath={.status.connectionState.lastObservedState}=READY", "catalogsource", "--all",
            "-n", "openshift-marketplace", "--timeout=30s")
    names = kubectl("get", "packagemanifests", "-n", "openshift-marketplace", "-o", "name").stdout.split()
    for package in ("nfd", "gpu-operator-certified", "rhods-operator", "opendatahub-operator", "servicemeshoperator",
                    "serverless-operator", "authorino-operator", "kueue-operator", "demo-operator"):
        assert "packagemanifest.packages.operators.coreos.com/" + package in names
    gpu = get(kubectl, "packagemanifest", "gpu-operator-certified", "-n", "openshift-marketplace")
    status = gpu["status"]
    assert (status["catalogSource"], status["catalogSourceNamespace"], status["defaultChannel"]) == \
        ("certified-operators", "openshift-marketplace", "v25.10")
    channel = next(c for c in status["channels"] if c["name"] == status["defaultChannel"])
    assert channel["currentCSV"] == "gpu-operator-certified.v25.10.0" and channel["currentCSVDesc"]["version"] == "25.10.0"
    example = json.loads(channel["currentCSVDesc"]["annotations"]["alm-examples"])[0]
    assert example["kind"] == "ClusterPolicy" and example["spec"]["devicePlugin"]["enabled"] is True
    assert gpu["metadata"]["labels"]["catalog"] == "certified-operators"
    # a namespaced list includes the global catalog namespace's packages, shown in the namespace asked
    default_list = get(kubectl, "packagemanifests", "-n", "default", "-l", "catalog=redhat-operators")["items"]
    assert {p["metadata"]["name"] for p in default_list} >= {"nfd", "rhods-operator"}
    assert {p["metadata"]["namespace"] for p in default_list} == {"default"}
    jsonpath = kubectl("get", "packagemanifest", "rhods-operator", "-n", "openshift-marketplace", "-o",
                       "jsonpath={.status.channels[?(@.name=='stable')].currentCSV}").stdout
    assert jsonpath == "rhods-operator.2.22.2"
    # packagemanifests are read-only (the packageserver serves get and list)
    result = kubectl("create", "-f", "-", input=json.dumps(gpu), check=False)
    assert result.returncode != 0 and "MethodNotAllowed" in result.stderr


def test_manual_install_plan_to_a_served_crd_and_a_ready_cr(sim, kubectl):
    apply(kubectl, *operator_namespace("demo"))
    apply(kubectl, subscription("demo", "demo-operator", channel="stable", starting="demo-operator.v1.0.0",
                                approval="Manual"))
    kubectl("wait", "--for=jsonpath={.status.state}=UpgradePending", "subscription/demo-operator", "-n", "demo",
            "--timeout=30s")
    sub = get(kubectl, "subscription", "demo-operator", "-n", "demo")
    assert sub["status"]["currentCSV"] == "demo-operator.v1.0.0" and "installedCSV" not in sub["status"]
    pending = next(c for c in sub["status"]["conditions"] if c["type"] == "InstallPlanPending")
    assert (pending["status"], pending["reason"]) == ("True", "RequiresApproval")
    plan = sub["status"]["installPlanRef"]["name"]
    assert get(kubectl, "installplan", plan, "-n", "demo")["status"]["phase"] == "RequiresApproval"
    assert kubectl("get", "csv", "-n", "demo", "-o", "name").stdout.strip() == ""
    kubectl("patch", "installplan", plan, "-n", "demo", "--type=merge", "-p", '{"spec":{"approved":true}}')
    kubectl("wait", "--for=jsonpath={.status.phase}=Complete", "installplan/" + plan, "-n", "demo", "--timeout=30s")
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "csv/demo-operator.v1.0.0", "-n", "demo", "--timeout=60s")
    csv = get(kubectl, "csv", "demo-operator.v1.0.0", "-n", "demo")
    # the CSV's phase history (status.conditions), repeated phases folded
    phases = [c["phase"] for c in csv["status"]["conditions"]]
    assert [p for i, p in enumerate(phases) if i == 0 or phases[i - 1] != p] == \
        ["Pending", "InstallReady", "Installing", "Succeeded"]
    # the operator's Deployment from spec.install.spec.deployments, and its CRD served
    kubectl("wait", "--for=condition=Available", "deployment/demo-operator-controller-manager", "-n", "demo",
            "--timeout=30s")
    kubectl("wait", "--for=condition=Established", "crd/demoapps.demo.kubesim.perfscale.io", "--timeout=30s")
    example = json.loads(csv["metadata"]["annotations"]["alm-examples"])[0]
    example["metadata"]["namespace"] = "demo"
    apply(kubectl, example)
    kubectl("wait", "--for=condition=Ready", "demoapp/demoapp-sample", "-n", "demo", "--timeout=30s")
    assert get(kubectl, "demoapp", "demoapp-sample", "-n", "demo")["status"]["phase"] == "Ready"
    # an injected controller fault fails a named CR of the operator
    sim.faults.add("controller", controller="demoapp", match={"name": "demoapp-doomed"}, message="reconcile error: quota")
    apply(kubectl, dict(example, metadata={"name": "demoapp-doomed", "namespace": "demo"}))
    kubectl("wait", "--for=jsonpath={.status.phase}=Failed", "demoapp/demoapp-doomed", "-n", "demo", "--timeout=30s")
    ready = get(kubectl, "demoapp", "demoapp-doomed", "-n", "demo")["status"]["conditions"][0]
    assert (ready["status"], ready["reason"], ready["message"]) == ("False", "Failed", "reconcile error: quota")
    # installed, and the next version of the channel waits for approval (Manual)
    kubectl("wait", "--for=jsonpath={.status.installedCSV}=demo-operator.v1.0.0", "subscription/demo-operator", "-n",
            "demo", "--timeout=30s")
    sub = get(kubectl, "subscription", "demo-operator", "-n", "demo")
    assert (sub["status"]["state"], sub["status"]["currentCSV"]) == ("UpgradePending", "demo-operator.v1.1.0")
    upgrade = get(kubectl, "installplan", sub["status"]["installPlanRef"]["name"], "-n", "demo")
    assert upgrade["spec"]["clusterServiceVersionNames"] == ["demo-operator.v1.1.0"] and \
        upgrade["status"]["phase"] == "RequiresApproval"


def test_automatic_upgrade_reaches_the_channel_head(kubectl):
    apply(kubectl, *operator_namespace("demo-auto"))
    apply(kubectl, subscription("demo-auto", "demo-operator", channel="stable", starting="demo-operator.v1.0.0"))
    kubectl("wait", "--for=jsonpath={.status.state}=AtLatestKnown", "subscription/demo-operator", "-n", "demo-auto",
            "--timeout=60s")
    sub = get(kubectl, "subscription", "demo-operator", "-n", "demo-auto")
    assert sub["status"]["installedCSV"] == "demo-operator.v1.1.0"
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "csv/demo-operator.v1.1.0", "-n", "demo-auto",
            "--timeout=60s")
    # the replaced CSV is deleted once its successor succeeded
    kubectl("wait", "--for=delete", "csv/demo-operator.v1.0.0", "-n", "demo-auto", "--timeout=30s")


def connection_state(obj):
    status = obj.get("status") or {}
    state = (status.get("connectionState") or {}).get("lastObservedState")
    return state or ("registryService" if status.get("registryService") else None)


def test_a_catalog_connects_as_grpc_does_and_one_that_cannot_be_pulled_never_gets_ready(sim, kubectl):
    """OLM's catalog operator writes the raw gRPC connectivity state: a registry pod that is still
    starting is TRANSIENT_FAILURE, an image that cannot be pulled is TRANSIENT_FAILURE for ever (no reason)."""
    source = {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
              "metadata": {"name": "rhoai-fragment", "namespace": "openshift-marketplace"},
              "spec": {"sourceType": "grpc", "image": "quay.io/rhoai/rhoai-fbc-fragment:rhoai-2.22"}}
    with recorded_states(sim, ("operators.coreos.com", "catalogsources"), "rhoai-fragment", connection_state) as states:
        apply(kubectl, source)
        kubectl("wait", "--for=jsonpath={.status.connectionState.lastObservedState}=READY", "catalogsource/rhoai-fragment",
                "-n", "openshift-marketplace", "--timeout=30s")
    assert states[:3] == ["registryService", "IDLE", "CONNECTING"], states
    assert "TRANSIENT_FAILURE" in states and states[-1] == "READY", states
    nowhere = dict(source, metadata={"name": "nowhere", "namespace": "openshift-marketplace"},
                   spec={"sourceType": "grpc", "image": "quay.io/nowhere/catalog:v1"})
    apply(kubectl, nowhere)
    kubectl("wait", "--for=jsonpath={.status.connectionState.lastObservedState}=TRANSIENT_FAILURE", "catalogsource/nowhere",
            "-n", "openshift-marketplace", "--timeout=30s")
    pods = get(kubectl, "pods", "-n", "openshift-marketplace", "-l", "olm.catalogSource=nowhere")["items"]
    kubectl("wait", "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=ImagePullBackOff",
            "pod/" + pods[0]["metadata"]["name"], "-n", "openshift-marketplace", "--timeout=30s")
    status = get(kubectl, "catalogsource", "nowhere", "-n", "openshift-marketplace")["status"]
    assert status["connectionState"]["lastObservedState"] == "TRANSIENT_FAILURE"
    assert "reason" not in status and "message" not in status
    # a subscription to it: an error that prevents resolution, retried (not ConstraintsNotSatisfiable)
    apply(kubectl, *operator_namespace("from-nowhere"))
    apply(kubectl, subscription("from-nowhere", "rhods-operator", source="nowhere"))
    kubectl("wait", "--for=condition=ResolutionFailed", "subscription/rhods-operator", "-n", "from-nowhere", "--timeout=30s")
    failed = next(c for c in get(kubectl, "subscription", "rhods-operator", "-n", "from-nowhere")["status"]["conditions"]
                  if c["type"] == "ResolutionFailed")
    assert failed["reason"] == "ErrorPreventedResolution" and "error using catalogsource openshift-marketplace/nowhere" \
        in failed["message"]
    # its image corrected: the registry pod of the old image is replaced and the catalog connects
    apply(kubectl, dict(nowhere, spec=source["spec"]))
    kubectl("wait", "--for=jsonpath={.status.connectionState.lastObservedState}=READY", "catalogsource/nowhere",
            "-n", "openshift-marketplace", "--timeout=30s")
    pods = get(kubectl, "pods", "-n", "openshift-marketplace", "-l", "olm.catalogSource=nowhere")["items"]
    assert [p["spec"]["containers"][0]["image"] for p in pods] == [source["spec"]["image"]]


def csv_phase(obj):
    status = obj.get("status") or {}
    return "%s/%s" % (status.get("phase"), status.get("reason")) if status.get("phase") else None


def test_install_failures(sim, kubectl):
    # a broken bundle: the CSV fails (InstallComponentFailed), and OLM tries again: Failed is not final
    apply(kubectl, *operator_namespace("demo-broken"))
    with recorded_states(sim, ("operators.coreos.com", "clusterserviceversions"), "demo-operator.v1.2.0",
                         csv_phase) as phases:
        apply(kubectl, subscription("demo-broken", "demo-operator", channel="candidate", starting="demo-operator.v1.2.0",
                                    annotations={"kubesim.perfscale.io/retry-s": "20"}))
        kubectl("wait", "--for=jsonpath={.status.phase}=Failed", "csv/demo-operator.v1.2.0", "-n", "demo-broken",
                "--timeout=60s")
        csv = get(kubectl, "csv", "demo-operator.v1.2.0", "-n", "demo-broken")
        assert csv["status"]["reason"] == "InstallComponentFailed" and "image: Required value" in csv["status"]["message"]
        kubectl("wait", "--for=jsonpath={.status.reason}=NeedsReinstall", "csv/demo-operator.v1.2.0", "-n", "demo-broken",
                "--timeout=30s")
        kubectl("wait", "--for=jsonpath={.status.phase}=Failed", "csv/demo-operator.v1.2.0", "-n", "demo-broken",
                "--timeout=60s")
    assert phases[:2] == ["Pending/RequirementsUnknown", "InstallReady/AllRequirementsMet"], phases
    assert phases.count("Failed/InstallComponentFailed") >= 2 and "Pending/NeedsReinstall" in phases, phases
    # NFD supports OwnNamespace/SingleNamespace only: in openshift-operators (all namespaces) its CSV fails
    apply(kubectl, subscription("openshift-operators", "nfd", source="redhat-operators"))
    kubectl("wait", "--for=jsonpath={.status.phase}=Failed", "csv/nfd.4.19.0-202510142112", "-n", "openshift-operators",
            "--timeout=60s")
    csv = get(kubectl, "csv", "nfd.4.19.0-202510142112", "-n", "openshift-operators")
    assert csv["status"]["reason"] == "UnsupportedOperatorGroup" and \
        csv["status"]["message"].startswith("AllNamespaces InstallModeType not supported")
    # resolution failures: an unknown package, an unknown channel
    apply(kubectl, *operator_namespace("nowhere"))
    apply(kubectl, subscription("nowhere", "no-such-operator"))
    apply(kubectl, subscription("nowhere", "authorino-operator", channel="tech-preview", source="redhat-operators"))
    kubectl("wait", "--for=condition=ResolutionFailed", "subscription/no-such-operator", "-n", "nowhere", "--timeout=30s")
    kubectl("wait", "--for=condition=ResolutionFailed", "subscription/authorino-operator", "-n", "nowhere", "--timeout=30s")
    message = next(c for c in get(kubectl, "subscription", "authorino-operator", "-n", "nowhere")["status"]["conditions"]
                   if c["type"] == "ResolutionFailed")["message"]
    assert "no operators found in channel tech-preview of package authorino-operator" in message
    # the Subscription's kubesim.perfscale.io/fail annotation fails the CSV it installs
    apply(kubectl, *operator_namespace("kueue-bad", own=False))
    apply(kubectl, subscription("kueue-bad", "kueue-operator", source="redhat-operators",
                                annotations={"kubesim.perfscale.io/fail": "pull access denied"}))
    kubectl("wait", "--for=jsonpath={.status.phase}=Failed", "csv/kueue-operator.v1.1.0", "-n", "kueue-bad",
            "--timeout=60s")
