"""Every wait of the collection held against what the upstream controllers really write.

tests/fixtures/upstream/ holds status objects taken from the upstream projects' tests, samples and
docs (README.md there): a success object must end a wait well, a transient one must not end it, a
failure one must end it with the failure named. The roles' waits are the judges of
plugins/module_utils/kube/waits/; every judge a role uses must meet the corpus here.
"""

import glob
import os
import re

import pytest
import yaml

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import waits
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import base

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "fixtures", "upstream")
ROLES = os.path.join(ROOT, "roles")
EXPECTED = {"success": "ready", "transient": "waiting", "failure": "failed"}


def load_corpus():
    entries = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*", "*.yaml"))):
        with open(path, encoding="utf-8") as handle:
            entries.append((os.path.relpath(path, CORPUS), yaml.safe_load(handle)))
    return entries


CORPUS_ENTRIES = load_corpus()


def group_kind(obj):
    group = obj["apiVersion"].rpartition("/")[0]
    return group, obj["kind"]


# the wait each kind of the corpus is evaluated with, and the target it is given
def target_for(judge_name, obj):
    meta = obj.get("metadata") or {}
    options = {}
    name = meta.get("name")
    if judge_name == "clusterversion":
        history = (obj.get("status") or {}).get("history") or [{}]
        desired = (obj.get("spec") or {}).get("desiredUpdate") or {}
        options = {"version": desired.get("version") or history[0].get("version")}
    if judge_name == "daemonset" and meta.get("name") == "nvidia-operator-validator":
        options = {"minimum_desired": 1}
    if judge_name in ("clusterpolicy", "clusteroperators", "machines", "machineconfigpools", "dscinitialization",
                      "datasciencecluster", "gpu_nodes"):
        name = name if judge_name not in ("gpu_nodes",) else None
    return base.Target(meta.get("namespace"), name, (), options)


JUDGE_OF_KIND = {
    ("operators.coreos.com", "CatalogSource"): "catalogsource",
    ("operators.coreos.com", "Subscription"): "subscription",
    ("operators.coreos.com", "InstallPlan"): "installplan",
    ("operators.coreos.com", "ClusterServiceVersion"): "csv",
    ("nfd.openshift.io", "NodeFeatureDiscovery"): "nodefeaturediscovery",
    ("nvidia.com", "ClusterPolicy"): "clusterpolicy",
    ("", "Node"): "gpu_nodes",
    ("", "Pod"): "pods_ready",
    ("batch", "Job"): "job",
    ("apps", "Deployment"): "deployment",
    ("apps", "DaemonSet"): "daemonset",
    ("apps", "StatefulSet"): "statefulset",
    ("dscinitialization.opendatahub.io", "DSCInitialization"): "dscinitialization",
    ("datasciencecluster.opendatahub.io", "DataScienceCluster"): "datasciencecluster",
    ("serving.kserve.io", "InferenceService"): "inferenceservice",
    ("serving.kserve.io", "LLMInferenceService"): "llminferenceservice",
    ("gateway.networking.k8s.io", "Gateway"): "gateway",
    ("gateway.networking.k8s.io", "HTTPRoute"): "httproute",
    ("inference.networking.k8s.io", "InferencePool"): "inferencepool",
    ("inference.networking.x-k8s.io", "InferencePool"): "inferencepool",
    ("tekton.dev", "PipelineRun"): "pipelinerun",
    ("tekton.dev", "TaskRun"): "taskrun",
    ("kubeflow.org", "PyTorchJob"): "pytorchjob",
    ("ray.io", "RayJob"): "rayjob",
    ("operator.openshift.io", "ClusterCSIDriver"): "clustercsidriver",
    ("datasciencepipelinesapplications.opendatahub.io", "DataSciencePipelinesApplication"): "dspa",
    ("trainer.kubeflow.org", "TrainJob"): "trainjob",
    ("config.openshift.io", "ClusterOperator"): "clusteroperators",
    ("config.openshift.io", "ClusterVersion"): "clusterversion",
    ("machine.openshift.io", "Machine"): "machines",
    ("build.openshift.io", "Build"): "build",
    ("route.openshift.io", "Route"): "route",
    ("machineconfiguration.openshift.io", "MachineConfigPool"): "machineconfigpools",
    ("machineconfiguration.openshift.io", "KubeletConfig"): "kubeletconfig",
    ("monitoring.coreos.com", "Prometheus"): "prometheus",
    ("argoproj.io", "Workflow"): "argo_workflows",
}


def test_the_corpus_is_large_enough_and_every_entry_says_where_it_comes_from():
    assert len(CORPUS_ENTRIES) >= 40
    projects = {path.split(os.sep)[0] for path, _entry in CORPUS_ENTRIES}
    assert {"olm", "nfd", "gpu-operator", "odh", "kserve", "gateway", "tekton", "kube", "openshift"} <= projects
    for path, entry in CORPUS_ENTRIES:
        provenance = entry["provenance"]
        assert provenance["repository"].startswith("https://github.com/"), path
        assert re.fullmatch(r"[0-9a-f]{40}", provenance["commit"]), path
        assert provenance["path"] and provenance["how"] in ("verbatim", "transcribed", "assembled"), path
        assert provenance.get("note"), path
        assert entry["expect"] in EXPECTED and entry["meaning"], path
        assert entry["object"]["apiVersion"] and entry["object"]["kind"] and "status" in entry["object"], path
        # the file name says what it holds
        assert entry["expect"] in os.path.basename(path), path


@pytest.mark.parametrize("path,entry", CORPUS_ENTRIES, ids=[p for p, _entry in CORPUS_ENTRIES])
def test_each_wait_meets_the_upstream_state_as_upstream_means_it(path, entry):
    obj = entry["object"]
    judge_name = entry.get("wait") or JUDGE_OF_KIND.get(group_kind(obj))
    assert judge_name, "%s: no wait judges %s %s" % (path, *group_kind(obj))
    judge = waits.judge(judge_name)
    seen = judge.observe({"subject": [obj]}, target_for(judge_name, obj))
    assert seen.state == EXPECTED[entry["expect"]], "%s (%s): %r" % (path, entry["meaning"], seen)
    # the summary names the object (or what is missing) in one line
    assert "\n" not in seen.summary and len(seen.summary) < 600
    if seen.state == "failed":
        assert (obj.get("metadata") or {}).get("name") in seen.summary, seen.summary


def role_waits():
    """``{judge: [role, ...]}`` of every ``perfscale.topsail.k8s_wait`` task in the roles."""
    used = {}
    for path in glob.glob(os.path.join(ROLES, "*", "tasks", "*.yml")):
        with open(path, encoding="utf-8") as handle:
            tasks = yaml.safe_load(handle) or []
        stack = list(tasks)
        while stack:
            task = stack.pop()
            if not isinstance(task, dict):
                continue
            for key in ("block", "rescue", "always"):
                stack.extend(task.get(key) or ())
            wait = task.get("perfscale.topsail.k8s_wait")
            if wait:
                judge = str(wait["judge"])
                # a templated judge names its choices as quoted literals
                names = re.findall(r"'([a-z_]+)'", judge) if "{{" in judge else [judge]
                assert names and all(n in waits.JUDGES for n in names), (path, judge)
                for name in names:
                    used.setdefault(name, set()).add(os.path.relpath(path, ROLES).split(os.sep)[0])
    return used


def test_every_wait_a_role_uses_is_held_against_upstream_success_and_non_success_states():
    covered = {}
    for _path, entry in CORPUS_ENTRIES:
        judge_name = entry.get("wait") or JUDGE_OF_KIND.get(group_kind(entry["object"]))
        covered.setdefault(judge_name, set()).add(entry["expect"])
    # waits judged on objects the corpus holds only as part of another judge's test (below)
    composite = {"gpu_stack", "gpu_time_slicing", "node_labels", "nodes_ready", "condition", "jsonpath", "pvc_bound",
                 "clusteroperator_reacted", "pods_considered", "image_pulled"}
    used = role_waits()
    assert used, "no role waits through perfscale.topsail.k8s_wait"
    for judge_name, roles in sorted(used.items()):
        if judge_name in composite:
            continue
        states = covered.get(judge_name, set())
        assert "success" in states and states & {"transient", "failure"}, (
            "wait %s (roles %s) has no upstream success and non-success object in the corpus" % (
                judge_name, ", ".join(sorted(roles))))


def test_no_role_waits_on_a_cluster_object_with_an_until_loop_of_its_own():
    """Waits on status objects go through the judges (held against upstream); a role's own until loop
    on k8s_info would escape the corpus."""
    offenders = []
    for path in glob.glob(os.path.join(ROLES, "*", "tasks", "*.yml")):
        with open(path, encoding="utf-8") as handle:
            tasks = yaml.safe_load(handle) or []
        stack = list(tasks)
        while stack:
            task = stack.pop()
            if not isinstance(task, dict):
                continue
            for key in ("block", "rescue", "always"):
                stack.extend(task.get(key) or ())
            if "kubernetes.core.k8s_info" in task and "until" in task:
                offenders.append("%s: %s" % (os.path.relpath(path, ROLES), task.get("name")))
    assert not offenders, offenders


def corpus_object(name):
    for path, entry in CORPUS_ENTRIES:
        if path == name:
            return entry["object"]
    raise KeyError(name)


def test_the_gpu_stack_is_not_trusted_on_the_cluster_policy_alone():
    """The GPU operator says ready with no NFD label and no GPU node: the stack judge does not."""
    judge = waits.judge("gpu_stack")
    target = base.Target()
    gpu_node = corpus_object(os.path.join("gpu-operator", "node-success-gpu-labelled-allocatable.yaml"))
    bare_node = {"kind": "Node", "metadata": {"name": "worker-0", "labels": {}}, "status": {}}
    validator = corpus_object(os.path.join("gpu-operator", "daemonset-validator-success-ready.yaml"))
    starting = corpus_object(os.path.join("gpu-operator", "daemonset-validator-transient-not-all-available.yaml"))
    for policy_file in ("clusterpolicy-transient-nfd-labels-missing.yaml", "clusterpolicy-transient-no-gpu-nodes.yaml"):
        policy = corpus_object(os.path.join("gpu-operator", policy_file))
        assert policy["status"]["state"] == "ready"
        seen = judge.observe({"subject": [policy], "nodes": [bare_node], "validator": []}, target)
        assert seen.state == "waiting" and "NFD" in seen.summary
    reconciled = corpus_object(os.path.join("gpu-operator", "clusterpolicy-success-reconciled.yaml"))
    nfd_only = {"kind": "Node", "metadata": {"name": "worker-0", "labels": {
        "feature.node.kubernetes.io/system-os_release.ID": "rhcos"}}}
    seen = judge.observe({"subject": [reconciled], "nodes": [nfd_only], "validator": []}, target)
    assert seen.state == "waiting" and "no node has an NVIDIA GPU label" in seen.summary
    seen = judge.observe({"subject": [reconciled], "nodes": [gpu_node], "validator": [starting]}, target)
    assert seen.state == "waiting" and "nvidia-operator-validator" in seen.summary
    seen = judge.observe({"subject": [reconciled], "nodes": [gpu_node], "validator": [validator]}, target)
    assert seen.state == "ready", seen


def test_an_inference_service_knative_cannot_serve_fails_at_once_on_its_event():
    """KServe's only word on Knative mode without Knative is a Warning event; the status looks new."""
    isvc = corpus_object(os.path.join("kserve", "inferenceservice-transient-knative-rejected.yaml"))
    judge = waits.judge("inferenceservice")
    target = base.Target("default", "serverless-isvc")
    assert judge.observe({"subject": [isvc], "events": []}, target).state == "waiting"
    event = {"kind": "Event", "type": "Warning", "reason": "ServerlessModeRejected",
             "message": "It is not possible to use Knative deployment mode when Knative Services are not available",
             "involvedObject": {"kind": "InferenceService", "name": "serverless-isvc", "namespace": "default"}}
    seen = judge.observe({"subject": [isvc], "events": [event]}, target)
    assert seen.state == "failed"
    assert seen.summary == ("InferenceService default/serverless-isvc: ServerlessModeRejected: It is not possible to "
                            "use Knative deployment mode when Knative Services are not available (deployment mode Knative)")


def test_a_cluster_operator_reacted_to_a_change_when_progressing_moved_since():
    operator = corpus_object(os.path.join("openshift", "clusteroperator-success.yaml"))
    progressing = next(c for c in operator["status"]["conditions"] if c["type"] == "Progressing")
    judge = waits.judge("clusteroperator_reacted")
    name = operator["metadata"]["name"]
    before = base.Target(None, name, options={"since": "2000-01-01T00:00:00Z"})
    after = base.Target(None, name, options={"since": "2999-01-01T00:00:00Z"})
    assert progressing["status"] == "False"
    assert judge.observe({"subject": [operator]}, before).state == "ready"
    assert judge.observe({"subject": [operator]}, after).state == "waiting"
    moving = dict(operator, status=dict(operator["status"], conditions=[dict(progressing, status="True")]))
    assert judge.observe({"subject": [moving]}, after).state == "ready"
