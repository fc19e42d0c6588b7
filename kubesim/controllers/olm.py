"""OLM (operators.coreos.com) as OpenShift runs it: catalog-operator and olm-operator, simplified.

- CatalogSource: a registry pod (readiness after 5 s, the registry's probe delay), then the status
  as the catalog operator writes it: first ``registryService`` alone, then
  ``connectionState.lastObservedState`` IDLE, CONNECTING, TRANSIENT_FAILURE while the registry pod
  is not Ready (transient ``catalog-transient-failure``), READY ``delay-s`` (default 2 s) after it
  is. A source whose image no catalog fixture serves gets a registry pod whose image cannot be
  pulled (ErrImagePull, ImagePullBackOff): TRANSIENT_FAILURE for ever, with no reason or message, as
  upstream; a grpc source with neither image nor address: ``reason: SpecInvalidError``.
- OperatorGroup: ``status.namespaces`` (``[""]`` for all namespaces, else the
  target namespaces) and ``lastUpdated``.
- Subscription: resolves ``spec.name`` in ``spec.channel`` (default: the package's default
  channel) of its catalog: while the catalog's connection is not READY, ``ResolutionFailed`` /
  ``ErrorPreventedResolution`` ("error using catalogsource ...", retried); a package or channel the
  catalog does not have, ``ResolutionFailed`` / ``ConstraintsNotSatisfiable`` with OLM's "no
  operators found ..." messages; OperatorGroup problems, ``ErrorPreventedResolution``. Then an
  InstallPlan for ``spec.startingCSV`` or the channel head, then one per upgrade step along the
  channel (``replaces``); ``status.state`` ``UpgradePending`` (an InstallPlan not complete),
  ``AtLatestKnown`` (the head installed), ``UpgradeFailed``; ``currentCSV``, ``installedCSV``,
  ``installPlanRef``, ``installplan``, ``installPlanGeneration``, ``catalogHealth`` (healthy: the
  registry pod exists) and the conditions ``CatalogSourcesUnhealthy``, ``InstallPlanPending``
  (reason ``RequiresApproval`` or ``Installing``), ``InstallPlanFailed``, ``ResolutionFailed``.
- InstallPlan: ``spec.approval`` Automatic (approved at creation) or Manual
  (``status.phase: RequiresApproval`` until ``spec.approved: true``), then
  ``Installing`` (the owned CRDs and the CSV are created) and ``Complete``
  (condition ``Installed=True``); an injected ``installplan`` controller fault
  makes it ``Failed``.
- ClusterServiceVersion: ``Pending`` (``RequirementsUnknown``, then
  ``RequirementsNotMet`` until its owned CRDs are Established) -> ``InstallReady``
  (``AllRequirementsMet``) -> ``Installing`` (the Deployments of
  ``spec.install.spec.deployments``, with the Subscription's ``spec.config``
  env/nodeSelector/tolerations/resources) -> ``Succeeded`` once they are
  Available and the package's install time passed; ``Failed`` with
  ``NoOperatorGroup``, ``TooManyOperatorGroups``, ``UnsupportedOperatorGroup``
  (install mode), ``InstallComponentFailed`` (annotation ``kubesim.perfscale.io/fail``
  on the Subscription or the CSV, a catalog version's ``fail``, or an injected
  ``clusterserviceversion`` fault) or ``InstallCheckFailed`` (``install timeout``,
  5 simulated minutes). A Failed CSV is looked at again after ``retry-s`` (default 300 s, the
  informers' resync; the Subscription's ``kubesim.perfscale.io/retry-s`` reaches the CSV): fixed
  OperatorGroup problems send it back to ``Pending``; an install failure goes ``Pending`` /
  ``NeedsReinstall`` and is installed again, or ``Succeeded`` when its Deployments are Available;
  one whose Deployment exceeded its progress deadline stays ``Failed`` ("install failed: ...")
  (transient ``csv-failed-retried``). A CSV that ``replaces`` another deletes it once Succeeded.

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``catalogsource``: operator-framework/operator-lifecycle-manager @ 992bb097749e5994eedc5e4882583df952d8a70e;
  files: pkg/controller/operators/catalog/operator.go (syncCatalogSources),
  pkg/controller/registry/grpc/source.go, pkg/controller/registry/reconciler/grpc.go.
- ``operatorgroup``: operator-framework/operator-lifecycle-manager @ 992bb097749e5994eedc5e4882583df952d8a70e;
  files: pkg/controller/operators/olm/operatorgroup.go.
- ``subscription``: operator-framework/operator-lifecycle-manager @ 992bb097749e5994eedc5e4882583df952d8a70e;
  files: pkg/controller/operators/catalog/operator.go (syncResolvingNamespace),
  pkg/controller/operators/catalog/subscription/state.go.
- ``installplan``: operator-framework/operator-lifecycle-manager @ 992bb097749e5994eedc5e4882583df952d8a70e;
  files: pkg/controller/operators/catalog/operator.go (syncInstallPlans).
- ``clusterserviceversion``: operator-framework/operator-lifecycle-manager @
  992bb097749e5994eedc5e4882583df952d8a70e; files: pkg/controller/operators/olm/operator.go
  (transitionCSVState), pkg/controller/install/errors.go.
"""

import json

from kubesim import apis, olm
from kubesim.controllers.base import Controller, Ref
from kubesim.controllers.util import (FAIL, PREFIX, annotation, condition_true, create_or_skip, delete_quietly,
                                      float_annotation, owner_reference, pod_ready, random_suffix, set_condition, since)
from kubesim.errors import ApiError

GROUP = "operators.coreos.com"
CATALOG_SOURCES = (GROUP, "catalogsources")
OPERATOR_GROUPS = (GROUP, "operatorgroups")
SUBSCRIPTIONS = (GROUP, "subscriptions")
INSTALL_PLANS = (GROUP, "installplans")
CSVS = (GROUP, "clusterserviceversions")
DEPLOYMENTS = ("apps", "deployments")
PODS = ("", "pods")
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
INSTALLED_BY = PREFIX + "installed-by-csv"
INSTALL_TIMEOUT_S = 300.0
CSV_RESYNC_S = 300.0   # a Failed CSV is looked at again on the informers' resync (5 min +/- 20 %)


def catalogs_of(cluster):
    """The cluster's :class:`kubesim.olm.Catalogs` (loaded once)."""
    catalogs = getattr(cluster, "catalogs", None)
    if catalogs is None:
        settings = getattr(cluster, "settings", None)
        catalogs = cluster.catalogs = olm.Catalogs(getattr(settings, "catalog_dirs", ()) or ())
    return catalogs


def package_label(package, namespace):
    return "operators.coreos.com/%s.%s" % (package, namespace)


def operator_ready(cluster, crd_name):
    """Is an operator reconciling the kinds of ``crd_name``?

    CRDs that OLM installed (annotation ``kubesim.perfscale.io/installed-by-csv``)
    are served by their operator only while that CSV is ``Succeeded``; CRDs
    installed otherwise (kubectl, an addon) count as having a running operator.
    """
    crd = cluster.store.get(CRDS, "", crd_name)
    if crd is None:
        return False
    owner = (crd["metadata"].get("annotations") or {}).get(INSTALLED_BY)
    if not owner:
        return True
    namespace, _, name = owner.partition("/")
    csv = cluster.store.get(CSVS, namespace, name)
    return csv is not None and (csv.get("status") or {}).get("phase") == "Succeeded"


def _ref(obj):
    meta = obj["metadata"]
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": meta["name"],
            "namespace": meta.get("namespace"), "resourceVersion": meta.get("resourceVersion"), "uid": meta.get("uid")}


class CatalogSourceController(Controller):
    name = "catalogsource"
    watches = (CATALOG_SOURCES, PODS)
    transients = {"catalog-transient-failure": "a catalog's gRPC connection goes IDLE, CONNECTING, then TRANSIENT_FAILURE "
                                              "while its registry pod is not Ready, before READY"}

    def on_event(self, event):
        meta = event.obj["metadata"]
        if event.key == PODS:
            labels = meta.get("labels") or {}
            if "olm.catalogSource" in labels:
                return [Ref(CATALOG_SOURCES, meta["namespace"], labels["olm.catalogSource"])]
            # the registry pod of an address-based catalog (operator-sdk run bundle): any catalog of its namespace
            return [Ref(CATALOG_SOURCES, meta["namespace"], s["metadata"]["name"])
                    for s in self.cluster.store.list(CATALOG_SOURCES, meta["namespace"])[0]
                    if (s.get("spec") or {}).get("address")]
        return [Ref(CATALOG_SOURCES, meta.get("namespace") or "", meta["name"])]

    def reconcile(self, ref):
        cluster = self.cluster
        source = cluster.store.get(CATALOG_SOURCES, ref.namespace, ref.name)
        if source is None or source["metadata"].get("deletionTimestamp"):
            return None
        spec = source.get("spec") or {}
        now = self.clock.timestamp()
        if (spec.get("sourceType") or "grpc") == "grpc" and not spec.get("image") and not spec.get("address"):
            return self._write(ref, {"reason": "SpecInvalidError",
                                     "message": "image and address unset: at least one must be set for sourcetype: grpc"})
        serving_pod = None
        fixtures = []
        if spec.get("address") and not spec.get("image"):
            # a grpc source served by a registry pod of its own (operator-sdk run bundle)
            bundle, serving_pod = self._served_bundle(ref.namespace, spec["address"])
            if bundle is not None and (source["metadata"].get("annotations") or {}).get(olm.BUNDLE_ANNOTATION) != bundle:
                def remember(obj):
                    obj["metadata"].setdefault("annotations", {})[olm.BUNDLE_ANNOTATION] = bundle
                    return True
                source = cluster.mutate(cluster.resource_for_key(CATALOG_SOURCES), ref.namespace, ref.name, remember)
                if source is None:
                    return None
            fixtures = catalogs_of(cluster).for_source(source) if bundle is not None else []
            address = spec["address"]
            registry = {"createdAt": source["metadata"].get("creationTimestamp"), "protocol": "grpc"}
        else:
            fixtures = catalogs_of(cluster).for_source(source)
            serving_pod = self._registry_pod(source, bool(fixtures))
            address = "%s.%s.svc:50051" % (ref.name.replace(".", "-"), ref.namespace)
            registry = {"createdAt": source["metadata"].get("creationTimestamp"), "port": "50051", "protocol": "grpc",
                        "serviceName": ref.name.replace(".", "-"), "serviceNamespace": ref.namespace}
        status = source.get("status") or {}
        if not status.get("registryService"):
            # the first sync creates the registry server and records it: no connection state yet
            return self._write(ref, {"registryService": registry}, retry=0.5)
        serving = serving_pod is not None and pod_ready(serving_pod) and bool(fixtures)
        current = (status.get("connectionState") or {}).get("lastObservedState")
        delay = float_annotation(source, "delay-s", 2.0)
        if current is None:
            state, retry = "IDLE", 0.3
        elif serving:
            changed = since((status.get("connectionState") or {}).get("lastConnect"), self.clock)
            if current == "READY":
                state, retry = "READY", None
            elif current == "CONNECTING" and changed >= delay:
                state, retry = "READY", None
            else:
                state, retry = "CONNECTING", max(0.1, delay - changed) if current == "CONNECTING" else delay
        elif current in ("IDLE", "READY") or not self.transient("catalog-transient-failure"):
            state, retry = "CONNECTING", 1.0
        else:
            # the registry pod is not Ready (starting, or its image cannot be pulled): the gRPC channel
            # reports TRANSIENT_FAILURE while it retries (grpc pick_first), for as long as it takes
            state, retry = "TRANSIENT_FAILURE", 10.0
        if state == current:
            return retry
        return self._write(ref, {"registryService": registry,
                                 "connectionState": {"address": address, "lastConnect": now, "lastObservedState": state}},
                           retry=retry)

    def _write(self, ref, fields, retry=None):
        def write(obj):
            status = obj.setdefault("status", {})
            before = dict(status)
            status.pop("reason", None)      # every sync clears them (catalog/operator.go)
            status.pop("message", None)
            status.update(fields)
            return status != before
        self.cluster.mutate(self.cluster.resource_for_key(CATALOG_SOURCES), ref.namespace, ref.name, write,
                            subresource="status")
        return retry

    def _served_bundle(self, namespace, address):
        """``(bundle image, pod)`` the registry behind ``address`` (``<service>.<namespace>.svc:<port>``)
        serves: the ``-b``/``--bundles`` argument of its pod's containers; ``(None, pod or None)`` when unknown."""
        host = address.split(":", 1)[0]
        service_name, _, rest = host.partition(".")
        service_namespace = rest.split(".", 1)[0] if rest else namespace
        service = self.cluster.store.get(("", "services"), service_namespace, service_name)
        selector = ((service or {}).get("spec") or {}).get("selector") or {}
        if not selector:
            return None, None
        for pod in self.cluster.store.list(PODS, service_namespace)[0]:
            labels = pod["metadata"].get("labels") or {}
            if any(labels.get(k) != v for k, v in selector.items()):
                continue
            spec = pod.get("spec") or {}
            for container in list(spec.get("initContainers") or ()) + list(spec.get("containers") or ()):
                argv = list(container.get("command") or ()) + list(container.get("args") or ())
                for flag in ("-b", "--bundles", "--bundle-images"):
                    if flag in argv[:-1]:
                        return argv[argv.index(flag) + 1], pod
            return None, pod
        return None, None

    def _registry_pod(self, source, pullable):
        """The catalog's registry pod (created when missing); one whose image no fixture serves cannot be pulled.
        A pod of another image (the CatalogSource's image was changed) is deleted and replaced, as the gRPC
        registry reconciler does (registry/reconciler/grpc.go: ensurePod with overwrite)."""
        cluster = self.cluster
        namespace = source["metadata"]["namespace"]
        image = (source.get("spec") or {}).get("image", "")
        for pod in cluster.store.list(PODS, namespace)[0]:
            if (pod["metadata"].get("labels") or {}).get("olm.catalogSource") == source["metadata"]["name"]:
                if self._image_of(pod) == image:
                    return pod
                delete_quietly(cluster, cluster.resource_for_key(PODS), namespace, pod["metadata"]["name"])
        # the registry pod's readiness probe starts after 5 s (registry/reconciler/grpc.go: Pod(..., 5, 10, ...))
        annotations = {PREFIX + "ready-delay-s": "5"} if pullable else {PREFIX + "image-pull": "fail"}
        create_or_skip(cluster, cluster.resource_for_key(PODS), {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": source["metadata"]["name"] + "-", "namespace": namespace,
                         "labels": {"olm.catalogSource": source["metadata"]["name"], "olm.managed": "true"},
                         "annotations": annotations, "ownerReferences": [owner_reference(source)]},
            "spec": {"nodeSelector": {"kubernetes.io/os": "linux"},
                     "containers": [{"name": "registry-server", "image": image,
                                     "ports": [{"name": "grpc", "containerPort": 50051}]}]}}, namespace)
        return None

    @staticmethod
    def _image_of(pod):
        containers = (pod.get("spec") or {}).get("containers") or [{}]
        return containers[0].get("image", "")


class OperatorGroupController(Controller):
    name = "operatorgroup"
    watches = (OPERATOR_GROUPS,)

    def reconcile(self, ref):
        group = self.cluster.store.get(OPERATOR_GROUPS, ref.namespace, ref.name)
        if group is None:
            return None
        spec = group.get("spec") or {}
        targets = list(spec.get("targetNamespaces") or ())
        namespaces = targets if targets or spec.get("selector") else [""]
        now = self.clock.timestamp()

        def write(obj):
            status = obj.setdefault("status", {})
            if status.get("namespaces") == namespaces:
                return False
            status.update(namespaces=namespaces, lastUpdated=now)
            return True
        self.cluster.mutate(self.cluster.resource_for_key(OPERATOR_GROUPS), ref.namespace, ref.name, write,
                            subresource="status")
        return None


def _install_mode(group, namespace):
    """The install mode an OperatorGroup asks for (OLM's InstallModeSet of the group)."""
    targets = (group.get("status") or {}).get("namespaces")
    if targets is None:
        spec = group.get("spec") or {}
        targets = list(spec.get("targetNamespaces") or ()) or [""]
    if targets == [""]:
        return "AllNamespaces", "cannot configure to watch all namespaces"
    if targets == [namespace]:
        return "OwnNamespace", "cannot configure to watch own namespace"
    if len(targets) == 1:
        return "SingleNamespace", "cannot configure to watch one namespace"
    return "MultiNamespace", "cannot configure to watch multiple namespaces"


class SubscriptionController(Controller):
    name = "subscription"
    watches = (SUBSCRIPTIONS, INSTALL_PLANS, CSVS, CATALOG_SOURCES, OPERATOR_GROUPS)

    def on_event(self, event):
        meta = event.obj["metadata"]
        if event.key == SUBSCRIPTIONS:
            return [Ref(SUBSCRIPTIONS, meta["namespace"], meta["name"])]
        if event.key == CATALOG_SOURCES:
            return [Ref(SUBSCRIPTIONS, s["metadata"]["namespace"], s["metadata"]["name"])
                    for s in self.cluster.store.list(SUBSCRIPTIONS)[0]]
        return [Ref(SUBSCRIPTIONS, s["metadata"]["namespace"], s["metadata"]["name"])
                for s in self.cluster.store.list(SUBSCRIPTIONS, meta["namespace"])[0]]

    def reconcile(self, ref):
        cluster = self.cluster
        sub = cluster.store.get(SUBSCRIPTIONS, ref.namespace, ref.name)
        if sub is None or sub["metadata"].get("deletionTimestamp"):
            return None
        spec = sub.get("spec") or {}
        status = sub.get("status") or {}
        now = self.clock.timestamp()
        source = cluster.store.get(CATALOG_SOURCES, spec.get("sourceNamespace") or "", spec.get("source") or "")
        # "healthy" as the subscription reconciler judges it: the registry server exists (its pod, or an address)
        healthy = source is not None and self._registry_exists(source)
        conditions = status.get("conditions") or []
        health = [{"catalogSourceRef": _ref(source), "healthy": healthy, "lastUpdated": now}] if source else []
        if healthy:
            conditions = set_condition(conditions, "CatalogSourcesUnhealthy", "False", "AllCatalogSourcesHealthy",
                                       "all available catalogsources are healthy", now)
        else:
            conditions = set_condition(conditions, "CatalogSourcesUnhealthy", "True", "UnhealthyCatalogSourceFound",
                                       "targeted catalogsource %s/%s %s" % (spec.get("sourceNamespace"), spec.get("source"),
                                                                            "missing" if source is None else "unhealthy"),
                                       now)
            return self._write(ref, conditions, health, now, retry=5.0)
        if not olm.source_ready(source) and not status.get("currentCSV"):
            # the resolver cannot list the catalog's bundles while its connection is not READY: an error
            # that prevents resolution, retried with back-off (catalog/operator.go syncResolvingNamespace)
            conditions = set_condition(conditions, "ResolutionFailed", "True", "ErrorPreventedResolution",
                                       "error using catalogsource %s/%s: failed to list bundles: rpc error: code = "
                                       "Unavailable desc = connection error: desc = \"transport: Error while dialing: "
                                       "dial tcp: connect: connection refused\"" % (source["metadata"]["namespace"],
                                                                                    source["metadata"]["name"]), now)
            return self._write(ref, conditions, health, now, retry=5.0)
        problem, package, channel = self._resolve(sub, source)
        if problem:
            # OperatorGroup problems are errors that prevent resolution (retried); a package or channel
            # that the catalog does not have makes the constraints unsatisfiable (until something changes)
            reason = "ErrorPreventedResolution" if "operatorgroup" in problem.lower() or "operator group" in problem.lower() \
                else "ConstraintsNotSatisfiable"
            conditions = set_condition(conditions, "ResolutionFailed", "True", reason, problem, now)
            return self._write(ref, conditions, health, now, retry=10.0)
        conditions = [c for c in conditions if c.get("type") != "ResolutionFailed"]
        current = status.get("currentCSV")
        updates = {}
        if not current:
            target = spec.get("startingCSV") or package.head(channel)
            plan = self._create_plan(sub, package, target, source, int(status.get("installPlanGeneration") or 0) + 1)
            updates = self._plan_status(plan, target)
            conditions = self._pending(conditions, plan, now)
            return self._write(ref, conditions, health, now, updates=dict(updates, state="UpgradePending"))
        plan_name = (status.get("installPlanRef") or {}).get("name")
        plan = cluster.store.get(INSTALL_PLANS, ref.namespace, plan_name) if plan_name else None
        phase = ((plan or {}).get("status") or {}).get("phase")
        csv = cluster.store.get(CSVS, ref.namespace, current)
        if plan is not None and phase in (None, "", "RequiresApproval", "Installing"):
            conditions = self._pending(conditions, plan, now)
            return self._write(ref, conditions, health, now, updates={"state": "UpgradePending"})
        if phase == "Failed":
            conditions = [c for c in conditions if c.get("type") != "InstallPlanPending"]
            conditions = set_condition(conditions, "InstallPlanFailed", "True", "InstallComponentFailed",
                                       (plan.get("status") or {}).get("message") or "install plan failed", now)
            return self._write(ref, conditions, health, now, updates={"state": "UpgradeFailed"})
        conditions = [c for c in conditions if c.get("type") not in ("InstallPlanPending", "InstallPlanFailed")]
        if csv is None:
            return self._write(ref, conditions, health, now, retry=1.0)
        updates["installedCSV"] = current
        upgrade = package.next_in_channel(channel, current)
        if upgrade is not None:
            plan = self._create_plan(sub, package, upgrade, source, int(status.get("installPlanGeneration") or 0) + 1)
            updates.update(self._plan_status(plan, upgrade))
            conditions = self._pending(conditions, plan, now)
            updates["state"] = "UpgradePending"
        else:
            updates["state"] = "AtLatestKnown"
        return self._write(ref, conditions, health, now, updates=updates)

    def _registry_exists(self, source):
        if (source.get("spec") or {}).get("address"):
            return True
        return any((p["metadata"].get("labels") or {}).get("olm.catalogSource") == source["metadata"]["name"]
                   for p in self.cluster.store.list(PODS, source["metadata"]["namespace"])[0])

    def _resolve(self, sub, source):
        """``(problem, package, channel)``: OLM's resolution messages when the subscription cannot be resolved."""
        cluster = self.cluster
        spec = sub.get("spec") or {}
        name = sub["metadata"]["name"]
        groups = cluster.store.list(OPERATOR_GROUPS, sub["metadata"]["namespace"])[0]
        if not groups:
            return "no operator group found that is managing this namespace", None, None
        if len(groups) > 1:
            return ("found %d operatorgroups in namespace %s, expected exactly one"
                    % (len(groups), sub["metadata"]["namespace"])), None, None
        package = catalogs_of(cluster).package(source, spec.get("name"))
        where = "the catalog referenced by subscription %s" % name
        if package is None:
            return ("constraints not satisfiable: no operators found in package %s in %s, subscription %s exists"
                    % (spec.get("name"), where, name)), None, None
        channel = spec.get("channel") or package.default_channel
        if channel not in package.channels:
            return ("constraints not satisfiable: no operators found in channel %s of package %s in %s, subscription %s "
                    "exists" % (channel, package.name, where, name)), None, None
        starting = spec.get("startingCSV")
        if starting and not package.in_channel(channel, starting):
            return ("constraints not satisfiable: no operators found with name %s in channel %s of package %s in %s, "
                    "subscription %s exists" % (starting, channel, package.name, where, name)), None, None
        return None, package, channel

    def _create_plan(self, sub, package, csv_name, source, generation):
        cluster = self.cluster
        namespace = sub["metadata"]["namespace"]
        approval = (sub.get("spec") or {}).get("installPlanApproval") or "Automatic"
        name = "install-" + random_suffix()
        bundle = package.bundle(csv_name)
        plan = cluster.create(cluster.resource_for_key(INSTALL_PLANS), {
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {package_label(package.name, namespace): ""},
                         "ownerReferences": [owner_reference(sub, controller=False)]},
            "spec": {"approval": approval, "approved": approval == "Automatic",
                     "clusterServiceVersionNames": [csv_name], "generation": generation}}, namespace)
        source_meta = source["metadata"]
        steps = [{"resolving": csv_name, "status": "Unknown",
                  "resource": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition",
                               "name": crd["name"], "sourceName": source_meta["name"],
                               "sourceNamespace": source_meta["namespace"]}}
                 for crd in bundle["spec"]["customresourcedefinitions"]["owned"]]
        steps.append({"resolving": csv_name, "status": "Unknown",
                      "resource": {"group": GROUP, "version": "v1alpha1", "kind": "ClusterServiceVersion",
                                   "name": csv_name, "sourceName": source_meta["name"],
                                   "sourceNamespace": source_meta["namespace"]}})
        phase = "Installing" if approval == "Automatic" else "RequiresApproval"

        def write(obj):
            obj["status"] = {"phase": phase, "catalogSources": [source_meta["name"]], "plan": steps,
                             "bundleLookups": [{"catalogSourceRef": {"name": source_meta["name"],
                                                                     "namespace": source_meta["namespace"]},
                                                "identifier": csv_name, "path": "%s/%s:v%s" % (
                                                    source_meta["name"], package.name, package.version_of(csv_name)),
                                                "replaces": bundle["spec"].get("replaces", ""),
                                                "properties": json.dumps({"properties": [{"type": "olm.package", "value": {
                                                    "packageName": package.name,
                                                    "version": package.version_of(csv_name)}}]})}]}
        cluster.mutate(cluster.resource_for_key(INSTALL_PLANS), namespace, name, write, subresource="status")
        cluster.record_event(sub, "InstallPlanCreated", "created install plan %s for %s" % (name, csv_name),
                             component="operator-lifecycle-manager")
        return cluster.store.get(INSTALL_PLANS, namespace, name) or plan

    @staticmethod
    def _plan_status(plan, csv_name):
        meta = plan["metadata"]
        return {"currentCSV": csv_name, "installPlanGeneration": plan["spec"]["generation"],
                "installPlanRef": {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                                   "name": meta["name"], "namespace": meta["namespace"],
                                   "resourceVersion": meta["resourceVersion"], "uid": meta["uid"]},
                "installplan": {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                                "name": meta["name"], "uuid": meta["uid"]}}

    @staticmethod
    def _pending(conditions, plan, now):
        phase = (plan.get("status") or {}).get("phase") or "RequiresApproval"
        reason = "RequiresApproval" if phase == "RequiresApproval" else "Installing"
        return set_condition(conditions, "InstallPlanPending", "True", reason, None, now)

    def _write(self, ref, conditions, health, now, updates=None, retry=None):
        def comparable(status):
            status = dict(status, catalogHealth=[dict(h, lastUpdated=None) for h in status.get("catalogHealth") or ()])
            status.pop("lastUpdated", None)
            return json.dumps(status, sort_keys=True)

        def write(obj):
            status = obj.setdefault("status", {})
            before = comparable(status)
            status["conditions"] = conditions
            status["catalogHealth"] = health
            status.update(updates or {})
            if comparable(status) == before and status.get("lastUpdated"):
                return False
            status["lastUpdated"] = now
            return True
        self.cluster.mutate(self.cluster.resource_for_key(SUBSCRIPTIONS), ref.namespace, ref.name, write,
                            subresource="status")
        return retry


class InstallPlanController(Controller):
    name = "installplan"
    watches = (INSTALL_PLANS,)

    def reconcile(self, ref):
        cluster = self.cluster
        plan = cluster.store.get(INSTALL_PLANS, ref.namespace, ref.name)
        if plan is None or plan["metadata"].get("deletionTimestamp"):
            return None
        status = plan.get("status") or {}
        phase = status.get("phase")
        if phase == "RequiresApproval" and (plan.get("spec") or {}).get("approved"):
            self._phase(ref, "Installing")
            return 1.0
        if phase != "Installing":
            return None
        now = self.clock.timestamp()
        failure = self.failure(plan)
        if failure:
            def failed(obj):
                obj["status"]["phase"] = "Failed"
                obj["status"]["message"] = failure
                obj["status"]["conditions"] = set_condition(obj["status"].get("conditions"), "Installed", "False",
                                                            "InstallComponentFailed", failure, now, lastUpdateTime=now)
            cluster.mutate(cluster.resource_for_key(INSTALL_PLANS), ref.namespace, ref.name, failed, subresource="status")
            return None
        steps = status.get("plan") or []
        csv_step = next((s for s in steps if s["resource"]["kind"] == "ClusterServiceVersion"), None)
        if csv_step is None:
            return None
        source = cluster.store.get(CATALOG_SOURCES, csv_step["resource"]["sourceNamespace"],
                                   csv_step["resource"]["sourceName"])
        if source is None:
            return 5.0
        csv_name = csv_step["resource"]["name"]
        package = next((p for p in catalogs_of(cluster).packages(source) if p.version_of(csv_name)), None)
        if package is None:
            return None
        created = {}
        crd_names = [crd["name"] for crd in package.bundle(csv_name)["spec"]["customresourcedefinitions"]["owned"]]
        new_crds = apis.install_crds(cluster, package.owns, annotations={INSTALLED_BY: "%s/%s" % (ref.namespace, csv_name)})
        for name in crd_names:
            created[name] = "Created" if name in new_crds else "Present"
            crd = cluster.store.get(CRDS, "", name)
            if crd is not None and name not in new_crds:
                def adopt(obj, csv_name=csv_name):
                    obj["metadata"].setdefault("annotations", {})[INSTALLED_BY] = "%s/%s" % (ref.namespace, csv_name)
                cluster.mutate(cluster.resource_for_key(CRDS), "", name, adopt)
        created[csv_name] = "Created" if self._create_csv(plan, package, csv_name) else "Present"

        def complete(obj):
            status = obj["status"]
            for step in status.get("plan") or ():
                step["status"] = created.get(step["resource"]["name"], step["status"])
            status["phase"] = "Complete"
            status["startTime"] = status.get("startTime") or now
            status["conditions"] = set_condition(status.get("conditions"), "Installed", "True", None, None, now,
                                                 lastUpdateTime=now)
        cluster.mutate(cluster.resource_for_key(INSTALL_PLANS), ref.namespace, ref.name, complete, subresource="status")
        return None

    def _phase(self, ref, phase):
        def change(obj):
            obj.setdefault("status", {})["phase"] = phase
        self.cluster.mutate(self.cluster.resource_for_key(INSTALL_PLANS), ref.namespace, ref.name, change,
                            subresource="status")

    def _create_csv(self, plan, package, csv_name):
        cluster = self.cluster
        namespace = plan["metadata"]["namespace"]
        if cluster.store.get(CSVS, namespace, csv_name) is not None:
            return False
        bundle = package.bundle(csv_name)
        sub = next((s for s in cluster.store.list(SUBSCRIPTIONS, namespace)[0]
                    if (s.get("spec") or {}).get("name") == package.name), None)
        groups = cluster.store.list(OPERATOR_GROUPS, namespace)[0]
        group = groups[0] if groups else None
        annotations = bundle["metadata"]["annotations"]
        annotations.update({"olm.operatorNamespace": namespace,
                            "operatorframework.io/properties": json.dumps({"properties": [{"type": "olm.package", "value": {
                                "packageName": package.name, "version": package.version_of(csv_name)}}]}),
                            PREFIX + "install-s": str(package.install_seconds)})
        if group is not None:
            targets = (group.get("status") or {}).get("namespaces") or [""]
            annotations.update({"olm.operatorGroup": group["metadata"]["name"], "olm.targetNamespaces": ",".join(targets)})
        fail = (sub and annotation(sub, "fail")) or package.override(package.version_of(csv_name), "fail")
        if fail:
            annotations[FAIL] = fail
        retry = sub and annotation(sub, "retry-s")
        if retry:
            annotations[PREFIX + "retry-s"] = retry   # how soon a Failed CSV is looked at again (tests)
        bundle["metadata"].update(namespace=namespace, labels={package_label(package.name, namespace): "",
                                                               "olm.managed": "true"})
        try:
            cluster.create(cluster.resource_for_key(CSVS), bundle, namespace)
        except ApiError as exc:
            if exc.code != 409:
                raise
            return False
        return True


class ClusterServiceVersionController(Controller):
    name = "clusterserviceversion"
    watches = (CSVS, DEPLOYMENTS, OPERATOR_GROUPS, CRDS)
    transients = {"csv-failed-retried": "a Failed CSV (install timeout, a component that failed) is re-checked and "
                                        "goes back to Pending (NeedsReinstall) to be installed again"}

    def on_event(self, event):
        meta = event.obj["metadata"]
        if event.key == CSVS:
            return [Ref(CSVS, meta["namespace"], meta["name"])]
        if event.key == DEPLOYMENTS:
            labels = meta.get("labels") or {}
            if labels.get("olm.owner.kind") == "ClusterServiceVersion":
                return [Ref(CSVS, labels.get("olm.owner.namespace", meta["namespace"]), labels.get("olm.owner"))]
            return []
        if event.key == CRDS:
            owner = (meta.get("annotations") or {}).get(INSTALLED_BY)
            if owner and condition_true(event.obj, "Established"):
                namespace, _, name = owner.partition("/")
                return [Ref(CSVS, namespace, name)]
            return []
        return [Ref(CSVS, c["metadata"]["namespace"], c["metadata"]["name"])
                for c in self.cluster.store.list(CSVS, meta["namespace"])[0]]

    def _set_phase(self, ref, phase, reason, message, extra=None):
        now = self.clock.timestamp()

        def write(obj):
            status = obj.setdefault("status", {})
            if status.get("phase") == phase and status.get("reason") == reason and status.get("message") == message \
                    and not extra:
                return False
            if status.get("phase") != phase or status.get("reason") != reason:
                status["lastTransitionTime"] = now
                history = list(status.get("conditions") or [])
                history.append({"phase": phase, "reason": reason, "message": message, "lastTransitionTime": now,
                                "lastUpdateTime": now})
                status["conditions"] = history[-20:]
            status.update(phase=phase, reason=reason, message=message, lastUpdateTime=now)
            status.update(extra or {})
            return True
        self.cluster.mutate(self.cluster.resource_for_key(CSVS), ref.namespace, ref.name, write, subresource="status")

    def reconcile(self, ref):
        cluster = self.cluster
        csv = cluster.store.get(CSVS, ref.namespace, ref.name)
        if csv is None or csv["metadata"].get("deletionTimestamp"):
            return None
        status = csv.get("status") or {}
        phase = status.get("phase")
        group_problem = self._group_problem(csv, ref.namespace)
        if phase == "Failed":
            return self._recheck_failed(ref, csv, status, group_problem)
        if group_problem:
            self._set_phase(ref, "Failed", *group_problem)
            return None
        if not phase:
            self._set_phase(ref, "Pending", "RequirementsUnknown", "requirements not yet checked")
            return 0.5
        requirements, missing = self._requirements(csv)
        if phase == "Pending":
            if missing:
                self._set_phase(ref, "Pending", "RequirementsNotMet", "one or more requirements couldn't be found",
                                {"requirementStatus": requirements})
                return 2.0
            self._set_phase(ref, "InstallReady", "AllRequirementsMet", "all requirements found, attempting install",
                            {"requirementStatus": requirements})
            return 0.5
        failure = annotation(csv, "fail") or self.failure(csv)
        if phase == "InstallReady":
            if failure:
                self._set_phase(ref, "Failed", "InstallComponentFailed", "install strategy failed: %s" % failure
                                if not failure.startswith("install strategy failed") else failure)
                return None
            self._deploy(csv)
            self._set_phase(ref, "Installing", "InstallSucceeded", "waiting for install components to report healthy")
            return 1.0
        unavailable = self._unavailable(csv)
        if phase == "Installing":
            if failure:
                self._set_phase(ref, "Failed", "InstallComponentFailed", "install strategy failed: %s" % failure)
                return None
            elapsed = since(status.get("lastTransitionTime"), self.clock)
            if unavailable:
                if elapsed >= INSTALL_TIMEOUT_S:
                    self._set_phase(ref, "Failed", "InstallCheckFailed", "install timeout")
                    return None
                self._set_phase(ref, "Installing", "InstallWaiting", "installing: waiting for deployment %s to become "
                                "ready: deployment \"%s\" not available: Deployment does not have minimum availability."
                                % (unavailable[0], unavailable[0]))
                return min(5.0, INSTALL_TIMEOUT_S - elapsed)
            wanted = float_annotation(csv, "install-s", 15.0)
            if elapsed < wanted:
                return wanted - elapsed
            self._set_phase(ref, "Succeeded", "InstallSucceeded", "install strategy completed with no errors")
            cluster.record_event(csv, "InstallSucceeded", "install strategy completed with no errors",
                                 component="operator-lifecycle-manager")
            return 0.5
        if phase == "Succeeded":
            replaced = (csv.get("spec") or {}).get("replaces")
            if replaced and cluster.store.get(CSVS, ref.namespace, replaced) is not None:
                delete_quietly(cluster, cluster.resource_for_key(CSVS), ref.namespace, replaced)
            if self._missing_deployments(csv):
                self._deploy(csv)
                self._set_phase(ref, "Installing", "InstallSucceeded", "waiting for install components to report healthy")
                return 1.0
        return None

    def _group_problem(self, csv, namespace):
        """``(reason, message)`` of the OperatorGroup problem that fails the CSV, or None."""
        groups = self.cluster.store.list(OPERATOR_GROUPS, namespace)[0]
        if not groups:
            return "NoOperatorGroup", "csv in namespace with no operatorgroups"
        if len(groups) > 1:
            return "TooManyOperatorGroups", ("csv created in namespace with multiple operatorgroups, can't pick one "
                                             "automatically")
        mode, what = _install_mode(groups[0], namespace)
        supported = {m["type"] for m in (csv.get("spec") or {}).get("installModes") or () if m.get("supported")}
        if mode not in supported:
            return "UnsupportedOperatorGroup", "%s InstallModeType not supported, %s" % (mode, what)
        return None

    def _recheck_failed(self, ref, csv, status, group_problem):
        """A Failed CSV is looked at again on every sync (olm/operator.go, the Failed case of
        transitionCSVState): fixed OperatorGroup problems send it back to Pending; an install failure
        is retried (Pending/NeedsReinstall, a reinstall) unless its Deployment exceeded its progress
        deadline; InstallComponentFailedNoRetry is left alone."""
        reason = status.get("reason")
        if reason == "InstallComponentFailedNoRetry" or not self.transient("csv-failed-retried"):
            return None
        if group_problem:
            if group_problem[0] != reason:
                self._set_phase(ref, "Failed", *group_problem)
            return 30.0
        if reason in ("NoOperatorGroup", "TooManyOperatorGroups", "UnsupportedOperatorGroup"):
            self._set_phase(ref, "Pending", "RequirementsUnknown", "InstallModes now support target namespaces")
            return 0.5
        retry = float_annotation(csv, "retry-s", CSV_RESYNC_S)
        waited = since(status.get("lastTransitionTime"), self.clock)
        if waited < retry:
            return retry - waited
        deadline = self._past_deadline(csv)
        if deadline:
            if not str(status.get("message", "")).startswith("install failed"):
                self._set_phase(ref, "Failed", "InstallCheckFailed", "install failed: deployment %s not ready before "
                                "timeout: deployment \"%s\" exceeded its progress deadline" % (deadline, deadline))
            return None
        unavailable = self._unavailable(csv)
        if not unavailable and not self._missing_deployments(csv) and not (annotation(csv, "fail") or self.failure(csv)):
            self._set_phase(ref, "Succeeded", "InstallSucceeded", "install strategy completed with no errors")
            return 0.5
        what = unavailable[0] if unavailable else "(none)"
        self._set_phase(ref, "Pending", "NeedsReinstall", "installing: waiting for deployment %s to become ready: "
                        "deployment \"%s\" not available" % (what, what) if unavailable else
                        "installing: deployments not found")
        return 0.5

    def _past_deadline(self, csv):
        for spec in self._specs(csv):
            deployment = self.cluster.store.get(DEPLOYMENTS, csv["metadata"]["namespace"], spec["name"]) or {}
            for item in (deployment.get("status") or {}).get("conditions") or ():
                if item.get("type") == "Progressing" and item.get("reason") == "ProgressDeadlineExceeded":
                    return spec["name"]
        return None

    def _requirements(self, csv):
        requirements = []
        missing = []
        for owned in ((csv.get("spec") or {}).get("customresourcedefinitions") or {}).get("owned") or ():
            crd = self.cluster.store.get(CRDS, "", owned["name"])
            established = crd is not None and condition_true(crd, "Established")
            requirements.append({"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition",
                                 "name": owned["name"], "status": "Present" if established else "NotPresent",
                                 "message": "CRD is present and Established condition is true" if established
                                 else "CRD is not present", "uuid": (crd or {}).get("metadata", {}).get("uid", "")})
            if not established:
                missing.append(owned["name"])
        return requirements, missing

    def _specs(self, csv):
        return (((csv.get("spec") or {}).get("install") or {}).get("spec") or {}).get("deployments") or ()

    def _missing_deployments(self, csv):
        return [d["name"] for d in self._specs(csv)
                if self.cluster.store.get(DEPLOYMENTS, csv["metadata"]["namespace"], d["name"]) is None]

    def _unavailable(self, csv):
        names = []
        for spec in self._specs(csv):
            deployment = self.cluster.store.get(DEPLOYMENTS, csv["metadata"]["namespace"], spec["name"])
            if deployment is None or not condition_true(deployment, "Available") or \
                    (deployment.get("status") or {}).get("observedGeneration", 0) < deployment["metadata"].get("generation", 1):
                names.append(spec["name"])
        return names

    def _subscription_config(self, csv):
        namespace = csv["metadata"]["namespace"]
        for sub in self.cluster.store.list(SUBSCRIPTIONS, namespace)[0]:
            status = sub.get("status") or {}
            if csv["metadata"]["name"] in (status.get("currentCSV"), status.get("installedCSV")):
                return (sub.get("spec") or {}).get("config") or {}
        return {}

    def _deploy(self, csv):
        """Create or update the CSV's Deployments (OLM's install strategy), with the Subscription's config."""
        cluster = self.cluster
        namespace = csv["metadata"]["namespace"]
        config = self._subscription_config(csv)
        package = next((k.split("/", 1)[1].rsplit(".", 1)[0] for k in csv["metadata"].get("labels") or {}
                        if k.startswith("operators.coreos.com/")), csv["metadata"]["name"])
        resource = cluster.resource_for_key(DEPLOYMENTS)
        for entry in self._specs(csv):
            spec = json.loads(json.dumps(entry.get("spec") or {}))
            pod_spec = spec.setdefault("template", {}).setdefault("spec", {})
            for container in pod_spec.get("containers") or ():
                env = [e for e in container.get("env") or () if e.get("name") not in {c.get("name") for c in config.get("env") or ()}]
                container["env"] = env + list(config.get("env") or ())
                if config.get("resources"):
                    container["resources"] = config["resources"]
            if config.get("nodeSelector"):
                pod_spec["nodeSelector"] = config["nodeSelector"]
            if config.get("tolerations"):
                pod_spec["tolerations"] = config["tolerations"]
            labels = dict(entry.get("label") or {})
            labels.update({"olm.owner": csv["metadata"]["name"], "olm.owner.kind": "ClusterServiceVersion",
                           "olm.owner.namespace": namespace, package_label(package, namespace): "",
                           "olm.managed": "true"})
            owner = [owner_reference(csv, controller=False)]
            owner[0]["blockOwnerDeletion"] = False
            owner[0]["controller"] = False
            body = {"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": entry["name"], "namespace": namespace, "labels": labels,
                                 "ownerReferences": owner}, "spec": spec}
            if cluster.store.get(DEPLOYMENTS, namespace, entry["name"]) is None:
                create_or_skip(cluster, resource, body, namespace)
            else:
                def adopt(obj, body=body):
                    obj["metadata"]["labels"] = body["metadata"]["labels"]
                    obj["metadata"]["ownerReferences"] = body["metadata"]["ownerReferences"]
                    obj["spec"] = body["spec"]
                cluster.mutate(resource, namespace, entry["name"], adopt)
