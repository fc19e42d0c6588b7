"""OpenAPI documents for kubectl: ``/openapi/v3`` (index + one per group-version), ``/openapi/v2``.

kubectl 1.35 reads OpenAPI v3 to decide whether a kind supports the
``fieldValidation`` query parameter (server-side field validation: it looks
for the PATCH operation of the kind, marked with
``x-kubernetes-group-version-kind``), for ``kubectl explain`` and for the patch
metadata of client-side ``apply``. The schemas are the validator's (core
definitions, CRD schemas), turned into OpenAPI 3.0 / Swagger 2.0 shapes.
``/openapi/v2`` is served as JSON only (kubectl asks it in protobuf, gets 406
and uses v3).
"""

import hashlib
import json
import threading

COMPONENTS = "#/components/schemas/"
DEFINITIONS = "#/definitions/"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"


def _convert(node, prefix, v3):
    """A kubernetes-validate (JSON Schema 2020-12) node as an OpenAPI schema."""
    if isinstance(node, list):
        return [_convert(n, prefix, v3) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = prefix + node["$ref"].rsplit("/", 1)[-1]
        extra = {k: _convert(v, prefix, v3) for k, v in node.items() if k != "$ref"}
        if extra and v3:
            return dict(extra, allOf=[{"$ref": ref}])
        return dict(extra, **{"$ref": ref})
    out = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            if len(types) == 1:
                out["type"] = types[0]
            continue
        if key in ("oneOf", "anyOf") and all(isinstance(b, dict) and set(b) == {"type"} for b in value):
            types = {t for b in value for t in (b["type"] if isinstance(b["type"], list) else [b["type"]]) if t != "null"}
            out["type"] = "string"
            if types == {"string", "integer"}:
                out["format"] = "int-or-string"
            continue
        if key in ("properties", "patternProperties"):
            out[key] = {k: _convert(v, prefix, v3) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            out[key] = _convert(value, prefix, v3)
        elif key in ("allOf", "oneOf", "anyOf"):
            out[key] = _convert(value, prefix, v3)
        else:
            out[key] = value
    return out


def _refs(node, found):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref.rsplit("/", 1)[-1])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _closure(definitions, roots):
    seen = set()
    todo = [r for r in roots if r in definitions]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        found = set()
        _refs(definitions[name], found)
        todo.extend(f for f in found if f in definitions and f not in seen)
    return seen


def _crd_schema_name(resource, suffix=""):
    parts = list(reversed(resource.group.split("."))) if resource.group else ["core"]
    return ".".join(parts + [resource.version, resource.kind + suffix])


def _crd_component(resource, prefix):
    schema = json.loads(json.dumps(resource.schema or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}))
    schema.setdefault("type", "object")
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": "APIVersion defines the versioned schema of this "
                                                           "representation of an object."}
    props["kind"] = {"type": "string", "description": "Kind is a string value representing the REST resource this "
                                                     "object represents."}
    props["metadata"] = {"$ref": prefix + OBJECT_META} if prefix == DEFINITIONS else \
        {"allOf": [{"$ref": prefix + OBJECT_META}], "description": "Standard object's metadata."}
    schema["x-kubernetes-group-version-kind"] = [{"group": resource.group, "version": resource.version, "kind": resource.kind}]
    listing = {"type": "object", "required": ["items"], "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "items": {"type": "array", "items": {"$ref": prefix + _crd_schema_name(resource)}},
        "metadata": {"$ref": prefix + LIST_META}},
        "x-kubernetes-group-version-kind": [{"group": resource.group, "version": resource.version, "kind": resource.kind + "List"}]}
    return {_crd_schema_name(resource): schema, _crd_schema_name(resource, "List"): listing}


def _operation(resource, action, schema_ref, v3, params):
    gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    op = {"operationId": "%s%s" % (action, resource.kind), "x-kubernetes-action": action,
          "x-kubernetes-group-version-kind": gvk, "tags": [resource.group or "core"]}
    parameters = [{"name": p, "in": "query", "schema": {"type": "string"}} if v3 else
                  {"name": p, "in": "query", "type": "string", "uniqueItems": True} for p in params]
    if parameters:
        op["parameters"] = parameters
    if v3:
        op["responses"] = {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": schema_ref}}}}}
    else:
        op["responses"] = {"200": {"description": "OK", "schema": {"$ref": schema_ref}}}
    return op


WRITE_PARAMS = ["dryRun", "fieldManager", "fieldValidation"]


def _paths(resources, core_name, prefix, v3):
    paths = {}
    for resource in resources:
        base = "/api/%s" % resource.version if not resource.group else "/apis/%s/%s" % (resource.group, resource.version)
        scope = base + ("/namespaces/{namespace}" if resource.namespaced else "")
        schema = prefix + (core_name(resource) or _crd_schema_name(resource))
        collection = "%s/%s" % (scope, resource.plural)
        item = collection + "/{name}"
        paths[collection] = {
            "get": _operation(resource, "list", schema + "List", v3, ["labelSelector", "fieldSelector", "limit", "continue",
                                                                     "watch", "resourceVersion", "timeoutSeconds"]),
            "post": _operation(resource, "post", schema, v3, WRITE_PARAMS),
            "delete": _operation(resource, "deletecollection", schema, v3, ["labelSelector", "fieldSelector", "dryRun"]),
        }
        paths[item] = {
            "get": _operation(resource, "get", schema, v3, []),
            "put": _operation(resource, "put", schema, v3, WRITE_PARAMS),
            "patch": _operation(resource, "patch", schema, v3, WRITE_PARAMS + ["force"]),
            "delete": _operation(resource, "delete", schema, v3, ["dryRun", "gracePeriodSeconds", "propagationPolicy"]),
        }
        for sub in resource.subresources:
            if sub in ("status", "scale"):
                paths["%s/%s" % (item, sub)] = {
                    "get": _operation(resource, "get", schema, v3, []),
                    "put": _operation(resource, "put", schema, v3, WRITE_PARAMS),
                    "patch": _operation(resource, "patch", schema, v3, WRITE_PARAMS + ["force"]),
                }
    return paths


class OpenAPI:
    """Builds and caches the documents; the cache follows the registry's generation."""

    def __init__(self, cluster):
        self.cluster = cluster
        self._lock = threading.Lock()
        self._cache = {}
        self._generation = None

    def _core_name(self, resource):
        if resource.custom:
            return None
        return self.cluster.validator.core_definition_name(resource.api_version, resource.kind)

    def _check_generation(self):
        if self._generation != self.cluster.registry.generation:
            self._cache.clear()
            self._generation = self.cluster.registry.generation

    def group_version_doc(self, group, version):
        """``(bytes, hash)`` of the OpenAPI v3 document of one group-version, or None."""
        with self._lock:
            self._check_generation()
            key = ("v3", group, version)
            if key not in self._cache:
                resources = [r for r in self.cluster.registry.all() if r.group == group and r.version == version]
                if not resources:
                    return None
                self._cache[key] = self._build(resources, True, "%s/%s" % (group, version) if group else version)
            return self._cache[key]

    def v3_index(self):
        paths = {}
        for group, versions in self.cluster.registry.group_versions().items():
            for version in versions:
                doc = self.group_version_doc(group, version)
                if doc is None:
                    continue
                path = "api/%s" % version if not group else "apis/%s/%s" % (group, version)
                paths[path] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (path, doc[1])}
        return {"paths": paths}

    def v2(self):
        with self._lock:
            self._check_generation()
            if "v2" not in self._cache:
                self._cache["v2"] = self._build(self.cluster.registry.all(), False, "kubesim")
            return self._cache["v2"]

    def _build(self, resources, v3, title):
        prefix = COMPONENTS if v3 else DEFINITIONS
        definitions = self.cluster.validator.definitions
        roots = set()
        schemas = {}
        for resource in resources:
            name = self._core_name(resource)
            if name:
                roots.add(name)
                roots.add(name + "List")
            else:
                roots.add(OBJECT_META)
                roots.add(LIST_META)
                schemas.update(_crd_component(resource, prefix))
        for name in _closure(definitions, roots):
            schemas[name] = _convert(definitions[name], prefix, v3)
        paths = _paths(resources, self._core_name, prefix, v3)
        if v3:
            doc = {"openapi": "3.0.0", "info": {"title": "Kubernetes (kubesim)", "version": "v1.35.0"},
                   "paths": paths, "components": {"schemas": schemas}}
        else:
            doc = {"swagger": "2.0", "info": {"title": "Kubernetes (kubesim)", "version": "v1.35.0"},
                   "paths": paths, "definitions": schemas}
        data = json.dumps(doc, separators=(",", ":")).encode()
        return data, hashlib.sha512(data).hexdigest()[:32].upper()
