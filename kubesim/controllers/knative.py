"""Knative Serving: a Service (serving.knative.dev/v1) with its Configuration, Revision and Route.

Upstream: knative/serving @ 69aa052f143657969e5f0d7e0902088da6f22566 (knative-v1.21.1). The conditions and
their transitions are the lifecycle files' - pkg/apis/serving/v1/service_lifecycle.go, configuration_lifecycle.go,
revision_lifecycle.go, route_lifecycle.go - as the reconcilers call them: pkg/reconciler/service/service.go,
pkg/reconciler/configuration/configuration.go, pkg/reconciler/revision/reconcile_resources.go,
pkg/reconciler/route/traffic/errors.go; with the living condition sets of knative.dev/pkg (apis/condition_set.go:
a dependent marked False makes Ready False with its reason; Ready is True once every dependent is). It is the
v0.48.1 that kserve/kserve @ aaac4e294dae2c7b1aa1886447793f3aa1c30912 requires (go.mod).

- the Service creates the Configuration and the Route of its name (traffic: 100 % to the latest ready
  revision); its ``ConfigurationsReady`` and ``RoutesReady`` copy their Ready conditions
  (PropagateConfigurationStatus, PropagateRouteStatus); a Route whose traffic is not yet the latest ready
  revision is ``RoutesReady=Unknown`` ``TrafficNotMigrated``;
- the Configuration creates a Revision ``<name>-<generation, 5 digits>`` per template generation
  (SetLatestCreatedRevisionName: Ready Unknown until it is ready; MarkLatestCreatedFailed: False
  ``RevisionFailed`` "Revision "x" failed with message: ..."; SetLatestReadyRevisionName: True);
- the Revision runs a Deployment ``<revision>-deployment`` (the template's containers and labels plus
  ``serving.knative.dev/{service,configuration,revision}``; ``autoscaling.knative.dev/min-scale`` replicas,
  default 1). ``ResourcesAvailable`` and ``ContainerHealthy`` are ``Unknown``/``Deploying`` until the
  Deployment has a ready replica; a pod whose container terminated makes ``ContainerHealthy=False``
  ``ExitCode<n>`` "Container failed with: <message>", until a pod is ready again (reconcileDeployment);
  a revision not ready after its progress deadline (``serving.knative.dev/progress-deadline``, default
  600 s) is scaled to zero and, unless its container already failed, ``ResourcesAvailable=False``
  ``ProgressDeadlineExceeded`` "Initial scale was never achieved" (PropagateAutoscalerStatus): never
  retried;
- the Route's ``AllTrafficAssigned`` is ``RevisionMissing`` while the configuration has no ready revision
  (Unknown "Configuration "x" is waiting for a Revision to become ready.", False "... does not have any
  ready Revision." once the configuration failed) or its revision is not ready; ``IngressReady`` True (no
  networking layer is modelled), ``CertificateProvisioned`` True ``TLSNotEnabled``.

URLs: ``http://<name>.<namespace>.<domain>`` (the apps domain on OpenShift, else ``example.com``, Knative's
default), addresses ``http://<name>.<namespace>.svc.cluster.local``.
"""

import copy

from kubesim.clock import parse_timestamp
from kubesim.controllers.base import Ref
from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import apply_owned, condition, owner_reference

KSVC = ("serving.knative.dev", "services")
CONFIGURATIONS = ("serving.knative.dev", "configurations")
ROUTES = ("serving.knative.dev", "routes")
REVISIONS = ("serving.knative.dev", "revisions")
DEPLOYMENTS = ("apps", "deployments")
PODS = ("", "pods")
CRDS = ["serving.knative.dev/Service", "serving.knative.dev/Configuration", "serving.knative.dev/Route",
        "serving.knative.dev/Revision"]
PROGRESS_DEADLINE_S = 600.0
API = "serving.knative.dev/v1"


class LivingConditions:
    """knative/pkg apis/condition_set.go's NewLivingConditionSet: ``Ready`` and its dependents, others Info."""

    def __init__(self, conditions, dependents, now):
        self.conditions = [dict(c) for c in conditions or ()]
        self.dependents = tuple(dependents)
        self.now = now

    def get(self, ctype):
        return next((c for c in self.conditions if c.get("type") == ctype), None)

    def status(self, ctype):
        item = self.get(ctype)
        return item.get("status") if item else None

    def set(self, ctype, status, reason=None, message=None):
        entry = {"type": ctype, "status": status}
        if reason:
            entry["reason"] = reason
        if message:
            entry["message"] = message
        if ctype != "Ready" and ctype not in self.dependents:
            entry["severity"] = "Info"
        current = self.get(ctype)
        entry["lastTransitionTime"] = current.get("lastTransitionTime") if current and \
            current.get("status") == status else self.now
        self.conditions = [c for c in self.conditions if c.get("type") != ctype] + [entry]
        self.conditions.sort(key=lambda c: c["type"])

    def initialize(self):
        for ctype in ("Ready",) + self.dependents:
            if self.get(ctype) is None:
                self.set(ctype, "Unknown")

    def mark_true(self, ctype, reason=None, message=None):
        self.set(ctype, "True", reason, message)
        if all(self.status(c) == "True" for c in self.dependents):
            self.set("Ready", "True")

    def mark_false(self, ctype, reason=None, message=None):
        self.set(ctype, "False", reason, message)
        if ctype in self.dependents:
            self.set("Ready", "False", reason, message)

    def mark_unknown(self, ctype, reason=None, message=None):
        self.set(ctype, "Unknown", reason, message)
        for dependent in self.dependents:
            if self.status(dependent) == "False":
                if self.status("Ready") != "False":
                    self.set("Ready", "False", reason, message)
                return
        if ctype in self.dependents:
            self.set("Ready", "Unknown", reason, message)

    def propagate(self, ctype, item, keep_reason=False):
        """Copy ``item``'s status, reason and message into ``ctype`` (PropagateConfigurationStatus...; with
        ``keep_reason``, a True condition keeps them too: KServe's SetCondition, MarkTrueWithReason)."""
        if item is None:
            return
        status = item.get("status")
        if status == "True":
            if keep_reason:
                self.mark_true(ctype, item.get("reason"), item.get("message"))
            else:
                self.mark_true(ctype)
        elif status == "False":
            self.mark_false(ctype, item.get("reason"), item.get("message"))
        else:
            self.mark_unknown(ctype, item.get("reason"), item.get("message"))


def _domain(cluster):
    ingress = cluster.store.get(("config.openshift.io", "ingresses"), "", "cluster")
    return ((ingress or {}).get("spec") or {}).get("domain") or "example.com"


def _annotations(obj):
    return (obj.get("metadata") or {}).get("annotations") or {}


class KnativeServiceController(OperatorReconciler):
    """Knative Serving's service, configuration, revision and route reconcilers for one Service."""

    name = "knativeservice"
    key = KSVC
    default_delay = 0.0
    extra_watches = (DEPLOYMENTS, PODS)

    def related(self, event):
        labels = event.obj["metadata"].get("labels") or {}
        service = labels.get("serving.knative.dev/service")
        if not service:
            return []
        return [r for r in self.all_refs(event.obj["metadata"].get("namespace")) if r.name == service]

    def _apply(self, key, body, namespace, update=None):
        resource = self.cluster.resource_for_key(key)
        if resource is None:
            return None
        return apply_owned(self.cluster, resource, body, namespace, update)

    def _write(self, key, namespace, name, status):
        def change(current_status, obj):
            current_status.clear()
            current_status.update(copy.deepcopy(status))
        return self.write_status(Ref(key, namespace, name), change, key)

    def sync(self, ref, ksvc):
        cluster = self.cluster
        if cluster.resource_for_key(REVISIONS) is None:
            return 5.0
        now = self.clock.timestamp()
        name, namespace = ref.name, ref.namespace
        template = copy.deepcopy((ksvc.get("spec") or {}).get("template") or {})
        owner = owner_reference(ksvc)
        labels = {"serving.knative.dev/service": name}

        # the Configuration (MakeConfiguration): its generation counts the template's changes
        def config_update(obj):
            if obj.get("spec", {}).get("template") == template:
                return False
            obj["spec"] = {"template": copy.deepcopy(template)}
            obj["metadata"]["generation"] = int(obj["metadata"].get("generation", 1)) + 1
            return True
        configuration = self._apply(CONFIGURATIONS, {
            "apiVersion": API, "kind": "Configuration",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels), "ownerReferences": [owner]},
            "spec": {"template": template}}, namespace, config_update)
        generation = int(configuration["metadata"].get("generation", 1))
        revision_name = "%s-%05d" % (name, generation)
        revision = self._revision(ksvc, configuration, revision_name, template, now)
        config_status = self._configuration_status(configuration, revision, now)
        self._write(CONFIGURATIONS, namespace, name, config_status)
        route = self._apply(ROUTES, {
            "apiVersion": API, "kind": "Route",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels), "ownerReferences": [owner]},
            "spec": {"traffic": [{"configurationName": name, "latestRevision": True, "percent": 100}]}}, namespace)
        route_status = self._route_status(route, name, namespace, config_status, revision, now)
        self._write(ROUTES, namespace, name, route_status)
        self._service_status(ref, ksvc, config_status, route_status, now)
        ready = ((revision or {}).get("status") or {}).get("conditions") or []
        if any(c["type"] == "Ready" and c["status"] == "True" for c in ready):
            return None
        return self._deadline_left(revision)

    # -- the revision ----------------------------------------------------------------------
    def _revision(self, ksvc, configuration, revision_name, template, now):
        namespace = ksvc["metadata"]["namespace"]
        meta = template.get("metadata") or {}
        labels = dict(meta.get("labels") or {}, **{
            "serving.knative.dev/service": ksvc["metadata"]["name"],
            "serving.knative.dev/configuration": configuration["metadata"]["name"],
            "serving.knative.dev/configurationGeneration": str(configuration["metadata"].get("generation", 1)),
            "serving.knative.dev/revision": revision_name})
        revision = self._apply(REVISIONS, {
            "apiVersion": API, "kind": "Revision",
            "metadata": {"name": revision_name, "namespace": namespace, "labels": labels,
                         "annotations": dict(meta.get("annotations") or {}),
                         "ownerReferences": [owner_reference(configuration)]},
            "spec": copy.deepcopy(template.get("spec") or {})}, namespace)
        if revision is None:
            return None
        deployment_name = "%s-deployment" % revision_name
        deployment = self.cluster.store.get(DEPLOYMENTS, namespace, deployment_name)
        conditions = LivingConditions((revision.get("status") or {}).get("conditions"),
                                      ("ResourcesAvailable", "ContainerHealthy"), now)
        conditions.initialize()
        # scaled to zero by the autoscaler after the progress deadline: left as it is, never retried
        scaled_away = deployment is not None and deployment["spec"].get("replicas") == 0 and \
            conditions.status("Ready") == "False"
        if deployment is None and not scaled_away:
            replicas = int(_annotations(revision).get("autoscaling.knative.dev/min-scale") or 1)
            pod_labels = dict(labels, app=revision_name)
            self._apply(DEPLOYMENTS, {
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": deployment_name, "namespace": namespace, "labels": dict(labels),
                             "ownerReferences": [owner_reference(revision)]},
                "spec": {"replicas": replicas,
                         "selector": {"matchLabels": {"serving.knative.dev/revision": revision_name}},
                         "progressDeadlineSeconds": int(self._deadline(revision)),
                         "template": {"metadata": {"labels": pod_labels,
                                                   "annotations": dict(meta.get("annotations") or {})},
                                      "spec": copy.deepcopy(template.get("spec") or {})}}}, namespace)
            conditions.mark_unknown("ResourcesAvailable", "Deploying")
            conditions.mark_unknown("ContainerHealthy", "Deploying")
            deployment = self.cluster.store.get(DEPLOYMENTS, namespace, deployment_name)
        elif deployment is not None and not scaled_away:
            self._revision_from_deployment(conditions, deployment, namespace, revision_name)
        status = {"observedGeneration": revision["metadata"].get("generation", 1), "conditions": conditions.conditions}
        ready_replicas = ((deployment or {}).get("status") or {}).get("readyReplicas") or 0
        if scaled_away:
            status["actualReplicas"] = 0
        elif conditions.status("Ready") != "True" and self._deadline_left(revision) <= 0 and not ready_replicas:
            # the autoscaler gives up: scaled to zero, never retried (PropagateAutoscalerStatus)
            if conditions.status("ContainerHealthy") != "False":
                conditions.mark_false("ResourcesAvailable", "ProgressDeadlineExceeded",
                                      "Initial scale was never achieved")
            else:
                conditions.set("Ready", "False", conditions.get("ContainerHealthy").get("reason"),
                               conditions.get("ContainerHealthy").get("message"))
            status["conditions"] = conditions.conditions
            status["actualReplicas"] = 0
            if deployment is not None:
                def scale_to_zero(obj):
                    if obj["spec"].get("replicas") == 0:
                        return False
                    obj["spec"]["replicas"] = 0
                    return True
                self.cluster.mutate(self.cluster.resource_for_key(DEPLOYMENTS), namespace, deployment_name,
                                    scale_to_zero)
        else:
            status["actualReplicas"] = ready_replicas
        self._write(REVISIONS, namespace, revision_name, status)
        return self.cluster.store.get(REVISIONS, namespace, revision_name)

    def _revision_from_deployment(self, conditions, deployment, namespace, revision_name):
        """reconcileDeployment: PropagateDeploymentStatus, then the first pod's containers when none is available."""
        status = deployment.get("status") or {}
        available = condition(deployment, "Available") or {}
        progressing = condition(deployment, "Progressing") or {}
        if progressing.get("status") == "False" and progressing.get("reason") == "ProgressDeadlineExceeded":
            conditions.mark_false("ResourcesAvailable", "ProgressDeadlineExceeded", progressing.get("message"))
        elif available.get("status") == "True":
            conditions.mark_true("ResourcesAvailable")
        else:
            conditions.mark_unknown("ResourcesAvailable", "Deploying")
        if (deployment["spec"].get("replicas") or 0) > 0 and not status.get("availableReplicas"):
            pods = [p for p in self.cluster.store.list(PODS, namespace)[0]
                    if (p["metadata"].get("labels") or {}).get("serving.knative.dev/revision") == revision_name]
            for pod in pods[:1]:
                for entry in (pod.get("status") or {}).get("containerStatuses") or ():
                    if entry.get("name") == "queue-proxy":
                        continue
                    terminated = (entry.get("lastState") or {}).get("terminated") or \
                        (entry.get("state") or {}).get("terminated")
                    if terminated:
                        code = int(terminated.get("exitCode") or 0)
                        message = terminated.get("message") or ("container exited with no error" if not code else "")
                        conditions.mark_false("ContainerHealthy", "ExitCode%d" % code,
                                              "Container failed with: %s" % message)
                        break
        if status.get("readyReplicas"):
            conditions.mark_true("ContainerHealthy")
            if available.get("status") == "True":
                conditions.mark_true("ResourcesAvailable")

    def _deadline(self, revision):
        text = str(_annotations(revision or {}).get("serving.knative.dev/progress-deadline") or "")
        units = {"s": 1, "m": 60, "h": 3600}
        try:
            if text and text[-1] in units:
                return float(text[:-1]) * units[text[-1]]
            return float(text or PROGRESS_DEADLINE_S)
        except ValueError:
            return PROGRESS_DEADLINE_S

    def _deadline_left(self, revision):
        if revision is None:
            return 5.0
        created = parse_timestamp(revision["metadata"].get("creationTimestamp")) or self.clock.time()
        return max(0.0, created + self._deadline(revision) - self.clock.time())

    # -- configuration, route, service -----------------------------------------------------
    def _configuration_status(self, configuration, revision, now):
        current = configuration.get("status") or {}
        conditions = LivingConditions(current.get("conditions"), (), now)
        conditions.initialize()
        status = {"observedGeneration": configuration["metadata"].get("generation", 1),
                  "latestReadyRevisionName": current.get("latestReadyRevisionName")}
        if revision is None:
            status["conditions"] = conditions.conditions
            return status
        name = revision["metadata"]["name"]
        status["latestCreatedRevisionName"] = name
        if status["latestReadyRevisionName"] != name:
            conditions.mark_unknown("Ready")
        ready = condition(revision, "Ready") or {}
        if ready.get("status") == "True":
            status["latestReadyRevisionName"] = name
            conditions.mark_true("Ready")
        elif ready.get("status") == "False":
            # MarkLatestCreatedFailed
            conditions.mark_false("Ready", "RevisionFailed", "Revision %s failed with message: %s." % (
                _quoted(name), ready.get("message") or ""))
        if not status["latestReadyRevisionName"]:
            status.pop("latestReadyRevisionName")
        status["conditions"] = conditions.conditions
        return status

    def _route_status(self, route, name, namespace, config_status, revision, now):
        conditions = LivingConditions(((route or {}).get("status") or {}).get("conditions"),
                                      ("AllTrafficAssigned", "IngressReady", "CertificateProvisioned"), now)
        conditions.initialize()
        config_ready = next((c for c in config_status["conditions"] if c["type"] == "Ready"), {})
        latest_ready = config_status.get("latestReadyRevisionName")
        status = {"observedGeneration": ((route or {}).get("metadata") or {}).get("generation", 1)}
        if not latest_ready:
            if config_ready.get("status") == "False":
                conditions.mark_false("AllTrafficAssigned", "RevisionMissing",
                                      "Configuration %s does not have any ready Revision." % _quoted(name))
            else:
                conditions.mark_unknown("AllTrafficAssigned", "RevisionMissing",
                                        "Configuration %s is waiting for a Revision to become ready." % _quoted(name))
        else:
            target = self.cluster.store.get(REVISIONS, namespace, latest_ready) or {}
            ready = condition(target, "Ready") or {}
            if ready.get("status") == "True":
                conditions.mark_true("AllTrafficAssigned")
                status["traffic"] = [{"revisionName": latest_ready, "latestRevision": True, "percent": 100}]
            elif ready.get("status") == "False":
                conditions.mark_false("AllTrafficAssigned", "RevisionMissing",
                                      "Revision %s failed to become ready." % _quoted(latest_ready))
            else:
                conditions.mark_unknown("AllTrafficAssigned", "RevisionMissing",
                                        "Revision %s is not yet ready." % _quoted(latest_ready))
        conditions.mark_true("IngressReady")
        conditions.mark_true("CertificateProvisioned", "TLSNotEnabled", "external-domain-tls is not enabled")
        status["conditions"] = conditions.conditions
        status["url"] = "http://%s.%s.%s" % (name, namespace, _domain(self.cluster))
        status["address"] = {"url": "http://%s.%s.svc.cluster.local" % (name, namespace)}
        return status

    def _service_status(self, ref, ksvc, config_status, route_status, now):
        conditions = LivingConditions((ksvc.get("status") or {}).get("conditions"),
                                      ("ConfigurationsReady", "RoutesReady"), now)
        conditions.initialize()
        conditions.propagate("ConfigurationsReady", next((c for c in config_status["conditions"]
                                                           if c["type"] == "Ready"), None))
        conditions.propagate("RoutesReady", next((c for c in route_status["conditions"] if c["type"] == "Ready"), None))
        latest_ready = config_status.get("latestReadyRevisionName")
        traffic = route_status.get("traffic") or []
        if conditions.status("RoutesReady") == "True" and [t.get("revisionName") for t in traffic] != [latest_ready]:
            conditions.mark_unknown("RoutesReady", "TrafficNotMigrated", "Traffic is not yet migrated to the latest "
                                                                         "revision.")

        def change(status, obj):
            status.clear()
            status.update({"observedGeneration": obj["metadata"].get("generation", 1),
                           "conditions": conditions.conditions, "url": route_status["url"],
                           "address": route_status["address"], "traffic": traffic,
                           "latestCreatedRevisionName": config_status.get("latestCreatedRevisionName")})
            if latest_ready:
                status["latestReadyRevisionName"] = latest_ready
        self.write_status(ref, change)


def _quoted(name):
    """Go's %q of a plain name."""
    return '"%s"' % name
