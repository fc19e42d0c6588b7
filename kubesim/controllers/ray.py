"""KubeRay: RayCluster and RayJob (ray.io/v1), as the KubeRay operator RHOAI ships reconciles them.

RayCluster (raycluster_controller.go, common/pod.go, common/service.go):

- a head Service ``<cluster>-head-svc``, headless (``clusterIP: None``,
  ``publishNotReadyAddresses``), its ports the head container's named ports or the defaults
  ``client`` 10001, ``dashboard`` 8265, ``gcs-server`` 6379, ``metrics`` 8080, ``serve`` 8000;
- a head pod (generateName ``<cluster>-head-``) and, per worker group, clamp(replicas, min, max)
  x numOfHosts worker pods (generateName ``<cluster>-<group>-worker-``), labelled
  ``ray.io/cluster``, ``ray.io/node-type`` (head, worker), ``ray.io/group`` (headgroup, the group),
  ``ray.io/identifier``, ``ray.io/is-ray-node: "yes"``, ``app.kubernetes.io/created-by:
  kuberay-operator``; the Ray container runs ``/bin/bash -c -- "<its command>; ulimit ...; ray
  start ..."`` with ``RAY_CLUSTER_NAME``, ``RAY_PORT``, ``RAY_ADDRESS`` (``127.0.0.1:6379`` on the
  head, ``<fqdn>:6379`` on workers), ``FQ_RAY_IP`` on workers; the injected readiness probe makes a
  Ray pod Ready about 10 s after it starts (``ready-delay-s`` 10 unless the template says);
  a pod that ended (Failed, Succeeded) is deleted and made again;
- status: ``state`` absent until every pod is Running and Ready, then ``ready`` for good
  (``stateTransitionTimes.ready``); ``desiredWorkerReplicas``, ``minWorkerReplicas``,
  ``maxWorkerReplicas``, ``availableWorkerReplicas`` (Running), ``readyWorkerReplicas`` (Running and
  Ready), ``desiredCPU/Memory/GPU/TPU``, ``endpoints``, ``head`` (``podName``, ``podIP``,
  ``serviceIP`` = the pod IP, the Service being headless, ``serviceName``), ``observedGeneration``,
  ``lastUpdateTime``; conditions (gate RayClusterStatusConditions, on by default) ``HeadPodReady``
  (``HeadPodNotFound``, the pod's Ready condition, ``HeadPodRunningAndReady``),
  ``RayClusterProvisioned`` (False ``RayClusterPodsProvisioning`` "RayCluster Pods are being
  provisioned for first time", then True ``AllPodRunningAndReadyFirstTime`` "All Ray Pods are ready
  for the first time", never False again), ``RayClusterSuspended``, ``RayClusterSuspending``.

RayJob (rayjob_controller.go, common/job.go; submission mode K8sJobMode):

- ``""`` -> ``Initializing`` (``jobId`` and ``rayClusterName`` ``<rayjob>-<5 random>``,
  ``startTime``, ``failed``/``succeeded`` 0); the RayCluster from ``spec.rayClusterSpec`` (labels
  ``ray.io/originated-from-cr-name``, ``ray.io/originated-from-crd: RayJob``), its status mirrored in
  ``rayClusterStatus`` while it is not ready;
- cluster ready -> ``dashboardURL`` ``<cluster>-head-svc.<ns>.svc.cluster.local:8265``, the
  submitter Job ``<rayjob>`` (``backoffLimit`` 2, container ``ray-job-submitter`` with the head's
  image, ``ray job submit --no-wait ... -- <entrypoint>`` then ``ray job logs --follow``),
  ``Running``;
- ``jobStatus`` from the Ray dashboard: empty until the submitter has submitted, ``PENDING``, then
  ``RUNNING``, then ``SUCCEEDED`` or ``FAILED`` when the entrypoint ends (the submitter pod's log is
  the entrypoint's output; it exits 0 either way, as ``ray job logs --follow`` does);
- terminal only when the Ray job is terminal **and** the submitter Job finished: ``Complete``, or
  ``Failed`` with reason ``AppFailed`` (Ray's message); a failed submitter Job: ``Failed`` /
  ``SubmissionFailed`` "Job submission has failed. Reason: ... Message: ..."; past
  ``activeDeadlineSeconds``: ``Failed`` / ``DeadlineExceeded``; ``endTime``, ``succeeded``/``failed``
  counted once; with ``shutdownAfterJobFinishes``, the RayCluster deleted
  ``ttlSecondsAfterFinished`` after ``endTime`` (the submitter Job is kept, for its logs).

kubesim steering (annotations of the RayJob, ``kubesim.perfscale.io/``): ``log`` is what the
entrypoint prints (the submitter's log), ``duration-s`` how long it runs, ``fail`` makes the Ray job
end ``FAILED`` with that text in its message; without them, the image behaviours of the head's image
(``ray-job-log``, ``ray-job-duration-s``, ``ray-job-fail``) say it, for a role's RayJob that carries no
kubesim annotation.

Simplified: no finalizer on the RayJob, no autoscaler, suspend, retries (``backoffLimit``),
interactive or HTTP submission modes, ingress, GCS fault tolerance; the Ray dashboard is not
served (the controller reads the submitter pod instead).

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``raycluster``, ``rayjob``: ray-project/kuberay @ feeaf72facab4881ba2b179248bb67315634e229; files:
  ray-operator/controllers/ray/raycluster_controller.go, ray-operator/controllers/ray/rayjob_controller.go,
  ray-operator/controllers/ray/common/pod.go, ray-operator/controllers/ray/common/service.go,
  ray-operator/controllers/ray/common/job.go, ray-operator/controllers/ray/utils/constant.go,
  ray-operator/apis/ray/v1/raycluster_types.go, ray-operator/apis/ray/v1/rayjob_types.go.
"""

import copy

from kubesim import scheduling
from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import (PREFIX, annotation, create_or_skip, delete_quietly, new_pod, owner_reference,
                                      pod_phase, pod_ready, propagate, random_suffix, set_condition, since)

RAYCLUSTERS = ("ray.io", "rayclusters")
RAYJOBS = ("ray.io", "rayjobs")
PODS = ("", "pods")
SERVICES = ("", "services")
JOBS = ("batch", "jobs")
DEFAULT_PORTS = {"client": 10001, "dashboard": 8265, "gcs-server": 6379, "metrics": 8080, "serve": 8000}
CREATED_BY = {"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by": "kuberay-operator"}
READY_DELAY_S = "10"
TERMINAL_JOB = ("SUCCEEDED", "FAILED", "STOPPED")
RAY_MESSAGES = {
    "PENDING": "Job has not started yet. It may be waiting for resources (CPUs, GPUs, memory, custom resources) to "
               "become available. It may be waiting for the runtime environment to be set up.",
    "RUNNING": "Job is currently running.",
    "SUCCEEDED": "Job finished successfully.",
}


def _format(number, memory=False):
    if memory and number and number % 2 ** 30 == 0:
        return "%dGi" % (number // 2 ** 30)
    return ("%g" % number) if number != int(number) else str(int(number))


def head_service_name(cluster_name):
    return "%s-head-svc" % cluster_name


def fqdn(cluster_name, namespace):
    return "%s.%s.svc.cluster.local" % (head_service_name(cluster_name), namespace)


class RayClusterController(OperatorReconciler):
    name = "raycluster"
    key = RAYCLUSTERS
    default_delay = 0.0
    extra_watches = (PODS,)

    def related(self, event):
        labels = event.obj["metadata"].get("labels") or {}
        if labels.get("app.kubernetes.io/created-by") != "kuberay-operator" or not labels.get("ray.io/cluster"):
            return []
        return [r for r in self.all_refs(event.obj["metadata"]["namespace"]) if r.name == labels["ray.io/cluster"]]

    @staticmethod
    def groups(cluster_obj):
        """``[(group name, desired pods, min, max, group spec)]`` of the worker groups."""
        found = []
        for group in (cluster_obj.get("spec") or {}).get("workerGroupSpecs") or ():
            hosts = int(group.get("numOfHosts") or 1)
            low, high = int(group.get("minReplicas") or 0), int(group.get("maxReplicas", 2147483647))
            replicas = int(group.get("replicas") or 0) if not group.get("suspend") else 0
            found.append((group.get("groupName"), max(low, min(high, replicas)) * hosts, low * hosts, high * hosts,
                          group))
        return found

    def _ports(self, container):
        ports = {p.get("name") or "%s-port" % p["containerPort"]: int(p["containerPort"])
                 for p in container.get("ports") or () if p.get("containerPort")}
        if not ports:
            ports = dict(DEFAULT_PORTS)
        ports.setdefault("metrics", DEFAULT_PORTS["metrics"])
        return ports

    def _pod(self, cluster_obj, node_type, group_name, template, index=None):
        meta = cluster_obj["metadata"]
        name, namespace = meta["name"], meta["namespace"]
        head = node_type == "head"
        labels = {"ray.io/is-ray-node": "yes", "ray.io/cluster": name, "ray.io/node-type": node_type,
                  "ray.io/group": "headgroup" if head else group_name,
                  "ray.io/identifier": "%s-%s" % (name, node_type)}
        labels.update(CREATED_BY)
        if index is not None:
            labels["ray.io/worker-group-replica-index"] = str(index)
        template = copy.deepcopy(template or {})
        template_meta = template.setdefault("metadata", {})
        annotations = template_meta.setdefault("annotations", {})
        annotations.setdefault(PREFIX + "ready-delay-s", READY_DELAY_S)
        annotations.setdefault(PREFIX + "run-local", "false")
        address = "127.0.0.1:6379" if head else "%s:6379" % fqdn(name, namespace)
        params = dict(((cluster_obj.get("spec") or {}).get("headGroupSpec") if head else {}) or {}).get(
            "rayStartParams") or {}

        def change(pod_spec):
            containers = pod_spec.get("containers") or []
            if not containers:
                return
            ray = containers[0]
            user = " ".join(list(ray.get("command") or ()) + list(ray.get("args") or ()))
            start = "ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; ray start %s --block %s" % (
                "--head" if head else "--address=%s" % address,
                " ".join("--%s" % k if str(v) == "true" else "--%s=%s" % (k, v) for k, v in sorted(params.items())))
            if "ray start" not in user:
                ray["command"] = ["/bin/bash", "-c", "--"]
                ray["args"] = [("%s; " % user if user else "") + start.strip()]
            env = [] if head else [{"name": "FQ_RAY_IP", "value": fqdn(name, namespace)},
                                   {"name": "RAY_IP", "value": head_service_name(name)}]
            cluster_label = {"fieldRef": {"fieldPath": "metadata.labels['ray.io/cluster']"}}
            env += [{"name": "RAY_CLUSTER_NAME", "valueFrom": cluster_label},
                    {"name": "RAY_CLUSTER_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                    {"name": "RAY_PORT", "value": "6379"}, {"name": "RAY_ADDRESS", "value": address},
                    {"name": "RAY_USAGE_STATS_KUBERAY_IN_USE", "value": "1"}]
            present = {e.get("name") for e in ray.get("env") or ()}
            ray["env"] = list(ray.get("env") or ()) + [e for e in env if e["name"] not in present]
        prefix = "%s-head-" % name if head else "%s-%s-worker-" % (name, group_name)
        body = new_pod(template, cluster_obj, namespace, generate_name=prefix[:50].lower(), labels=labels,
                       spec_changes=change)
        return create_or_skip(self.cluster, self.cluster.resource_for_key(PODS), body, namespace)

    def sync(self, ref, cluster_obj):
        cluster = self.cluster
        spec = cluster_obj.get("spec") or {}
        head_spec = spec.get("headGroupSpec") or {}
        head_template = head_spec.get("template") or {}
        head_container = ((head_template.get("spec") or {}).get("containers") or [{}])[0]
        ports = self._ports(head_container)
        create_or_skip(cluster, cluster.resource_for_key(SERVICES), {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": head_service_name(ref.name), "namespace": ref.namespace,
                         "labels": dict(CREATED_BY, **{"ray.io/cluster": ref.name, "ray.io/node-type": "head",
                                                       "ray.io/identifier": "%s-head" % ref.name}),
                         "ownerReferences": [owner_reference(cluster_obj)]},
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                     "selector": {"ray.io/cluster": ref.name, "ray.io/node-type": "head",
                                  "ray.io/identifier": "%s-head" % ref.name},
                     "ports": [{"name": n, "port": p, "appProtocol": "tcp"} for n, p in sorted(ports.items())]}},
            ref.namespace)
        pod_resource = cluster.resource_for_key(PODS)

        def current_pods():
            return [p for p in cluster.store.list(PODS, ref.namespace)[0]
                    if (p["metadata"].get("labels") or {}).get("ray.io/cluster") == ref.name
                    and not p["metadata"].get("deletionTimestamp")]

        for pod in current_pods():
            if pod_phase(pod) in ("Failed", "Succeeded"):
                delete_quietly(cluster, pod_resource, ref.namespace, pod["metadata"]["name"])
        pods = current_pods()
        heads = [p for p in pods if p["metadata"]["labels"].get("ray.io/node-type") == "head"]
        if not heads:
            self._pod(cluster_obj, "head", "headgroup", head_template)
        groups = self.groups(cluster_obj)
        for group_name, desired, _low, _high, group in groups:
            mine = [p for p in pods if p["metadata"]["labels"].get("ray.io/node-type") == "worker"
                    and p["metadata"]["labels"].get("ray.io/group") == group_name]
            used = {p["metadata"]["labels"].get("ray.io/worker-group-replica-index") for p in mine}
            for _ in range(desired - len(mine)):
                index = next(i for i in range(desired + len(mine) + 1) if str(i) not in used)
                used.add(str(index))
                self._pod(cluster_obj, "worker", group_name, group.get("template"), index=index)
            for extra in mine[desired:]:
                delete_quietly(cluster, pod_resource, ref.namespace, extra["metadata"]["name"])
        self._write_status(ref, cluster_obj, current_pods(), groups, ports)
        return None

    def _desired_resources(self, cluster_obj, groups):
        totals = {"cpu": 0.0, "memory": 0.0, "gpu": 0.0, "tpu": 0.0}

        def add(template, count):
            for container in ((template or {}).get("spec") or {}).get("containers") or ():
                # a request, else its limit (what the API server defaults a request to)
                requests = scheduling.container_requests(container)
                totals["cpu"] += requests.get("cpu", 0.0) * count
                totals["memory"] += requests.get("memory", 0.0) * count
                totals["gpu"] += sum(v for k, v in requests.items() if k.endswith("/gpu")) * count
                totals["tpu"] += requests.get("google.com/tpu", 0.0) * count

        add(((cluster_obj.get("spec") or {}).get("headGroupSpec") or {}).get("template"), 1)
        for _name, _desired, _low, _high, group in groups:
            add(group.get("template"), int(group.get("replicas") or 0) * int(group.get("numOfHosts") or 1))
        return totals

    def _write_status(self, ref, cluster_obj, pods, groups, ports):
        now = self.clock.timestamp()
        heads = [p for p in pods if p["metadata"]["labels"].get("ray.io/node-type") == "head"]
        workers = [p for p in pods if p["metadata"]["labels"].get("ray.io/node-type") == "worker"]
        desired = sum(g[1] for g in groups)
        all_ready = bool(pods) and len(pods) == desired + 1 and all(pod_phase(p) == "Running" and pod_ready(p)
                                                                    for p in pods)
        head = heads[0] if heads else None
        if head is None:
            head_condition = ("False", "HeadPodNotFound", "Head Pod not found")
        else:
            ready = next((c for c in (head.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"),
                         None)
            if ready is None:
                head_condition = ("False", "Unknown", "")
            elif ready.get("status") == "True":
                head_condition = ("True", ready.get("reason") or "HeadPodRunningAndReady", ready.get("message") or "")
            else:
                waiting = next((s.get("state", {}).get("waiting") for s in (head.get("status") or {}).get(
                    "containerStatuses") or () if s.get("state", {}).get("waiting")), None)
                reason = ready.get("reason") or "ContainersNotReady"
                message = ready.get("message") or ""
                if reason == "ContainersNotReady" and waiting:
                    reason = waiting.get("reason") or reason
                head_condition = ("False", reason, message)
        totals = self._desired_resources(cluster_obj, groups)
        head_ip = (head.get("status") or {}).get("podIP", "") if head else ""

        def change(status, obj):
            conditions = status.get("conditions") or []
            conditions = set_condition(conditions, "HeadPodReady", *head_condition, now=now)
            provisioned = next((c for c in conditions if c.get("type") == "RayClusterProvisioned"), None)
            if all_ready:
                conditions = set_condition(conditions, "RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime",
                                           "All Ray Pods are ready for the first time", now=now)
            elif provisioned is None or provisioned.get("status") != "True":
                conditions = set_condition(conditions, "RayClusterProvisioned", "False", "RayClusterPodsProvisioning",
                                           "RayCluster Pods are being provisioned for first time", now=now)
            conditions = set_condition(conditions, "RayClusterSuspended", "False", "RayClusterSuspended", "", now=now)
            conditions = set_condition(conditions, "RayClusterSuspending", "False", "RayClusterSuspending", "",
                                       now=now)
            status["conditions"] = conditions
            if all_ready and status.get("state") != "ready":
                status["state"] = "ready"
                status.pop("reason", None)      # omitempty: no empty reason (raycluster_types.go)
                status.setdefault("stateTransitionTimes", {})["ready"] = now
            for key, value in (("desiredWorkerReplicas", desired), ("minWorkerReplicas", sum(g[2] for g in groups)),
                               ("maxWorkerReplicas", min(2147483647, sum(g[3] for g in groups))),
                               ("availableWorkerReplicas", sum(1 for p in workers if pod_phase(p) == "Running")),
                               ("readyWorkerReplicas", sum(1 for p in workers if pod_phase(p) == "Running"
                                                           and pod_ready(p)))):
                if value:
                    status[key] = value
                else:
                    status.pop(key, None)
            status["desiredCPU"] = _format(totals["cpu"])
            status["desiredMemory"] = _format(totals["memory"], memory=True)
            status["desiredGPU"] = _format(totals["gpu"])
            status["desiredTPU"] = _format(totals["tpu"])
            status["endpoints"] = {name: str(port) for name, port in sorted(ports.items())}
            status["head"] = {"podName": head["metadata"]["name"] if head else "", "podIP": head_ip,
                              "serviceIP": head_ip, "serviceName": head_service_name(ref.name)}
            status["observedGeneration"] = obj["metadata"].get("generation", 1)

        def change_with_time(status, obj):
            before = copy.deepcopy(status)
            before.pop("lastUpdateTime", None)
            change(status, obj)
            after = dict(status)
            after.pop("lastUpdateTime", None)
            if after != before:
                status["lastUpdateTime"] = now

        self.write_status(ref, change_with_time)


def ray_job_steering(cluster, job, head_image):
    """``(log, duration-s, fail)`` of the Ray job: the RayJob's annotations, else the head image's behaviours."""
    behaviours = getattr(cluster, "image_behaviours", None)
    rule = behaviours.annotations_for(head_image) if behaviours is not None else {}
    return (annotation(job, "log") or rule.get(PREFIX + "ray-job-log", ""),
            annotation(job, "duration-s") or rule.get(PREFIX + "ray-job-duration-s"),
            annotation(job, "fail") or rule.get(PREFIX + "ray-job-fail"))


def head_image(spec):
    head = ((spec.get("headGroupSpec") or {}).get("template") or {})
    return (((head.get("spec") or {}).get("containers") or [{}])[0]).get("image", "")


class RayJobController(OperatorReconciler):
    name = "rayjob"
    key = RAYJOBS
    default_delay = 0.0
    extra_watches = (RAYCLUSTERS, JOBS, PODS)
    # RayJobDefaultRequeueDuration
    requeue_s = 3.0

    def related(self, event):
        labels = event.obj["metadata"].get("labels") or {}
        name = labels.get("ray.io/originated-from-cr-name")
        if event.key == PODS:
            name = labels.get("job-name") if labels.get("ray.io/originated-from-crd") == "RayJob" else None
        if not name:
            return []
        return [r for r in self.all_refs(event.obj["metadata"]["namespace"]) if r.name == name]

    def _set(self, ref, values, remove=()):
        def change(status, _obj):
            status.update(values)
            for key in remove:
                status.pop(key, None)
        self.write_status(ref, change)

    def _finish(self, ref, status, deployment, reason=None, message=None, job_status=None):
        now = self.clock.timestamp()
        values = {"jobDeploymentStatus": deployment, "endTime": now}
        if reason is not None:
            values["reason"] = reason
        if message is not None:
            values["message"] = message
        if job_status is not None:
            values["jobStatus"] = job_status
        if deployment == "Failed":
            values["failed"] = int(status.get("failed") or 0) + 1
        elif (job_status or status.get("jobStatus")) == "SUCCEEDED":
            values["succeeded"] = int(status.get("succeeded") or 0) + 1
        self._set(ref, values)

    def sync(self, ref, job):
        cluster = self.cluster
        spec = job.get("spec") or {}
        status = job.get("status") or {}
        deployment = status.get("jobDeploymentStatus") or ""
        now = self.clock.timestamp()
        if deployment in ("Complete", "Failed"):
            return self._shutdown(ref, job, status)
        if not deployment:
            self._set(ref, {"jobId": "%s-%s" % (ref.name, random_suffix()), "rayClusterName": "%s-%s" % (ref.name, random_suffix()),
                            "jobDeploymentStatus": "Initializing", "startTime": now, "failed": 0, "succeeded": 0})
            return 0.0
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None and since(status.get("startTime") or now, self.clock) >= int(deadline):
            self._finish(ref, status, "Failed", "DeadlineExceeded", "The RayJob has passed the activeDeadlineSeconds. "
                         "StartTime: %s. ActiveDeadlineSeconds: %d" % (status.get("startTime"), int(deadline)))
            return 0.0
        cluster_name = status["rayClusterName"]
        ray_cluster = cluster.store.get(RAYCLUSTERS, ref.namespace, cluster_name)
        if ray_cluster is None:
            labels = {"ray.io/originated-from-cr-name": ref.name, "ray.io/originated-from-crd": "RayJob",
                      "app.kubernetes.io/created-by": "kuberay-operator"}
            create_or_skip(cluster, cluster.resource_for_key(RAYCLUSTERS), {
                "apiVersion": "ray.io/v1", "kind": "RayCluster",
                "metadata": {"name": cluster_name, "namespace": ref.namespace, "labels": labels,
                             "ownerReferences": [owner_reference(job)]},
                "spec": copy.deepcopy(spec.get("rayClusterSpec") or {})}, ref.namespace)
            return self.requeue_s
        cluster_status = ray_cluster.get("status") or {}
        if deployment == "Initializing":
            if cluster_status.get("state") != "ready":
                if status.get("rayClusterStatus") != cluster_status:
                    self._set(ref, {"rayClusterStatus": copy.deepcopy(cluster_status)})
                return self.requeue_s
            dashboard = "%s:8265" % fqdn(cluster_name, ref.namespace)
            self._create_submitter(job, ray_cluster, status["jobId"], dashboard)
            self._set(ref, {"dashboardURL": dashboard, "jobDeploymentStatus": "Running"})
            return self.requeue_s
        return self._running(ref, job, status, cluster_status)

    def _create_submitter(self, job, ray_cluster, job_id, dashboard):
        meta = job["metadata"]
        spec = job.get("spec") or {}
        image = head_image(ray_cluster.get("spec") or {}) or "rayproject/ray:2.35.0"
        log, duration, _failure = ray_job_steering(self.cluster, job, image)
        address = "http://%s" % dashboard
        runtime_env = " --runtime-env-json %r" % spec["runtimeEnvYAML"] if spec.get("runtimeEnvYAML") else ""
        args = ("until python -c \"import urllib.request; r=urllib.request.urlopen('%s/api/gcs_healthz', timeout=10); "
                "exit(0 if b'success' in r.read() else 1)\" >/dev/null 2>&1 ; do echo \"Waiting for Ray Dashboard GCS "
                "to become healthy at %s ...\" ; sleep 2 ; done ; if ! ray job status --address %s %s >/dev/null 2>&1 "
                "; then ray job submit --address %s --no-wait%s --submission-id %s -- %s ; fi ; ray job logs --address "
                "%s --follow %s" % (address, address, address, job_id, address, runtime_env, job_id,
                                    spec.get("entrypoint", ""), address, job_id))
        labels = {"ray.io/originated-from-cr-name": meta["name"], "ray.io/originated-from-crd": "RayJob",
                  "app.kubernetes.io/created-by": "kuberay-operator"}
        template_meta = propagate(job, {"labels": dict(labels)})
        log = "\n".join(["Job submission server address: %s" % address, "",
                         "-------------------------------------------------------",
                         "Job '%s' submitted successfully" % job_id,
                         "-------------------------------------------------------", "",
                         log])
        template_meta["annotations"].update({PREFIX + "log": log, PREFIX + "outcome": "Succeeded",
                                             PREFIX + "run-local": "false"})
        if duration:
            template_meta["annotations"][PREFIX + "duration-s"] = str(duration)
        body = {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "labels": labels,
                         "ownerReferences": [owner_reference(job)]},
            "spec": {"backoffLimit": int(((spec.get("submitterConfig") or {}).get("backoffLimit")) or 2),
                     "template": {"metadata": template_meta, "spec": {
                         "restartPolicy": "Never",
                         "containers": [{"name": "ray-job-submitter", "image": image,
                                         "command": ["/bin/bash", "-ce", "--"], "args": [args],
                                         "env": [{"name": "PYTHONUNBUFFERED", "value": "1"},
                                                 {"name": "RAY_DASHBOARD_ADDRESS", "value": dashboard},
                                                 {"name": "RAY_JOB_SUBMISSION_ID", "value": job_id}],
                                         "resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                                                       "requests": {"cpu": "500m", "memory": "200Mi"}}}]}}}}
        create_or_skip(self.cluster, self.cluster.resource_for_key(JOBS), body, meta["namespace"])

    def _running(self, ref, job, status, cluster_status):
        cluster = self.cluster
        submitter = cluster.store.get(JOBS, ref.namespace, ref.name)
        if submitter is None:
            return self.requeue_s
        finished = next((c for c in (submitter.get("status") or {}).get("conditions") or ()
                         if c.get("type") in ("Complete", "Failed") and c.get("status") == "True"), None)
        if finished is not None and finished["type"] == "Failed":
            if status.get("jobStatus") == "FAILED":
                self._finish(ref, status, "Failed", "AppFailed", status.get("message"))
            else:
                self._finish(ref, status, "Failed", "SubmissionFailed", "Job submission has failed. Reason: %s. "
                             "Message: %s" % (finished.get("reason"), finished.get("message")))
            return 0.0
        pods = [p for p in cluster.store.list(PODS, ref.namespace)[0]
                if (p["metadata"].get("labels") or {}).get("job-name") == ref.name]
        submitted = [p for p in pods if pod_phase(p) in ("Running", "Succeeded")]
        job_status = status.get("jobStatus") or ""
        values = {}
        if submitted and job_status not in TERMINAL_JOB:
            if any(pod_phase(p) == "Succeeded" for p in submitted):
                spec = (job.get("spec") or {}).get("rayClusterSpec") or {}
                failure = ray_job_steering(cluster, job, head_image(spec))[2]
                job_status = "FAILED" if failure else "SUCCEEDED"
                values["message"] = ("Job entrypoint command failed with exit code 1, last available logs (truncated "
                                     "to 20,000 chars):\n%s" % failure) if failure else RAY_MESSAGES["SUCCEEDED"]
                values["rayJobInfo"] = dict(status.get("rayJobInfo") or {}, endTime=self.clock.timestamp())
            elif not job_status:
                job_status = "PENDING"
                values["message"] = RAY_MESSAGES["PENDING"]
            elif job_status == "PENDING":
                job_status = "RUNNING"
                values["message"] = RAY_MESSAGES["RUNNING"]
                values["rayJobInfo"] = {"startTime": self.clock.timestamp()}
            values["jobStatus"] = job_status
        if status.get("rayClusterStatus") != cluster_status:
            values["rayClusterStatus"] = copy.deepcopy(cluster_status)
        if values:
            # no reason while the job runs: an empty reason is left out (rayjob_types.go, omitempty)
            self._set(ref, values, remove=("reason",) if "jobStatus" in values else ())
            status = dict(status, **values)
        if job_status in TERMINAL_JOB and finished is not None:
            if job_status == "FAILED":
                self._finish(ref, status, "Failed", "AppFailed", status.get("message"))
            else:
                self._finish(ref, status, "Complete")
            return 0.0
        return self.requeue_s

    def _shutdown(self, ref, job, status):
        spec = job.get("spec") or {}
        if not spec.get("shutdownAfterJobFinishes") or (spec.get("clusterSelector") or {}):
            return None
        ttl = int(spec.get("ttlSecondsAfterFinished") or 0)
        left = ttl - since(status.get("endTime") or self.clock.timestamp(), self.clock)
        if left > 0:
            return left
        name = status.get("rayClusterName")
        if name and self.cluster.store.get(RAYCLUSTERS, ref.namespace, name) is not None:
            delete_quietly(self.cluster, self.cluster.resource_for_key(RAYCLUSTERS), ref.namespace, name)
        return None
