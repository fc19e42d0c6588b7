"""The wait loop of every cluster wait (kube/waits/base.py) and the judges of Kubernetes' own kinds."""

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import waits
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import base, core


class FakeTime:
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def pvc(phase):
    return {"kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "ns"}, "status": {"phase": phase}}


def run(judge, answers, timeout=30, delay=5, **target):
    """Wait with ``answers`` (a list of object lists, the last one repeated) as what the API returns."""
    time_ = FakeTime()
    calls = []

    def fetch(query):
        calls.append(query)
        answer = answers[min(len(calls) - 1, len(answers) - 1)]
        if isinstance(answer, Exception):
            raise answer
        return answer
    target.setdefault("name", "data")
    target.setdefault("namespace", "ns")
    result = base.wait_for(waits.judge(judge), base.Target(**target), fetch, timeout, delay, time_.clock, time_.sleep)
    return result, time_, calls


def test_a_wait_goes_through_transient_states_and_records_each_once():
    result, time_, _calls = run("pvc_bound", [[pvc("Pending")], [pvc("Pending")], [pvc("Bound")]])
    assert result.state == "ready" and not result.timed_out
    assert [s["state"] for s in result.states] == ["waiting", "ready"]
    assert result.states[1]["after_s"] == 10.0
    assert time_.sleeps == [5, 5]


def test_a_watched_change_brings_the_next_look_forward_but_not_before_the_minimum_interval():
    time_ = FakeTime()
    answers = iter([[pvc("Pending")], [pvc("Pending")], [pvc("Bound")]])
    watched = []

    def watch(seconds):
        watched.append(seconds)
        time_.now += 0.1          # the subject changed 0.1 s into the watch
        return True
    result = base.wait_for(waits.judge("pvc_bound"), base.Target("ns", "data"), lambda query: next(answers), 30, 5,
                           time_.clock, time_.sleep, watch)
    assert result.state == "ready"
    assert watched == [5, 5]
    assert time_.sleeps == [pytest.approx(0.4), pytest.approx(0.4)] and time_.now == pytest.approx(1.0)


@pytest.mark.parametrize("outcome", [False, base.FetchError("watch refused")])
def test_a_watch_that_ends_without_a_change_leaves_a_plain_sleep(outcome):
    time_ = FakeTime()

    def watch(seconds):
        time_.now += 2
        if isinstance(outcome, Exception):
            raise outcome
        return outcome
    base.pause(5, watch, time_.clock, time_.sleep)
    assert time_.now == 5 and time_.sleeps == [3]
    base.pause(0, watch, time_.clock, time_.sleep)       # nothing left to wait: no watch at all
    assert time_.now == 5


def test_a_wait_that_times_out_names_the_last_state_seen_in_one_line():
    result, time_, _calls = run("pvc_bound", [[pvc("Pending")]], timeout=12, delay=5)
    assert result.state == "waiting" and result.timed_out
    assert result.message(12) == "not ready after 12 s; last state: PersistentVolumeClaim ns/data: Pending"
    # the last look happens at the deadline, not after it
    assert time_.sleeps == [5, 5, 2] and time_.now == 12


def test_a_terminal_state_ends_the_wait_at_once():
    result, time_, _calls = run("pvc_bound", [[pvc("Lost")]])
    assert result.state == "failed" and time_.sleeps == []
    assert result.message(30) == "PersistentVolumeClaim ns/data: Lost (its volume is gone)"


def test_api_errors_are_waited_through_unless_they_are_final():
    result, _time, _calls = run("pvc_bound", [base.FetchError("503 Service Unavailable"), [pvc("Bound")]])
    assert result.state == "ready"
    assert result.states[0] == {"after_s": 0.0, "state": "waiting", "summary": "API error: 503 Service Unavailable"}
    result, time_, _calls = run("pvc_bound", [base.FetchError("403 Forbidden", terminal=True)])
    assert result.state == "failed" and result.summary == "API error: 403 Forbidden" and time_.sleeps == []


def test_a_missing_object_is_waited_for():
    result, _time, _calls = run("pvc_bound", [[], [pvc("Bound")]])
    assert result.states[0]["summary"] == "PersistentVolumeClaim data -n ns does not exist (yet)"
    assert result.state == "ready"


@pytest.mark.parametrize("judge,target,message", [
    ("nope", {}, "wait: unknown judge 'nope' (known: "),
    ("pvc_bound", {"options": {"colour": "red"}}, "wait pvc_bound: unknown option(s) colour (it takes: none)"),
    ("job", {"name": None}, "wait job: expected the Job's name or label selectors"),
    ("installplan", {"name": None}, "wait installplan: name: missing; expected the InstallPlan to wait for"),
    ("node_labels", {"name": None}, "wait node_labels: expected a label or a label_prefix"),
    ("condition", {"options": {"kind": "Pod"}}, "wait condition: expected the api_version and kind of the objects"),
])
def test_a_wait_that_cannot_be_done_is_one_line(judge, target, message):
    with pytest.raises(base.WaitError) as caught:
        run(judge, [[]], **target)
    assert str(caught.value).startswith(message)


def test_bad_timings_are_refused():
    with pytest.raises(base.WaitError, match="expected timeout >= 0 and delay > 0 seconds"):
        run("pvc_bound", [[]], delay=0)


def test_every_judge_is_documented_and_names_its_upstream_source():
    for name, cls in waits.JUDGES.items():
        assert cls.name == name and cls.description, name
        repository, files = cls.upstream
        assert repository.startswith("https://github.com/") and files, name


def pod(phase, ready=False, waiting=None, message="", scheduled=True):
    status = {"phase": phase, "conditions": [{"type": "Ready", "status": str(ready)},
                                             {"type": "PodScheduled", "status": str(scheduled),
                                              **({} if scheduled else {"reason": "Unschedulable",
                                                                       "message": "0/4 nodes are available"})}]}
    if waiting:
        status["containerStatuses"] = [{"name": "main", "state": {"waiting": {"reason": waiting, "message": message}}}]
    return {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "status": status}


@pytest.mark.parametrize("obj,state,summary", [
    (pod("Pending", waiting="ContainerCreating"), "waiting", "container main ContainerCreating"),
    (pod("Pending", waiting="ImagePullBackOff", message="Back-off pulling image"), "waiting",
     "container main ImagePullBackOff (Back-off pulling image)"),
    (pod("Running", waiting="CrashLoopBackOff"), "waiting", "container main CrashLoopBackOff"),
    (pod("Pending", waiting="InvalidImageName", message="couldn't parse image name"), "failed", "InvalidImageName"),
    (pod("Pending", scheduled=False), "waiting", "not scheduled: PodScheduled=False (Unschedulable: 0/4 nodes"),
    (pod("Failed"), "failed", "Pod ns/p: Failed"),
    (pod("Running", ready=True), "ready", "1 pod(s) Running and Ready"),
])
def test_pods_are_judged_as_the_kubelet_treats_them(obj, state, summary):
    seen = waits.judge("pods_ready").observe({"subject": [obj]}, base.Target("ns"))
    assert seen.state == state and summary in seen.summary


def deployment(**status):
    return {"kind": "Deployment", "metadata": {"name": "d", "namespace": "ns", "generation": 2},
            "spec": {"replicas": 2}, "status": dict({"observedGeneration": 2}, **status)}


@pytest.mark.parametrize("obj,state,summary", [
    (deployment(observedGeneration=1), "waiting", "waiting for the rollout to be observed"),
    (deployment(updatedReplicas=1, replicas=2), "waiting", "1 of 2 new replicas updated"),
    (deployment(updatedReplicas=2, replicas=3), "waiting", "1 old replicas pending termination"),
    (deployment(updatedReplicas=2, replicas=2, availableReplicas=1), "waiting", "1 of 2 updated replicas available"),
    (deployment(updatedReplicas=2, replicas=2, availableReplicas=2), "ready", "rolled out"),
    (deployment(conditions=[{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                             "message": 'ReplicaSet "d-1" has timed out progressing.'}]), "failed",
     "Progressing=False (ProgressDeadlineExceeded"),
])
def test_deployments_are_judged_as_kubectl_rollout_status_does(obj, state, summary):
    seen = waits.judge("deployment").observe({"subject": [obj]}, base.Target("ns", "d"))
    assert seen.state == state and summary in seen.summary


def test_a_daemonset_with_nothing_to_run_is_not_rolled_out_when_pods_are_expected():
    empty = {"kind": "DaemonSet", "metadata": {"name": "v", "namespace": "ns"},
             "status": {"desiredNumberScheduled": 0, "numberAvailable": 0, "updatedNumberScheduled": 0}}
    assert waits.judge("daemonset").observe({"subject": [empty]}, base.Target("ns", "v")).state == "ready"
    seen = waits.judge("daemonset").observe({"subject": [empty]}, base.Target("ns", "v", options={"minimum_desired": 1}))
    assert seen.state == "waiting" and "0 pods desired, expected at least 1" in seen.summary


def test_a_jobs_wait_names_its_pods_trouble():
    job = {"kind": "Job", "metadata": {"name": "j", "namespace": "ns"}, "status": {"active": 1}}
    puller = pod("Pending", waiting="ImagePullBackOff")
    puller["metadata"]["labels"] = {"batch.kubernetes.io/job-name": "j"}
    seen = waits.judge("job").observe({"subject": [job], "pods": [puller]}, base.Target("ns", "j"))
    assert seen.state == "waiting"
    assert seen.summary == "Job ns/j: running (active=1 succeeded=0 failed=0); Pod ns/p: Pending, container main ImagePullBackOff"
    assert core.pod_state(pod("Succeeded")) == "failed"
    assert core.pod_state(pod("Succeeded"), succeeded_is_ready=True) == "ready"


def test_a_failed_job_names_its_newest_failed_pod():
    job = {"kind": "Job", "metadata": {"name": "j", "namespace": "ns"},
           "status": {"failed": 2, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                                                   "message": "Job has reached the specified backoff limit"}]}}
    older, newer = pod("Failed"), pod("Failed")
    for item, name, created, exit_message in ((older, "p-1", "2026-01-01T00:00:00Z", "first"),
                                              (newer, "p-2", "2026-01-01T00:01:00Z", "curl: (22) 404 Not Found")):
        item["metadata"].update(name=name, creationTimestamp=created, labels={"batch.kubernetes.io/job-name": "j"})
        item["status"]["containerStatuses"] = [{"name": "download", "state": {"terminated": {
            "exitCode": 22, "reason": "Error", "message": exit_message}}}]
    seen = waits.judge("job").observe({"subject": [job], "pods": [older, newer]}, base.Target("ns", "j"))
    assert seen.state == "failed"
    assert seen.summary == ("Job ns/j: Failed=True (BackoffLimitExceeded: Job has reached the specified backoff limit); "
                            "Pod ns/p-2: Failed, container download Error (exit code 22: curl: (22) 404 Not Found)")
    # the pods already gone: the Job's condition alone
    gone = waits.judge("job").observe({"subject": [job], "pods": []}, base.Target("ns", "j"))
    assert gone.summary == "Job ns/j: Failed=True (BackoffLimitExceeded: Job has reached the specified backoff limit)"


def test_generic_waits_read_any_kind():
    obj = {"kind": "Widget", "metadata": {"name": "w"}, "status": {"conditions": [{"type": "Ready", "status": "False",
                                                                                   "reason": "Starting"}], "phase": "Up"}}
    target = base.Target(None, "w", options={"api_version": "x.io/v1", "kind": "Widget", "type": "Ready"})
    seen = waits.judge("condition").observe({"subject": [obj]}, target)
    assert seen.state == "waiting" and seen.summary == "Widget w: Ready=False (Starting) (waiting for Ready=True)"
    target = base.Target(None, "w", options={"api_version": "x.io/v1", "kind": "Widget", "jsonpath": ".status.phase",
                                             "value": "Up"})
    assert waits.judge("jsonpath").observe({"subject": [obj]}, target).state == "ready"
    assert waits.judge("jsonpath").observe({"subject": []}, target).summary == "Widget w: none exists (yet)"


def test_several_jobs_end_when_all_have_finished_and_name_the_one_that_failed():
    def job(name, *conditions):
        return {"kind": "Job", "metadata": {"name": name, "namespace": "ns"},
                "status": {"conditions": [{"type": c, "status": "True", "reason": "BackoffLimitExceeded"
                                           if c == "Failed" else "CompletionsReached"} for c in conditions]}}
    judge, target = waits.judge("job"), base.Target("ns", label_selectors=["app=burn"], options={"count": 2})
    assert judge.observe({"subject": [job("a", "Complete")]}, target).summary == "1 of 2 Job(s) exist (app=burn)"
    seen = judge.observe({"subject": [job("a", "Failed"), job("b")]}, target)
    assert seen.state == "waiting" and seen.summary.startswith("1 of 2 Job(s) running; Job ns/b: running")
    seen = judge.observe({"subject": [job("a", "Failed"), job("b", "Complete")]}, target)
    assert seen == base.Seen("failed", "Job ns/a: Failed=True (BackoffLimitExceeded)")
    assert judge.observe({"subject": [job("a", "Complete"), job("b", "Complete")]}, target).state == "ready"


def test_gpu_inventory_lists_the_operator_labelled_nodes_with_their_allocatable_gpus():
    from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import gpu

    def node(name, labels, allocatable):
        return {"metadata": {"name": name, "labels": labels}, "status": {"allocatable": allocatable}}

    nodes = [
        node("worker-b", {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-L40S"},
             {"nvidia.com/gpu": "4"}),
        # time-sliced with renameByDefault: the replicas are advertised as nvidia.com/gpu.shared
        node("worker-a", {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A100"},
             {"nvidia.com/gpu": "0", "nvidia.com/gpu.shared": "16"}),
        # NFD saw the PCI device but the operator has not labelled it yet
        node("worker-c", {"feature.node.kubernetes.io/pci-10de.present": "true"}, {}),
        node("worker-d", {"nvidia.com/gpu.present": "true"}, {}),
    ]
    assert gpu.gpu_inventory(nodes) == "worker-a 16 NVIDIA-A100\nworker-b 4 NVIDIA-L40S\nworker-d 0\n"
    assert gpu.gpu_inventory([]) == ""


def test_a_failed_pytorchjob_names_its_failed_pod():
    job = {"kind": "PyTorchJob", "metadata": {"name": "ft", "namespace": "ns"},
           "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "PyTorchJobFailed",
                                      "message": "PyTorchJob ft is failed because 1 Master replica(s) failed."}]}}
    master = pod("Failed")
    master["metadata"].update(name="ft-master-0", labels={"training.kubeflow.org/job-name": "ft"})
    master["status"]["containerStatuses"] = [{"name": "pytorch", "state": {"terminated": {
        "exitCode": 1, "reason": "Error", "message": "torch.OutOfMemoryError: CUDA out of memory"}}}]
    seen = waits.judge("pytorchjob").observe({"subject": [job], "pods": [master]}, base.Target("ns", "ft"))
    assert seen.state == "failed"
    assert seen.summary.endswith("; Pod ns/ft-master-0: Failed, container pytorch Error "
                                 "(exit code 1: torch.OutOfMemoryError: CUDA out of memory)"), seen.summary


def test_queries_are_equal_when_they_read_the_same_objects():
    # the module recognises the subject among the queries wait_for builds again
    assert base.Query("v1", "Pod", "ns", "p", ["a=b"]) == base.Query("v1", "Pod", "ns", "p", ("a=b",))
    assert base.Query("v1", "Pod", "ns", "p") != base.Query("v1", "Pod", "other", "p")
    assert len({base.Query("v1", "Pod", "ns"), base.Query("v1", "Pod", "ns")}) == 1
