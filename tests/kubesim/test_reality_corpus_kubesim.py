"""kubesim held against the reality corpus (tests/fixtures/upstream/, README there).

For every corpus object, a scenario drives an in-process kubesim into the situation the upstream
object was taken from (a Deployment past its progress deadline, a CatalogSource whose registry pod is
still starting, a PyTorchJob whose pods are pending, a ClusterPolicy with no GPU node...) and the
states kubesim wrote for that object are compared with the corpus object: the same condition types,
statuses and reasons, the same phase-like fields, and for kinds without conditions the relations a wait
reads (``corpus_harness.signature``). Messages, times, names and counters' values may differ (the
corpus's come from upstream tests and samples; kubesim writes its own). Where the corpus holds a
sequence (one object's transient states then its success), kubesim must pass through them in that
order (``SEQUENCES``).

An object no scenario can reach is listed in ``UNREACHABLE`` with the reason (and in docs/kubesim.md,
"Held against the reality corpus"); KServe and Gateway API objects kubesim still writes differently are
marked ``xfail(strict=True)`` in ``DIFFERS`` with what differs and why, so that they flip when fixed.
"""

import copy
import json
import os
import time

import pytest

from corpus_harness import (
    PREFIX,
    ROOT,
    Session,
    alm_example,
    field,
    has,
    install_operator,
    load_corpus,
    same,
    signature,
)

CORPUS = load_corpus()

# session name -> kubesim settings (one in-process kubesim per family: the scenarios of one family share it)
SESSIONS = {
    "kube": dict(profile="vanilla", time_scale=50, pod_start_delay=2),
    "olm": dict(profile="openshift", time_scale=50, pod_start_delay=1),
    "gpu": dict(profile="openshift", time_scale=50, pod_start_delay=1),
    "mig": dict(profile="openshift-mig-mixed", time_scale=50, pod_start_delay=1),
    "odh": dict(profile="openshift", time_scale=50, pod_start_delay=1),
    "knative": dict(profile="openshift", time_scale=50, pod_start_delay=1),
    "serving": dict(profile="openshift", time_scale=50, pod_start_delay=1, addons=["kserve"]),
    # KServe as installed on vanilla Kubernetes: the predictor gets an Ingress (IngressReady False until ready)
    "serving-vanilla": dict(profile="vanilla", time_scale=50, pod_start_delay=1, addons=["kserve"]),
    "training": dict(profile="vanilla", time_scale=50, pod_start_delay=2, addons=["kubeflow", "kuberay"]),
    "tekton": dict(profile="vanilla", time_scale=50, pod_start_delay=2, addons=["tekton"]),
    "openshift": dict(profile="openshift", time_scale=50, pod_start_delay=1),
}

SCENARIOS = {}  # corpus path -> (session name, scenario function)

# corpus path -> why no scenario can reach it (listed in docs/kubesim.md too)
UNREACHABLE = {}

# corpus path -> what kubesim writes differently today, and why (KServe and Gateway API only)
DIFFERS = {}

# corpus path -> condition types kubesim writes beside the corpus object's, and why that is upstream's behaviour
IGNORED_CONDITIONS = {}

# one object's states in the order upstream writes them (each a path of the corpus)
SEQUENCES = []


def scenario(session, *paths):
    def register(function):
        for path in paths:
            assert path not in SCENARIOS, path
            SCENARIOS[path] = (session, function)
        return function

    return register


def meta(name, namespace=None, annotations=None, labels=None):
    metadata = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = {PREFIX + k: v for k, v in annotations.items()}
    if labels:
        metadata["labels"] = labels
    return metadata


def container(name="app", image="registry.example.com/team/app:1.0", **extra):
    return dict({"name": name, "image": image}, **extra)


def template(labels, annotations=None, restart=None, **spec):
    body = {"metadata": {"labels": labels}, "spec": dict({"containers": [container()]}, **spec)}
    if annotations:
        body["metadata"]["annotations"] = {PREFIX + k: v for k, v in annotations.items()}
    if restart:
        body["spec"]["restartPolicy"] = restart
    return body


# == Kubernetes ================================================================================


def deployment(name, replicas, annotations=None, **spec):
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, "corpus"),
        "spec": dict(
            {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template(labels, annotations)},
            **spec
        ),
    }


@scenario(
    "kube",
    "kube/deployment-success.yaml",
    "kube/deployment-transient-rollout.yaml",
    "kube/deployment-failure-progress-deadline.yaml",
)
def deployments(s):
    s.namespace("corpus")
    # a rollout: one replica available, then scaled to two (one available of two), then three
    s.create(deployment("web", 1))
    s.wait("apps/v1", "Deployment", "corpus", "web", has("Available"), what="Available")
    s.change("apps/v1", "Deployment", "corpus", "web", lambda o: o["spec"].update(replicas=2))
    s.wait("apps/v1", "Deployment", "corpus", "web", lambda o: o["status"].get("availableReplicas") == 2)
    s.change("apps/v1", "Deployment", "corpus", "web", lambda o: o["spec"].update(replicas=3))
    s.wait(
        "apps/v1",
        "Deployment",
        "corpus",
        "web",
        lambda o: o["status"].get("availableReplicas") == 3 and has("Progressing", reason="NewReplicaSetAvailable")(o),
    )
    # a pod that never becomes Ready, past a 60 s progress deadline
    s.create(deployment("stuck", 1, {"ready": "false"}, progressDeadlineSeconds=60))
    s.wait("apps/v1", "Deployment", "corpus", "stuck", has("Progressing", "False", "ProgressDeadlineExceeded"))
    web = s.history("Deployment", "corpus", "web")
    return {
        "kube/deployment-success.yaml": web,
        "kube/deployment-transient-rollout.yaml": web,
        "kube/deployment-failure-progress-deadline.yaml": s.history("Deployment", "corpus", "stuck"),
    }


SEQUENCES.append(("kube/deployment-transient-rollout.yaml", "kube/deployment-success.yaml"))


@scenario("kube", "kube/daemonset-success.yaml", "kube/daemonset-transient-unobserved.yaml")
def daemonsets(s):
    s.namespace("corpus")
    labels = {"app": "agent"}
    s.create(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": meta("agent", "corpus"),
            "spec": {
                "selector": {"matchLabels": labels},
                "updateStrategy": {"type": "RollingUpdate"},
                "template": template(labels),
            },
        }
    )

    def rolled_out(o):
        status = o.get("status") or {}
        return (
            _observed(o)
            and status.get("desiredNumberScheduled", 0) > 0
            and status.get("numberAvailable")
            == status["desiredNumberScheduled"]
            == status.get("updatedNumberScheduled")
        )

    s.wait("apps/v1", "DaemonSet", "corpus", "agent", rolled_out)
    # a spec change: generation 2, observed 1 until the controller looked
    s.change(
        "apps/v1",
        "DaemonSet",
        "corpus",
        "agent",
        lambda o: o["spec"]["template"]["metadata"].setdefault("annotations", {}).update(rev="2"),
    )
    s.wait("apps/v1", "DaemonSet", "corpus", "agent", rolled_out)
    history = s.history("DaemonSet", "corpus", "agent")
    return {"kube/daemonset-success.yaml": history, "kube/daemonset-transient-unobserved.yaml": history}


def _observed(obj):
    return (obj.get("status") or {}).get("observedGeneration") == obj["metadata"].get("generation")


def job(name, annotations=None, **spec):
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(name, "corpus"),
        "spec": dict({"template": template({"job": name}, annotations, restart="Never")}, **spec),
    }


@scenario(
    "kube", "kube/job-success.yaml", "kube/job-failure-backoff-limit.yaml", "kube/job-failure-failure-target.yaml"
)
def jobs(s):
    s.namespace("corpus")
    s.create(job("ok", {"duration-s": "5"}), job("crash", {"outcome": "Failed", "duration-s": "2"}, backoffLimit=1))
    # two pods at once, one fails past backoffLimit 0 while the other still runs: it is terminated first
    s.namespace("corpus-parallel")
    s.sim.faults.add(
        "controller",
        controller="pods",
        match={"namespace": "corpus-parallel"},
        count=1,
        message="the node lost its GPU",
    )
    s.create(
        dict(
            job("pair", {"duration-s": "600"}, backoffLimit=0, parallelism=2, completions=2),
            metadata=meta("pair", "corpus-parallel"),
        )
    )
    s.wait("batch/v1", "Job", "corpus", "ok", has("Complete"))
    s.wait("batch/v1", "Job", "corpus", "crash", has("Failed"))
    s.wait("batch/v1", "Job", "corpus-parallel", "pair", has("Failed"))
    pair = s.history("Job", "corpus-parallel", "pair")
    return {
        "kube/job-success.yaml": s.history("Job", "corpus", "ok"),
        "kube/job-failure-backoff-limit.yaml": s.history("Job", "corpus", "crash"),
        "kube/job-failure-failure-target.yaml": pair,
    }


SEQUENCES.append(("kube/job-failure-failure-target.yaml", "kube/job-failure-backoff-limit.yaml"))


def pod(name, image="registry.example.com/team/app:1.0", annotations=None):
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(name, "corpus", annotations),
        "spec": {"containers": [container(image=image)]},
    }
    return body


@scenario(
    "kube",
    "kube/pod-success-running-ready.yaml",
    "kube/pod-transient-image-pull-backoff.yaml",
    "kube/pod-failure-invalid-image-name.yaml",
)
def pods(s):
    s.namespace("corpus")
    s.create(
        pod("web", image="docker.io/library/nginx:latest"),
        pod("missing", image="registry.example.com/team/app:does-not-exist"),
        pod("typo", image="registry.example.com/team/app::1.0"),
    )
    s.wait("v1", "Pod", "corpus", "web", has("Ready"))
    waiting = lambda reason: lambda o: any(  # noqa: E731
        ((c.get("state") or {}).get("waiting") or {}).get("reason") == reason
        for c in (o.get("status") or {}).get("containerStatuses") or ()
    )
    s.wait("v1", "Pod", "corpus", "missing", waiting("ImagePullBackOff"))
    s.wait("v1", "Pod", "corpus", "typo", waiting("InvalidImageName"))
    return {
        "kube/pod-success-running-ready.yaml": s.history("Pod", "corpus", "web"),
        "kube/pod-transient-image-pull-backoff.yaml": s.history("Pod", "corpus", "missing"),
        "kube/pod-failure-invalid-image-name.yaml": s.history("Pod", "corpus", "typo"),
    }


IGNORED_CONDITIONS["kube/pod-success-running-ready.yaml"] = {
    "PodReadyToStartContainers": "the sample predates the condition (Kubernetes 1.29, "
    "PodReadyToStartContainersCondition "
    "on by default); the kubelet of 1.35 writes it, as the corpus's other pods show"
}


@scenario("kube", "kube/statefulset-success-rolled-out.yaml", "kube/statefulset-transient-pods-not-ready.yaml")
def statefulsets(s):
    s.namespace("corpus")
    labels = {"app": "db"}
    s.create(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": meta("db", "corpus"),
            "spec": {
                "replicas": 3,
                "serviceName": "db",
                "selector": {"matchLabels": labels},
                "updateStrategy": {"type": "RollingUpdate"},
                "template": template(labels, {"ready-delay-s": "5"}),
            },
        }
    )
    s.wait("apps/v1", "StatefulSet", "corpus", "db", lambda o: (o.get("status") or {}).get("readyReplicas") == 3)
    history = s.history("StatefulSet", "corpus", "db")
    return {
        "kube/statefulset-success-rolled-out.yaml": history,
        "kube/statefulset-transient-pods-not-ready.yaml": history,
    }


SEQUENCES.append(("kube/statefulset-transient-pods-not-ready.yaml", "kube/statefulset-success-rolled-out.yaml"))


# == OLM =======================================================================================

OLM = "operators.coreos.com/v1alpha1"


@scenario(
    "olm",
    "olm/catalogsource-success-ready.yaml",
    "olm/catalogsource-transient-transient-failure.yaml",
    "olm/catalogsource-failure-spec-invalid.yaml",
)
def catalogsources(s):
    s.create(
        {
            "apiVersion": OLM,
            "kind": "CatalogSource",
            "metadata": meta("cool-catalog", "openshift-marketplace"),
            "spec": {
                "sourceType": "grpc",
                "image": "registry.redhat.io/redhat/redhat-operator-index:v4.19",
                "displayName": "Cool",
            },
        },
        {
            "apiVersion": OLM,
            "kind": "CatalogSource",
            "metadata": meta("no-image", "openshift-marketplace"),
            "spec": {"sourceType": "grpc"},
        },
    )
    s.wait(
        OLM,
        "CatalogSource",
        "openshift-marketplace",
        "cool-catalog",
        field("status.connectionState.lastObservedState", "READY"),
    )
    s.wait(OLM, "CatalogSource", "openshift-marketplace", "no-image", field("status.reason", "SpecInvalidError"))
    cool = s.history("CatalogSource", "openshift-marketplace", "cool-catalog")
    return {
        "olm/catalogsource-success-ready.yaml": cool,
        "olm/catalogsource-transient-transient-failure.yaml": cool,
        "olm/catalogsource-failure-spec-invalid.yaml": s.history("CatalogSource", "openshift-marketplace", "no-image"),
    }


SEQUENCES.append(("olm/catalogsource-transient-transient-failure.yaml", "olm/catalogsource-success-ready.yaml"))


@scenario(
    "olm",
    "olm/csv-success.yaml",
    "olm/csv-transient-installing.yaml",
    "olm/subscription-success-at-latest-known.yaml",
    "olm/subscription-transient-upgrade-pending.yaml",
)
def operator_install(s):
    csv = install_operator(s, "openshift-nfd", "nfd", "redhat-operators")
    name = csv["metadata"]["name"]
    csvs = s.history("ClusterServiceVersion", "openshift-nfd", name)
    subscription = s.history("Subscription", "openshift-nfd", "nfd")
    return {
        "olm/csv-success.yaml": csvs,
        "olm/csv-transient-installing.yaml": csvs,
        "olm/subscription-success-at-latest-known.yaml": subscription,
        "olm/subscription-transient-upgrade-pending.yaml": subscription,
    }


SEQUENCES.append(("olm/csv-transient-installing.yaml", "olm/csv-success.yaml"))
SEQUENCES.append(("olm/subscription-transient-upgrade-pending.yaml", "olm/subscription-success-at-latest-known.yaml"))


@scenario("olm", "olm/csv-transient-failed-install-timeout.yaml")
def operator_install_timeout(s):
    # the operator's pods can be scheduled nowhere: its Deployment never becomes available
    install_operator(
        s,
        "demo-timeout",
        "demo-operator",
        "community-operators",
        wait=False,
        config={"nodeSelector": {"kubernetes.io/hostname": "no-such-node"}},
    )
    sub = s.wait(
        OLM,
        "Subscription",
        "demo-timeout",
        "demo-operator",
        lambda o: (o.get("status") or {}).get("currentCSV"),
        what="had a current CSV",
    )
    name = sub["status"]["currentCSV"]
    s.wait(OLM, "ClusterServiceVersion", "demo-timeout", name, field("status.reason", "InstallCheckFailed"), timeout=90)
    return {"olm/csv-transient-failed-install-timeout.yaml": s.history("ClusterServiceVersion", "demo-timeout", name)}


@scenario("olm", "olm/installplan-failure.yaml", "olm/subscription-failure-constraints-not-satisfiable.yaml")
def install_failures(s):
    s.sim.faults.add(
        "controller", controller="installplan", match={"namespace": "demo-plan"}, message="transition test error"
    )
    install_operator(s, "demo-plan", "demo-operator", "community-operators", wait=False)
    plan = s.wait(
        OLM,
        "Subscription",
        "demo-plan",
        "demo-operator",
        lambda o: (o.get("status") or {}).get("installPlanRef"),
        what="had an InstallPlan",
    )
    plan_name = plan["status"]["installPlanRef"]["name"]
    s.wait(OLM, "InstallPlan", "demo-plan", plan_name, field("status.phase", "Failed"))
    install_operator(s, "nowhere", "no-such-operator", "community-operators", wait=False)
    s.wait(OLM, "Subscription", "nowhere", "no-such-operator", has("ResolutionFailed"))
    return {
        "olm/installplan-failure.yaml": s.history("InstallPlan", "demo-plan", plan_name),
        "olm/subscription-failure-constraints-not-satisfiable.yaml": s.history(
            "Subscription", "nowhere", "no-such-operator"
        ),
    }


IGNORED_CONDITIONS["olm/subscription-failure-constraints-not-satisfiable.yaml"] = {
    "CatalogSourcesUnhealthy": "the unit test runs syncResolvingNamespace alone; the catalog health reconciler "
    "(pkg/controller/operators/catalog/subscription/reconciler.go) writes this condition "
    "on every Subscription of a running OLM"
}


# == NFD and the GPU operator ===================================================================

NFD_API = "nfd.openshift.io/v1"
GPU_API = "nvidia.com/v1"


@scenario(
    "gpu",
    "gpu-operator/clusterpolicy-transient-nfd-labels-missing.yaml",
    "gpu-operator/clusterpolicy-transient-no-gpu-nodes.yaml",
    "gpu-operator/clusterpolicy-transient-operand-not-ready.yaml",
    "gpu-operator/clusterpolicy-success-reconciled.yaml",
    "gpu-operator/clusterpolicy-transient-reconcile-failed.yaml",
    "gpu-operator/daemonset-validator-success-ready.yaml",
    "gpu-operator/daemonset-validator-transient-not-all-available.yaml",
    "gpu-operator/node-transient-pci-10de-false.yaml",
    "gpu-operator/node-success-pci-0302-10de.yaml",
    "gpu-operator/node-success-gpu-labelled-allocatable.yaml",
    "nfd/nodefeaturediscovery-transient-worker-desired-zero.yaml",
    "nfd/nodefeaturediscovery-transient-worker-none-scheduled.yaml",
    "nfd/nodefeaturediscovery-transient-worker-progressing.yaml",
    "nfd/nodefeaturediscovery-transient-master-unavailable.yaml",
    "nfd/nodefeaturediscovery-success-available.yaml",
)
def gpu_stack(s):
    """The GPU operator first (its ClusterPolicy without NFD's labels), then NFD with its default worker
    configuration (labels pci-<class>_<vendor>), as the toolbox's GPU roles deploy them."""
    gpu_csv = install_operator(s, "nvidia-gpu-operator", "gpu-operator-certified", "certified-operators")
    s.create(alm_example(gpu_csv, "ClusterPolicy"))
    s.wait(GPU_API, "ClusterPolicy", None, "gpu-cluster-policy", has("Ready", reason="NFDLabelsMissing"))
    nfd_csv = install_operator(s, "openshift-nfd", "nfd", "redhat-operators")
    nfd = alm_example(nfd_csv, "NodeFeatureDiscovery")
    nfd["spec"].pop("workerConfig", None)  # NFD's defaults: deviceLabelFields [class, vendor]
    nfd["spec"].pop("operand", None)  # the operator's own operand image
    s.create(nfd)
    namespace, name = nfd["metadata"]["namespace"], nfd["metadata"]["name"]
    s.wait(NFD_API, "NodeFeatureDiscovery", namespace, name, has("Available"))
    s.wait(GPU_API, "ClusterPolicy", None, "gpu-cluster-policy", has("Ready", reason="Reconciled"), timeout=90)
    s.wait(
        "apps/v1",
        "DaemonSet",
        "nvidia-gpu-operator",
        "nvidia-operator-validator",
        lambda o: o["status"].get("numberAvailable") == o["status"].get("desiredNumberScheduled") > 0,
    )
    s.wait("v1", "Node", None, "worker-gpu-0", lambda o: "nvidia.com/gpu" in o["status"].get("allocatable", {}))
    # nfd-master's pod replaced (an eviction): no available master until the new pod runs
    master = next(p for p in s.list("v1", "Pod", namespace) if p["metadata"]["labels"].get("app") == "nfd-master")
    s.cluster.delete(s.resource("v1", "Pod"), namespace, master["metadata"]["name"])
    s.wait(NFD_API, "NodeFeatureDiscovery", namespace, name, has("Degraded", reason="NFDMasterDeploymentDegraded"))
    s.wait(NFD_API, "NodeFeatureDiscovery", namespace, name, has("Available"))
    # a reconcile that fails (the driver cannot be built): notReady, retried
    s.annotate(GPU_API, "ClusterPolicy", None, "gpu-cluster-policy", fail="driver build failed: kernel headers missing")
    s.wait(GPU_API, "ClusterPolicy", None, "gpu-cluster-policy", has("Error", reason="ReconcileFailed"))
    policy = s.history("ClusterPolicy", "", "gpu-cluster-policy")
    validator = s.history("DaemonSet", "nvidia-gpu-operator", "nvidia-operator-validator")
    node = s.history("Node", "", "worker-gpu-0")
    nfd_states = s.history("NodeFeatureDiscovery", namespace, name)
    result = {}
    for path in SCENARIOS:
        if SCENARIOS[path][1] is gpu_stack:
            kind = path.split("/")[1].split("-")[0]
            result[path] = {
                "clusterpolicy": policy,
                "daemonset": validator,
                "node": node,
                "nodefeaturediscovery": nfd_states,
            }[kind]
    return result


SEQUENCES.append(
    (
        "gpu-operator/clusterpolicy-transient-nfd-labels-missing.yaml",
        "gpu-operator/clusterpolicy-transient-no-gpu-nodes.yaml",
        "gpu-operator/clusterpolicy-transient-operand-not-ready.yaml",
        "gpu-operator/clusterpolicy-success-reconciled.yaml",
    )
)
SEQUENCES.append(
    (
        "gpu-operator/daemonset-validator-transient-not-all-available.yaml",
        "gpu-operator/daemonset-validator-success-ready.yaml",
    )
)
SEQUENCES.append(
    (
        "gpu-operator/node-transient-pci-10de-false.yaml",
        "gpu-operator/node-success-pci-0302-10de.yaml",
        "gpu-operator/node-success-gpu-labelled-allocatable.yaml",
    )
)
SEQUENCES.append(
    (
        "nfd/nodefeaturediscovery-transient-worker-desired-zero.yaml",
        "nfd/nodefeaturediscovery-transient-worker-progressing.yaml",
        "nfd/nodefeaturediscovery-success-available.yaml",
    )
)


@scenario("mig", "gpu-operator/node-success-mig-mixed.yaml", "gpu-operator/node-success-mig-single.yaml")
def mig_nodes(s):
    """H100 workers labelled nvidia.com/mig.config all-balanced by the profile, one relabelled all-1g.10gb (as
    ``oc label node ... --overwrite`` does); the ClusterPolicy's MIG strategy mixed, then single."""
    s.change(
        "v1",
        "Node",
        None,
        "worker-gpu-1",
        lambda o: o["metadata"]["labels"].update({"nvidia.com/mig.config": "all-1g.10gb"}),
    )
    gpu_csv = install_operator(s, "nvidia-gpu-operator", "gpu-operator-certified", "certified-operators")
    policy = alm_example(gpu_csv, "ClusterPolicy")
    policy["spec"]["mig"] = {"strategy": "mixed"}
    s.create(policy)
    nfd_csv = install_operator(s, "openshift-nfd", "nfd", "redhat-operators")
    nfd = alm_example(nfd_csv, "NodeFeatureDiscovery")
    nfd["spec"].pop("workerConfig", None)
    nfd["spec"].pop("operand", None)
    s.create(nfd)

    def labelled(strategy, state="success"):
        def predicate(o):
            labels = o["metadata"].get("labels") or {}
            return (
                labels.get("nvidia.com/mig.strategy") == strategy
                and labels.get("nvidia.com/mig.config.state") == state
                and any(k.startswith("nvidia.com/") for k in (o["status"].get("allocatable") or {}))
            )

        return predicate

    s.wait("v1", "Node", None, "worker-gpu-0", labelled("mixed"), timeout=90, what="MIG mixed, partitioned")
    s.change(
        GPU_API,
        "ClusterPolicy",
        None,
        policy["metadata"]["name"],
        lambda o: o["spec"].update(mig={"strategy": "single"}),
    )
    s.wait("v1", "Node", None, "worker-gpu-1", labelled("single"), timeout=60, what="MIG single, partitioned")
    return {
        "gpu-operator/node-success-mig-mixed.yaml": s.history("Node", "", "worker-gpu-0"),
        "gpu-operator/node-success-mig-single.yaml": s.history("Node", "", "worker-gpu-1"),
    }


# == OpenShift AI: DSCInitialization, DataScienceCluster, DSPA, KFP runs ========================

DSCI_API = "dscinitialization.opendatahub.io/v1"
DSC_API = "datasciencecluster.opendatahub.io/v1"
DSPA_API = "datasciencepipelinesapplications.opendatahub.io/v1"
SERVERLESS_DSC = {
    "dashboard": {"managementState": "Managed"},
    "kserve": {
        "managementState": "Managed",
        "defaultDeploymentMode": "Serverless",
        "serving": {
            "managementState": "Managed",
            "name": "knative-serving",
            "ingressGateway": {"certificate": {"type": "OpenshiftDefaultIngress"}},
        },
    },
}


@scenario(
    "odh",
    "odh/dscinitialization-transient-reconcile-init.yaml",
    "odh/dscinitialization-success-servicemesh-missing-operator.yaml",
    "odh/dscinitialization-success.yaml",
    "odh/dscinitialization-transient-reconcile-failed.yaml",
    "odh/datasciencecluster-failure-kserve-serverless-operator-missing.yaml",
    "odh/datasciencecluster-transient-components-not-ready.yaml",
    "odh/datasciencecluster-success.yaml",
)
def openshift_ai(s):
    """RHOAI 2.x without the Service Mesh operator (the DSCI's capability missing), then with it; a DSC
    serving KServe Serverless before the Serverless operator is installed, then after."""
    install_operator(
        s, "redhat-ods-operator", "rhods-operator", "redhat-operators", own_namespace=False, channel="stable"
    )
    s.wait(DSCI_API, "DSCInitialization", None, "default-dsci", field("status.phase", "Ready"))
    missing_mesh = s.history("DSCInitialization", "", "default-dsci")
    install_operator(s, "openshift-operators", "servicemeshoperator", "redhat-operators", own_namespace=None)
    s.wait(DSCI_API, "DSCInitialization", None, "default-dsci", has("CapabilityServiceMesh", "True"))
    s.create(
        {
            "apiVersion": DSC_API,
            "kind": "DataScienceCluster",
            "metadata": meta("default-dsc"),
            "spec": {"components": copy.deepcopy(SERVERLESS_DSC)},
        }
    )
    s.wait(DSC_API, "DataScienceCluster", None, "default-dsc", has("KserveReady", "False", "Error"))
    install_operator(s, "openshift-serverless", "serverless-operator", "redhat-operators", own_namespace=False)
    s.wait(DSC_API, "DataScienceCluster", None, "default-dsc", has("Ready"), timeout=90)
    s.annotate(DSCI_API, "DSCInitialization", None, "default-dsci", fail="failed to create the monitoring stack")
    s.wait(DSCI_API, "DSCInitialization", None, "default-dsci", field("status.phase", "Error"))
    dsci = s.history("DSCInitialization", "", "default-dsci")
    dsc = s.history("DataScienceCluster", "", "default-dsc")
    return {
        "odh/dscinitialization-transient-reconcile-init.yaml": missing_mesh,
        "odh/dscinitialization-success-servicemesh-missing-operator.yaml": missing_mesh,
        "odh/dscinitialization-success.yaml": dsci,
        "odh/dscinitialization-transient-reconcile-failed.yaml": dsci,
        "odh/datasciencecluster-failure-kserve-serverless-operator-missing.yaml": dsc,
        "odh/datasciencecluster-transient-components-not-ready.yaml": dsc,
        "odh/datasciencecluster-success.yaml": dsc,
    }


SEQUENCES.append(
    (
        "odh/dscinitialization-transient-reconcile-init.yaml",
        "odh/dscinitialization-success-servicemesh-missing-operator.yaml",
    )
)
SEQUENCES.append(("odh/datasciencecluster-transient-components-not-ready.yaml", "odh/datasciencecluster-success.yaml"))
IGNORED_CONDITIONS["odh/dscinitialization-transient-reconcile-failed.yaml"] = {
    "CapabilityServiceMesh": "the failure comes after a reconcile that set up the service mesh: its conditions "
    "stay (SetProgressingCondition sets five conditions and leaves the others), the "
    "corpus object fails before the first mesh setup",
    "CapabilityServiceMeshAuthorization": "as CapabilityServiceMesh",
}
UNREACHABLE["odh/dscinitialization-v2api-success-monitoring-ready-mirrored-false.yaml"] = (
    "the 3.x operator's dscinitialization.opendatahub.io/v2 (a Ready condition mirrored from the Monitoring CR): "
    "kubesim models the 2.x line (v1 DSCInitialization, no Monitoring CR)"
)


def dspa(name, namespace, **spec):
    body = {
        "dspVersion": "v2",
        "database": {
            "mariaDB": {"deploy": True, "pipelineDBName": "mlpipeline", "pvcSize": "10Gi", "username": "mlpipeline"}
        },
        "objectStorage": {"minio": {"image": "quay.io/opendatahub/minio:RELEASE.2019-08-14T20-37-41Z-license"}},
    }
    body.update(spec)
    return {
        "apiVersion": DSPA_API,
        "kind": "DataSciencePipelinesApplication",
        "metadata": meta(name, namespace),
        "spec": body,
    }


def pipelines_ready(s):
    """RHOAI with the datasciencepipelines component (what the pipelines roles deploy)."""
    install_operator(
        s, "redhat-ods-operator", "rhods-operator", "redhat-operators", own_namespace=False, channel="stable"
    )
    s.wait(DSCI_API, "DSCInitialization", None, "default-dsci", field("status.phase", "Ready"))
    s.create(
        {
            "apiVersion": DSC_API,
            "kind": "DataScienceCluster",
            "metadata": meta("pipelines-dsc"),
            "spec": {"components": {"datasciencepipelines": {"managementState": "Managed"}}},
        }
    )
    s.wait(DSC_API, "DataScienceCluster", None, "pipelines-dsc", has("DataSciencePipelinesReady"))
    s.wait_for(
        lambda: s.cluster.registry.by_kind(
            "datasciencepipelinesapplications.opendatahub.io", "v1", "DataSciencePipelinesApplication"
        ),
        what="served DSPAs",
    )


@scenario(
    "openshift",
    "odh/dspa-success.yaml",
    "odh/dspa-transient-deploying.yaml",
    "odh/dspa-transient-database-not-reachable.yaml",
    "odh/dspa-failure-unsupported-version.yaml",
    "argo/workflow-success.yaml",
    "argo/workflow-transient-running.yaml",
    "argo/workflow-transient-not-taken-yet.yaml",
    "argo/workflow-failure-task-failed.yaml",
)
def pipelines(s):
    pipelines_ready(s)
    s.namespace("ds-project")
    s.create(dspa("sample", "ds-project"), dspa("old", "ds-project", dspVersion="v1"))
    s.wait(DSPA_API, "DataSciencePipelinesApplication", "ds-project", "sample", has("Ready"), timeout=120)
    s.wait(
        DSPA_API, "DataSciencePipelinesApplication", "ds-project", "old", has("Ready", "False", "UnsupportedVersion")
    )
    result = {
        "odh/dspa-success.yaml": s.history("DataSciencePipelinesApplication", "ds-project", "sample"),
        "odh/dspa-failure-unsupported-version.yaml": s.history("DataSciencePipelinesApplication", "ds-project", "old"),
    }
    result["odh/dspa-transient-deploying.yaml"] = result["odh/dspa-transient-database-not-reachable.yaml"] = result[
        "odh/dspa-success.yaml"
    ]
    result.update(kfp_runs(s))
    return result


HELLO_WORLD = os.path.join(
    ROOT, "roles", "pipelines_run_kfp_notebook", "files", "notebooks", "hello-world", "pipeline.yaml"
)
KFP = "/api/v1/namespaces/ds-project/services/https:ds-pipeline-sample:8888/proxy/apis/v2beta1/"


def kfp_runs(s):
    """The hello-world pipeline run through KFP's API: its Argo Workflow succeeds; again with its first task
    failing (exit code 3)."""
    boundary = "kubesim-corpus-boundary"
    with open(HELLO_WORLD, "rb") as handle:
        body = (
            (
                '--%s\r\nContent-Disposition: form-data; name="uploadfile"; filename="pipeline.yaml"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n" % boundary
            ).encode()
            + handle.read()
            + ("\r\n--%s--\r\n" % boundary).encode()
        )
    status, pipeline = s.http(
        "POST", KFP + "pipelines/upload?name=hello", body, content_type="multipart/form-data; boundary=" + boundary
    )
    assert status == 200, (status, pipeline)
    status, versions = s.http("GET", KFP + "pipelines/%s/versions" % pipeline["pipeline_id"])
    reference = {
        "pipeline_id": pipeline["pipeline_id"],
        "pipeline_version_id": versions["pipeline_versions"][0]["pipeline_version_id"],
    }
    workflows = {}
    for run_name in ("hello-run", "hello-bad"):
        if run_name == "hello-bad":
            s.sim.image_behaviours.add("*/ubi9/python-311:*", outcome="Failed", **{"exit-code": "3"})
        status, run = s.http("POST", KFP + "runs", {"display_name": run_name, "pipeline_version_reference": reference})
        assert status == 200, (status, run)
        workflow = s.wait_for(
            lambda: next(
                (
                    w
                    for w in s.list("argoproj.io/v1alpha1", "Workflow", "ds-project")
                    if w["metadata"]["labels"].get("pipeline/runid") == run["run_id"]
                ),
                None,
            ),
            what="created the run's Workflow",
        )
        name = workflow["metadata"]["name"]
        s.wait(
            "argoproj.io/v1alpha1",
            "Workflow",
            "ds-project",
            name,
            lambda o: (o.get("status") or {}).get("phase") in ("Succeeded", "Failed"),
            timeout=90,
        )
        workflows[run_name] = s.history("Workflow", "ds-project", name)
    s.sim.image_behaviours.clear()
    return {
        "argo/workflow-success.yaml": workflows["hello-run"],
        "argo/workflow-transient-running.yaml": workflows["hello-run"],
        "argo/workflow-transient-not-taken-yet.yaml": workflows["hello-run"],
        "argo/workflow-failure-task-failed.yaml": workflows["hello-bad"],
    }


SEQUENCES.append(
    ("odh/dspa-transient-database-not-reachable.yaml", "odh/dspa-transient-deploying.yaml", "odh/dspa-success.yaml")
)
SEQUENCES.append(
    ("argo/workflow-transient-not-taken-yet.yaml", "argo/workflow-transient-running.yaml", "argo/workflow-success.yaml")
)


# == training: PyTorchJob, TrainJob, RayJob =======================================================


def pytorchjob(name, replicas, annotations=None, restart="Never", **run_policy):
    specs = {}
    for rtype, count in replicas.items():
        specs[rtype] = {
            "replicas": count,
            "restartPolicy": restart,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "pytorch", "image": "quay.io/kubeflow/mnist:1", "command": ["python", "mnist.py"]}
                    ]
                }
            },
        }
        if annotations:
            specs[rtype]["template"]["metadata"] = {"annotations": {PREFIX + k: v for k, v in annotations.items()}}
    spec = {"pytorchReplicaSpecs": specs}
    if run_policy:
        spec["runPolicy"] = run_policy
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta(name, "training"), "spec": spec}


@scenario(
    "training",
    "training/pytorchjob-transient-created-pods-pending.yaml",
    "training/pytorchjob-transient-running.yaml",
    "training/pytorchjob-success.yaml",
    "training/pytorchjob-failure-backoff-limit.yaml",
    "training/pytorchjob-transient-restarting.yaml",
)
def pytorchjobs(s):
    s.namespace("training")
    s.create(
        pytorchjob("mnist", {"Master": 1, "Worker": 1}, {"start-delay-s": "10", "duration-s": "30"}),
        pytorchjob("crash", {"Master": 1}, annotations=None),
        pytorchjob(
            "elastic", {"Worker": 2}, {"outcome": "Failed", "exit-code": "137", "duration-s": "5"}, restart="ExitCode"
        ),
    )
    s.annotate("kubeflow.org/v1", "PyTorchJob", "training", "crash", fail="RuntimeError: CUDA error: out of memory")
    s.wait("kubeflow.org/v1", "PyTorchJob", "training", "mnist", has("Succeeded"))
    s.wait("kubeflow.org/v1", "PyTorchJob", "training", "crash", has("Failed"))
    s.wait("kubeflow.org/v1", "PyTorchJob", "training", "elastic", has("Restarting"))
    mnist = s.history("PyTorchJob", "training", "mnist")
    return {
        "training/pytorchjob-transient-created-pods-pending.yaml": mnist,
        "training/pytorchjob-transient-running.yaml": mnist,
        "training/pytorchjob-success.yaml": mnist,
        "training/pytorchjob-failure-backoff-limit.yaml": s.history("PyTorchJob", "training", "crash"),
        "training/pytorchjob-transient-restarting.yaml": s.history("PyTorchJob", "training", "elastic"),
    }


SEQUENCES.append(
    (
        "training/pytorchjob-transient-created-pods-pending.yaml",
        "training/pytorchjob-transient-running.yaml",
        "training/pytorchjob-success.yaml",
    )
)


def trainjob(name, annotations=None, suspend=None):
    spec = {
        "runtimeRef": {
            "apiGroup": "trainer.kubeflow.org",
            "kind": "ClusterTrainingRuntime",
            "name": "torch-distributed",
        },
        "trainer": {"numNodes": 1, "image": "quay.io/modh/training:py311"},
    }
    if suspend is not None:
        spec["suspend"] = suspend
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": meta(name, "training", annotations),
        "spec": spec,
    }


@scenario(
    "training",
    "training/trainjob-transient-jobs-active.yaml",
    "training/trainjob-success.yaml",
    "training/trainjob-failure-failed-jobs.yaml",
)
def trainjobs(s):
    s.namespace("training")
    s.create(
        trainjob("e2e-test-torch", {"duration-s": "20"}),
        trainjob("resumed", {"outcome": "Failed", "duration-s": "5"}, suspend=True),
    )
    s.wait("trainer.kubeflow.org/v1alpha1", "TrainJob", "training", "resumed", has("Suspended"))
    s.change(
        "trainer.kubeflow.org/v1alpha1", "TrainJob", "training", "resumed", lambda o: o["spec"].update(suspend=False)
    )
    s.wait("trainer.kubeflow.org/v1alpha1", "TrainJob", "training", "e2e-test-torch", has("Complete"))
    s.wait("trainer.kubeflow.org/v1alpha1", "TrainJob", "training", "resumed", has("Failed"), timeout=90)
    ok = s.history("TrainJob", "training", "e2e-test-torch")
    return {
        "training/trainjob-transient-jobs-active.yaml": ok,
        "training/trainjob-success.yaml": ok,
        "training/trainjob-failure-failed-jobs.yaml": s.history("TrainJob", "training", "resumed"),
    }


SEQUENCES.append(("training/trainjob-transient-jobs-active.yaml", "training/trainjob-success.yaml"))


def rayjob(name, annotations):
    template = {
        "spec": {
            "containers": [
                {
                    "name": "ray-head",
                    "image": "quay.io/rhoai/ray:2.35.0-py311-cu121",
                    "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
                }
            ]
        }
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": meta(name, "training", annotations),
        "spec": {
            "entrypoint": "python3 /mnt/entrypoint/entrypoint.py",
            "shutdownAfterJobFinishes": True,
            "rayClusterSpec": {
                "rayVersion": "2.35.0",
                "headGroupSpec": {"rayStartParams": {"dashboard-host": "0.0.0.0"}, "template": template},
                "workerGroupSpecs": [
                    {
                        "groupName": "workers",
                        "replicas": 1,
                        "minReplicas": 1,
                        "maxReplicas": 5,
                        "rayStartParams": {},
                        "template": template,
                    }
                ],
            },
        },
    }


@scenario(
    "training",
    "training/rayjob-transient-initializing.yaml",
    "training/rayjob-transient-succeeded-still-running.yaml",
    "training/rayjob-success.yaml",
    "training/rayjob-failure-app-failed.yaml",
)
def rayjobs(s):
    s.namespace("training")
    s.wait("apps/v1", "Deployment", "ray-system", "kuberay-operator", has("Available"))
    s.create(
        rayjob("rayjob-sample", {"log": "SCRIPT SUCCEEDED", "duration-s": "20"}),
        rayjob("rayjob-fail", {"fail": "ValueError: boom"}),
    )
    s.wait(
        "ray.io/v1", "RayJob", "training", "rayjob-sample", field("status.jobDeploymentStatus", "Complete"), timeout=90
    )
    s.wait("ray.io/v1", "RayJob", "training", "rayjob-fail", field("status.jobDeploymentStatus", "Failed"), timeout=90)
    sample = s.history("RayJob", "training", "rayjob-sample")
    return {
        "training/rayjob-transient-initializing.yaml": sample,
        "training/rayjob-transient-succeeded-still-running.yaml": sample,
        "training/rayjob-success.yaml": sample,
        "training/rayjob-failure-app-failed.yaml": s.history("RayJob", "training", "rayjob-fail"),
    }


SEQUENCES.append(
    (
        "training/rayjob-transient-initializing.yaml",
        "training/rayjob-transient-succeeded-still-running.yaml",
        "training/rayjob-success.yaml",
    )
)
UNREACHABLE["training/rayjob-failure-stopped.yaml"] = (
    "a Ray job stopped through the Ray dashboard (ray job stop): kubesim serves no Ray dashboard, nothing can stop "
    "a Ray job"
)


# == Tekton =====================================================================================

TEKTON = "tekton.dev/v1"


def task_spec(name="hello", image="busybox"):
    return {"steps": [{"name": name, "image": image, "script": "echo hello"}]}


@scenario(
    "tekton",
    "tekton/taskrun-success.yaml",
    "tekton/taskrun-failure-step-failed.yaml",
    "tekton/taskrun-failure-timeout.yaml",
    "tekton/taskrun-transient-exceeded-node-resources.yaml",
)
def taskruns(s):
    s.namespace("ci")
    huge = task_spec()
    huge["steps"][0]["computeResources"] = {"requests": {"cpu": "500"}}
    s.create(
        {
            "apiVersion": TEKTON,
            "kind": "TaskRun",
            "metadata": meta("status-taskrun", "ci", {"duration-s": "5"}),
            "spec": {"taskSpec": task_spec()},
        },
        {
            "apiVersion": TEKTON,
            "kind": "TaskRun",
            "metadata": meta("failing", "ci", {"outcome": "Failed", "exit-code": "123"}),
            "spec": {"taskSpec": task_spec("failure")},
        },
        {
            "apiVersion": TEKTON,
            "kind": "TaskRun",
            "metadata": meta("slow", "ci", {"duration-s": "600"}),
            "spec": {"taskSpec": task_spec(), "timeout": "30s"},
        },
        {"apiVersion": TEKTON, "kind": "TaskRun", "metadata": meta("huge", "ci"), "spec": {"taskSpec": huge}},
    )
    s.wait(TEKTON, "TaskRun", "ci", "status-taskrun", has("Succeeded"))
    s.wait(TEKTON, "TaskRun", "ci", "failing", has("Succeeded", "False"))
    s.wait(TEKTON, "TaskRun", "ci", "slow", has("Succeeded", "False"), timeout=90)
    s.wait(TEKTON, "TaskRun", "ci", "huge", has("Succeeded", "Unknown", "ExceededNodeResources"))
    return {
        "tekton/taskrun-success.yaml": s.history("TaskRun", "ci", "status-taskrun"),
        "tekton/taskrun-failure-step-failed.yaml": s.history("TaskRun", "ci", "failing"),
        "tekton/taskrun-failure-timeout.yaml": s.history("TaskRun", "ci", "slow"),
        "tekton/taskrun-transient-exceeded-node-resources.yaml": s.history("TaskRun", "ci", "huge"),
    }


@scenario(
    "tekton",
    "tekton/pipelinerun-success.yaml",
    "tekton/pipelinerun-failure-failed.yaml",
    "tekton/pipelinerun-failure-timeout.yaml",
    "tekton/pipelinerun-transient-matrix-running.yaml",
)
def pipelineruns(s):
    s.namespace("ci")

    def run(name, tasks, annotations=None, **spec):
        return {
            "apiVersion": TEKTON,
            "kind": "PipelineRun",
            "metadata": meta(name, "ci", annotations),
            "spec": dict({"pipelineSpec": {"tasks": tasks}}, **spec),
        }

    s.create(
        run("with-timeout", [{"name": "hello-world-1", "taskSpec": task_spec()}], {"duration-s": "5"}),
        run("failed", [{"name": "fail", "taskSpec": task_spec()}], {"outcome": "Failed"}),
        run(
            "timed-out",
            [{"name": "sleep", "taskSpec": task_spec()}],
            {"duration-s": "600"},
            timeouts={"pipeline": "30s"},
        ),
        run(
            "pr",
            [
                {
                    "name": "platforms-and-browsers",
                    "taskSpec": task_spec(),
                    "matrix": {
                        "params": [
                            {"name": "platform", "value": ["linux", "mac", "windows"]},
                            {"name": "browser", "value": ["chrome", "safari"]},
                        ]
                    },
                }
            ],
            {"duration-s": "20"},
        ),
    )
    s.wait(TEKTON, "PipelineRun", "ci", "with-timeout", has("Succeeded"))
    s.wait(TEKTON, "PipelineRun", "ci", "failed", has("Succeeded", "False"))
    s.wait(TEKTON, "PipelineRun", "ci", "timed-out", has("Succeeded", "False"), timeout=90)
    s.wait(TEKTON, "PipelineRun", "ci", "pr", has("Succeeded"))
    return {
        "tekton/pipelinerun-success.yaml": s.history("PipelineRun", "ci", "with-timeout"),
        "tekton/pipelinerun-failure-failed.yaml": s.history("PipelineRun", "ci", "failed"),
        "tekton/pipelinerun-failure-timeout.yaml": s.history("PipelineRun", "ci", "timed-out"),
        "tekton/pipelinerun-transient-matrix-running.yaml": s.history("PipelineRun", "ci", "pr"),
    }


# == OpenShift ==================================================================================

CONFIG_API = "config.openshift.io/v1"
MCO_API = "machineconfiguration.openshift.io/v1"
MACHINE_API = "machine.openshift.io/v1beta1"


@scenario(
    "openshift",
    "openshift/clusteroperator-success.yaml",
    "monitoring/clusteroperator-success-rollout-done.yaml",
    "monitoring/clusteroperator-transient-uwm-prometheus-failed.yaml",
    "monitoring/prometheus-success.yaml",
    "monitoring/prometheus-transient-no-pod-ready.yaml",
    "monitoring/prometheus-transient-some-pods-not-ready.yaml",
)
def monitoring(s):
    """User workload monitoring enabled: its Prometheus rolls out; then enabled while its pods never become
    ready, until the monitoring operator's wait gives up."""
    uwm = "openshift-user-workload-monitoring"

    def enable(value):
        s.change(
            "v1",
            "ConfigMap",
            "openshift-monitoring",
            "cluster-monitoring-config",
            lambda o: o.setdefault("data", {}).update({"config.yaml": "enableUserWorkload: %s\n" % value}),
        )

    enable("true")
    s.wait("monitoring.coreos.com/v1", "Prometheus", uwm, "user-workload", has("Available"))
    prometheus = s.history("Prometheus", uwm, "user-workload")
    enable("false")
    s.wait_for(
        lambda: s.get("monitoring.coreos.com/v1", "Prometheus", uwm, "user-workload") is None,
        what="removed the user workload Prometheus",
    )
    s.sim.image_behaviours.add("quay.io/openshift/origin-prometheus:*", ready="false")
    enable("true")
    s.wait(CONFIG_API, "ClusterOperator", None, "monitoring", has("Degraded"), timeout=90)
    s.sim.image_behaviours.clear()
    enable("false")  # the operator is done again once user workload monitoring is off
    s.wait(CONFIG_API, "ClusterOperator", None, "monitoring", has("Available"))
    return {
        "openshift/clusteroperator-success.yaml": s.history("ClusterOperator", "", "dns"),
        "monitoring/clusteroperator-success-rollout-done.yaml": s.history("ClusterOperator", "", "monitoring"),
        "monitoring/clusteroperator-transient-uwm-prometheus-failed.yaml": s.history(
            "ClusterOperator", "", "monitoring"
        ),
        "monitoring/prometheus-success.yaml": prometheus,
        "monitoring/prometheus-transient-no-pod-ready.yaml": prometheus,
        "monitoring/prometheus-transient-some-pods-not-ready.yaml": prometheus,
    }


SEQUENCES.append(
    (
        "monitoring/prometheus-transient-no-pod-ready.yaml",
        "monitoring/prometheus-transient-some-pods-not-ready.yaml",
        "monitoring/prometheus-success.yaml",
    )
)


@scenario(
    "openshift",
    "openshift/clusterversion-success.yaml",
    "openshift/clusterversion-transient-updating.yaml",
    "openshift/clusterversion-transient-failing.yaml",
)
def cluster_updates(s):
    """An update that completes; then one blocked by a degraded ClusterOperator."""
    history = s.history("ClusterVersion", "", "version")
    s.change(
        CONFIG_API, "ClusterVersion", None, "version", lambda o: o["spec"].update(desiredUpdate={"version": "4.19.10"})
    )
    s.wait(
        CONFIG_API,
        "ClusterVersion",
        None,
        "version",
        lambda o: (o["status"].get("history") or [{}])[0].get("state") == "Completed"
        and o["status"]["history"][0].get("version") == "4.19.10",
        timeout=90,
    )
    updated = s.history("ClusterVersion", "", "version")

    def degrade(obj):
        obj["status"]["conditions"] = [
            dict(
                c,
                status={"Degraded": "True", "Upgradeable": "False"}.get(c["type"], c["status"]),
                reason="EtcdMembers_UnhealthyMembers" if c["type"] in ("Degraded", "Upgradeable") else c.get("reason"),
            )
            for c in obj["status"]["conditions"]
        ]

    s.cluster.mutate(s.resource(CONFIG_API, "ClusterOperator"), "", "kube-apiserver", degrade, subresource="status")
    s.annotate(CONFIG_API, "ClusterVersion", None, "version", **{"fail-after-s": "600"})
    s.change(
        CONFIG_API,
        "ClusterVersion",
        None,
        "version",
        lambda o: o["spec"].update(
            desiredUpdate={"version": "4.19.11", "image": "quay.io/openshift-release-dev/ocp-release:4.19.11-x86_64"}
        ),
    )
    s.wait(CONFIG_API, "ClusterVersion", None, "version", has("Failing"), timeout=90)
    return {
        "openshift/clusterversion-success.yaml": history + updated,
        "openshift/clusterversion-transient-updating.yaml": updated,
        "openshift/clusterversion-transient-failing.yaml": s.history("ClusterVersion", "", "version"),
    }


@scenario(
    "openshift",
    "openshift/machineconfigpool-success-updated.yaml",
    "openshift/machineconfigpool-transient-updating.yaml",
    "openshift/machineconfigpool-transient-nodedegraded.yaml",
    "openshift/kubeletconfig-success-accepted.yaml",
    "openshift/kubeletconfig-failure-invalid.yaml",
)
def kubelet_configs(s):
    def kubelet_config(name, annotations=None):
        return {
            "apiVersion": MCO_API,
            "kind": "KubeletConfig",
            "metadata": meta(name, annotations=annotations),
            "spec": {
                "machineConfigPoolSelector": {
                    "matchLabels": {"pools.operator.machineconfiguration.openshift.io/worker": ""}
                },
                "kubeletConfig": {"maxPods": 500},
            },
        }

    s.create(kubelet_config("set-max-pods", {"update-s": "60"}))
    s.wait(MCO_API, "KubeletConfig", None, "set-max-pods", has("Accepted"))
    s.wait(MCO_API, "MachineConfigPool", None, "worker", has("Updated"), timeout=90)
    s.create(kubelet_config("broken", {"fail": "KubeletConfiguration: invalid value for maxPods"}))
    s.wait(MCO_API, "KubeletConfig", None, "broken", has("Failure"))
    s.create(kubelet_config("degrading", {"degrade-node": "failed to drain node: pod cannot be evicted"}))
    s.wait(MCO_API, "MachineConfigPool", None, "worker", has("NodeDegraded"), timeout=90)
    pool = s.history("MachineConfigPool", "", "worker")
    return {
        "openshift/machineconfigpool-success-updated.yaml": pool,
        "openshift/machineconfigpool-transient-updating.yaml": pool,
        "openshift/machineconfigpool-transient-nodedegraded.yaml": pool,
        "openshift/kubeletconfig-success-accepted.yaml": s.history("KubeletConfig", "", "set-max-pods"),
        "openshift/kubeletconfig-failure-invalid.yaml": s.history("KubeletConfig", "", "broken"),
    }


SEQUENCES.append(
    ("openshift/machineconfigpool-transient-updating.yaml", "openshift/machineconfigpool-success-updated.yaml")
)


@scenario("openshift", "openshift/machine-success-running.yaml", "openshift/machine-failure-invalidconfiguration.yaml")
def machines(s):
    namespace = "openshift-machine-api"
    sets = {m["metadata"]["name"]: m for m in s.list(MACHINE_API, "MachineSet", namespace)}
    gpu = copy.deepcopy(next(m for n, m in sets.items() if "gpu" in n))
    gpu["metadata"] = meta(gpu["metadata"]["name"] + "-extra", namespace)
    gpu["spec"]["replicas"] = 1
    gpu["spec"]["selector"]["matchLabels"]["machine.openshift.io/cluster-api-machineset"] = gpu["metadata"]["name"]
    gpu["spec"]["template"]["metadata"]["labels"]["machine.openshift.io/cluster-api-machineset"] = gpu["metadata"][
        "name"
    ]
    gpu.pop("status", None)
    broken = copy.deepcopy(gpu)
    broken["metadata"] = meta(gpu["metadata"]["name"] + "-broken", namespace)
    for labels in (broken["spec"]["selector"]["matchLabels"], broken["spec"]["template"]["metadata"]["labels"]):
        labels["machine.openshift.io/cluster-api-machineset"] = broken["metadata"]["name"]
    broken["spec"]["template"]["spec"]["providerSpec"]["value"]["instanceType"] = "no-such-instance-type"
    s.create(gpu, broken)

    def machine_of(name):
        return s.wait_for(
            lambda: next(
                (
                    m["metadata"]["name"]
                    for m in s.list(MACHINE_API, "Machine", namespace)
                    if m["metadata"]["labels"].get("machine.openshift.io/cluster-api-machineset") == name
                ),
                None,
            ),
            what="created a Machine of %s" % name,
        )

    good, bad = machine_of(gpu["metadata"]["name"]), machine_of(broken["metadata"]["name"])
    s.wait(MACHINE_API, "Machine", namespace, good, field("status.phase", "Running"), timeout=90)
    s.wait(MACHINE_API, "Machine", namespace, bad, field("status.phase", "Failed"))
    return {
        "openshift/machine-success-running.yaml": s.history("Machine", namespace, good),
        "openshift/machine-failure-invalidconfiguration.yaml": s.history("Machine", namespace, bad),
    }


@scenario("openshift", "openshift/build-success-complete.yaml", "openshift/build-failure-fetchsourcefailed.yaml")
def builds(s):
    s.namespace("demo")

    def build_config(name, uri):
        return {
            "apiVersion": "build.openshift.io/v1",
            "kind": "BuildConfig",
            "metadata": meta(name, "demo"),
            "spec": {
                "source": {"git": {"uri": uri}},
                "strategy": {"dockerStrategy": {}},
                "output": {"to": {"kind": "ImageStreamTag", "name": name + ":latest"}},
                "triggers": [{"type": "ConfigChange"}],
            },
        }

    s.create(
        build_config("ruby-hello-world", "https://github.com/openshift/ruby-hello-world"),
        build_config("nowhere", "https://github.com/openshift/does-not-exist"),
    )
    s.wait(
        "build.openshift.io/v1", "Build", "demo", "ruby-hello-world-1", field("status.phase", "Complete"), timeout=90
    )
    s.wait("build.openshift.io/v1", "Build", "demo", "nowhere-1", field("status.phase", "Failed"), timeout=90)
    return {
        "openshift/build-success-complete.yaml": s.history("Build", "demo", "ruby-hello-world-1"),
        "openshift/build-failure-fetchsourcefailed.yaml": s.history("Build", "demo", "nowhere-1"),
    }


@scenario("openshift", "openshift/route-success-admitted.yaml", "openshift/route-failure-hostalreadyclaimed.yaml")
def routes(s):
    for namespace in ("older", "newer"):
        s.namespace(namespace)
    host = "www.example.apps.kubesim.example.com"

    def route(name, namespace):
        return {
            "apiVersion": "route.openshift.io/v1",
            "kind": "Route",
            "metadata": meta(name, namespace),
            "spec": {"host": host, "to": {"kind": "Service", "name": name}},
        }

    s.create(route("www", "older"))
    s.wait("route.openshift.io/v1", "Route", "older", "www", lambda o: (o.get("status") or {}).get("ingress"))
    later = s.sim.clock.time() + 2  # a creationTimestamp (seconds) of its own
    s.wait_for(lambda: s.sim.clock.time() > later, what="let two simulated seconds pass")
    s.create(route("www", "newer"))
    s.wait("route.openshift.io/v1", "Route", "newer", "www", lambda o: (o.get("status") or {}).get("ingress"))
    return {
        "openshift/route-success-admitted.yaml": s.history("Route", "older", "www"),
        "openshift/route-failure-hostalreadyclaimed.yaml": s.history("Route", "newer", "www"),
    }


@scenario("openshift", "openshift/clustercsidriver-success.yaml", "openshift/clustercsidriver-transient-deploying.yaml")
def csi_driver(s):
    install_operator(
        s, "openshift-cluster-csi-drivers", "aws-efs-csi-driver-operator", "redhat-operators", own_namespace=False
    )
    s.create(
        {
            "apiVersion": "operator.openshift.io/v1",
            "kind": "ClusterCSIDriver",
            "metadata": meta("efs.csi.aws.com"),
            "spec": {"managementState": "Managed"},
        }
    )
    s.wait(
        "operator.openshift.io/v1",
        "ClusterCSIDriver",
        None,
        "efs.csi.aws.com",
        lambda o: has("AWSEFSCredentialsRequestControllerAvailable")(o)
        and has("AWSEFSDriverControllerServiceControllerAvailable")(o),
        timeout=90,
    )
    history = s.history("ClusterCSIDriver", "", "efs.csi.aws.com")
    return {
        "openshift/clustercsidriver-success.yaml": history,
        "openshift/clustercsidriver-transient-deploying.yaml": history,
    }


SEQUENCES.append(("openshift/clustercsidriver-transient-deploying.yaml", "openshift/clustercsidriver-success.yaml"))


# == KServe, Knative and Gateway API (what still differs is xfail, with the reason) ===============

ISVC_API = "serving.kserve.io/v1beta1"
GATEWAY_API = "gateway.networking.k8s.io/v1"


def isvc(name, mode, annotations=None, runtime=None, model_format="sklearn", transformer=False, storage=None):
    model = {
        "modelFormat": {"name": model_format},
        "storageUri": storage or "gs://kfserving-examples/models/sklearn/iris",
    }
    if runtime:
        model["runtime"] = runtime
    metadata = meta(name, "serving", annotations)
    metadata.setdefault("annotations", {})["serving.kserve.io/deploymentMode"] = mode
    spec = {"predictor": {"model": model}}
    if transformer:
        spec["transformer"] = {"containers": [{"name": "kserve-container", "image": "kserve/image-transformer:latest"}]}
    return {"apiVersion": ISVC_API, "kind": "InferenceService", "metadata": metadata, "spec": spec}


RUNTIME = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "ServingRuntime",
    "metadata": meta("kserve-sklearnserver", "serving"),
    "spec": {
        "supportedModelFormats": [{"name": "sklearn", "autoSelect": True}],
        "containers": [{"name": "kserve-container", "image": "kserve/sklearnserver:latest"}],
    },
}


CRASH_ONCE_IMAGE = "registry.example.com/models/sklearnserver:crash-once"
CRASH_LOOP_IMAGE = "registry.example.com/models/sklearnserver:crash-loop"


def runtime(name, image, namespace="serving"):
    """A ServingRuntime for sklearn that an InferenceService must name (no auto-selection: RUNTIME has it)."""
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "ServingRuntime",
        "metadata": meta(name, namespace),
        "spec": {
            "supportedModelFormats": [{"name": "sklearn", "autoSelect": False}],
            "containers": [{"name": "kserve-container", "image": image}],
        },
    }


def model_is(transition):
    return lambda o: ((o.get("status") or {}).get("modelStatus") or {}).get("transitionStatus") == transition


@scenario(
    "serving-vanilla",
    "kserve/inferenceservice-transient-raw-rollout.yaml",
    "kserve/inferenceservice-failure-raw-replica-failure.yaml",
    "kserve/inferenceservice-failure-no-supporting-runtime.yaml",
    "kserve/inferenceservice-transient-knative-rejected.yaml",
)
def inference_services(s):
    s.namespace("serving")
    s.create(RUNTIME)
    s.sim.faults.add(
        "controller",
        controller="replicaset",
        match={"namespace": "serving-quota"},
        message='pods "raw-replica-failure-test-predictor" is forbidden: exceeded quota',
    )
    s.namespace("serving-quota")
    denied = isvc("raw-replica-failure-test", "RawDeployment")
    denied["metadata"]["namespace"] = "serving-quota"
    s.create(dict(RUNTIME, metadata=meta("kserve-sklearnserver", "serving-quota")), denied)
    s.create(
        isvc("sklearn-iris", "RawDeployment"),
        isvc("unsupported", "RawDeployment", model_format="no-such-format"),
        isvc("serverless-isvc", "Serverless"),
    )
    s.wait(ISVC_API, "InferenceService", "serving", "sklearn-iris", has("Ready"))
    s.wait(
        ISVC_API,
        "InferenceService",
        "serving",
        "unsupported",
        lambda o: ((o.get("status") or {}).get("modelStatus") or {}).get("transitionStatus") == "InvalidSpec",
    )
    s.wait(
        ISVC_API, "InferenceService", "serving", "serverless-isvc", lambda o: (o.get("status") or {}).get("conditions")
    )
    s.wait(ISVC_API, "InferenceService", "serving-quota", "raw-replica-failure-test", has("PredictorReady", "False"))
    ok = s.history("InferenceService", "serving", "sklearn-iris")
    return {
        "kserve/inferenceservice-transient-raw-rollout.yaml": ok,
        "kserve/inferenceservice-failure-raw-replica-failure.yaml": s.history(
            "InferenceService", "serving-quota", "raw-replica-failure-test"
        ),
        "kserve/inferenceservice-failure-no-supporting-runtime.yaml": s.history(
            "InferenceService", "serving", "unsupported"
        ),
        "kserve/inferenceservice-transient-knative-rejected.yaml": s.history(
            "InferenceService", "serving", "serverless-isvc"
        ),
    }


UNREACHABLE["kserve/inferenceservice-success-raw.yaml"] = (
    "envtest's status (tests_common.go getExpectedIsvcStatusWithPort): the test writes the Deployment Available=True "
    "without a reason and no Progressing condition, so PredictorReady is True without a reason; a deployment "
    "controller writes Progressing=True NewReplicaSetAvailable with it, which PropagateRawStatus copies "
    "(inference_service_status.go:401-411), as kubesim does"
)


@scenario(
    "serving",
    "kserve/inferenceservice-transient-blocked-by-failed-load.yaml",
    "kserve/inferenceservice-success-loaded-after-recovery.yaml",
    "kserve/inferenceservice-failure-model-crash-loop.yaml",
    "kserve/inferenceservice-transient-raw-available-false-over-deadline.yaml",
    "kserve/inferenceservice-transient-runtime-not-recognized.yaml",
)
def model_failures(s):
    """Standard mode: a model server that crashes once (the kubelet's restart recovers it), one that crashes at
    every start, one never ready past its Deployment's progress deadline (600 s), and a runtime named before
    it exists."""
    s.namespace("serving")
    if s.get(RUNTIME["apiVersion"], "ServingRuntime", "serving", RUNTIME["metadata"]["name"]) is None:
        s.create(RUNTIME)
    s.sim.image_behaviours.add(CRASH_ONCE_IMAGE, behaviour="crash-once")
    s.sim.image_behaviours.add(CRASH_LOOP_IMAGE, behaviour="crash-loop")
    s.create(
        runtime("kserve-crash-once", CRASH_ONCE_IMAGE),
        runtime("kserve-crash-loop", CRASH_LOOP_IMAGE),
        isvc("crashed-once", "RawDeployment", runtime="kserve-crash-once"),
        isvc("crash-loop", "RawDeployment", runtime="kserve-crash-loop"),
        isvc("slow-predictor", "RawDeployment", {"ready": "false"}),
        isvc("early-isvc", "RawDeployment", runtime="kserve-not-yet"),
    )
    s.wait(ISVC_API, "InferenceService", "serving", "crashed-once", model_is("UpToDate"), timeout=90)
    s.wait(ISVC_API, "InferenceService", "serving", "crash-loop", model_is("BlockedByFailedLoad"), timeout=60)
    s.wait(ISVC_API, "InferenceService", "serving", "early-isvc", model_is("InvalidSpec"))
    s.wait(
        "apps/v1",
        "Deployment",
        "serving",
        "slow-predictor-predictor",
        has("Progressing", "False", "ProgressDeadlineExceeded"),
        timeout=60,
    )
    time.sleep(1.0)  # 50 simulated seconds: KServe has reconciled the Deployment's new conditions
    once = s.history("InferenceService", "serving", "crashed-once")
    return {
        "kserve/inferenceservice-transient-blocked-by-failed-load.yaml": once,
        "kserve/inferenceservice-success-loaded-after-recovery.yaml": once,
        "kserve/inferenceservice-failure-model-crash-loop.yaml": s.history("InferenceService", "serving", "crash-loop"),
        # what KServe says once the Deployment is past its deadline (not before)
        "kserve/inferenceservice-transient-raw-available-false-over-deadline.yaml": [
            s.get(ISVC_API, "InferenceService", "serving", "slow-predictor")
        ],
        "kserve/inferenceservice-transient-runtime-not-recognized.yaml": s.history(
            "InferenceService", "serving", "early-isvc"
        ),
    }


SEQUENCES.append(
    (
        "kserve/inferenceservice-transient-blocked-by-failed-load.yaml",
        "kserve/inferenceservice-success-loaded-after-recovery.yaml",
    )
)


@scenario(
    "knative",
    "kserve/inferenceservice-success-serverless.yaml",
    "kserve/inferenceservice-transient-knative-revision-missing.yaml",
    "kserve/inferenceservice-transient-knative-revision-failed-container.yaml",
)
def serverless_inference_services(s):
    """KServe Serverless through RHOAI with the Service Mesh and Serverless operators (Knative served)."""
    install_operator(s, "openshift-operators", "servicemeshoperator", "redhat-operators", own_namespace=None)
    install_operator(s, "openshift-serverless", "serverless-operator", "redhat-operators", own_namespace=False)
    install_operator(
        s, "redhat-ods-operator", "rhods-operator", "redhat-operators", own_namespace=False, channel="stable"
    )
    s.wait(DSCI_API, "DSCInitialization", None, "default-dsci", has("CapabilityServiceMesh"), timeout=90)
    s.create(
        {
            "apiVersion": DSC_API,
            "kind": "DataScienceCluster",
            "metadata": meta("serving-dsc"),
            "spec": {"components": copy.deepcopy(SERVERLESS_DSC)},
        }
    )
    s.wait(DSC_API, "DataScienceCluster", None, "serving-dsc", has("Ready"), timeout=90)
    s.namespace("serving")
    s.sim.image_behaviours.add(CRASH_ONCE_IMAGE, behaviour="crash-once")
    s.create(
        RUNTIME,
        runtime("kserve-crash-once", CRASH_ONCE_IMAGE),
        isvc("svc-with-transformer", "Serverless", transformer=True),
        isvc("sklearn-iris", "Knative"),
        isvc("kn-crashed-once", "Knative", runtime="kserve-crash-once"),
    )
    s.wait(ISVC_API, "InferenceService", "serving", "svc-with-transformer", has("Ready"), timeout=90)
    s.wait(ISVC_API, "InferenceService", "serving", "sklearn-iris", has("Ready"), timeout=90)
    s.wait(ISVC_API, "InferenceService", "serving", "kn-crashed-once", model_is("UpToDate"), timeout=90)
    return {
        "kserve/inferenceservice-success-serverless.yaml": s.history(
            "InferenceService", "serving", "svc-with-transformer"
        ),
        "kserve/inferenceservice-transient-knative-revision-missing.yaml": s.history(
            "InferenceService", "serving", "sklearn-iris"
        ),
        "kserve/inferenceservice-transient-knative-revision-failed-container.yaml": s.history(
            "InferenceService", "serving", "kn-crashed-once"
        ),
    }


UNREACHABLE["kserve/inferenceservice-transient-knative-storage-initializer-crashloop.yaml"] = (
    "envtest's (controller_test.go:4204-4358): the test patches the Knative Service Ready=False without a reason and "
    "without RoutesReady/ConfigurationsReady, which no Knative controller writes (kubesim's Knative writes both, "
    "so PredictorRouteReady and PredictorConfigurationReady follow), and IngressReady is the Istio VirtualService "
    "reconciler's; kubesim also runs no storage-initializer init container (kubesim.perfscale.io/fail crashes the "
    "kserve-container)"
)
UNREACHABLE["kserve/inferenceservice-failure-knative-revision-scaled-to-zero.yaml"] = (
    "TestPropagateModelStatus's input (inference_service_status_test.go:530-585): a Knative Service Ready=False "
    "RevisionFailed 'For testing' beside IngressReady alone; on a cluster the Service's Ready takes the Route's "
    "RevisionMissing (service.go propagates the Configuration, then the Route) and PropagateCrossComponentStatus "
    "writes RoutesReady/LatestDeploymentReady - what kubesim writes for a revision past its progress deadline "
    "(tests/kubesim/test_kserve_reality.py holds it: scaled to zero, PredictorConfigurationReady False "
    "RevisionFailed, BlockedByFailedLoad)"
)


def gateway_class_and_gateway(s, name, namespace, annotations=None, **spec):
    s.namespace(namespace)
    if s.get(GATEWAY_API, "GatewayClass", None, "example") is None:
        s.create(
            {
                "apiVersion": GATEWAY_API,
                "kind": "GatewayClass",
                "metadata": meta("example"),
                "spec": {"controllerName": "openshift.io/gateway-controller/v1"},  # the openshift profile's
            }
        )
    s.create(
        {
            "apiVersion": GATEWAY_API,
            "kind": "Gateway",
            "metadata": meta(name, namespace, annotations),
            "spec": dict(
                {
                    "gatewayClassName": "example",
                    "listeners": [
                        {
                            "name": "http",
                            "port": 80,
                            "protocol": "HTTP",
                            "allowedRoutes": {"namespaces": {"from": "All"}},
                        }
                    ],
                },
                **spec
            ),
        }
    )


@scenario(
    "serving",
    "kserve/llminferenceservice-success.yaml",
    "kserve/llminferenceservice-transient-workload-rollout.yaml",
    "kserve/llminferenceservice-failure-config-not-found.yaml",
)
def llm_inference_services(s):
    gateway_class_and_gateway(s, "openshift-ai-inference", "openshift-ingress")
    s.namespace("test-ns")
    s.create(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "LLMInferenceService",
            "metadata": meta("facebook-opt-125m", "test-ns", {"ready-delay-s": "10"}),
            "spec": {
                "model": {"uri": "hf://facebook/opt-125m", "name": "facebook/opt-125m"},
                "replicas": 1,
                "router": {"route": {}, "gateway": {}, "scheduler": {}},
                "template": {"containers": [{"name": "main", "image": "ghcr.io/llm-d/llm-d:v0.2.0"}]},
            },
        },
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "LLMInferenceService",
            "metadata": meta("test-llm-cfg-not-found", "test-ns"),
            "spec": {"model": {"uri": "hf://facebook/opt-125m"}, "baseRefs": [{"name": "does-not-exist"}]},
        },
    )
    s.wait(
        "serving.kserve.io/v1alpha1", "LLMInferenceService", "test-ns", "facebook-opt-125m", has("Ready"), timeout=90
    )
    s.wait(
        "serving.kserve.io/v1alpha1",
        "LLMInferenceService",
        "test-ns",
        "test-llm-cfg-not-found",
        lambda o: (o.get("status") or {}).get("conditions"),
    )
    ok = s.history("LLMInferenceService", "test-ns", "facebook-opt-125m")
    return {
        "kserve/llminferenceservice-success.yaml": ok,
        "kserve/llminferenceservice-transient-workload-rollout.yaml": ok,
        "kserve/llminferenceservice-failure-config-not-found.yaml": s.history(
            "LLMInferenceService", "test-ns", "test-llm-cfg-not-found"
        ),
    }


SEQUENCES.append(
    ("kserve/llminferenceservice-transient-workload-rollout.yaml", "kserve/llminferenceservice-success.yaml")
)


@scenario(
    "serving",
    "gateway/gateway-success.yaml",
    "gateway/gateway-transient-pending.yaml",
    "gateway/gateway-failure-address-not-usable.yaml",
    "gateway/httproute-success.yaml",
    "gateway/httproute-transient-backend-not-found.yaml",
    "gateway/inferencepool-success.yaml",
    "gateway/inferencepool-failure-epp-ref-missing.yaml",
)
def gateways(s):
    infra, app = "inference-conformance-infra", "inference-conformance-app-backend"
    gateway_class_and_gateway(s, "conformance-primary", infra)
    gateway_class_and_gateway(
        s,
        "gateway-static-addresses",
        infra,
        addresses=[{"type": "IPAddress", "value": "192.0.2.99"}, {"type": "IPAddress", "value": "10.0.0.1"}],
    )
    s.wait(GATEWAY_API, "Gateway", infra, "conformance-primary", has("Programmed"))
    s.namespace(app)
    pool_api = "inference.networking.k8s.io/v1"

    def pool(name, epp=True):
        spec = {"selector": {"matchLabels": {"app": name}}, "targetPorts": [{"number": 8000}]}
        if epp:
            spec["endpointPickerRef"] = {"name": name + "-epp", "port": {"number": 9002}}
        return {"apiVersion": pool_api, "kind": "InferencePool", "metadata": meta(name, app), "spec": spec}

    def route(name, pool_name):
        return {
            "apiVersion": GATEWAY_API,
            "kind": "HTTPRoute",
            "metadata": meta(name, app),
            "spec": {
                "parentRefs": [
                    {
                        "group": "gateway.networking.k8s.io",
                        "kind": "Gateway",
                        "name": "conformance-primary",
                        "namespace": infra,
                        "sectionName": "http",
                    }
                ],
                "rules": [
                    {
                        "backendRefs": [
                            {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": pool_name}
                        ]
                    }
                ],
            },
        }

    s.create(
        pool("primary-inference-pool"),
        pool("pool-with-missing-epp-ref", epp=False),
        route("httproute-for-primary-gw", "primary-inference-pool"),
        route("httproute-to-non-existent-pool", "non-existent-inference-pool"),
        route("httproute-for-missing-epp", "pool-with-missing-epp-ref"),
    )
    s.wait(GATEWAY_API, "HTTPRoute", app, "httproute-for-primary-gw", lambda o: (o.get("status") or {}).get("parents"))
    s.wait(
        GATEWAY_API,
        "HTTPRoute",
        app,
        "httproute-to-non-existent-pool",
        lambda o: (o.get("status") or {}).get("parents"),
    )
    s.wait(pool_api, "InferencePool", app, "primary-inference-pool", lambda o: (o.get("status") or {}).get("parents"))
    s.wait(GATEWAY_API, "Gateway", infra, "gateway-static-addresses", has("Accepted"))
    gateway = s.history("Gateway", infra, "conformance-primary")
    return {
        "gateway/gateway-success.yaml": gateway,
        "gateway/gateway-transient-pending.yaml": gateway,
        "gateway/gateway-failure-address-not-usable.yaml": s.history("Gateway", infra, "gateway-static-addresses"),
        "gateway/httproute-success.yaml": s.history("HTTPRoute", app, "httproute-for-primary-gw"),
        "gateway/httproute-transient-backend-not-found.yaml": s.history(
            "HTTPRoute", app, "httproute-to-non-existent-pool"
        ),
        "gateway/inferencepool-success.yaml": s.history("InferencePool", app, "primary-inference-pool"),
        "gateway/inferencepool-failure-epp-ref-missing.yaml": s.history(
            "InferencePool", app, "pool-with-missing-epp-ref"
        ),
    }


SEQUENCES.append(("gateway/gateway-transient-pending.yaml", "gateway/gateway-success.yaml"))


@scenario(
    "serving",
    "gateway/gatewayclass-success.yaml",
    "gateway/gatewayclass-transient-pending.yaml",
    "gateway/gatewayclass-failure-invalid-parameters.yaml",
)
def gateway_classes(s):
    """A class of the openshift profile's controller, one of a controller no one runs, and one of the profile's
    controller whose parametersRef names a ConfigMap that does not exist."""

    def gateway_class(name, controller, **spec):
        return {
            "apiVersion": GATEWAY_API,
            "kind": "GatewayClass",
            "metadata": meta(name),
            "spec": dict({"controllerName": controller}, **spec),
        }

    served = "openshift.io/gateway-controller/v1"
    parameters = {"group": "", "kind": "ConfigMap", "name": "gateway-parameters", "namespace": "openshift-ingress"}
    s.create(
        gateway_class("no-controller-class", "example.com/no-such-controller"),
        gateway_class("invalid-parameters-class", served, parametersRef=parameters),
        gateway_class("data-science-gateway-class", served),
    )
    s.wait(GATEWAY_API, "GatewayClass", None, "data-science-gateway-class", has("Accepted"))
    s.wait(GATEWAY_API, "GatewayClass", None, "invalid-parameters-class", has("Accepted", "False"))
    return {
        "gateway/gatewayclass-success.yaml": s.history("GatewayClass", "", "data-science-gateway-class"),
        "gateway/gatewayclass-transient-pending.yaml": s.history("GatewayClass", "", "no-controller-class"),
        "gateway/gatewayclass-failure-invalid-parameters.yaml": s.history(
            "GatewayClass", "", "invalid-parameters-class"
        ),
    }


# what kubesim's KServe and Gateway API controllers write differently today, and why
DIFFERS.update(
    {
        "kserve/inferenceservice-failure-raw-replica-failure.yaml": "IngressReady/Ready 'Predictor Deployment "
        "NotReady' are the Gateway API ingress's (httproute_reconciler.go, enableGatewayApi); kubesim models the "
        "Ingress ('Predictor ingress not created', vanilla) and disabled ingress (openshift), not HTTPRoute ingress; "
        "PredictorReady FailedCreate agrees",
        "kserve/inferenceservice-success-serverless.yaml": "kubesim runs no transformer component: no "
        "TransformerReady, TransformerConfigurationReady, TransformerRouteReady (the predictor's conditions agree); "
        "the envtest expectation has no Stopped condition",
        "kserve/llminferenceservice-success.yaml": "no InferencePoolReady condition",
        "kserve/llminferenceservice-transient-workload-rollout.yaml": "no InferencePoolReady condition",
        "kserve/llminferenceservice-failure-config-not-found.yaml": "spec.baseRefs is not resolved: no "
        "PresetsCombined=False/Ready=False ConfigNotFound (the service is deployed)",
        "gateway/gateway-failure-address-not-usable.yaml": "spec.addresses are not checked: Programmed=True "
        "where an unusable address is Programmed=False AddressNotUsable",
        "gateway/inferencepool-failure-epp-ref-missing.yaml": "a pool without endpointPickerRef is Accepted (no "
        "Accepted=False EndpointPickerRefMissing)",
        "gateway/inferencepool-success.yaml": "the parent carries Accepted with reason Accepted and "
        "ResolvedRefs where the sample has Accepted=True alone",
    }
)
UNREACHABLE["gateway/inferencepool-transient-v1alpha2-default.yaml"] = (
    "inference.networking.x-k8s.io/v1alpha2 InferencePools are not served by kubesim (the kserve addon serves "
    "inference.networking.k8s.io/v1 only); its CRD default status (a synthetic parent kind Status) needs that CRD"
)


# == the harness ================================================================================


@pytest.fixture(scope="module")
def sessions():
    started = {}

    def get(name):
        if name not in started:
            started[name] = Session(**SESSIONS[name])
        return started[name]

    yield get
    for session in started.values():
        session.stop()


@pytest.fixture(scope="module")
def results(sessions):
    """``run(path)``: the states kubesim wrote for the object of that corpus file (each scenario runs once)."""
    done = {}

    def run(path):
        session_name, function = SCENARIOS[path]
        if function not in done:
            try:
                done[function] = function(sessions(session_name))
            except (
                Exception
            ) as exc:  # noqa: BLE001 - the scenario did not reach its end: each of its paths fails with it
                done[function] = AssertionError("%s: %s" % (type(exc).__name__, exc))
        if isinstance(done[function], AssertionError):
            raise AssertionError(
                "scenario %s did not reach its end: %s" % (function.__name__, str(done[function])[:600])
            )
        return done[function][path]

    return run


def describe(states, ignore):
    seen = []
    for state in states:
        sig = signature(state, ignore)
        if sig not in seen:
            seen.append(sig)
    return "\n  ".join(json.dumps(s, sort_keys=True, default=str) for s in seen) or "(no state)"


def first_match(path, states, start=0):
    """The index of the first state (from ``start``) that agrees with the corpus object, or None."""
    entry = CORPUS[path]
    ignore = IGNORED_CONDITIONS.get(path, {})
    expected = signature(entry["object"])
    for index in range(start, len(states)):
        if same(expected, signature(states[index], ignore)):
            return index
    return None


def params():
    for path in sorted(CORPUS):
        marks = []
        if path in UNREACHABLE:
            marks.append(pytest.mark.skip(reason="unreachable in kubesim: " + UNREACHABLE[path]))
        elif path in DIFFERS:
            marks.append(pytest.mark.xfail(strict=True, reason="issue 44: " + DIFFERS[path]))
        yield pytest.param(path, marks=marks, id=path)


def test_every_corpus_object_has_a_scenario_or_a_reason():
    for path in CORPUS:
        assert (path in SCENARIOS) != (
            path in UNREACHABLE
        ), "%s: a corpus object needs a scenario in %s or a reason in UNREACHABLE (not both)" % (path, __file__)
    for table in (SCENARIOS, UNREACHABLE, DIFFERS, IGNORED_CONDITIONS):
        assert set(table) <= set(CORPUS), "not in the corpus (renamed or removed?): %s" % sorted(
            set(table) - set(CORPUS)
        )
    for path in DIFFERS:
        assert path.split("/")[0] in ("kserve", "gateway"), (
            "%s: only KServe and Gateway API objects may be left differing; fix kubesim to upstream's behaviour" % path
        )
    for sequence in SEQUENCES:
        kinds = {CORPUS[p]["object"]["kind"] for p in sequence}
        assert len(kinds) == 1 and all(SCENARIOS[p][1] is SCENARIOS[sequence[0]][1] for p in sequence), sequence
        assert [CORPUS[p]["expect"] for p in sequence][-1] in ("success", "failure"), sequence


@pytest.mark.parametrize("path", list(params()))
def test_kubesim_writes_what_upstream_writes(path, results):
    states = results(path)
    entry = CORPUS[path]
    ignore = IGNORED_CONDITIONS.get(path, {})
    assert first_match(path, states) is not None, "%s (%s: %s): kubesim never wrote\n  %s\nit wrote\n  %s" % (
        path,
        entry["expect"],
        entry["meaning"],
        json.dumps(signature(entry["object"]), sort_keys=True, default=str),
        describe(states, ignore),
    )


def sequence_params():
    for sequence in SEQUENCES:
        differing = [p for p in sequence if p in DIFFERS]
        marks = (
            [pytest.mark.xfail(strict=True, reason="issue 44: %s differs" % ", ".join(differing))] if differing else []
        )
        yield pytest.param(sequence, marks=marks, id=" -> ".join(sequence))


@pytest.mark.parametrize("sequence", list(sequence_params()))
def test_kubesim_goes_through_upstream_states_in_upstream_order(sequence, results):
    states = results(sequence[0])
    index = -1
    for path in sequence:
        found = first_match(path, states, index + 1)
        assert found is not None, "%s: not written after %s (state %d) in kubesim's states\n  %s" % (
            path,
            sequence[: sequence.index(path)],
            index,
            describe(states, {}),
        )
        index = found
