"""The resource types kubesim serves: a hand table of built-in kinds plus CRDs.

Schemas come from the validator's core definitions (kubernetes-validate); this
table adds what discovery needs and the definitions do not say: plural,
scope, short names, categories and subresources
(API conventions: "Resources" and "Types (Kinds)"; discovery as served by
``/api/v1`` and ``/apis/<group>/<version>``).
"""

import hashlib
import json
import threading

from kubesim.errors import ApiError

VERBS_ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
VERBS_SUB = ["get", "patch", "update"]


class Resource:
    """One served resource type (group/version/plural) and its properties."""

    def __init__(self, group, version, kind, plural, namespaced, short_names=(), categories=(),
                 subresources=(), verbs=None, singular=None, crd=None, scale_paths=None,
                 printer_columns=None, schema=None, aggregated=False, provider=None, alias_of=None):
        self.group = group
        self.version = version
        self.kind = kind
        self.plural = plural
        self.singular = singular or kind.lower()
        self.namespaced = namespaced
        self.short_names = list(short_names)
        self.categories = list(categories)
        self.subresources = list(subresources)
        self.verbs = list(verbs or VERBS_ALL)
        self.crd = crd                  # CRD name when served from a CRD
        self.scale_paths = scale_paths  # (specReplicasPath, statusReplicasPath, labelSelectorPath)
        self.printer_columns = printer_columns or []
        self.schema = schema            # CRD openAPIV3Schema (core kinds: None, see the validator)
        # served by an aggregated API server on a real cluster (OpenShift's openshift-apiserver,
        # OLM's packageserver): typed by a CRD-shaped schema, but no CustomResourceDefinition object
        self.aggregated = aggregated
        # virtual reads: an object with ``get(namespace, name)`` and ``list(namespace)`` (nothing stored)
        self.provider = provider
        # ``(api_version, kind)`` of the kind the objects are stored as (a Project is a Namespace)
        self.alias_of = alias_of

    @property
    def api_version(self):
        return "%s/%s" % (self.group, self.version) if self.group else self.version

    @property
    def storage_key(self):
        """Objects are stored per group and plural, whatever the version asked."""
        return (self.group, self.plural)

    @property
    def group_resource(self):
        """``pods`` or ``deployments.apps``: how error messages name the resource."""
        return "%s.%s" % (self.plural, self.group) if self.group else self.plural

    @property
    def custom(self):
        """Typed by a CRD-shaped schema (CRDs and aggregated APIs), not by a core definition."""
        return bool(self.crd) or self.aggregated

    @property
    def has_status(self):
        return "status" in self.subresources

    def __repr__(self):
        return "Resource(%s %s)" % (self.api_version, self.plural)


# (group, version, kind, plural, namespaced, shortNames, categories, subresources)
BUILTIN = [
    ("", "v1", "Namespace", "namespaces", False, ["ns"], [], ["status", "finalize"]),
    ("", "v1", "Pod", "pods", True, ["po"], ["all"], ["status", "log", "binding", "eviction", "proxy"]),
    ("", "v1", "Service", "services", True, ["svc"], ["all"], ["status", "proxy"]),
    ("", "v1", "ConfigMap", "configmaps", True, ["cm"], [], []),
    ("", "v1", "Secret", "secrets", True, [], [], []),
    ("", "v1", "ServiceAccount", "serviceaccounts", True, ["sa"], [], []),
    ("", "v1", "Node", "nodes", False, ["no"], [], ["status"]),
    ("", "v1", "Event", "events", True, ["ev"], [], []),
    ("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ["pvc"], [], ["status"]),
    ("", "v1", "PersistentVolume", "persistentvolumes", False, ["pv"], [], ["status"]),
    ("", "v1", "Endpoints", "endpoints", True, ["ep"], [], []),
    ("", "v1", "ResourceQuota", "resourcequotas", True, ["quota"], [], ["status"]),
    ("", "v1", "LimitRange", "limitranges", True, ["limits"], [], []),
    ("apps", "v1", "Deployment", "deployments", True, ["deploy"], ["all"], ["status", "scale"]),
    ("apps", "v1", "ReplicaSet", "replicasets", True, ["rs"], ["all"], ["status", "scale"]),
    ("apps", "v1", "DaemonSet", "daemonsets", True, ["ds"], ["all"], ["status"]),
    ("apps", "v1", "StatefulSet", "statefulsets", True, ["sts"], ["all"], ["status", "scale"]),
    ("apps", "v1", "ControllerRevision", "controllerrevisions", True, [], [], []),
    ("batch", "v1", "Job", "jobs", True, [], ["all"], ["status"]),
    ("batch", "v1", "CronJob", "cronjobs", True, ["cj"], ["all"], ["status"]),
    ("rbac.authorization.k8s.io", "v1", "Role", "roles", True, [], [], []),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True, [], [], []),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False, [], [], []),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False, [], [], []),
    ("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, ["sc"], [], []),
    ("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False, [], [], []),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False,
     ["crd", "crds"], ["api-extensions"], ["status"]),
    ("coordination.k8s.io", "v1", "Lease", "leases", True, [], [], []),
    ("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ["pc"], [], []),
    ("networking.k8s.io", "v1", "Ingress", "ingresses", True, ["ing"], [], ["status"]),
    ("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, ["netpol"], [], []),
    ("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ["pdb"], [], ["status"]),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ["hpa"], ["all"], ["status"]),
]

# subresource -> (kind, group, version) of what it returns, and its verbs
SUBRESOURCE_KINDS = {
    "scale": (("autoscaling", "v1", "Scale"), VERBS_SUB),
    "log": (("", "v1", "Pod"), ["get"]),
    "binding": (("", "v1", "Binding"), ["create"]),
    "eviction": (("policy", "v1", "Eviction"), ["create"]),
    "finalize": (("", "v1", "Namespace"), ["update"]),
    "instantiate": (("build.openshift.io", "v1", "Build"), ["create"]),
}

# the preferred version of each group, in discovery order
GROUP_ORDER = ["", "apps", "batch", "rbac.authorization.k8s.io", "storage.k8s.io", "apiextensions.k8s.io",
               "coordination.k8s.io", "scheduling.k8s.io", "networking.k8s.io", "policy", "autoscaling"]


def builtin_resources():
    return [Resource(g, v, k, p, ns, short_names=sn, categories=cat, subresources=sub)
            for g, v, k, p, ns, sn, cat, sub in BUILTIN]


class Registry:
    """Resource types by group/version/plural and by kind; CRDs come and go at run time."""

    def __init__(self, resources=None):
        self._lock = threading.RLock()
        self._by_gvr = {}
        self._order = []
        self.generation = 0  # bumped on every change: discovery and OpenAPI caches key on it
        self._by_key_cache = None
        for resource in resources if resources is not None else builtin_resources():
            self.add(resource)

    def add(self, resource):
        with self._lock:
            key = (resource.group, resource.version, resource.plural)
            if key not in self._by_gvr:
                self._order.append(key)
            self._by_gvr[key] = resource
            self.generation += 1

    def remove_crd(self, crd_name):
        with self._lock:
            for key in [k for k, r in self._by_gvr.items() if r.crd == crd_name]:
                del self._by_gvr[key]
                self._order.remove(key)
            self.generation += 1

    def all(self):
        with self._lock:
            return [self._by_gvr[k] for k in self._order]

    def get(self, group, version, plural):
        return self._by_gvr.get((group, version, plural))

    def lookup(self, group, version, plural):
        resource = self._by_gvr.get((group, version, plural))
        if resource is None:
            raise ApiError.not_found_path()
        return resource

    def by_kind(self, group, version, kind):
        for resource in self.all():
            if resource.group == group and resource.version == version and resource.kind == kind:
                return resource
        return None

    def for_storage_key(self, group, plural):
        """Any served version of ``group``/``plural`` (the first registered)."""
        cache = self._by_key_cache
        if cache is None or cache[0] != self.generation:
            with self._lock:
                table = {}
                for key in self._order:
                    resource = self._by_gvr[key]
                    table.setdefault((resource.group, resource.plural), resource)
                cache = self._by_key_cache = (self.generation, table)
        return cache[1].get((group, plural))

    def group_versions(self):
        """``{group: [versions...]}`` in discovery order (core group is ``""``)."""
        groups = {}
        for resource in self.all():
            versions = groups.setdefault(resource.group, [])
            if resource.version not in versions:
                versions.append(resource.version)
        ordered = {g: groups[g] for g in GROUP_ORDER if g in groups}
        ordered.update((g, v) for g, v in groups.items() if g not in ordered)
        return ordered

    def fingerprint(self):
        return hashlib.sha256(json.dumps([(r.api_version, r.plural, r.kind) for r in self.all()]).encode()).hexdigest()[:16].upper()

    # -- CRDs ----------------------------------------------------------------------------
    def add_crd(self, crd):
        """Serve the versions of ``crd`` (a CustomResourceDefinition object)."""
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        name = crd["metadata"]["name"]
        self.remove_crd(name)
        for version in spec.get("versions") or ():
            if not version.get("served", True):
                continue
            subresources = []
            scale_paths = None
            sub = version.get("subresources") or {}
            if "status" in sub:
                subresources.append("status")
            if "scale" in sub:
                subresources.append("scale")
                scale = sub["scale"] or {}
                scale_paths = (scale.get("specReplicasPath"), scale.get("statusReplicasPath"),
                               scale.get("labelSelectorPath"))
            schema = ((version.get("schema") or {}).get("openAPIV3Schema")) or {}
            self.add(Resource(
                spec["group"], version["name"], names["kind"], names["plural"],
                spec.get("scope", "Namespaced") == "Namespaced",
                short_names=names.get("shortNames") or (), categories=names.get("categories") or (),
                subresources=subresources, singular=names.get("singular") or names["kind"].lower(),
                crd=name, scale_paths=scale_paths,
                printer_columns=version.get("additionalPrinterColumns") or [], schema=schema))

    def add_api(self, crd, provider=None, verbs=None, alias_of=None):
        """Serve the kinds of a CRD-shaped document as an aggregated API (no CRD object is stored)."""
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        for version in spec.get("versions") or ():
            if not version.get("served", True):
                continue
            sub = version.get("subresources") or {}
            subresources = [name for name in ("status", "scale") if name in sub]
            subresources += [name for name in sub if name not in ("status", "scale")]
            scale = sub.get("scale") or {}
            self.add(Resource(
                spec["group"], version["name"], names["kind"], names["plural"],
                spec.get("scope", "Namespaced") == "Namespaced",
                short_names=names.get("shortNames") or (), categories=names.get("categories") or (),
                subresources=subresources, singular=names.get("singular") or names["kind"].lower(),
                verbs=verbs, scale_paths=(scale.get("specReplicasPath"), scale.get("statusReplicasPath"),
                                          scale.get("labelSelectorPath")) if "scale" in sub else None,
                printer_columns=version.get("additionalPrinterColumns") or [],
                schema=((version.get("schema") or {}).get("openAPIV3Schema")) or {},
                aggregated=True, provider=provider, alias_of=alias_of))

    # -- discovery documents (API conventions: discovery; aggregated discovery v2) -------
    def resource_list(self, group, version):
        resources = [r for r in self.all() if r.group == group and r.version == version]
        if not resources:
            raise ApiError.not_found_path()
        items = []
        for r in resources:
            entry = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
                     "verbs": r.verbs}
            if r.short_names:
                entry["shortNames"] = r.short_names
            if r.categories:
                entry["categories"] = r.categories
            entry["storageVersionHash"] = hashlib.sha256(("%s/%s" % (r.group, r.plural)).encode()).hexdigest()[:11]
            items.append(entry)
            for sub in r.subresources:
                sub_entry = {"name": "%s/%s" % (r.plural, sub), "singularName": "", "namespaced": r.namespaced,
                             "kind": r.kind, "verbs": VERBS_SUB}
                if sub in SUBRESOURCE_KINDS:
                    (g, v, k), verbs = SUBRESOURCE_KINDS[sub]
                    sub_entry.update(kind=k, verbs=verbs)
                    if g:
                        sub_entry.update(group=g, version=v)
                items.append(sub_entry)
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "%s/%s" % (group, version) if group else version,
                "resources": items}

    def api_versions(self):
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}

    def _group(self, group, versions):
        entries = [{"groupVersion": "%s/%s" % (group, v), "version": v} for v in versions]
        return {"name": group, "versions": entries, "preferredVersion": entries[0]}

    def api_group_list(self):
        groups = [self._group(g, v) for g, v in self.group_versions().items() if g]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def api_group(self, group):
        versions = self.group_versions().get(group)
        if not group or not versions:
            raise ApiError.not_found_path()
        return dict(self._group(group, versions), kind="APIGroup", apiVersion="v1")

    def aggregated(self, core):
        """The aggregated discovery document (``apidiscovery.k8s.io/v2``) of ``/api`` or ``/apis``."""
        items = []
        for group, versions in self.group_versions().items():
            if bool(group) == core:
                continue
            version_entries = []
            for version in versions:
                resources = []
                for r in self.all():
                    if r.group != group or r.version != version:
                        continue
                    entry = {"resource": r.plural, "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
                             "scope": "Namespaced" if r.namespaced else "Cluster", "singularResource": r.singular,
                             "verbs": r.verbs}
                    if r.short_names:
                        entry["shortNames"] = r.short_names
                    if r.categories:
                        entry["categories"] = r.categories
                    subs = []
                    for sub in r.subresources:
                        (g, v, k), verbs = SUBRESOURCE_KINDS.get(sub, ((r.group, r.version, r.kind), VERBS_SUB))
                        subs.append({"subresource": sub, "responseKind": {"group": g, "version": v, "kind": k}, "verbs": verbs})
                    if subs:
                        entry["subresources"] = subs
                    resources.append(entry)
                version_entries.append({"version": version, "resources": resources, "freshness": "Current"})
            items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": version_entries})
        return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}
