"""Workload controllers and the scheduler through the real kubectl: success and failure paths.

Each assertion names the Kubernetes convention it checks (kube-controller-manager's
status fields and conditions, kube-scheduler's FitError, kubectl's rollout status).
"""

import json
import sys

import pytest

from kube_fixtures import kubesim_cluster

PREFIX = "kubesim.perfscale.io/"


@pytest.fixture(scope="module")
def sim():
    with kubesim_cluster(profile="vanilla", pod_start_delay=0.2, time_scale=20) as server:
        yield server


def apply(kubectl, manifest):
    return kubectl("apply", "-f", "-", input=json.dumps(manifest))


def get(kubectl, *args):
    return json.loads(kubectl("get", *args, "-o", "json").stdout)


def deployment(name, replicas=2, annotations=None, node_selector=None, deadline=None, image="nginx:1.27"):
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}, "annotations": annotations or {}},
                         "spec": {"containers": [{"name": "web", "image": image}]}}}
    if node_selector:
        spec["template"]["spec"]["nodeSelector"] = node_selector
    if deadline:
        spec["progressDeadlineSeconds"] = deadline
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def job(name, annotations=None, command=None, **spec):
    container = {"name": "main", "image": "registry.example.com/bench:1"}
    if command:
        container["command"] = command
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": dict(spec, template={"metadata": {"annotations": annotations or {}},
                                         "spec": {"restartPolicy": "Never", "containers": [container]}})}
    return body


def test_deployment_rollout_scale_and_cascade(kubectl):
    apply(kubectl, deployment("web", annotations={PREFIX + "log": "serving on :8080"}))
    # kubectl rollout status: observedGeneration, updatedReplicas, availableReplicas (deployment util conventions)
    assert "successfully rolled out" in kubectl("rollout", "status", "deployment/web", "--timeout=30s").stdout
    kubectl("wait", "--for=condition=Available", "deployment/web", "--timeout=30s")
    status = get(kubectl, "deployment", "web")["status"]
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"], status["updatedReplicas"]) == (2, 2, 2, 2)
    assert status["observedGeneration"] == 1
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert progressing["reason"] == "NewReplicaSetAvailable"
    # Deployment -> ReplicaSet -> Pods, each controlled by its owner (ownerReferences, controller: true)
    replica_sets = get(kubectl, "replicasets", "-l", "app=web")["items"]
    assert len(replica_sets) == 1 and replica_sets[0]["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    pods = get(kubectl, "pods", "-l", "app=web")["items"]
    assert len(pods) == 2 and all(p["metadata"]["ownerReferences"][0]["name"] == replica_sets[0]["metadata"]["name"]
                                  for p in pods)
    # the pod template's steering annotations reach the pods
    assert kubectl("logs", "deployment/web").stdout == "serving on :8080\n"
    # scale subresource
    kubectl("scale", "deployment/web", "--replicas=3")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    assert get(kubectl, "deployment", "web")["status"]["readyReplicas"] == 3
    # a template change is a new ReplicaSet (revision 2); the old one is scaled to 0
    kubectl("set", "image", "deployment/web", "web=nginx:1.28")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    replica_sets = get(kubectl, "replicasets", "-l", "app=web")["items"]
    by_revision = {rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: rs for rs in replica_sets}
    assert by_revision["2"]["spec"]["replicas"] == 3 and by_revision["1"]["spec"]["replicas"] == 0
    images = {p["spec"]["containers"][0]["image"] for p in get(kubectl, "pods", "-l", "app=web")["items"]}
    assert images == {"nginx:1.28"}
    # cascade: deleting the Deployment deletes its ReplicaSets and pods (background propagation)
    kubectl("delete", "deployment", "web", "--wait=true", "--cascade=foreground", "--timeout=30s")
    kubectl("wait", "--for=delete", "pods", "-l", "app=web", "--timeout=30s")
    assert get(kubectl, "replicasets", "-l", "app=web")["items"] == []


def test_unschedulable_deployment_exceeds_its_progress_deadline(kubectl):
    apply(kubectl, deployment("stuck", replicas=1, node_selector={"disktype": "nvme"}, deadline=30))
    # Deployment convention: no progress for progressDeadlineSeconds -> Progressing=False, ProgressDeadlineExceeded
    kubectl("wait", "--for=condition=Progressing=False", "deployment/stuck", "--timeout=30s")
    status = get(kubectl, "deployment", "stuck")["status"]
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert progressing["reason"] == "ProgressDeadlineExceeded"
    assert next(c for c in status["conditions"] if c["type"] == "Available")["status"] == "False"
    result = kubectl("rollout", "status", "deployment/stuck", "--timeout=10s", check=False)
    assert result.returncode != 0 and "exceeded its progress deadline" in result.stderr
    # kube-scheduler: PodScheduled=False, reason Unschedulable, the FitError message, a FailedScheduling event
    pod = get(kubectl, "pods", "-l", "app=stuck")["items"][0]
    scheduled = pod["status"]["conditions"][0]
    assert (pod["status"]["phase"], scheduled["type"], scheduled["status"], scheduled["reason"]) == \
        ("Pending", "PodScheduled", "False", "Unschedulable")
    assert scheduled["message"].startswith("0/4 nodes are available: ") and \
        "3 node(s) didn't match Pod's node affinity/selector" in scheduled["message"] and \
        "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }" in scheduled["message"]
    events = kubectl("get", "events", "--field-selector", "reason=FailedScheduling", "-o", "json").stdout
    assert pod["metadata"]["name"] in events
    kubectl("delete", "deployment", "stuck")


def test_replica_failure_and_crash_loop(sim, kubectl):
    sim.faults.add("controller", controller="replicaset", match={"namespace": "default"}, message="exceeded quota: compute")
    apply(kubectl, deployment("quota", replicas=1))
    # ReplicaSet convention: a failed pod creation is ReplicaFailure=True (FailedCreate), copied to the Deployment
    kubectl("wait", "--for=condition=ReplicaFailure", "deployment/quota", "--timeout=30s")
    failure = next(c for c in get(kubectl, "deployment", "quota")["status"]["conditions"] if c["type"] == "ReplicaFailure")
    assert (failure["reason"], failure["message"]) == ("FailedCreate", "exceeded quota: compute")
    sim.faults.remove()
    kubectl("delete", "deployment", "quota")
    apply(kubectl, deployment("crashy", replicas=1, annotations={PREFIX + "outcome": "CrashLoopBackOff",
                                                                PREFIX + "duration-s": "2"}))
    kubectl("wait", "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=CrashLoopBackOff", "pods",
            "-l", "app=crashy", "--timeout=30s")
    # the kubelet's back-off keeps the pod unready most of the time: the Deployment is not available
    kubectl("wait", "--for=condition=Available=False", "deployment/crashy", "--timeout=30s")
    kubectl("delete", "deployment", "crashy")


def test_job_completes_with_parallel_pods(kubectl):
    apply(kubectl, job("batch", annotations={PREFIX + "duration-s": "5", PREFIX + "log": "done"}, completions=3,
                       parallelism=2))
    kubectl("wait", "--for=condition=complete", "job/batch", "--timeout=30s")
    status = get(kubectl, "job", "batch")["status"]
    # Job status (1.31+): SuccessCriteriaMet then Complete, counts, startTime/completionTime
    assert status["succeeded"] == 3 and "failed" not in status and "active" not in status  # omitempty counts
    assert [c["type"] for c in status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert status["conditions"][1]["reason"] == "CompletionsReached" and status["startTime"] <= status["completionTime"]
    pods = get(kubectl, "pods", "-l", "job-name=batch")["items"]
    assert len(pods) == 3 and {p["status"]["phase"] for p in pods} == {"Succeeded"}
    assert pods[0]["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == \
        get(kubectl, "job", "batch")["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"]
    assert kubectl("logs", "job/batch").stdout == "done\n"


def test_job_failure_paths(kubectl):
    apply(kubectl, job("flaky", annotations={PREFIX + "outcome": "Failed", PREFIX + "exit-code": "3"}, backoffLimit=1))
    kubectl("wait", "--for=condition=failed", "job/flaky", "--timeout=60s")
    status = get(kubectl, "job", "flaky")["status"]
    # backoffLimit 1: the second failure fails the Job (FailureTarget then Failed, BackoffLimitExceeded)
    assert status["failed"] == 2 and [c["type"] for c in status["conditions"]] == ["FailureTarget", "Failed"]
    assert status["conditions"][1]["reason"] == "BackoffLimitExceeded"
    apply(kubectl, job("slow", annotations={PREFIX + "duration-s": "1000"}, activeDeadlineSeconds=10))
    kubectl("wait", "--for=condition=failed", "job/slow", "--timeout=30s")
    failed = next(c for c in get(kubectl, "job", "slow")["status"]["conditions"] if c["type"] == "Failed")
    assert (failed["reason"], failed["message"]) == ("DeadlineExceeded", "Job was active longer than specified deadline")
    kubectl("wait", "--for=delete", "pods", "-l", "job-name=slow", "--timeout=30s")
    # validation written in Go: a Job's pods must not restart forever
    bad = job("always")
    bad["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    result = kubectl("apply", "-f", "-", input=json.dumps(bad), check=False)
    assert result.returncode != 0 and "spec.template.spec.restartPolicy" in result.stderr


def test_job_pods_run_their_command_locally(kubectl):
    script = "import os, sys; print('rank', os.environ['JOB_COMPLETION_INDEX']); sys.exit(int(os.environ['CODE']))"
    ok = job("local-ok", annotations={PREFIX + "run-local": "true"}, command=[sys.executable, "-c", script],
             completionMode="Indexed", completions=2, parallelism=2)
    ok["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "CODE", "value": "0"}]
    apply(kubectl, ok)
    kubectl("wait", "--for=condition=complete", "job/local-ok", "--timeout=60s")
    status = get(kubectl, "job", "local-ok")["status"]
    assert status["succeeded"] == 2 and status["completedIndexes"] == "0-1"
    logs = sorted(kubectl("logs", p["metadata"]["name"]).stdout for p in
                  get(kubectl, "pods", "-l", "job-name=local-ok")["items"])
    assert logs == ["rank 0\n", "rank 1\n"]
    bad = job("local-bad", annotations={PREFIX + "run-local": "true"}, command=[sys.executable, "-c", script],
              backoffLimit=0)
    bad["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "CODE", "value": "7"},
                                                               {"name": "JOB_COMPLETION_INDEX", "value": "x"}]
    apply(kubectl, bad)
    kubectl("wait", "--for=condition=failed", "job/local-bad", "--timeout=60s")
    pod = get(kubectl, "pods", "-l", "job-name=local-bad")["items"][0]
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 7


def test_indexed_job_with_backoff_limit_per_index_lets_the_other_indexes_finish(kubectl):
    script = "import os, sys; sys.exit(3 if os.environ['JOB_COMPLETION_INDEX'] == '1' else 0)"
    users = job("per-index", annotations={PREFIX + "run-local": "true"}, command=[sys.executable, "-c", script],
                completionMode="Indexed", completions=4, parallelism=4, backoffLimitPerIndex=0)
    apply(kubectl, users)
    kubectl("wait", "--for=condition=failed", "job/per-index", "--timeout=60s")
    status = get(kubectl, "job", "per-index")["status"]
    # index 1 failed once and was not retried; the others ran to the end
    assert (status["completedIndexes"], status["failedIndexes"], status["succeeded"], status["failed"]) == \
        ("0,2-3", "1", 3, 1)
    assert next(c for c in status["conditions"] if c["type"] == "Failed")["reason"] == "FailedIndexes"
    pods = get(kubectl, "pods", "-l", "job-name=per-index")["items"]
    assert len(pods) == 4


def test_statefulset_ordinals_and_volumes(kubectl):
    apply(kubectl, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
                    "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                             "template": {"metadata": {"labels": {"app": "db"}},
                                          "spec": {"containers": [{"name": "pg", "image": "postgres:17"}]}},
                             "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                                 "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}})
    kubectl("rollout", "status", "statefulset/db", "--timeout=30s")
    status = get(kubectl, "statefulset", "db")["status"]
    assert (status["replicas"], status["readyReplicas"], status["currentReplicas"]) == (3, 3, 3)
    assert status["currentRevision"] == status["updateRevision"]
    pods = get(kubectl, "pods", "-l", "app=db")["items"]
    assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1", "db-2"]
    assert pods[1]["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"
    claims = get(kubectl, "pvc", "-l", "app=db")["items"]
    assert [(c["metadata"]["name"], c["status"]["phase"]) for c in claims] == \
        [("data-db-0", "Bound"), ("data-db-1", "Bound"), ("data-db-2", "Bound")]
    kubectl("scale", "statefulset/db", "--replicas=1")
    kubectl("wait", "--for=delete", "pod/db-2", "pod/db-1", "--timeout=30s")
    kubectl("delete", "statefulset", "db")


def test_daemonsets_follow_selectors_and_taints(kubectl):
    def daemonset(name, selector=None, tolerate=False):
        spec = {"containers": [{"name": "agent", "image": "agent:1"}]}
        if selector:
            spec["nodeSelector"] = selector
        if tolerate:
            spec["tolerations"] = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                                    "effect": "NoSchedule"}]
        return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}
    apply(kubectl, daemonset("everywhere", tolerate=True))
    apply(kubectl, daemonset("workers"))
    apply(kubectl, daemonset("gpus", selector={"node.kubernetes.io/instance-type": "g6e.12xlarge"}))
    for name, nodes in (("everywhere", 4), ("workers", 3), ("gpus", 2)):
        kubectl("rollout", "status", "daemonset/" + name, "--timeout=30s")
        status = get(kubectl, "daemonset", name)["status"]
        # DaemonSet status: desiredNumberScheduled counts the eligible nodes (selector, taints vs tolerations)
        assert (status["desiredNumberScheduled"], status["currentNumberScheduled"], status["numberReady"],
                status["numberAvailable"]) == (nodes, nodes, nodes, nodes), name
    placed = {p["spec"]["nodeName"] for p in get(kubectl, "pods", "-l", "app=gpus")["items"]}
    assert placed == {"worker-gpu-0", "worker-gpu-1"}
    kubectl("delete", "daemonset", "everywhere", "workers", "gpus")
    # pods that never become Ready (a failing readiness probe): the rollout does not finish
    unready = daemonset("unready", selector={"node.kubernetes.io/instance-type": "g6e.12xlarge"})
    unready["spec"]["template"]["metadata"]["annotations"] = {PREFIX + "ready": "false"}
    apply(kubectl, unready)
    kubectl("wait", "--for=jsonpath={.status.currentNumberScheduled}=2", "daemonset/unready", "--timeout=30s")
    result = kubectl("rollout", "status", "daemonset/unready", "--timeout=2s", check=False)
    assert result.returncode != 0
    status = get(kubectl, "daemonset", "unready")["status"]
    assert status["numberReady"] == 0 and status["numberUnavailable"] == 2
    kubectl("delete", "daemonset", "unready")


def test_ordered_statefulset_waits_and_claims_need_a_storage_class(kubectl):
    apply(kubectl, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "stuck", "namespace": "default"},
                    "spec": {"replicas": 3, "serviceName": "stuck", "selector": {"matchLabels": {"app": "stuck"}},
                             "template": {"metadata": {"labels": {"app": "stuck"},
                                                       "annotations": {PREFIX + "ready": "false"}},
                                          "spec": {"containers": [{"name": "c", "image": "c"}]}}}})
    kubectl("wait", "--for=jsonpath={.status.phase}=Running", "pod/stuck-0", "--timeout=30s")
    # OrderedReady: stuck-1 waits for stuck-0 to be Ready
    assert [p["metadata"]["name"] for p in get(kubectl, "pods", "-l", "app=stuck")["items"]] == ["stuck-0"]
    assert get(kubectl, "statefulset", "stuck")["status"]["readyReplicas"] == 0
    kubectl("delete", "statefulset", "stuck")
    apply(kubectl, {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "fast", "namespace": "default"},
                    "spec": {"storageClassName": "nvme-fast", "accessModes": ["ReadWriteOnce"],
                             "resources": {"requests": {"storage": "10Gi"}}}})
    kubectl("wait", "--for=jsonpath={.status.phase}=Pending", "pvc/fast", "--timeout=30s")
    events = kubectl("get", "events", "--field-selector", "reason=ProvisioningFailed", "-o", "json").stdout
    assert 'storageclass.storage.k8s.io \\"nvme-fast\\" not found' in events


def test_gpu_pods_wait_for_the_device_plugin(sim, kubectl):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cuda", "namespace": "default"},
           "spec": {"restartPolicy": "Never", "containers": [{"name": "cuda", "image": "cuda:12",
                                                              "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}
    apply(kubectl, pod)
    kubectl("wait", "--for=jsonpath={.status.conditions[0].reason}=Unschedulable", "pod/cuda", "--timeout=30s")
    message = get(kubectl, "pod", "cuda")["status"]["conditions"][0]["message"]
    assert "3 Insufficient nvidia.com/gpu" in message
    sim.install_addon("gpu-ready")  # what NFD and the GPU operator leave behind
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/cuda", "--timeout=30s")
    assert get(kubectl, "pod", "cuda")["spec"]["nodeName"].startswith("worker-gpu-")
