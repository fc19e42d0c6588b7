"""Gateway API (gateway.networking.k8s.io/v1) and the inference extension's InferencePool.

- Which controllers run is the cluster profile's (``Profile.gateway_controllers``, kubesim/profiles.py:
  ``openshift.io/gateway-controller/v1`` on ``openshift``, none on ``vanilla``). A GatewayClass whose
  ``spec.controllerName`` one of them is gets ``Accepted=True`` (reason ``Accepted``, observedGeneration),
  unless its ``parametersRef`` names a kind the cluster does not serve, a namespaced object without a namespace
  (or a cluster-scoped one with one) or an object that does not exist: ``Accepted=False``
  ``InvalidParameters`` "<Kind> <namespace>/<name> not found" (gatewayclass_types.go
  GatewayClassReasonInvalidParameters; "Otherwise, this status MUST be set to False"), looked at again when
  the object appears; the controller provisions no Gateway of a class it did not accept.
  Any other class is never written to: it keeps the status the API server defaulted from its CRD
  (``Accepted`` ``Unknown``/``Pending`` "Waiting for controller", gatewayclass_types.go: "Pending is the
  default Reason on a new GatewayClass"; "Implementations MUST populate status on all GatewayClass
  resources which specify their controller name" - and only those), and so do its Gateways (their CRD
  default, ``Accepted`` and ``Programmed`` ``Unknown``/``Pending``, gateway_types.go) and the
  HTTPRoutes attached only to them (no ``parents`` entry: shared_types.go, a parent the implementation
  does not handle gets none).
- Gateway: with a GatewayClass a running controller serves, ``Accepted`` at once and ``Programmed``
  after its delay (``kubesim.perfscale.io/delay-s``, default 2 s), an address
  (``<name>.<namespace>.gateway.kubesim.example.com``), per listener
  ``attachedRoutes``, ``supportedKinds`` and conditions ``Accepted``,
  ``Programmed``, ``ResolvedRefs``, ``Conflicted=False``. Without its class the
  status stays as created (no controller picks it up, as on a real cluster).
- HTTPRoute and InferencePool ``parents[].controllerName`` is the parent Gateway's class's
  ``controllerName`` (shared_types.go RouteParentStatus: the controller that wrote the entry).
  ``kubesim.perfscale.io/fail``: ``Programmed=False`` (reason ``Invalid``).
- HTTPRoute: per parent Gateway that exists and whose class is served, ``Accepted`` and ``ResolvedRefs``
  (``False``/``BackendNotFound`` when a Service or InferencePool backend is missing).
- InferencePool: ``status.parents`` lists the Gateways of the HTTPRoutes that
  route to it, each ``Accepted`` and ``ResolvedRefs`` (no route: no parents).

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``gatewayclass``: kubernetes-sigs/gateway-api @ 4564255ac2c35d582249b3cdf261bdf51c8bca32; files:
  apis/v1/gatewayclass_types.go.
- ``gateway``: kubernetes-sigs/gateway-api @ 4564255ac2c35d582249b3cdf261bdf51c8bca32; files:
  apis/v1/gateway_types.go, conformance/tests.
- ``httproute``: kubernetes-sigs/gateway-api @ 4564255ac2c35d582249b3cdf261bdf51c8bca32; files:
  apis/v1/shared_types.go, apis/v1/httproute_types.go.
- ``inferencepool``: kubernetes-sigs/gateway-api-inference-extension @
  84436a96b9e6ce2b59ddacd3d04c31b4fbd442de; files: api/v1/inferencepool_types.go, conformance/tests.
"""

from kubesim.controllers.base import Ref
from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import set_condition
from kubesim.profiles import profile

GROUP = "gateway.networking.k8s.io"
CLASSES = (GROUP, "gatewayclasses")
GATEWAYS = (GROUP, "gateways")
ROUTES = (GROUP, "httproutes")
POOLS = ("inference.networking.k8s.io", "inferencepools")
SERVICES = ("", "services")


def served_controllers(cluster):
    """The gateway controllers (``controllerName``) the cluster's profile runs."""
    settings = getattr(cluster, "settings", None)
    return profile(getattr(settings, "profile", None) or "vanilla").gateway_controllers


def class_controller(cluster, class_name):
    """The ``controllerName`` of GatewayClass ``class_name`` when a running controller serves it, else None
    (no such class, a class of a controller the profile does not run, or one it refused)."""
    gateway_class = cluster.store.get(CLASSES, "", class_name or "")
    if gateway_class is None:
        return None
    name = (gateway_class.get("spec") or {}).get("controllerName")
    if name not in served_controllers(cluster) or invalid_parameters(cluster, gateway_class):
        return None
    return name


def _parameters_ref(gateway_class):
    return (gateway_class.get("spec") or {}).get("parametersRef") or None


def invalid_parameters(cluster, gateway_class):
    """Why the class's ``parametersRef`` makes it ``InvalidParameters`` (a kind not served, a namespace missing
    or superfluous, an object that does not exist), or None."""
    ref = _parameters_ref(gateway_class)
    if ref is None:
        return None
    group, kind, name, namespace = ref.get("group") or "", ref.get("kind"), ref.get("name"), ref.get("namespace")
    resource = next((r for r in cluster.registry.all() if r.group == group and r.kind == kind), None)
    if resource is None:
        return "parametersRef kind %s%s is not supported" % (kind, "." + group if group else "")
    if resource.namespaced and not namespace:
        return "parametersRef %s %s is namespaced but names no namespace" % (kind, name)
    if not resource.namespaced and namespace:
        return "parametersRef %s %s is cluster-scoped but names namespace %s" % (kind, name, namespace)
    if cluster.store.get(resource.storage_key, namespace or "", name) is None:
        return "%s %s not found" % (kind, "%s/%s" % (namespace, name) if namespace else name)
    return None


def gateway_controller(cluster, namespace, name):
    """The ``controllerName`` serving Gateway ``namespace/name`` (None: no such Gateway or nobody serves it)."""
    if cluster.registry.for_storage_key(*GATEWAYS) is None:
        return None
    gateway = cluster.store.get(GATEWAYS, namespace, name)
    if gateway is None:
        return None
    return class_controller(cluster, (gateway.get("spec") or {}).get("gatewayClassName"))


def _routes_to(cluster, gateway_ns, gateway_name):
    if cluster.registry.for_storage_key(*ROUTES) is None:
        return []
    found = []
    for route in cluster.store.list(ROUTES)[0]:
        for parent in (route.get("spec") or {}).get("parentRefs") or ():
            if parent.get("name") == gateway_name and (parent.get("namespace") or route["metadata"]["namespace"]) == gateway_ns:
                found.append(route)
    return found


class GatewayClassController(OperatorReconciler):
    name = "gatewayclass"
    key = CLASSES
    default_delay = 0.0
    extra_watches = (("", "configmaps"),)

    def related(self, event):
        """The classes whose ``parametersRef`` names the object of the event."""
        meta = event.obj["metadata"]
        refs = []
        for gateway_class in self.cluster.store.list(CLASSES)[0]:
            ref = _parameters_ref(gateway_class)
            namespace = (ref or {}).get("namespace") or ""
            if ref and ref.get("name") == meta["name"] and namespace == (meta.get("namespace") or ""):
                refs.append(Ref(CLASSES, "", gateway_class["metadata"]["name"]))
        return refs

    def sync(self, ref, gateway_class):
        controller = (gateway_class.get("spec") or {}).get("controllerName")
        if controller not in served_controllers(self.cluster):
            return None     # no controller of this cluster claims it: the CRD's default status stays
        now = self.clock.timestamp()
        invalid = invalid_parameters(self.cluster, gateway_class)

        def change(status, obj):
            generation = obj["metadata"].get("generation", 1)
            if invalid:
                status["conditions"] = set_condition(status.get("conditions"), "Accepted", "False",
                                                     "InvalidParameters", invalid, now, observedGeneration=generation)
                return
            status["conditions"] = set_condition(status.get("conditions"), "Accepted", "True", "Accepted",
                                                 "Handled by %s" % controller, now, observedGeneration=generation)
        self.write_status(ref, change)
        return None


class GatewayController(OperatorReconciler):
    name = "gateway"
    key = GATEWAYS
    default_delay = 2.0
    extra_watches = (CLASSES, ROUTES)

    def sync(self, ref, gateway):
        cluster = self.cluster
        spec = gateway.get("spec") or {}
        if class_controller(cluster, spec.get("gatewayClassName")) is None:
            return None     # no class, or one no running controller serves: the CRD's default status stays
        now = self.clock.timestamp()
        generation = gateway["metadata"].get("generation", 1)
        failure = self.fail_message(gateway)
        left = self.delay_left(gateway)
        programmed = not failure and left <= 0
        routes = _routes_to(cluster, ref.namespace, ref.name)

        def change(status, obj):
            def cond(conditions, ctype, value, reason, message):
                return set_condition(conditions, ctype, value, reason, message, now, observedGeneration=generation)
            conditions = cond(status.get("conditions"), "Accepted", "True", "Accepted", "Resource accepted")
            if failure:
                conditions = cond(conditions, "Programmed", "False", "Invalid", failure)
            elif programmed:
                conditions = cond(conditions, "Programmed", "True", "Programmed", "Resource programmed, assigned to "
                                                                                  "service(s) %s.%s.svc.cluster.local"
                                  % (ref.name, ref.namespace))
            else:
                conditions = cond(conditions, "Programmed", "False", "Pending", "Waiting for controller")
            listeners = []
            for listener in spec.get("listeners") or ():
                attached = sum(1 for r in routes for p in (r.get("spec") or {}).get("parentRefs") or ()
                               if p.get("name") == ref.name and p.get("sectionName") in (None, listener["name"]))
                lconds = cond([], "Accepted", "True", "Accepted", "No errors found")
                lconds = cond(lconds, "Programmed", "True" if programmed else "False",
                              "Programmed" if programmed else "Pending", "No errors found" if programmed else "Pending")
                lconds = cond(lconds, "ResolvedRefs", "True", "ResolvedRefs", "No errors found")
                lconds = cond(lconds, "Conflicted", "False", "NoConflicts", "No conflicts found")
                listeners.append({"name": listener["name"], "attachedRoutes": attached, "conditions": lconds,
                                  "supportedKinds": [{"group": GROUP, "kind": "HTTPRoute"},
                                                     {"group": GROUP, "kind": "GRPCRoute"}]})
            status["conditions"] = conditions
            status["listeners"] = listeners
            if programmed:
                status["addresses"] = [{"type": "Hostname",
                                        "value": "%s.%s.gateway.kubesim.example.com" % (ref.name, ref.namespace)}]
        self.write_status(ref, change)
        return left if not failure and left > 0 else None


class HTTPRouteController(OperatorReconciler):
    name = "httproute"
    key = ROUTES
    default_delay = 0.0
    extra_watches = (GATEWAYS, CLASSES, POOLS, SERVICES)

    def related(self, event):
        if event.key == SERVICES:
            return self.all_refs(event.obj["metadata"]["namespace"])
        return self.all_refs()

    def sync(self, ref, route):
        cluster = self.cluster
        now = self.clock.timestamp()
        generation = route["metadata"].get("generation", 1)
        missing = []
        for rule in (route.get("spec") or {}).get("rules") or ():
            for backend in rule.get("backendRefs") or ():
                namespace = backend.get("namespace") or ref.namespace
                if backend.get("kind") == "InferencePool":
                    exists = cluster.registry.for_storage_key(*POOLS) is not None and \
                        cluster.store.get(POOLS, namespace, backend["name"]) is not None
                else:
                    exists = cluster.store.get(SERVICES, namespace, backend["name"]) is not None
                if not exists:
                    missing.append(backend["name"])
        parents = []
        for parent in (route.get("spec") or {}).get("parentRefs") or ():
            namespace = parent.get("namespace") or ref.namespace
            controller = gateway_controller(cluster, namespace, parent["name"])
            if controller is None:
                continue    # no such Gateway, or no running controller serves it: no entry for this parent
            conditions = set_condition([], "Accepted", "True", "Accepted", "Route was valid", now,
                                       observedGeneration=generation)
            conditions = set_condition(conditions, "ResolvedRefs", "False" if missing else "True",
                                       "BackendNotFound" if missing else "ResolvedRefs",
                                       "backend(s) not found: %s" % ", ".join(missing) if missing
                                       else "Resolved all the Object references for the Route", now,
                                       observedGeneration=generation)
            parents.append({"parentRef": {"group": GROUP, "kind": "Gateway", "name": parent["name"], "namespace": namespace},
                            "controllerName": controller, "conditions": conditions})

        def change(status, obj):
            previous = {(p["parentRef"].get("namespace"), p["parentRef"]["name"]): p for p in status.get("parents") or ()}
            for parent in parents:
                old = previous.get((parent["parentRef"]["namespace"], parent["parentRef"]["name"]))
                if old:
                    for c in parent["conditions"]:
                        before = next((o for o in old.get("conditions") or () if o["type"] == c["type"]), None)
                        if before and before.get("status") == c["status"]:
                            c["lastTransitionTime"] = before.get("lastTransitionTime")
            status["parents"] = parents
        self.write_status(ref, change)
        return None


class InferencePoolController(OperatorReconciler):
    name = "inferencepool"
    key = POOLS
    default_delay = 0.0
    extra_watches = (ROUTES, GATEWAYS, CLASSES)

    def sync(self, ref, pool):
        cluster = self.cluster
        now = self.clock.timestamp()
        generation = pool["metadata"].get("generation", 1)
        gateways = []
        if cluster.registry.for_storage_key(*ROUTES) is not None:
            for route in cluster.store.list(ROUTES, ref.namespace)[0]:
                targets = [b for rule in (route.get("spec") or {}).get("rules") or ()
                           for b in rule.get("backendRefs") or () if b.get("kind") == "InferencePool"
                           and b.get("name") == ref.name]
                if targets:
                    for parent in (route.get("spec") or {}).get("parentRefs") or ():
                        key = (parent.get("namespace") or ref.namespace, parent["name"])
                        controller = gateway_controller(cluster, *key)
                        if controller is not None and key not in [g[:2] for g in gateways]:
                            gateways.append(key + (controller,))

        def change(status, obj):
            parents = []
            for namespace, name, controller in gateways:
                conditions = set_condition([], "Accepted", "True", "Accepted", "InferencePool has been accepted", now,
                                           observedGeneration=generation)
                conditions = set_condition(conditions, "ResolvedRefs", "True", "ResolvedRefs",
                                           "All references resolved", now, observedGeneration=generation)
                parents.append({"parentRef": {"group": GROUP, "kind": "Gateway", "name": name, "namespace": namespace},
                                "controllerName": controller, "conditions": conditions})
            old = {(p["parentRef"].get("namespace"), p["parentRef"]["name"]): p for p in status.get("parents") or ()}
            for parent in parents:
                before = old.get((parent["parentRef"]["namespace"], parent["parentRef"]["name"]))
                if before:
                    parent["conditions"] = before["conditions"]
            status["parents"] = parents
        self.write_status(ref, change)
        return None
