"""The cluster: REST semantics over the store, independent of HTTP.

The HTTP layer (:mod:`kubesim.server`) and the controllers both call this
module. Conventions followed (k8s API conventions, "api-conventions.md"):

- create: ``metadata.name`` or ``generateName`` (random 5-character suffix),
  ``uid``, ``creationTimestamp``, ``resourceVersion``; ``status`` is reset for
  kinds with a status subresource ("Spec and Status"); 409 ``AlreadyExists``;
  404 when the namespace does not exist; 403 when it is terminating.
- update: 409 ``Conflict`` on a stale ``resourceVersion`` (optimistic
  concurrency); an update that changes nothing keeps the resourceVersion;
  ``metadata.generation`` changes only when something besides metadata and
  status changes; the main resource ignores status changes and the status
  subresource ignores everything else.
- delete: finalizers keep the object with a ``deletionTimestamp`` until they
  are all removed; ``propagationPolicy`` Foreground/Orphan add the
  ``foregroundDeletion``/``orphan`` finalizers for the garbage collector.
- ``dryRun=All`` runs everything but the write; ``fieldValidation``
  Strict/Warn/Ignore decides what unknown fields do.
"""

import copy
import importlib.util
import json
import os
import random
import re
import sys
import threading
import uuid

from kubesim import patch as patches
from kubesim import selectors
from kubesim import ssa
from kubesim.errors import ApiError
from kubesim.resources import Registry
from kubesim.store import Store

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VALIDATION_PATH = os.path.join(REPO_ROOT, "plugins", "module_utils", "kube", "validation.py")

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_NAMED = {"namespaces", "services"}
RETURN_DELETED_OBJECT = {"pods", "services", "namespaces", "customresourcedefinitions"}
GENERATE_CHARS = "bcdfghjklmnpqrstvwxz2456789"
PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "apply",
}
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def load_validation_module():
    """The collection's ``plugins/module_utils/kube/validation.py`` (self-contained module)."""
    name = "_kubesim_kube_validation"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, VALIDATION_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class Options:
    """Per-request options (query parameters of a write)."""

    __slots__ = ("dry_run", "field_manager", "field_validation", "force", "warnings", "user_agent", "trusted")

    def __init__(self, dry_run=False, field_manager=None, field_validation="Ignore", force=False, user_agent=None,
                 trusted=False):
        self.dry_run = dry_run
        self.field_manager = field_manager
        self.field_validation = field_validation
        self.force = force
        self.warnings = []
        self.user_agent = user_agent
        # a controller's write of a built-in kind: built valid, so not validated again (custom resources still are)
        self.trusted = trusted

    @classmethod
    def internal(cls, manager="kubesim"):
        return cls(field_manager=manager, field_validation="Ignore", trusted=True)


def _spec_part(obj):
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _strip_volatile(obj):
    meta = dict(obj.get("metadata") or {})
    for key in ("resourceVersion", "managedFields", "generation"):
        meta.pop(key, None)
    return dict(obj, metadata=meta)


class Cluster:
    """Registry + store + validator; every read and write of the simulated API."""

    def __init__(self, clock, validator=None):
        self.clock = clock
        validation = load_validation_module()
        self.validation = validation
        self.validator = validator or validation.ManifestValidator()
        self.registry = Registry()
        self.store = Store()
        self.nav = patches.SchemaNav(self.validator)
        self.smp = patches.StrategicMerge(self.nav)
        self.fieldsets = ssa.FieldSets(self.nav)
        self.write_lock = self.store.lock
        self.hooks = []  # callables(cluster, resource, old, new) run before a write is stored (admission)
        # (group, plural, subresource) -> handler(cluster, resource, namespace, name, body) -> (code, object):
        # subresources with their own REST logic (BuildConfig ``instantiate``)
        self.subresource_handlers = {}
        # callables(pod, port, scheme, method, path, body, headers) -> Response or None: pods whose server kubesim
        # models in process, answered by the proxy subresource (kubesim.proxy)
        self.pod_servers = []
        # callables(cluster, resource, old, new): API defaulting, run after server-side apply tracked the
        # managers' fields (defaulted fields belong to no manager)
        self.defaulters = []
        self._random = random.Random()
        self._event_lock = threading.Lock()

    # -- resources -------------------------------------------------------------------------
    def resource(self, api_version, kind):
        group, _, version = api_version.rpartition("/")
        found = self.registry.by_kind(group, version, kind)
        if found is None:
            raise ApiError.not_found_path()
        return found

    def resource_for_key(self, key):
        return self.registry.for_storage_key(*key)

    # -- reads -----------------------------------------------------------------------------
    def get(self, resource, namespace, name, copy_=True):
        obj = self.store.get(resource.storage_key, namespace if resource.namespaced else "", name)
        if obj is None:
            raise ApiError.not_found(resource, name)
        return self._present(resource, obj, copy_)

    def find(self, resource, namespace, name):
        """The object or None (a deep copy)."""
        obj = self.store.get(resource.storage_key, namespace if resource.namespaced else "", name)
        return self._present(resource, obj, True) if obj is not None else None

    @staticmethod
    def _present(resource, obj, copy_):
        if obj.get("apiVersion") != resource.api_version:
            obj = dict(obj, apiVersion=resource.api_version)
        return copy.deepcopy(obj) if copy_ else obj

    def list(self, resource, namespace=None, label_selector=None, field_selector=None, limit=None, continue_=None):
        """``(items, resourceVersion, continue token, remaining count)``; items are not copies."""
        labels = selectors.parse_label_selector(label_selector) if label_selector else None
        fields = selectors.parse_field_selector(field_selector) if field_selector else None
        items, rv = self.store.list(resource.storage_key, namespace if resource.namespaced else None)
        start = None
        if continue_:
            try:
                token = json.loads(__import__("base64").urlsafe_b64decode(continue_.encode()).decode())
                start = tuple(token["start"])
                rv = token.get("rv", rv)
            except (ValueError, KeyError, TypeError):
                raise ApiError.bad_request("continue key is not valid: %s" % continue_)
        selected = []
        for obj in items:
            meta = obj["metadata"]
            if start is not None and (meta.get("namespace") or "", meta["name"]) <= start:
                continue
            if labels is not None and not selectors.matches_labels(labels, meta.get("labels")):
                continue
            if fields is not None and not selectors.matches_fields(fields, obj):
                continue
            selected.append(obj)
        token = None
        remaining = None
        if limit and len(selected) > limit:
            last = selected[limit - 1]["metadata"]
            remaining = len(selected) - limit
            selected = selected[:limit]
            token = __import__("base64").urlsafe_b64encode(json.dumps(
                {"rv": rv, "start": [last.get("namespace") or "", last["name"]]}).encode()).decode()
        if resource.api_version != (selected[0].get("apiVersion") if selected else resource.api_version):
            selected = [self._present(resource, o, False) for o in selected]
        return selected, rv, token, remaining

    # -- validation ------------------------------------------------------------------------
    def _validate(self, resource, obj, options, old=None, partial=False):
        if options.trusted and not resource.custom:
            return
        problems = self.validator.validate(obj, strict=True)
        if partial:
            # an apply configuration is partial: required fields are checked on the merged object
            problems = [p for p in problems if p.reason != self.validation.REQUIRED]
        unknown = [p for p in problems if p.reason == self.validation.UNKNOWN_FIELD]
        invalid = [p for p in problems if p.reason not in (self.validation.UNKNOWN_FIELD, self.validation.UNKNOWN_KIND)]
        name = (obj.get("metadata") or {}).get("name") or ""
        if invalid:
            raise ApiError.invalid(resource.kind, resource.group, name,
                                   [(p.reason, p.path, p.message) for p in invalid])
        if unknown:
            mode = options.field_validation
            if mode == "Strict":
                # field validation convention: Strict fails with 400 and lists every unknown field
                raise ApiError.bad_request("strict decoding error: " + ", ".join('unknown field "%s"' % p.path for p in unknown))
            if mode == "Warn":
                options.warnings.extend('unknown field "%s"' % p.path for p in unknown)
            self._prune(obj, unknown)

    @staticmethod
    def _prune(obj, problems):
        for problem in problems:
            node = obj
            tokens = re.findall(r"([^.\[\]]+)|\[([^\]]*)\]", problem.path)
            steps = [a or b for a, b in tokens]
            for step in steps[:-1]:
                if isinstance(node, list) and step.isdigit():
                    node = node[int(step)] if int(step) < len(node) else None
                elif isinstance(node, dict):
                    node = node.get(step)
                if node is None:
                    break
            if isinstance(node, dict):
                node.pop(steps[-1], None)

    def _validate_metadata(self, resource, obj):
        meta = obj["metadata"]
        name = meta.get("name")
        causes = []
        pattern, what = (DNS1123_LABEL, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                                        "or '-', and must start and end with an alphanumeric character") \
            if resource.plural in LABEL_NAMED else \
            (DNS1123_SUBDOMAIN, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                                "or '.', and must start and end with an alphanumeric character")
        limit = 63 if resource.plural in LABEL_NAMED else 253
        if not isinstance(name, str) or not pattern.match(name) or len(name) > limit:
            causes.append(("FieldValueInvalid", "metadata.name", 'Invalid value: "%s": %s' % (name, what)))
        if resource.crd is None and resource.plural not in ("customresourcedefinitions",) and ":" in (name or ""):
            pass
        for key, value in (meta.get("labels") or {}).items():
            if value is not None and (len(str(value)) > 63 or not re.match(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$", str(value))):
                causes.append(("FieldValueInvalid", "metadata.labels", 'Invalid value: "%s": a valid label must be an empty '
                               "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                               "with an alphanumeric character" % value))
        if causes:
            raise ApiError.invalid(resource.kind, resource.group, name or "", causes)

    # -- writes ----------------------------------------------------------------------------
    def _check_namespace(self, resource, namespace, name, creating):
        if not resource.namespaced:
            return
        ns = self.store.get(("", "namespaces"), "", namespace)
        if ns is None:
            raise ApiError.namespace_not_found(namespace)
        if creating and ns["metadata"].get("deletionTimestamp"):
            raise ApiError.terminating(namespace, resource, name)

    def _generate_name(self, prefix):
        return prefix + "".join(self._random.choice(GENERATE_CHARS) for _ in range(5))

    def _normalize(self, resource, body, namespace):
        if not isinstance(body, dict):
            raise ApiError.bad_request("the body of the request must be a JSON object")
        obj = copy.deepcopy(body)
        kind = obj.get("kind")
        api_version = obj.get("apiVersion")
        if kind and kind != resource.kind:
            raise ApiError.bad_request("the kind in the data (%s) does not match the expected kind (%s)" % (kind, resource.kind))
        if api_version and api_version != resource.api_version:
            raise ApiError.bad_request("the API version in the data (%s) does not match the expected API version (%s)"
                                       % (api_version, resource.api_version))
        obj["apiVersion"] = resource.api_version
        obj["kind"] = resource.kind
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise ApiError.bad_request("metadata must be an object")
        if resource.namespaced:
            if meta.get("namespace") and namespace and meta["namespace"] != namespace:
                raise ApiError.bad_request("the namespace of the provided object does not match the namespace sent on "
                                           "the request")
            meta["namespace"] = namespace or meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        return obj

    def _generation(self, resource, old, new):
        if old is None:
            return 1
        if _spec_part(old) != _spec_part(new) or (not resource.has_status and old.get("status") != new.get("status")):
            return int(old["metadata"].get("generation") or 1) + 1
        return old["metadata"].get("generation") or 1

    def _run_hooks(self, resource, old, new):
        for hook in self.hooks:
            hook(self, resource, old, new)

    def _run_defaulters(self, resource, old, new):
        for defaulter in self.defaulters:
            defaulter(self, resource, old, new)

    def _manager(self, options, default_suffix=""):
        if options.field_manager:
            return options.field_manager
        agent = (options.user_agent or "unknown").split("/")[0]
        return agent + default_suffix

    def create(self, resource, body, namespace=None, options=None, keep_status=False):
        options = options or Options.internal()
        obj = self._normalize(resource, body, namespace)
        meta = obj["metadata"]
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = self._generate_name(meta["generateName"])
            else:
                raise ApiError.invalid(resource.kind, resource.group, "",
                                       [("FieldValueRequired", "metadata.name", "Required value: name or generateName is required")])
        if resource.has_status and not keep_status:
            obj.pop("status", None)
        self._validate(resource, obj, options)
        self._validate_metadata(resource, obj)
        with self.write_lock:
            self._check_namespace(resource, meta.get("namespace"), meta["name"], creating=True)
            key = resource.storage_key
            if self.store.get(key, meta.get("namespace"), meta["name"]) is not None:
                if body.get("metadata", {}).get("generateName") and not body.get("metadata", {}).get("name"):
                    meta["name"] = self._generate_name(meta["generateName"])
                else:
                    raise ApiError.already_exists(resource, meta["name"])
            for key_ in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
                meta.pop(key_, None)
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = self.clock.timestamp()
            if "spec" in obj or resource.custom:
                meta["generation"] = 1
            else:
                meta.pop("generation", None)
            self._run_hooks(resource, None, obj)
            if meta.get("managedFields") is None:
                ssa.track_update(self.fieldsets, resource, self.nav.root(resource), None, obj,
                                 self._manager(options), self.clock.timestamp())
            self._run_defaulters(resource, None, obj)
            if options.dry_run:
                meta["resourceVersion"] = str(self.store.resource_version)
                return obj
            meta["resourceVersion"] = str(self.store.next_rv())
            self.store.put(key, obj, "ADDED")
        return obj  # the stored object: read-only, like every stored object

    def update(self, resource, body, namespace=None, name=None, options=None, subresource="", create_missing=False):
        options = options or Options.internal()
        obj = self._normalize(resource, body, namespace)
        meta = obj["metadata"]
        name = name or meta.get("name")
        if meta.get("name") and meta["name"] != name:
            raise ApiError.bad_request('the name of the object (%s) does not match the name on the URL (%s)' % (meta["name"], name))
        meta["name"] = name
        with self.write_lock:
            old = self.store.get(resource.storage_key, meta.get("namespace"), name)
            if old is None:
                if create_missing:
                    return self.create(resource, obj, namespace, options), True
                raise ApiError.not_found(resource, name)
            rv = meta.get("resourceVersion")
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise ApiError.stale(resource, name)
            return self._commit_update(resource, old, obj, options, subresource), False

    def _commit_update(self, resource, old, obj, options, subresource="", tracked=False):
        """Store ``obj`` as the new version of ``old`` (write lock held)."""
        meta = obj["metadata"]
        if subresource == "status":
            # stored objects are never changed in place: the new version shares all but metadata and status
            new = dict(old)
            new["metadata"] = copy.deepcopy(old["metadata"])
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            if meta.get("managedFields") is not None:
                new["metadata"]["managedFields"] = meta["managedFields"]
            obj = new
            meta = obj["metadata"]
        elif resource.has_status:
            if "status" in old:
                obj["status"] = copy.deepcopy(old["status"])
            else:
                obj.pop("status", None)
        self._validate(resource, obj, options, old)
        self._validate_metadata(resource, obj)
        old_meta = old["metadata"]
        for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        if old_meta.get("deletionTimestamp") and set(meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ()):
            raise ApiError.invalid(resource.kind, resource.group, meta["name"], [(
                "FieldValueForbidden", "metadata.finalizers", "Forbidden: no new finalizers can be added if the object is "
                                                               "being deleted")])
        if "generation" in old_meta or resource.custom or "spec" in obj:
            meta["generation"] = self._generation(resource, old, obj)
        # controllers' status writes are not tracked in managedFields (nothing applies status against them)
        if not tracked and not (options.trusted and subresource == "status"):
            ssa.track_update(self.fieldsets, resource, self.nav.root(resource), old, obj,
                             self._manager(options, ""), self.clock.timestamp(), subresource=subresource)
        self._run_hooks(resource, old, obj)
        if self.defaulters and subresource != "status":  # a status write keeps the (defaulted) rest as it was
            self._run_defaulters(resource, old, obj)
            if "generation" in old_meta or resource.custom or "spec" in obj:
                meta["generation"] = self._generation(resource, old, obj)
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if _strip_volatile(obj) == _strip_volatile(old) and \
                (meta.get("managedFields") == old_meta.get("managedFields") or not meta.get("managedFields")):
            return old  # a no-op update keeps the resourceVersion (stored objects are read-only: no copy)
        if _strip_volatile(obj) == _strip_volatile(old):
            # only the managed fields' timestamps changed: keep the object as it was
            return old
        if options.dry_run:
            return obj
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            meta["resourceVersion"] = str(self.store.next_rv())
            self.store.remove(resource.storage_key, obj)
            return obj
        meta["resourceVersion"] = str(self.store.next_rv())
        self.store.put(resource.storage_key, obj, "MODIFIED")
        return obj

    def patch(self, resource, namespace, name, patch_body, patch_type, options=None, subresource=""):
        """Apply a patch of ``patch_type`` (json, merge, strategic, apply); returns (obj, created)."""
        options = options or Options.internal()
        if patch_type == "strategic" and resource.custom:
            # CRs have no Go struct with patch tags (API conventions: strategic merge patch is for built-in types)
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media "
                                                       "types include: application/json-patch+json, "
                                                       "application/merge-patch+json, application/apply-patch+yaml")
        ns = namespace if resource.namespaced else ""
        with self.write_lock:
            old = self.store.get(resource.storage_key, ns, name)
            if patch_type == "apply":
                return self._apply(resource, ns, name, old, patch_body, options, subresource)
            if old is None:
                raise ApiError.not_found(resource, name)
            current = self._present(resource, old, True)
            if subresource == "scale":
                raise ApiError.method_not_allowed()
            if patch_type == "json":
                new = patches.json_patch(current, patch_body)
            elif patch_type == "merge":
                if not isinstance(patch_body, dict):
                    raise ApiError.bad_request("merge patch must be a JSON object")
                new = patches.merge_patch(current, patch_body)
            elif patch_type == "strategic":
                new = self.smp.apply(current, patch_body, self.nav.root(resource))
            else:
                raise ApiError.unsupported_media_type(patch_type)
            if not isinstance(new, dict):
                raise ApiError.bad_request("the patched object is not a JSON object")
            obj = self._normalize(resource, new, ns)
            obj["metadata"]["name"] = name
            rv = obj["metadata"].get("resourceVersion")
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise ApiError.stale(resource, name)
            return self._commit_update(resource, old, obj, options, subresource), False

    def _apply(self, resource, namespace, name, old, config, options, subresource):
        if not isinstance(config, dict):
            raise ApiError.bad_request("apply configuration must be an object")
        if not options.field_manager:
            raise ApiError.bad_request("PATCH, application/apply-patch+yaml requires fieldManager to be set")
        config = copy.deepcopy(config)
        meta = config.setdefault("metadata", {}) if isinstance(config.get("metadata"), dict) or "metadata" not in config else None
        if meta is None:
            raise ApiError.bad_request("metadata must be an object")
        if meta.get("name") and meta["name"] != name:
            raise ApiError.bad_request("the name of the object (%s) does not match the name on the URL (%s)" % (meta["name"], name))
        meta["name"] = name
        obj = self._normalize(resource, config, namespace)
        probe = copy.deepcopy(obj)
        self._validate(resource, probe, options, partial=True)
        config = probe
        now = self.clock.timestamp()
        node = self.nav.root(resource)
        if old is None:
            if subresource:
                raise ApiError.not_found(resource, name)
            merged = ssa.server_side_apply(self.fieldsets, resource, node, None, config, options.field_manager,
                                           options.force, now)
            created = self.create(resource, merged, namespace, options=Options(
                dry_run=options.dry_run, field_manager=options.field_manager, field_validation="Ignore"))
            return created, True
        current = self._present(resource, old, True)
        merged = ssa.server_side_apply(self.fieldsets, resource, node, current, config, options.field_manager,
                                       options.force, now, subresource=subresource)
        merged = self._normalize(resource, merged, namespace)
        merged["metadata"].pop("resourceVersion", None)
        validation = options.field_validation
        options.field_validation = "Ignore"
        try:
            return self._commit_update(resource, old, merged, options, subresource, tracked=True), False
        finally:
            options.field_validation = validation

    def update_status(self, resource, obj, options=None):
        """Controllers: write ``obj``'s status (no resourceVersion check unless it is set)."""
        meta = obj["metadata"]
        result, _ = self.update(resource, obj, meta.get("namespace"), meta["name"], options or Options.internal(),
                                subresource="status")
        return result

    def mutate(self, resource, namespace, name, change, subresource="", options=None):
        """Controllers: read-modify-write under the write lock; ``change(obj)`` edits a copy in place.

        Returns the stored object (read-only), or None when the object does not exist. For
        ``subresource="status"`` only ``metadata`` and ``status`` are copies: ``change`` must not edit the rest.
        """
        with self.write_lock:
            old = self.store.get(resource.storage_key, namespace if resource.namespaced else "", name)
            if old is None:
                return None
            if subresource == "status":
                obj = dict(old, metadata=copy.deepcopy(old["metadata"]))
                if "status" in old:
                    obj["status"] = copy.deepcopy(old["status"])
            else:
                obj = copy.deepcopy(old)
            if change(obj) is False:
                return obj
            obj["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            return self._commit_update(resource, old, obj, options or Options.internal(), subresource)

    # -- delete ----------------------------------------------------------------------------
    def delete(self, resource, namespace, name, options=None, propagation=None, preconditions=None):
        """Returns ``(object, deleted_now)``."""
        options = options or Options.internal()
        ns = namespace if resource.namespaced else ""
        with self.write_lock:
            old = self.store.get(resource.storage_key, ns, name)
            if old is None:
                raise ApiError.not_found(resource, name)
            preconditions = preconditions or {}
            if preconditions.get("uid") and preconditions["uid"] != old["metadata"]["uid"]:
                raise ApiError.conflict(resource, name, "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                                        % (preconditions["uid"], old["metadata"]["uid"]))
            if preconditions.get("resourceVersion") and preconditions["resourceVersion"] != old["metadata"]["resourceVersion"]:
                raise ApiError.conflict(resource, name, "Precondition failed: ResourceVersion in precondition: %s, "
                                                        "ResourceVersion in object meta: %s"
                                        % (preconditions["resourceVersion"], old["metadata"]["resourceVersion"]))
            obj = copy.deepcopy(old)
            meta = obj["metadata"]
            finalizers = list(meta.get("finalizers") or [])
            if propagation == "Foreground" and "foregroundDeletion" not in finalizers:
                finalizers.append("foregroundDeletion")
            elif propagation == "Orphan" and "orphan" not in finalizers:
                finalizers.append("orphan")
            if resource.plural == "namespaces":
                # namespace lifecycle convention: Terminating until the namespace controller empties it
                obj.setdefault("status", {})["phase"] = "Terminating"
                if "kubernetes" not in (obj.get("spec") or {}).get("finalizers", []) and not finalizers and \
                        not meta.get("deletionTimestamp"):
                    obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
                pending = bool((obj.get("spec") or {}).get("finalizers")) or bool(finalizers)
            else:
                pending = bool(finalizers)
            if options.dry_run:
                return obj, not pending
            if pending:
                if meta.get("deletionTimestamp") and finalizers == list(meta.get("finalizers") or []) \
                        and resource.plural != "namespaces":
                    return copy.deepcopy(old), False
                if finalizers:
                    meta["finalizers"] = finalizers
                meta.setdefault("deletionTimestamp", self.clock.timestamp())
                meta.setdefault("deletionGracePeriodSeconds", 0)
                if obj == old:
                    return copy.deepcopy(old), False
                meta["resourceVersion"] = str(self.store.next_rv())
                self.store.put(resource.storage_key, obj, "MODIFIED")
                return copy.deepcopy(obj), False
            meta["resourceVersion"] = str(self.store.next_rv())
            meta.setdefault("deletionTimestamp", self.clock.timestamp())
            self.store.remove(resource.storage_key, obj)
            return copy.deepcopy(obj), True

    def finalize_namespace(self, name, finalizers):
        """``PUT namespaces/<name>/finalize``: set ``spec.finalizers`` (removed when empty and terminating)."""
        resource = self.resource_for_key(("", "namespaces"))

        def change(obj):
            obj.setdefault("spec", {})["finalizers"] = list(finalizers)

        with self.write_lock:
            result = self.mutate(resource, "", name, change)
            if result is None:
                raise ApiError.not_found(resource, name)
            current = self.store.get(resource.storage_key, "", name)
            if current is not None and current["metadata"].get("deletionTimestamp") and not finalizers \
                    and not current["metadata"].get("finalizers"):
                obj = copy.deepcopy(current)
                obj["metadata"]["resourceVersion"] = str(self.store.next_rv())
                self.store.remove(resource.storage_key, obj)
                return obj
            return result

    # -- events ----------------------------------------------------------------------------
    def record_event(self, obj, reason, message, event_type="Normal", component="kubesim"):
        """Create a core/v1 Event about ``obj`` (in its namespace, ``default`` for cluster objects)."""
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        events = self.resource_for_key(("", "events"))
        now = self.clock.timestamp()
        body = {
            "metadata": {"name": "%s.%s" % (meta.get("name"), uuid.uuid4().hex[:16]), "namespace": namespace},
            "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": meta.get("name"),
                               "namespace": meta.get("namespace"), "uid": meta.get("uid"),
                               "resourceVersion": meta.get("resourceVersion")},
            "reason": reason, "message": message, "type": event_type, "source": {"component": component},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1, "reportingComponent": component,
        }
        try:
            return self.create(events, body, namespace)
        except ApiError:
            return None  # the namespace is gone or terminating: events are best effort
