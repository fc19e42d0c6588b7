"""Every wait of the collection held against what the upstream controllers really write.

tests/fixtures/upstream/ holds status objects taken from the upstream projects' tests, samples and
docs (README.md there): a success object must end a wait well, a transient one must not end it, a
failure one must end it with the failure named. The roles' waits are the judges of
plugins/module_utils/kube/waits/; every judge a role uses must meet the corpus here.
"""

import copy
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
    # the other objects the judge reads in that state (its predictor's pods), when the entry has them
    found = dict(entry.get("related") or {}, subject=[obj])
    seen = judge.observe(found, target_for(judge_name, obj))
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
                # one judge, or several waits (each its judge, or the task's); waits built by a template
                # name each judge as a quoted literal ('judge': 'deployment')
                several = wait.get("waits") or [wait]
                if isinstance(several, str):
                    judges = re.findall(r"'judge':\s*'([a-z_]+)'", several)
                    assert judges, (path, several)
                else:
                    judges = [str(entry.get("judge") or wait["judge"]) for entry in several]
                for judge in judges:
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


def corpus_entry(name):
    for path, entry in CORPUS_ENTRIES:
        if path == name:
            return entry
    raise KeyError(name)


def isvc_seen(name, options=None, **found):
    """The inferenceservice judge on a corpus entry (its related objects unless ``found`` replaces them)."""
    entry = corpus_entry(os.path.join("kserve", name))
    obj = entry["object"]
    objects = dict(entry.get("related") or {}, subject=[obj], events=[])
    objects.update(found)
    target = base.Target(obj["metadata"]["namespace"], obj["metadata"]["name"], options=options)
    return waits.judge("inferenceservice").observe(objects, target)


def test_a_model_that_crashed_once_is_waited_through_then_ready_with_its_failure_still_recorded():
    """KServe's BlockedByFailedLoad is not final: the wait goes on while the kubelet restarts the container,
    naming the crash and the bound, and ends well once KServe says Loaded (lastFailureInfo stays)."""
    blocked = isvc_seen("inferenceservice-transient-blocked-by-failed-load.yaml")
    assert blocked == base.waiting(
        "InferenceService default/crashed-once: model BlockedByFailedLoad (container kserve-container of pod "
        "crashed-once-predictor-5d8f7c9b4-x2x7q restarted 0 time(s), last terminated CrashLoopBackOff exit code 1: "
        "For testing); KServe marks it Loaded when a restart succeeds (failed after 5 restarts)")
    loaded = isvc_seen("inferenceservice-success-loaded-after-recovery.yaml")
    assert loaded.state == "ready"
    assert corpus_entry(os.path.join("kserve", "inferenceservice-success-loaded-after-recovery.yaml"))[
        "object"]["status"]["modelStatus"]["lastFailureInfo"]["reason"] == "ModelLoadFailed"
    # with no pod to read (not listed yet), the failure info is named instead
    assert isvc_seen("inferenceservice-transient-blocked-by-failed-load.yaml", pods=[]).summary == (
        "InferenceService default/crashed-once: model BlockedByFailedLoad (ModelLoadFailed: For testing "
        "(exit code 1)); "
        "KServe marks it Loaded when a restart succeeds (failed after 5 restarts)")


def test_a_crash_loop_that_persists_past_max_restarts_fails_naming_the_container_and_its_last_termination():
    seen = isvc_seen("inferenceservice-failure-model-crash-loop.yaml")
    assert seen == base.failed(
        "InferenceService default/crash-loop: model BlockedByFailedLoad: container kserve-container of pod "
        "crash-loop-predictor-7b9d6c5f4-q8k2m restarted 6 time(s), last terminated Error exit code 1: "
        "torch.OutOfMemoryError: CUDA out of memory; still crashing after 6 restarts (max_restarts 5)")
    # the bound is the wait's option: with more room the same state is waited through
    assert isvc_seen("inferenceservice-failure-model-crash-loop.yaml", {"max_restarts": 10}).state == "waiting"
    assert isvc_seen("inferenceservice-transient-blocked-by-failed-load.yaml", {"max_restarts": "1"}).state == "waiting"
    # a storage-initializer that keeps failing is the same crash loop (the init container's restarts)
    entry = corpus_entry(os.path.join("kserve",
                                      "inferenceservice-transient-knative-storage-initializer-crashloop.yaml"))
    pod = entry["related"]["pods"][0]
    looping = dict(pod, status=dict(pod["status"], initContainerStatuses=[
        dict(pod["status"]["initContainerStatuses"][0], restartCount=5)]))
    seen = isvc_seen("inferenceservice-transient-knative-storage-initializer-crashloop.yaml", pods=[looping])
    assert seen.state == "failed" and "container storage-initializer of pod" in seen.summary
    assert "last terminated Error exit code 1: Invalid Storage URI provided" in seen.summary


def test_max_restarts_must_be_a_whole_number_of_at_least_one():
    judge = waits.judge("inferenceservice")
    for bad, shown in ((0, "0"), ("many", "many"), (True, "True"), (-3, "-3")):
        with pytest.raises(base.WaitError) as error:
            judge.check(base.Target("ns", "isvc", options={"max_restarts": bad}))
        assert str(error.value) == ("wait inferenceservice: max_restarts: %s; expected a whole number of at least 1"
                                    % shown)
    judge.check(base.Target("ns", "isvc", options={"max_restarts": "3"}))


def test_a_termination_message_from_the_container_is_one_printable_line():
    """A termination message is the container's log tail (FallbackToLogsOnError): whatever it holds, the
    summary is one line without control characters, cut to a summary's length."""
    entry = corpus_entry(os.path.join("kserve", "inferenceservice-failure-model-crash-loop.yaml"))
    pod = entry["related"]["pods"][0]
    status = pod["status"]["containerStatuses"][0]
    hostile = dict(status, lastState={"terminated": {"reason": "Error\x1b[2J", "exitCode": 1,
                                                     "message": "line one\nline two \x1b[31mred\x1b[0m" + "x" * 5000}})
    seen = isvc_seen("inferenceservice-failure-model-crash-loop.yaml",
                     pods=[dict(pod, status=dict(pod["status"], containerStatuses=[hostile]))])
    assert seen.state == "failed" and "\x1b" not in seen.summary and "\n" not in seen.summary
    assert "Error\\x1b[2J exit code 1: line one line two \\x1b[31mred\\x1b[0m" in seen.summary
    assert len(seen.summary) < 700


def test_raw_available_false_over_the_progress_deadline_is_waited_through_as_kserve_reports_it():
    """PropagateRawStatus lets Available=False override ProgressDeadlineExceeded: the InferenceService says
    MinimumReplicasUnavailable, which KServe keeps reconciling; a stalled rollout beside an available one
    (PredictorReady ProgressDeadlineExceeded) still ends the wait."""
    seen = isvc_seen("inferenceservice-transient-raw-available-false-over-deadline.yaml")
    assert seen == base.waiting("InferenceService default/slow-predictor: PredictorReady=False "
                                "(MinimumReplicasUnavailable: Deployment does not have minimum availability.)")
    obj = copy.deepcopy(corpus_entry(os.path.join(
        "kserve", "inferenceservice-transient-raw-available-false-over-deadline.yaml"))["object"])
    obj["status"]["conditions"][1] = {"type": "PredictorReady", "status": "False", "reason": "ProgressDeadlineExceeded",
                                      "message": 'ReplicaSet "slow-predictor-7c9" has timed out progressing.'}
    seen = waits.judge("inferenceservice").observe({"subject": [obj], "events": [], "pods": []},
                                                   base.Target("default", "slow-predictor"))
    assert seen.state == "failed" and "ProgressDeadlineExceeded" in seen.summary


def test_serverless_conditions_are_waited_through_until_knative_gives_up_on_the_revision():
    missing = isvc_seen("inferenceservice-transient-knative-revision-missing.yaml")
    assert missing == base.waiting(
        'InferenceService default/sklearn-iris: PredictorReady=Unknown (RevisionMissing: Configuration '
        '"sklearn-iris-predictor" is waiting for a Revision to become ready.)')
    crashed = isvc_seen("inferenceservice-transient-knative-revision-failed-container.yaml")
    assert crashed.state == "waiting" and "restarted 1 time(s)" in crashed.summary
    scaled = isvc_seen("inferenceservice-failure-knative-revision-scaled-to-zero.yaml")
    assert scaled == base.failed(
        "InferenceService default/scaled-away: model BlockedByFailedLoad with no predictor pod: PredictorReady=False "
        "(RevisionFailed: For testing) (the Knative revision failed and was scaled to zero)")


def test_a_runtime_not_created_yet_is_waited_for_and_one_that_cannot_serve_the_model_fails():
    seen = isvc_seen("inferenceservice-transient-runtime-not-recognized.yaml")
    assert seen == base.waiting("InferenceService default/early-isvc: model InvalidSpec (RuntimeNotRecognized: Waiting "
                                "for runtime to become available); KServe retries until the ServingRuntime exists")
    assert isvc_seen("inferenceservice-failure-no-supporting-runtime.yaml").state == "failed"


def test_the_serving_judges_cite_files_that_exist_at_the_cited_commit():
    """pkg/apis/serving/v1alpha1/llm_inference_service_status.go and pkg/controller/llmisvc do not exist at
    kserve aaac4e29: the LLMInferenceService lifecycle is v1alpha2's, its controller pkg/controller/v1alpha2/llmisvc."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import serving
    cited = " ".join([serving.__doc__] + [j.upstream[1] for j in serving.JUDGES])
    assert "llm_inference_service_status.go" not in cited and "pkg/controller/llmisvc" not in cited
    cited_by_llm = waits.judge("llminferenceservice").upstream[1]
    assert "pkg/apis/serving/v1alpha2/llm_inference_service_lifecycle.go" in cited_by_llm
    assert "pkg/controller/v1alpha2/llmisvc" in cited_by_llm
