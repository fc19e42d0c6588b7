"""Kubeflow training: PyTorchJob (kubeflow.org/v1, training-operator) and TrainJob (trainer.kubeflow.org/v1alpha1).

PyTorchJob, as the training-operator reconciles it:

- pods ``<name>-master-0`` and ``<name>-worker-<i>`` from ``spec.pytorchReplicaSpecs``
  (labels ``training.kubeflow.org/job-name``, ``replica-type``, ``replica-index``,
  ``operator-name``, ``job-role: master``), with ``MASTER_ADDR``, ``MASTER_PORT``,
  ``WORLD_SIZE``, ``RANK``, ``PET_NNODES``, ``PET_NODE_RANK``, ``PET_NPROC_PER_NODE``
  and ``PYTHONUNBUFFERED`` in the ``pytorch`` container, and a Service for the master;
- the PyTorchJob's ``kubesim.perfscale.io/*`` annotations pass to its pods
  (``trainer-summary`` only matters on rank 0, the master: its log is a Trainer run);
  ``kubesim.perfscale.io/fail``: the rank-0 pod fails with that message;
- conditions ``Created`` (``PyTorchJobCreated``), ``Running`` (``PyTorchJobRunning``,
  back to ``False`` at the end), ``Restarting``, ``Succeeded`` (``PyTorchJobSucceeded``:
  the master, or all workers without a master, succeeded) or ``Failed``
  (``PyTorchJobFailed``: a pod failed with ``restartPolicy: Never``, more restarts than
  ``runPolicy.backoffLimit`` (no default), or ``runPolicy.activeDeadlineSeconds`` passed);
  ``replicaStatuses`` (``active``, ``succeeded``, ``failed``, ``selector``), ``startTime``,
  ``completionTime``; ``runPolicy.cleanPodPolicy`` (``Running``, ``All``) at the end. Messages as
  upstream's (kubeflow/trainer release-1.9 @ 3a3a1da8d5287f9f96e1b2d3be6a4b6ad756566d,
  pkg/controller.v1/common/job.go, pkg/controller.v1/pytorch/pytorchjob_controller.go,
  pkg/util/status.go): "PyTorchJob <name> is running.", "... is successfully completed.", "Job <name>
  has failed because it was active longer than specified deadline". Simplified: a failed pod of
  ``OnFailure`` is recreated (the kubelet restarts it in place upstream, so the job stays Running).

TrainJob (Kubeflow Trainer v2): the runtime (``spec.runtimeRef``, a
ClusterTrainingRuntime by default, or a TrainingRuntime of the namespace; missing:
``Failed``/``TrainingRuntimeNotSupported``) gives the node template, ``spec.trainer``
overrides image, command, args, env, ``numNodes`` and ``resourcesPerNode``. Where
the Trainer creates a JobSet, kubesim creates its Indexed Job ``<name>-node-0``
(``numNodes`` completions; pod index = rank) and reports ``jobsStatus`` and the
conditions ``Suspended``, ``Complete``, ``Failed`` from it.

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``trainjob``: kubeflow/trainer @ 8c0f5059bd51ec3ba6d6a6a7b2e1471de7bc13b3; files:
  pkg/controller/trainjob_controller.go, pkg/runtime/framework/plugins/jobset.
"""

import copy

from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import (FAIL, PREFIX, apply_owned, condition_true, create_or_skip, delete_quietly,
                                      new_pod, owner_reference, pod_active, pod_phase, propagate, set_condition, since)

PYTORCHJOBS = ("kubeflow.org", "pytorchjobs")
TRAINJOBS = ("trainer.kubeflow.org", "trainjobs")
CLUSTER_RUNTIMES = ("trainer.kubeflow.org", "clustertrainingruntimes")
RUNTIMES = ("trainer.kubeflow.org", "trainingruntimes")
PODS = ("", "pods")
SERVICES = ("", "services")
JOBS = ("batch", "jobs")
MASTER_PORT = 23456


class PyTorchJobController(OperatorReconciler):
    name = "pytorchjob"
    key = PYTORCHJOBS
    default_delay = 0.0
    extra_watches = (PODS,)

    def related(self, event):
        name = (event.obj["metadata"].get("labels") or {}).get("training.kubeflow.org/job-name")
        if not name or (event.obj["metadata"].get("labels") or {}).get("training.kubeflow.org/operator-name") != \
                "pytorchjob-controller":
            return []
        return [r for r in self.all_refs(event.obj["metadata"]["namespace"]) if r.name == name]

    def _replicas(self, job):
        specs = (job.get("spec") or {}).get("pytorchReplicaSpecs") or {}
        ordered = [(t, specs[t]) for t in ("Master", "Worker") if t in specs]
        ordered += [(t, s) for t, s in specs.items() if t not in ("Master", "Worker")]
        return ordered

    def _pods_wanted(self, job):
        """``[(pod name, replica type, index, rank, replica spec)]``."""
        wanted = []
        rank = 0
        for rtype, rspec in self._replicas(job):
            for index in range(int(rspec.get("replicas", 1))):
                wanted.append(("%s-%s-%d" % (job["metadata"]["name"], rtype.lower(), index), rtype, index, rank, rspec))
                rank += 1
        return wanted

    def _create_pod(self, job, pod_name, rtype, index, rank, rspec, world_size):
        meta = job["metadata"]
        labels = {"training.kubeflow.org/job-name": meta["name"], "training.kubeflow.org/operator-name":
                  "pytorchjob-controller", "training.kubeflow.org/replica-type": rtype.lower(),
                  "training.kubeflow.org/replica-index": str(index)}
        if rtype == "Master":
            labels["training.kubeflow.org/job-role"] = "master"
        template = copy.deepcopy(rspec.get("template") or {})
        annotations = propagate(job, template.setdefault("metadata", {}), skip=("delay-s", "url"))["annotations"]
        annotations[PREFIX + "rank"] = str(rank)
        if annotations.pop(FAIL, None) is not None and rank == 0:
            annotations.update({PREFIX + "outcome": "Failed", PREFIX + "log": (job["metadata"].get("annotations") or {})[FAIL],
                                PREFIX + "exit-code": annotations.get(PREFIX + "exit-code", "1")})
        nproc = str((job.get("spec") or {}).get("nprocPerNode") or "auto")
        master = "%s-master-0" % meta["name"] if any(t == "Master" for t, _ in self._replicas(job)) else \
            "%s-worker-0" % meta["name"]
        policy = rspec.get("restartPolicy") or "OnFailure"

        def change(pod_spec):
            pod_spec["restartPolicy"] = "Never" if policy in ("ExitCode", "Never") else "OnFailure" \
                if policy == "OnFailure" else "Always"
            env = [{"name": "MASTER_PORT", "value": str(MASTER_PORT)}, {"name": "MASTER_ADDR", "value": master},
                   {"name": "WORLD_SIZE", "value": str(world_size)}, {"name": "RANK", "value": str(rank)},
                   {"name": "PET_MASTER_PORT", "value": str(MASTER_PORT)}, {"name": "PET_MASTER_ADDR", "value": master},
                   {"name": "PET_NNODES", "value": str(world_size)}, {"name": "PET_NODE_RANK", "value": str(rank)},
                   {"name": "PET_NPROC_PER_NODE", "value": nproc}, {"name": "PYTHONUNBUFFERED", "value": "1"}]
            for container in pod_spec.get("containers") or ():
                if container.get("name") == "pytorch":
                    names = {e["name"] for e in env}
                    container["env"] = [e for e in container.get("env") or () if e.get("name") not in names] + env
        body = new_pod(template, job, meta["namespace"], name=pod_name, labels=labels, spec_changes=change)
        create_or_skip(self.cluster, self.cluster.resource_for_key(PODS), body, meta["namespace"])

    def sync(self, ref, job):
        cluster = self.cluster
        now = self.clock.timestamp()
        status = job.get("status") or {}
        run_policy = (job.get("spec") or {}).get("runPolicy") or {}
        wanted = self._pods_wanted(job)
        world_size = len(wanted)
        pods = {p["metadata"]["name"]: p for p in cluster.store.list(PODS, ref.namespace)[0]
                if (p["metadata"].get("labels") or {}).get("training.kubeflow.org/job-name") == ref.name}
        finished = condition_true(job, "Succeeded") or condition_true(job, "Failed")
        if finished:
            self._cleanup(run_policy, pods, ref.namespace)
            return None
        if run_policy.get("suspend"):
            for pod in pods.values():
                delete_quietly(cluster, cluster.resource_for_key(PODS), ref.namespace, pod["metadata"]["name"])
            self._write(ref, now, status, [("Suspended", "True", "PyTorchJobSuspended",
                                            "PyTorchJob %s is suspended." % ref.name)], pods, wanted, {})
            return None
        if wanted and any(t == "Master" for t, _ in self._replicas(job)):
            create_or_skip(cluster, cluster.resource_for_key(SERVICES), {
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "%s-master-0" % ref.name, "namespace": ref.namespace,
                             "ownerReferences": [owner_reference(job)]},
                "spec": {"clusterIP": "None", "selector": {"training.kubeflow.org/job-name": ref.name,
                                                           "training.kubeflow.org/replica-type": "master"},
                         "ports": [{"name": "pytorchjob-port", "port": MASTER_PORT}]}}, ref.namespace)
        restarts = sum(int(s.get("failed", 0)) for s in (status.get("replicaStatuses") or {}).values())
        # no default backoff limit in v1 (pkg/controller.v1/common/job.go: only a set limit fails the job)
        backoff = int(run_policy["backoffLimit"]) if run_policy.get("backoffLimit") is not None else None
        conditions = [("Created", "True", "PyTorchJobCreated", "PyTorchJob %s is created." % ref.name)]
        failed_counts = {}
        outcome = None
        restarting = False
        for pod_name, rtype, index, rank, rspec in wanted:
            pod = pods.get(pod_name)
            if pod is not None and pod_phase(pod) == "Failed":
                policy = rspec.get("restartPolicy") or "OnFailure"
                failed_counts[rtype] = failed_counts.get(rtype, 0) + 1
                if policy == "Never":
                    outcome = ("Failed", "PyTorchJobFailed", "PyTorchJob %s is failed because %d %s replica(s) "
                               "failed." % (ref.name, 1, rtype))
                    break
                if backoff is not None and restarts >= backoff:
                    outcome = ("Failed", "PyTorchJobFailed", "Job %s has failed because it has reached the specified "
                               "backoff limit" % ref.name)
                    break
                delete_quietly(cluster, cluster.resource_for_key(PODS), ref.namespace, pod_name)
                restarting = True
                pod = None
            if pod is None:
                self._create_pod(job, pod_name, rtype, index, rank, rspec, world_size)
        deadline = run_policy.get("activeDeadlineSeconds")
        start = status.get("startTime") or now
        if outcome is None and deadline is not None and since(start, self.clock) >= int(deadline):
            outcome = ("Failed", "PyTorchJobFailed", "Job %s has failed because it was active longer than "
                       "specified deadline" % ref.name)
        pods = {p["metadata"]["name"]: p for p in cluster.store.list(PODS, ref.namespace)[0]
                if (p["metadata"].get("labels") or {}).get("training.kubeflow.org/job-name") == ref.name}
        masters = [p for n, p in pods.items() if "-master-" in n]
        leaders = masters or list(pods.values())
        if outcome is None and leaders and len(pods) == world_size and all(pod_phase(p) == "Succeeded" for p in leaders):
            outcome = ("Succeeded", "PyTorchJobSucceeded", "PyTorchJob %s is successfully completed." % ref.name
                       if masters else "PyTorchJob %s/%s successfully completed." % (ref.namespace, ref.name))
        if outcome is not None:
            kind, reason, message = outcome
            # Running stays in the list, False, with its own reason and message (pkg/util/status.go)
            conditions.append(("Running", "False", "PyTorchJobRunning", "PyTorchJob %s is running." % ref.name))
            conditions.append((kind, "True", reason, message))
            for pod in pods.values():
                if kind == "Failed" and pod_active(pod):
                    delete_quietly(cluster, cluster.resource_for_key(PODS), ref.namespace, pod["metadata"]["name"])
        elif pods and all(pod_phase(p) == "Running" for p in leaders):
            conditions.append(("Running", "True", "PyTorchJobRunning", "PyTorchJob %s is running." % ref.name
                               if masters else "PyTorchJob %s/%s is running." % (ref.namespace, ref.name)))
        if restarting:
            # set after Running, as UpdateJobStatus does (pkg/controller.v1/pytorch): Restarting drops Running
            conditions.append(("Restarting", "True", "PyTorchJobRestarting", "PyTorchJob %s is restarting because "
                               "%d %s replica(s) failed." % (ref.name, sum(failed_counts.values()),
                                                            "/".join(sorted(failed_counts)))))
        self._write(ref, now, status, conditions, pods, wanted, failed_counts, start, outcome)
        if outcome is None and deadline is not None:
            return max(0.1, int(deadline) - since(start, self.clock))
        return None

    def _write(self, ref, now, old_status, conditions, pods, wanted, failed_counts, start=None, outcome=None):
        replica_status = {}
        for pod_name, rtype, _, _, _ in wanted:
            entry = replica_status.setdefault(rtype, {"active": 0, "succeeded": 0, "failed": 0})
            pod = pods.get(pod_name)
            if pod is not None:
                phase = pod_phase(pod)
                if phase == "Succeeded":
                    entry["succeeded"] += 1
                elif phase != "Failed":
                    entry["active"] += 1
        for rtype, entry in replica_status.items():
            # failed pods seen so far (a restarted pod is replaced, its failure stays counted)
            entry["failed"] = int(((old_status.get("replicaStatuses") or {}).get(rtype) or {}).get("failed", 0)) + \
                failed_counts.get(rtype, 0)
            entry["selector"] = "training.kubeflow.org/job-name=%s,training.kubeflow.org/operator-name=" \
                                "pytorchjob-controller,training.kubeflow.org/replica-type=%s" % (ref.name, rtype.lower())
            for key in ("active", "succeeded", "failed"):
                if not entry[key]:
                    del entry[key]

        def change(status, obj):
            current = status.get("conditions") or []
            for ctype, value, reason, message in conditions:
                # setting Restarting removes Running and setting Running removes Restarting
                # (pkg/util/status.go filterOutCondition)
                drop = {"Restarting": "Running", "Running": "Restarting"}.get(ctype) if value == "True" else None
                current = [c for c in current if c.get("type") != drop]
                current = set_condition(current, ctype, value, reason, message, now, lastUpdateTime=now)
                previous = next((c for c in old_status.get("conditions") or () if c.get("type") == ctype), None)
                if previous and all(previous.get(k) == v for k, v in (("status", value), ("reason", reason),
                                                                      ("message", message))):
                    current = [dict(c, lastUpdateTime=previous.get("lastUpdateTime")) if c["type"] == ctype else c
                               for c in current]
            if outcome is None and not any(c[0] == "Restarting" for c in conditions):
                current = [c for c in current if c.get("type") != "Restarting"]
            status["conditions"] = current
            status["replicaStatuses"] = replica_status
            if start:
                status["startTime"] = start
            if outcome is not None:
                status["completionTime"] = status.get("completionTime") or now
        self.write_status(ref, change)

    def _cleanup(self, run_policy, pods, namespace):
        policy = run_policy.get("cleanPodPolicy") or "None"
        for pod in pods.values():
            if policy == "All" or (policy == "Running" and pod_active(pod)):
                delete_quietly(self.cluster, self.cluster.resource_for_key(PODS), namespace, pod["metadata"]["name"])


class TrainJobController(OperatorReconciler):
    name = "trainjob"
    key = TRAINJOBS
    default_delay = 0.0
    extra_watches = (JOBS,)

    def related(self, event):
        name = (event.obj["metadata"].get("labels") or {}).get("trainer.kubeflow.org/trainjob-name")
        return [r for r in self.all_refs(event.obj["metadata"]["namespace"]) if r.name == name] if name else []

    def _runtime(self, trainjob):
        ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
        kind = ref.get("kind") or "ClusterTrainingRuntime"
        key = CLUSTER_RUNTIMES if kind == "ClusterTrainingRuntime" else RUNTIMES
        if self.cluster.registry.for_storage_key(*key) is None:
            return None, kind
        namespace = "" if kind == "ClusterTrainingRuntime" else trainjob["metadata"]["namespace"]
        return self.cluster.store.get(key, namespace, ref.get("name") or ""), kind

    def sync(self, ref, trainjob):
        cluster = self.cluster
        now = self.clock.timestamp()
        spec = trainjob.get("spec") or {}
        runtime, kind = self._runtime(trainjob)
        if runtime is None:
            message = "%s %s not found" % (kind, (spec.get("runtimeRef") or {}).get("name"))
            self.write_status(ref, lambda status, obj: status.update(conditions=set_condition(
                status.get("conditions"), "Failed", "True", "TrainingRuntimeNotSupported", message, now)))
            return None
        trainer = spec.get("trainer") or {}
        runtime_spec = runtime.get("spec") or {}
        nodes = int(trainer.get("numNodes") or (runtime_spec.get("mlPolicy") or {}).get("numNodes") or 1)
        node_template = {}
        for replicated in ((runtime_spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or ():
            if replicated.get("name") == "node":
                node_template = copy.deepcopy((((replicated.get("template") or {}).get("spec") or {}).get("template")) or {})
        pod_spec = node_template.setdefault("spec", {})
        containers = pod_spec.setdefault("containers", [{"name": "node", "image": "pytorch/pytorch:latest"}])
        main = next((c for c in containers if c.get("name") == "node"), containers[0])
        for field in ("image", "command", "args"):
            if trainer.get(field):
                main[field] = copy.deepcopy(trainer[field])
        if trainer.get("env"):
            main["env"] = list(main.get("env") or ()) + copy.deepcopy(trainer["env"])
        if trainer.get("resourcesPerNode"):
            main["resources"] = copy.deepcopy(trainer["resourcesPerNode"])
        main.setdefault("env", []).extend([{"name": "PET_NNODES", "value": str(nodes)},
                                           {"name": "PET_NPROC_PER_NODE", "value": str(trainer.get("numProcPerNode") or "auto")}])
        pod_spec["restartPolicy"] = "Never"
        meta = propagate(trainjob, node_template.setdefault("metadata", {}), skip=("delay-s", "url"))
        if meta["annotations"].pop(FAIL, None) is not None:
            meta["annotations"].update({PREFIX + "outcome": "Failed",
                                        PREFIX + "log": (trainjob["metadata"].get("annotations") or {})[FAIL]})
        labels = {"trainer.kubeflow.org/trainjob-name": ref.name, "jobset.sigs.k8s.io/jobset-name": ref.name,
                  "jobset.sigs.k8s.io/replicatedjob-name": "node"}
        meta.setdefault("labels", {}).update(labels)
        job_name = "%s-node-0" % ref.name
        apply_owned(cluster, cluster.resource_for_key(JOBS), {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": job_name, "namespace": ref.namespace, "labels": labels,
                         "ownerReferences": [owner_reference(trainjob)]},
            "spec": {"completionMode": "Indexed", "completions": nodes, "parallelism": nodes, "backoffLimit": 0,
                     "suspend": bool(spec.get("suspend")), "template": node_template}},
            ref.namespace, update=lambda obj: obj["spec"].update(suspend=bool(spec.get("suspend"))))
        job = cluster.store.get(JOBS, ref.namespace, job_name) or {}
        job_status = job.get("status") or {}
        active = 1 if job_status.get("active") else 0
        ready = 1 if job_status.get("ready", 0) + job_status.get("succeeded", 0) >= nodes else 0

        def change(status, obj):
            conditions = status.get("conditions") or []
            if spec.get("suspend"):
                conditions = set_condition(conditions, "Suspended", "True", "Suspended", "TrainJob is suspended", now)
            elif any(c.get("type") == "Suspended" for c in conditions):
                conditions = set_condition(conditions, "Suspended", "False", "Resumed", "TrainJob is resumed", now)
            if condition_true(job, "Complete"):
                conditions = set_condition(conditions, "Complete", "True", "AllJobsCompleted",
                                           "jobset completed successfully", now)
            elif condition_true(job, "Failed"):
                failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
                conditions = set_condition(conditions, "Failed", "True", "DeadlineExceeded"
                                           if failed.get("reason") == "DeadlineExceeded" else "FailedJobs",
                                           "jobset failed due to %s: %s" % (job_name, failed.get("message")), now)
            status["conditions"] = conditions
            status["jobsStatus"] = [{"name": "node", "active": active, "ready": ready,
                                     "succeeded": 1 if condition_true(job, "Complete") else 0,
                                     "failed": 1 if condition_true(job, "Failed") else 0,
                                     "suspended": 1 if spec.get("suspend") else 0}]
        self.write_status(ref, change)
        return None
