"""Built-in controllers: namespace lifecycle, garbage collection, CRD establishment.

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``namespace``: kubernetes/kubernetes @ 023feb4a622fb6828dad0c1af0a0770746a37ee4; files:
  pkg/controller/namespace/deletion/namespaced_resources_deleter.go.
- ``garbage-collector``: kubernetes/kubernetes @ cb6ff2d8ce3595f88570f82c7d0e6d98910afd3c; files:
  pkg/controller/garbagecollector/garbagecollector.go.
- ``crd``: kubernetes/kubernetes @ ccb4acda6ab11289fb8ba4f9753b8df692398781; files:
  staging/src/k8s.io/apiextensions-apiserver/pkg/controller/establish/establishing_controller.go.
"""

import copy

from kubesim.controllers.base import Controller, Ref
from kubesim.errors import ApiError

NAMESPACES = ("", "namespaces")
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


class NamespaceController(Controller):
    """Namespace lifecycle (API conventions / namespace design doc).

    A new namespace gets ``status.phase: Active``, ``spec.finalizers: [kubernetes]``
    and a ``default`` ServiceAccount. A deleted namespace (``Terminating``) has
    every namespaced object deleted; when none is left the ``kubernetes``
    finalizer is removed (``namespaces/<name>/finalize``) and the namespace goes.
    """

    name = "namespace"
    watches = (NAMESPACES,)

    def reconcile(self, ref):
        cluster = self.cluster
        namespaces = cluster.resource_for_key(NAMESPACES)
        ns = cluster.store.get(NAMESPACES, "", ref.name)
        if ns is None:
            return None
        if not ns["metadata"].get("deletionTimestamp"):
            if (ns.get("status") or {}).get("phase") != "Active" or "kubernetes" not in (ns.get("spec") or {}).get("finalizers", []):
                def activate(obj):
                    obj.setdefault("status", {})["phase"] = "Active"
                    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
                cluster.mutate(namespaces, "", ref.name, activate)
                cluster.mutate(namespaces, "", ref.name, activate, subresource="status")
            accounts = cluster.resource_for_key(("", "serviceaccounts"))
            if cluster.store.get(accounts.storage_key, ref.name, "default") is None:
                try:
                    cluster.create(accounts, {"metadata": {"name": "default"}}, ref.name)
                except ApiError:
                    pass
            return None
        remaining = 0
        for key in cluster.store.keys():
            resource = cluster.resource_for_key(key)
            if resource is None or not resource.namespaced:
                continue
            items, _ = cluster.store.list(key, ref.name)
            for obj in items:
                remaining += 1
                if not obj["metadata"].get("deletionTimestamp"):
                    try:
                        cluster.delete(resource, ref.name, obj["metadata"]["name"], propagation="Background")
                    except ApiError:
                        pass
        if remaining:
            return 0.2
        if (ns.get("spec") or {}).get("finalizers"):
            cluster.finalize_namespace(ref.name, [])
        return None


class GarbageCollector(Controller):
    """ownerReferences cascade ("Garbage Collection" design; propagationPolicy).

    Background: when an owner is gone, its dependents are deleted. Foreground:
    the owner keeps a ``foregroundDeletion`` finalizer until its dependents are
    gone. Orphan: the owner's ``orphan`` finalizer is removed after the
    dependents lost their ownerReference to it.
    """

    name = "garbage-collector"

    def __init__(self, cluster, manager):
        super().__init__(cluster, manager)
        self._dependents_of = {}  # owner uid -> {(key, namespace, name)}
        self._owners_of = {}      # (key, namespace, name) -> {owner uid}

    @property
    def watches(self):
        return ()

    def start(self):
        with self.cluster.store.lock:
            for key in self.cluster.store.keys():
                for obj in self.cluster.store.list(key)[0]:
                    self._index("ADDED", key, obj)
            self.cluster.store.add_listener(self._listen)

    def _index(self, event_type, key, obj):
        meta = obj["metadata"]
        ident = (key, meta.get("namespace") or "", meta["name"])
        owners = set() if event_type == "DELETED" else {o.get("uid") for o in meta.get("ownerReferences") or ()}
        previous = self._owners_of.pop(ident, set())
        for uid in previous - owners:
            self._dependents_of.get(uid, set()).discard(ident)
        for uid in owners:
            self._dependents_of.setdefault(uid, set()).add(ident)
        if owners:
            self._owners_of[ident] = owners

    def _listen(self, event_type, key, obj, old):
        self._index(event_type, key, obj)
        meta = obj["metadata"]
        if (event_type == "DELETED" and self._dependents_of.get(meta["uid"])) or (
                meta.get("deletionTimestamp") and {"foregroundDeletion", "orphan"} & set(meta.get("finalizers") or ())):
            self.enqueue(Ref(key, meta.get("namespace") or "", meta["name"] + "\0" + meta["uid"]))
        if event_type == "DELETED":
            self._dependents_of.pop(meta["uid"], None) if not self._dependents_of.get(meta["uid"]) else None

    def _dependents(self, uid, namespace):
        found = []
        for key, ns, name in list(self._dependents_of.get(uid, ())):
            resource = self.cluster.resource_for_key(key)
            obj = self.cluster.store.get(key, ns, name)
            if resource is not None and obj is not None:
                found.append((resource, obj))
        return found

    def reconcile(self, ref):
        cluster = self.cluster
        name, uid = ref.name.split("\0")
        resource = cluster.resource_for_key(ref.key)
        owner = cluster.store.get(ref.key, ref.namespace, name) if resource else None
        if owner is not None and owner["metadata"]["uid"] != uid:
            owner = None
        dependents = self._dependents(uid, ref.namespace)
        finalizers = set((owner or {}).get("metadata", {}).get("finalizers") or ())
        if owner is not None and "orphan" in finalizers:
            for dep_resource, dep in dependents:
                def drop(obj, uid=uid):
                    obj["metadata"]["ownerReferences"] = [o for o in obj["metadata"].get("ownerReferences") or ()
                                                          if o.get("uid") != uid]
                    if not obj["metadata"]["ownerReferences"]:
                        del obj["metadata"]["ownerReferences"]
                cluster.mutate(dep_resource, dep["metadata"].get("namespace"), dep["metadata"]["name"], drop)
            self._remove_finalizer(resource, owner, "orphan")
            return None
        pending = 0
        for dep_resource, dep in dependents:
            if dep["metadata"].get("deletionTimestamp"):
                pending += 1
                continue
            policy = "Foreground" if owner is not None else "Background"
            try:
                cluster.delete(dep_resource, dep["metadata"].get("namespace"), dep["metadata"]["name"], propagation=policy)
                pending += 1 if policy == "Foreground" else 0
            except ApiError:
                pass
        if owner is not None and "foregroundDeletion" in finalizers:
            if pending or self._dependents(uid, ref.namespace):
                return 0.2
            self._remove_finalizer(resource, owner, "foregroundDeletion")
        return None

    def _remove_finalizer(self, resource, owner, finalizer):
        def change(obj):
            obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or () if f != finalizer]
        self.cluster.mutate(resource, owner["metadata"].get("namespace"), owner["metadata"]["name"], change)


class CRDController(Controller):
    """CustomResourceDefinitions: serve on commit, then ``NamesAccepted``/``Established``.

    As on a real server the resources appear in discovery as soon as the CRD is
    stored; the controller then sets the conditions and the
    ``customresourcecleanup`` finalizer, and on deletion deletes every custom
    resource before the CRD goes.
    """

    name = "crd"
    watches = (CRDS,)

    def on_event(self, event):
        cluster = self.cluster
        name = event.obj["metadata"]["name"]
        if event.type == "DELETED":
            cluster.registry.remove_crd(name)
            spec = event.obj.get("spec") or {}
            cluster.validator.unregister_crd(spec.get("group"), (spec.get("names") or {}).get("kind"))
            return []
        cluster.registry.add_crd(event.obj)
        cluster.validator.register_crd(event.obj)
        return [Ref(event.key, "", name)]

    def reconcile(self, ref):
        cluster = self.cluster
        crds = cluster.resource_for_key(CRDS)
        crd = cluster.store.get(CRDS, "", ref.name)
        if crd is None:
            return None
        if crd["metadata"].get("deletionTimestamp"):
            spec = crd["spec"]
            key = (spec["group"], spec["names"]["plural"])
            resource = cluster.resource_for_key(key)
            items, _ = cluster.store.list(key)
            for obj in items:
                if not obj["metadata"].get("deletionTimestamp") and resource is not None:
                    try:
                        cluster.delete(resource, obj["metadata"].get("namespace"), obj["metadata"]["name"])
                    except ApiError:
                        pass
            if items:
                return 0.2

            def release(obj):
                obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or () if f != CRD_FINALIZER]
            cluster.mutate(crds, "", ref.name, release)
            return None
        if CRD_FINALIZER not in (crd["metadata"].get("finalizers") or ()):
            def hold(obj):
                obj["metadata"]["finalizers"] = list(obj["metadata"].get("finalizers") or ()) + [CRD_FINALIZER]
            cluster.mutate(crds, "", ref.name, hold)
        now = cluster.clock.timestamp()

        def establish(obj):
            status = obj.setdefault("status", {})
            names = copy.deepcopy(obj["spec"]["names"])
            names.setdefault("singular", names["kind"].lower())
            conditions = {c["type"]: c for c in status.get("conditions") or ()}
            wanted = [("NamesAccepted", "NoConflicts", "no conflicts found"),
                      ("Established", "InitialNamesAccepted", "the initial names have been accepted")]
            changed = status.get("acceptedNames") != names
            for ctype, reason, message in wanted:
                if conditions.get(ctype, {}).get("status") != "True":
                    conditions[ctype] = {"type": ctype, "status": "True", "lastTransitionTime": now,
                                         "reason": reason, "message": message}
                    changed = True
            if not changed:
                return False
            status["conditions"] = list(conditions.values())
            status["acceptedNames"] = names
            status["storedVersions"] = [v["name"] for v in obj["spec"].get("versions") or () if v.get("storage")]
            return True
        cluster.mutate(crds, "", ref.name, establish, subresource="status")
        return None
