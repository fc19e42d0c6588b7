"""Operators whose custom resource deploys a few Deployments and reports Ready (one class per kind).

Each creates its Deployments (owned by the CR), then, when they are Available
and its delay passed (``kubesim.perfscale.io/delay-s``), sets its ready
conditions ``True``; ``kubesim.perfscale.io/fail`` (or an injected fault for the
controller's name) sets them ``False`` with reason ``Failed`` and the message.

- DemoApp (demo.kubesim.perfscale.io/v1alpha1, the ``demo-operator`` test package):
  a Deployment ``<name>`` of ``spec.replicas`` pods; ``status.phase`` ``Pending``/
  ``Ready``/``Failed``, ``replicas``, ``readyReplicas``, ``observedGeneration``,
  condition ``Ready``; ``scale`` subresource.
- Kueue (kueue.openshift.io/v1): ``kueue-controller-manager`` in
  ``openshift-kueue-operator``; condition ``Available``.
- ServiceMeshControlPlane (maistra.io/v2): ``istiod-<name>``, ``istio-ingressgateway``;
  conditions ``Installed``, ``Reconciled``, ``Ready``.
- ServiceMeshMemberRoll (maistra.io/v1): condition ``Ready``, ``configuredMembers``.
- KnativeServing (operator.knative.dev/v1beta1): ``activator``, ``autoscaler``,
  ``controller``, ``webhook``; conditions ``DependenciesInstalled``,
  ``DeploymentsAvailable``, ``InstallSucceeded``, ``Ready``.
- Authorino (operator.authorino.kuadrant.io/v1beta1): ``authorino``; condition ``Ready``.
"""

from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import (condition_true, create_or_skip, ensure_namespace, owner_reference, propagate,
                                      set_condition)

DEPLOYMENTS = ("apps", "deployments")


class OperandReconciler(OperatorReconciler):
    """Base: ``deployments`` = ``[(namespace or None for the CR's, name, replicas)]``; ``ready_conditions``."""

    extra_watches = (DEPLOYMENTS,)
    ready_conditions = ("Ready",)
    default_delay = 3.0

    def related(self, event):
        resource = self.resource
        owner = (event.obj["metadata"].get("labels") or {}).get("kubesim.perfscale.io/owner-kind")
        if resource is None or owner != resource.kind:
            return []
        return self.all_refs()

    def deployments(self, obj):
        return []

    def extra_status(self, status, obj, ready):
        """Kind-specific status fields."""

    def sync(self, ref, obj):
        cluster = self.cluster
        now = self.clock.timestamp()
        names = []
        for namespace, name, replicas in self.deployments(obj):
            namespace = namespace or ref.namespace or "default"
            ensure_namespace(cluster, namespace)
            labels = {"app": name, "kubesim.perfscale.io/owner-kind": obj["kind"]}
            template_meta = propagate(obj, {"labels": dict(labels)})
            create_or_skip(cluster, cluster.resource_for_key(DEPLOYMENTS), {
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": namespace, "labels": dict(labels),
                             "ownerReferences": [owner_reference(obj)]},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": template_meta, "spec": {"containers": [{
                             "name": name, "image": self.image(obj, name),
                             "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}}}]}}}}, namespace)
            names.append((namespace, name, replicas))
        self.scale(obj, names)
        failure = self.fail_message(obj)
        pending = [name for namespace, name, _ in names
                   if not condition_true(cluster.store.get(DEPLOYMENTS, namespace, name) or {}, "Available")]
        left = self.delay_left(obj)
        ready = not failure and not pending and left <= 0

        def change(status, current):
            conditions = status.get("conditions") or []
            for ctype in self.ready_conditions:
                if failure:
                    conditions = set_condition(conditions, ctype, "False", "Failed", failure, now)
                elif ready:
                    conditions = set_condition(conditions, ctype, "True", "Ready" if ctype == "Ready" else ctype,
                                               "%s is ready" % current["kind"], now)
                else:
                    conditions = set_condition(conditions, ctype, "False", "Progressing", "waiting for %s" % (
                        ", ".join(pending) if pending else "the operator"), now)
            status["conditions"] = conditions
            self.extra_status(status, current, ready)
        self.write_status(ref, change)
        if not failure and not pending and left > 0:
            return left
        return None

    def image(self, obj, name):
        return "registry.kubesim.example.com/%s:latest" % name

    def scale(self, obj, deployments):
        """Keep the Deployments' replicas in line with the CR (default: nothing)."""


class DemoAppReconciler(OperandReconciler):
    name = "demoapp"
    key = ("demo.kubesim.perfscale.io", "demoapps")
    default_delay = 2.0

    def deployments(self, obj):
        return [(None, obj["metadata"]["name"], int((obj.get("spec") or {}).get("replicas", 1)))]

    def image(self, obj, name):
        return (obj.get("spec") or {}).get("image") or "quay.io/kubesim/demo-app:1.0"

    def scale(self, obj, deployments):
        for namespace, name, replicas in deployments:
            current = self.cluster.store.get(DEPLOYMENTS, namespace, name)
            if current is not None and current["spec"].get("replicas") != replicas:
                self.cluster.mutate(self.cluster.resource_for_key(DEPLOYMENTS), namespace, name,
                                    lambda o, r=replicas: o["spec"].update(replicas=r))

    def extra_status(self, status, obj, ready):
        deployment = self.cluster.store.get(DEPLOYMENTS, obj["metadata"]["namespace"], obj["metadata"]["name"]) or {}
        failed = any(c.get("reason") == "Failed" for c in status.get("conditions") or ())
        status.update(phase="Failed" if failed else "Ready" if ready else "Pending",
                      replicas=(deployment.get("status") or {}).get("replicas", 0),
                      readyReplicas=(deployment.get("status") or {}).get("readyReplicas", 0),
                      observedGeneration=obj["metadata"].get("generation", 1))


class KueueReconciler(OperandReconciler):
    name = "kueue"
    key = ("kueue.openshift.io", "kueues")
    ready_conditions = ("Available",)

    def deployments(self, obj):
        return [("openshift-kueue-operator", "kueue-controller-manager", 1)]


class ServiceMeshControlPlaneReconciler(OperandReconciler):
    name = "servicemeshcontrolplane"
    key = ("maistra.io", "servicemeshcontrolplanes")
    ready_conditions = ("Installed", "Reconciled", "Ready")

    def deployments(self, obj):
        return [(None, "istiod-%s" % obj["metadata"]["name"], 1), (None, "istio-ingressgateway", 1)]


class ServiceMeshMemberRollReconciler(OperandReconciler):
    name = "servicemeshmemberroll"
    key = ("maistra.io", "servicemeshmemberrolls")
    default_delay = 1.0

    def extra_status(self, status, obj, ready):
        status["configuredMembers"] = list((obj.get("spec") or {}).get("members") or ()) if ready else []


class KnativeServingReconciler(OperandReconciler):
    name = "knativeserving"
    key = ("operator.knative.dev", "knativeservings")
    ready_conditions = ("DependenciesInstalled", "DeploymentsAvailable", "InstallSucceeded", "Ready")

    def deployments(self, obj):
        return [(None, name, 1) for name in ("activator", "autoscaler", "controller", "webhook")]

    def extra_status(self, status, obj, ready):
        status["version"] = "1.16.0"
        if ready:
            # Knative Serving's own kinds are served once it runs (what KServe looks for in Serverless mode)
            from kubesim import apis
            apis.install_crds(self.cluster, ["serving.knative.dev/Service"])


class AuthorinoReconciler(OperandReconciler):
    name = "authorino"
    key = ("operator.authorino.kuadrant.io", "authorinos")

    def deployments(self, obj):
        return [(None, "authorino", 1)]
