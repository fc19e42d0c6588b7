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

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``kueue``: openshift/kueue-operator @ dc3b65774c4536465086f076f8b4b2d78326f890; files:
  pkg/operator/target_config_reconciler.go.
- ``servicemeshcontrolplane``: maistra/istio-operator @ 8143614c5f13ef9b894d107d47353507b70f45ea; files:
  pkg/controller/servicemesh/controlplane/reconciler.go, readiness.go (branch maistra-2.5).
- ``servicemeshmemberroll``: maistra/istio-operator @ 8143614c5f13ef9b894d107d47353507b70f45ea; files:
  pkg/controller/servicemesh/memberroll/controller.go (branch maistra-2.5).
- ``knativeserving``: knative/operator @ b4f2c2549cd01859c393b3d01f1df8f35bb22638; files:
  pkg/reconciler/knativeserving/knativeserving.go, pkg/apis/operator/v1beta1/knativeserving_lifecycle.go.
- ``authorino``: Kuadrant/authorino-operator @ 9650cce26bcab3a545ef39c01e91110211b01257; files:
  controllers/authorino_controller.go, pkg/reconcilers/authorino_reconciler.go.
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
        conditions = self.conditions(obj, failure, pending if pending else (["the operator"] if left > 0 else []))

        def change(status, current):
            items = status.get("conditions") or []
            for ctype, value, reason, message in conditions:
                items = set_condition(items, ctype, value, reason, message, now)
            status["conditions"] = items
            self.extra_status(status, current, ready)
        self.write_status(ref, change)
        if not failure and not pending and left > 0:
            return left
        return None

    def conditions(self, obj, failure, pending):
        """``[(type, status, reason, message)]`` the upstream operator writes: ``failure`` (a message or
        None) and ``pending`` (the Deployments not available yet)."""
        if failure:
            return [(ctype, "False", "Failed", failure) for ctype in self.ready_conditions]
        if pending:
            return [(ctype, "False", "Progressing", "waiting for %s" % ", ".join(pending))
                    for ctype in self.ready_conditions]
        return [(ctype, "True", "Ready" if ctype == "Ready" else ctype, "%s is ready" % obj["kind"])
                for ctype in self.ready_conditions]

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
    """openshift/kueue-operator @ dc3b65774c4536465086f076f8b4b2d78326f890 (pkg/operator/target_config_reconciler.go):
    Available False ``NotEnoughReplicas``, Progressing True ``Reconciling``, Degraded True ``NoReplicasReady``
    during a normal install, then Available ``AllReplicasReady``, Progressing/Degraded False ``AsExpected``."""

    name = "kueue"
    key = ("kueue.openshift.io", "kueues")
    ready_conditions = ("Available", "Progressing", "Degraded")

    def deployments(self, obj):
        return [("openshift-kueue-operator", "kueue-controller-manager", 1)]

    def conditions(self, obj, failure, pending):
        if failure:
            return [("Available", "False", "MissingDependencies", failure), ("Progressing", "False", "AsExpected", ""),
                    ("Degraded", "True", "MissingDependencies", failure)]
        if pending:
            return [("Available", "False", "NotEnoughReplicas", "0 of 1 replicas ready"),
                    ("Progressing", "True", "Reconciling", "kueue-controller-manager is rolling out"),
                    ("Degraded", "True", "NoReplicasReady", "no replica of kueue-controller-manager is ready")]
        return [("Available", "True", "AllReplicasReady", "all replicas are ready"),
                ("Progressing", "False", "AsExpected", ""), ("Degraded", "False", "AsExpected", "")]


class ServiceMeshControlPlaneReconciler(OperandReconciler):
    """maistra/istio-operator @ 8143614c5f13ef9b894d107d47353507b70f45ea (branch maistra-2.5,
    pkg/controller/servicemesh/controlplane/reconciler.go, readiness.go): Installed/Reconciled/Ready False
    ``ResourceCreated`` "Installing mesh generation N", Reconciled ``PausingInstall`` while components
    start (Ready copies it), then ``InstallSuccessful`` and Ready ``ComponentsReady``."""

    name = "servicemeshcontrolplane"
    key = ("maistra.io", "servicemeshcontrolplanes")
    ready_conditions = ("Installed", "Reconciled", "Ready")

    def deployments(self, obj):
        return [(None, "istiod-%s" % obj["metadata"]["name"], 1), (None, "istio-ingressgateway", 1)]

    def conditions(self, obj, failure, pending):
        generation = obj["metadata"].get("generation", 1)
        if failure:
            return [(c, "False", "ReconcileError", failure) for c in self.ready_conditions]
        if pending:
            installing = ("ResourceCreated", "Installing mesh generation %d" % generation)
            paused = ("PausingInstall", "Paused until the following components become ready: [%s]" % " ".join(pending))
            return [("Installed", "False") + installing, ("Reconciled", "False") + paused, ("Ready", "False") + paused]
        return [("Installed", "True", "InstallSuccessful", "Successfully installed all mesh components"),
                ("Reconciled", "True", "InstallSuccessful", "Successfully installed version 2.6.10-%d" % generation),
                ("Ready", "True", "ComponentsReady", "All component deployments are Available")]


class ServiceMeshMemberRollReconciler(OperandReconciler):
    """maistra/istio-operator @ 8143614c5f13ef9b894d107d47353507b70f45ea (pkg/controller/servicemesh/memberroll):
    one ``Ready`` condition, True ``Configured`` once no member is pending (False ``ReconcileError`` meanwhile)."""

    name = "servicemeshmemberroll"
    key = ("maistra.io", "servicemeshmemberrolls")
    default_delay = 1.0

    def conditions(self, obj, failure, pending):
        members = list((obj.get("spec") or {}).get("members") or ())
        if failure:
            return [("Ready", "False", "ReconcileError", failure)]
        if pending:
            return [("Ready", "False", "ReconcileError", "Not all members are configured: %s" % ", ".join(members))]
        return [("Ready", "True", "Configured", "All namespaces have been configured successfully")]

    def extra_status(self, status, obj, ready):
        members = list((obj.get("spec") or {}).get("members") or ())
        status.update(members=members, configuredMembers=members if ready else [],
                      pendingMembers=[] if ready else members)


class KnativeServingReconciler(OperandReconciler):
    """knative/operator @ b4f2c2549cd01859c393b3d01f1df8f35bb22638 (pkg/reconciler/knativeserving,
    pkg/apis/operator/v1beta1/knativeserving_lifecycle.go): DeploymentsAvailable False ``NotReady``
    "Waiting on deployments: ..." (Ready copies it, InstallSucceeded and DependenciesInstalled Unknown,
    no version) until every Deployment is Available; then all True and ``status.version``. Once Ready,
    Knative Serving's own kinds are served (what KServe looks for before a Serverless deployment)."""

    name = "knativeserving"
    key = ("operator.knative.dev", "knativeservings")
    ready_conditions = ("DependenciesInstalled", "DeploymentsAvailable", "InstallSucceeded", "TargetClusterResolved",
                        "VersionMigrationEligible", "Ready")

    def deployments(self, obj):
        return [(None, name, 1) for name in ("activator", "autoscaler", "controller", "webhook")]

    def conditions(self, obj, failure, pending):
        if failure:
            message = "Install failed with message: %s" % failure
            return [("InstallSucceeded", "False", "Error", message), ("Ready", "False", "Error", message)]
        if pending:
            waiting = "Waiting on deployments: %s" % ", ".join(pending)
            return [("TargetClusterResolved", "True", None, None), ("VersionMigrationEligible", "True", None, None),
                    ("DependenciesInstalled", "Unknown", None, None), ("InstallSucceeded", "Unknown", None, None),
                    ("DeploymentsAvailable", "False", "NotReady", waiting), ("Ready", "False", "NotReady", waiting)]
        return [(c, "True", None, None) for c in self.ready_conditions]

    def extra_status(self, status, obj, ready):
        if ready:
            status["version"] = "1.16.0"
            # Knative Serving's own kinds are served once it runs (what KServe looks for in Serverless mode)
            from kubesim import apis
            from kubesim.controllers.knative import CRDS
            apis.install_crds(self.cluster, CRDS)


class AuthorinoReconciler(OperandReconciler):
    """Kuadrant/authorino-operator @ 9650cce26bcab3a545ef39c01e91110211b01257 (controllers/authorino_controller.go,
    pkg/reconcilers/authorino_reconciler.go): Ready False ``DeploymentNotReady`` "Authorino Deployment
    resource not ready", then True ``Provisioned`` (no message)."""

    name = "authorino"
    key = ("operator.authorino.kuadrant.io", "authorinos")

    def deployments(self, obj):
        return [(None, "authorino", 1)]

    def conditions(self, obj, failure, pending):
        if failure:
            return [("Ready", "False", "UnableToCreateDeployment", failure)]
        if pending:
            return [("Ready", "False", "DeploymentNotReady", "Authorino Deployment resource not ready")]
        return [("Ready", "True", "Provisioned", None)]
