# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline, strict validation of Kubernetes manifests.

Core kinds are checked against the OpenAPI definitions that the
``kubernetes-validate`` package ships (``_definitions.json`` of its newest
Kubernetes version by default; they carry ``x-kubernetes-group-version-kind``,
patch merge keys and list types). Custom resources are checked against the CRD
schemas shipped in the collection (``schemas/crds/``, see its ``PROVENANCE.md``)
and against CRDs registered at run time with :meth:`ManifestValidator.register_crd`.

Strictness follows the API server's ``fieldValidation=Strict``: a key that the
schema does not declare is an error, except below
``x-kubernetes-preserve-unknown-fields: true``, in maps
(``additionalProperties``) and in free-form core types (``RawExtension``,
``JSON``). Also checked: types (with ``nullable``, ``x-kubernetes-int-or-string``),
``enum`` (plus a short table of enumerations that the API server checks in code),
``required``, int32 range, base64 (``format: byte``), patterns, lengths and
item counts, ``anyOf``/``oneOf``/``allOf``/``not``, and ``metadata`` as
``ObjectMeta`` (top level and ``x-kubernetes-embedded-resource``). CEL rules
(``x-kubernetes-validations``) are not evaluated.

Each problem is one line naming the object, the key path and the schema::

    Deployment demo: spec.template.spec.containers[0].imagePullPolcy: unknown field (schema io.k8s.api.core.v1.Container)

Schemas load lazily (the first validation of a kind) and are cached per process.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib.util
import json
import os
import re

try:
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ManifestValidationError
except ImportError:  # loaded by path, outside the collection (kubesim does): only the standard library
    class ManifestValidationError(ValueError):
        """A manifest does not validate; the message is one line per problem."""

        def __init__(self, problems):
            self.problems = list(problems)
            super().__init__("; ".join(str(p) for p in self.problems))

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
INT32 = (-(2 ** 31), 2 ** 31 - 1)
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DEFAULT_CRD_DIR = os.path.join(COLLECTION_ROOT, "schemas", "crds")

# problem reasons (mapped by an API server to its status causes)
UNKNOWN_FIELD = "FieldValueUnknown"
REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
TYPE_INVALID = "FieldValueTypeInvalid"
DUPLICATE = "FieldValueDuplicate"
UNKNOWN_KIND = "UnknownKind"

# enumerations that the API server checks in Go code (the OpenAPI definitions do not list them)
CORE_ENUMS = {
    "io.k8s.api.core.v1.Container": {"imagePullPolicy": ("Always", "IfNotPresent", "Never"),
                                     "terminationMessagePolicy": ("File", "FallbackToLogsOnError")},
    "io.k8s.api.core.v1.PodSpec": {"restartPolicy": ("Always", "OnFailure", "Never"),
                                   "dnsPolicy": ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")},
    "io.k8s.api.core.v1.ContainerPort": {"protocol": ("TCP", "UDP", "SCTP")},
    "io.k8s.api.core.v1.ServicePort": {"protocol": ("TCP", "UDP", "SCTP")},
    "io.k8s.api.core.v1.ServiceSpec": {"type": ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")},
    "io.k8s.api.core.v1.Toleration": {"operator": ("Exists", "Equal"),
                                      "effect": ("NoSchedule", "PreferNoSchedule", "NoExecute")},
    "io.k8s.api.apps.v1.DeploymentStrategy": {"type": ("Recreate", "RollingUpdate")},
    "io.k8s.api.batch.v1.JobSpec": {"completionMode": ("NonIndexed", "Indexed")},
    "io.k8s.api.batch.v1.CronJobSpec": {"concurrencyPolicy": ("Allow", "Forbid", "Replace")},
}


class Problem:
    """One validation problem: where (object, key path), what (reason, message) and which schema."""

    __slots__ = ("kind", "name", "path", "reason", "message", "schema")

    def __init__(self, kind, name, path, reason, message, schema):
        self.kind = kind
        self.name = name
        self.path = path
        self.reason = reason
        self.message = message
        self.schema = schema

    @property
    def subject(self):
        return "%s %s" % (self.kind or "<no kind>", self.name or "<no name>")

    def __str__(self):
        where = "%s: " % self.path if self.path else ""
        schema = " (schema %s)" % self.schema if self.schema else ""
        return "%s: %s%s%s" % (self.subject, where, self.message, schema)

    def __repr__(self):
        return "Problem(%r)" % str(self)

    def as_dict(self):
        return {"kind": self.kind, "name": self.name, "path": self.path, "reason": self.reason,
                "message": self.message, "schema": self.schema}


def _kubernetes_validate_dir():
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.origin:
        raise ManifestValidationError([Problem(None, None, "", UNKNOWN_KIND, "the Python package kubernetes-validate is not installed", None)])
    return os.path.join(os.path.dirname(spec.origin), "kubernetes-json-schema")


def _version_key(name):
    return tuple(int(p) for p in re.findall(r"\d+", name)[:3])


def available_versions():
    """The Kubernetes versions whose definitions kubernetes-validate ships, oldest first."""
    root = _kubernetes_validate_dir()
    names = [n for n in os.listdir(root) if re.match(r"^v\d+\.\d+\.\d+-local$", n)]
    return [n[1:-len("-local")] for n in sorted(names, key=_version_key)]


@functools.lru_cache(maxsize=4)
def load_core_definitions(version=None):
    """``(version, definitions)`` of kubernetes-validate, the newest version by default."""
    versions = available_versions()
    if version is None:
        version = versions[-1]
    version = version.lstrip("v")
    if version not in versions:
        matching = [v for v in versions if v.startswith(version + ".") or v == version]
        if not matching:
            raise ValueError("kubernetes-validate has no definitions for Kubernetes %s (it has %s)" % (version, ", ".join(versions)))
        version = matching[-1]
    path = os.path.join(_kubernetes_validate_dir(), "v%s-local" % version, "_definitions.json")
    with open(path, encoding="utf-8") as handle:
        return version, json.load(handle)["$defs"]


@functools.lru_cache(maxsize=4)
def core_gvk_index(version=None):
    """``{(group, version, kind): definition name}`` of the core definitions."""
    definitions = load_core_definitions(version)[1]
    index = {}
    for name, node in definitions.items():
        for gvk in node.get("x-kubernetes-group-version-kind") or ():
            key = (gvk.get("group", ""), gvk["version"], gvk["kind"])
            # the resource's own definition wins over shared ones (DeleteOptions, WatchEvent...)
            if key not in index or name.endswith("." + gvk["kind"]):
                index[key] = name
    return index


@functools.lru_cache(maxsize=8)
def _crd_index(crd_dir):
    path = os.path.join(crd_dir, "index.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


@functools.lru_cache(maxsize=64)
def _shipped_crd(crd_dir, filename):
    with open(os.path.join(crd_dir, filename), encoding="utf-8") as handle:
        return json.load(handle)


def split_api_version(api_version):
    """``"apps/v1"`` -> ``("apps", "v1")``; ``"v1"`` -> ``("", "v1")``."""
    if not isinstance(api_version, str) or not api_version:
        return None, None
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version


class _Context:
    __slots__ = ("kind", "name", "strict", "problems", "crd")

    def __init__(self, kind, name, strict, crd):
        self.kind = kind
        self.name = name
        self.strict = strict
        self.crd = crd
        self.problems = []

    def add(self, path, reason, message, schema):
        self.problems.append(Problem(self.kind, self.name, path, reason, message, schema))


def _child(path, key):
    return "%s.%s" % (path, key) if path else key


def _map_key(path, key):
    return "%s[%s]" % (path, key)


def _type_name(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _matches_type(value, expected):
    if expected == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "object":
        return isinstance(value, dict)
    if expected == "array":
        return isinstance(value, list)
    if expected == "null":
        return value is None
    return True


def _short(value):
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


class ManifestValidator:
    """Validates manifests against core definitions and CRD schemas.

    ``kube_version`` picks the kubernetes-validate definitions (newest by default);
    ``crd_dir`` is the folder of shipped CRD schemas (``schemas/crds`` of the
    collection; ``None`` for none). CRDs registered with :meth:`register_crd`
    take precedence over shipped ones.
    """

    def __init__(self, kube_version=None, crd_dir=DEFAULT_CRD_DIR):
        self.kube_version = kube_version
        self.crd_dir = crd_dir
        self._crds = {}

    # -- schemas -------------------------------------------------------------------------
    @property
    def definitions(self):
        return load_core_definitions(self.kube_version)[1]

    def core_definition_name(self, api_version, kind):
        group, version = split_api_version(api_version)
        return core_gvk_index(self.kube_version).get((group, version, kind))

    def register_crd(self, crd):
        """Know the custom resources of ``crd`` (a CustomResourceDefinition object)."""
        spec = crd.get("spec") or {}
        group = spec.get("group")
        kind = (spec.get("names") or {}).get("kind")
        if not group or not kind:
            raise ValueError("CustomResourceDefinition %s: spec.group and spec.names.kind are required"
                             % ((crd.get("metadata") or {}).get("name"),))
        self._crds[(group, kind)] = crd

    def unregister_crd(self, group, kind):
        self._crds.pop((group, kind), None)

    def crd_for(self, group, kind):
        """The CRD object of ``group``/``kind`` (registered, else shipped), or None."""
        crd = self._crds.get((group, kind))
        if crd is not None:
            return crd
        if self.crd_dir:
            entry = _crd_index(self.crd_dir).get("%s/%s" % (group, kind))
            if entry:
                return _shipped_crd(self.crd_dir, entry["file"])
        return None

    def crd_schema(self, group, version, kind):
        """``(crd name, openAPIV3Schema)`` of a served CRD version, or None."""
        crd = self.crd_for(group, kind)
        if crd is None:
            return None
        spec = crd.get("spec") or {}
        for entry in spec.get("versions") or ():
            if entry.get("name") == version and entry.get("served", True):
                schema = ((entry.get("schema") or spec.get("validation") or {}).get("openAPIV3Schema")) or {}
                return crd["metadata"]["name"], schema
        return None

    def knows(self, api_version, kind):
        group, version = split_api_version(api_version)
        return (self.core_definition_name(api_version, kind) is not None
                or self.crd_schema(group, version, kind) is not None)

    # -- validation ----------------------------------------------------------------------
    def validate(self, obj, strict=True):
        """The list of :class:`Problem` of ``obj`` (empty when it is valid)."""
        if not isinstance(obj, dict):
            return [Problem(None, None, "", TYPE_INVALID, "a manifest must be a mapping, got %s" % _type_name(obj), None)]
        kind = obj.get("kind")
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        name = metadata.get("name") or (metadata.get("generateName") and metadata["generateName"] + "*")
        api_version = obj.get("apiVersion")
        if not isinstance(kind, str) or not kind or not isinstance(api_version, str) or not api_version:
            missing = "kind" if not isinstance(kind, str) or not kind else "apiVersion"
            return [Problem(kind if isinstance(kind, str) else None, name, missing, REQUIRED, "required field is missing", None)]
        definition = self.core_definition_name(api_version, kind)
        if definition is not None:
            ctx = _Context(kind, name, strict, None)
            self._walk(ctx, {"$ref": "#/$defs/" + definition}, obj, "", definition, top=True)
            return ctx.problems
        group, version = split_api_version(api_version)
        crd = self.crd_schema(group, version, kind)
        if crd is None:
            return [Problem(kind, name, "", UNKNOWN_KIND, "no schema for apiVersion %s kind %s (not a core kind, no CRD known)"
                            % (api_version, kind), None)]
        crd_name, schema = crd
        ctx = _Context(kind, name, strict, "%s/%s#" % (crd_name, version))
        root = dict(schema)
        props = dict(root.get("properties") or {})
        for key in ("apiVersion", "kind"):
            props.setdefault(key, {"type": "string"})
        props["metadata"] = {"$ref": "#/$defs/" + OBJECT_META}
        root["properties"] = props
        self._walk(ctx, root, obj, "", ctx.crd, top=True)
        return ctx.problems

    def check(self, obj, strict=True):
        """Raise :class:`ManifestValidationError` when ``obj`` has problems."""
        problems = self.validate(obj, strict=strict)
        if problems:
            raise ManifestValidationError(problems)

    def _resolve(self, node, schema):
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            name = ref.rsplit("/", 1)[-1]
            resolved = self.definitions.get(name)
            if resolved is None:
                return {}, schema
            extra = {k: v for k, v in node.items() if k not in ("$ref", "description")}
            node = dict(resolved, **extra) if extra else resolved
            schema = name
        return node, schema

    def _walk(self, ctx, node, value, path, schema, top=False, in_object=False):
        node, schema = self._resolve(node, schema)
        if not isinstance(node, dict) or not node:
            return
        core = not schema.startswith(ctx.crd) if ctx.crd else True
        if value is None:
            types = node.get("type")
            if core or node.get("nullable") or in_object:
                # core fields are all nullable; a null CR field of an object is pruned by the API server
                return
            if types is None and not node.get("x-kubernetes-int-or-string"):
                return
            ctx.add(path, TYPE_INVALID, "must not be null", schema)
            return
        if node.get("x-kubernetes-int-or-string"):
            if not (_matches_type(value, "integer") or isinstance(value, str)):
                ctx.add(path, TYPE_INVALID, "expected integer or string, got %s" % _type_name(value), schema)
            return
        if core and "type" not in node and ("oneOf" in node or "anyOf" in node):
            branches = node.get("oneOf") or node.get("anyOf")
            accepted = []
            for branch in branches:
                types = branch.get("type")
                accepted.extend(types if isinstance(types, list) else [types])
            accepted = [t for t in accepted if t and t != "null"]
            if accepted and not any(_matches_type(value, t) for t in accepted):
                ctx.add(path, TYPE_INVALID, "expected %s, got %s" % (" or ".join(accepted), _type_name(value)), schema)
            return
        types = node.get("type")
        if types is not None:
            types = [t for t in (types if isinstance(types, list) else [types]) if t != "null"]
            if types and not any(_matches_type(value, t) for t in types):
                ctx.add(path, TYPE_INVALID, "expected %s, got %s" % (" or ".join(types), _type_name(value)), schema)
                return
        self._check_value(ctx, node, value, path, schema)
        if isinstance(value, dict):
            self._walk_object(ctx, node, value, path, schema, core, top)
        elif isinstance(value, list):
            items = node.get("items")
            if isinstance(items, dict):
                for index, item in enumerate(value):
                    self._walk(ctx, items, item, "%s[%d]" % (path, index), self._sub(schema, core, "[]"))
        if not core:
            self._check_combinators(ctx, node, value, path, schema)

    @staticmethod
    def _sub(schema, core, step):
        return schema if core else schema + step

    def _check_value(self, ctx, node, value, path, schema):
        enum = node.get("enum")
        if enum and value not in enum:
            if not (path.endswith(("apiVersion", "kind")) and value is None):
                ctx.add(path, NOT_SUPPORTED, "unsupported value %s: supported values: %s"
                        % (_short(value), ", ".join(_short(e) for e in enum)), schema)
        if isinstance(value, str):
            fmt = node.get("format")
            if fmt == "byte":
                try:
                    base64.b64decode(value.encode("ascii"), validate=True)
                except (binascii.Error, ValueError, UnicodeEncodeError):
                    ctx.add(path, INVALID, "invalid value %s: illegal base64 data" % _short(value), schema)
            pattern = node.get("pattern")
            if pattern:
                try:
                    if re.search(pattern, value) is None:
                        ctx.add(path, INVALID, "invalid value %s: should match '%s'" % (_short(value), pattern), schema)
                except re.error:
                    pass
            if "maxLength" in node and len(value) > node["maxLength"]:
                ctx.add(path, INVALID, "may not be longer than %d" % node["maxLength"], schema)
            if "minLength" in node and len(value) < node["minLength"]:
                ctx.add(path, INVALID, "should be at least %d chars long" % node["minLength"], schema)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if node.get("format") == "int32" and not INT32[0] <= value <= INT32[1]:
                ctx.add(path, INVALID, "invalid value %s: out of the int32 range" % _short(value), schema)
            if "minimum" in node and (value < node["minimum"] or (node.get("exclusiveMinimum") is True and value == node["minimum"])):
                ctx.add(path, INVALID, "invalid value %s: should be greater than or equal to %s" % (_short(value), node["minimum"]), schema)
            if "maximum" in node and (value > node["maximum"] or (node.get("exclusiveMaximum") is True and value == node["maximum"])):
                ctx.add(path, INVALID, "invalid value %s: should be less than or equal to %s" % (_short(value), node["maximum"]), schema)
        elif isinstance(value, list):
            if "maxItems" in node and len(value) > node["maxItems"]:
                ctx.add(path, INVALID, "must have at most %d items" % node["maxItems"], schema)
            if "minItems" in node and len(value) < node["minItems"]:
                ctx.add(path, INVALID, "should have at least %d items" % node["minItems"], schema)
        elif isinstance(value, dict):
            if "maxProperties" in node and len(value) > node["maxProperties"]:
                ctx.add(path, INVALID, "must have at most %d properties" % node["maxProperties"], schema)
            if "minProperties" in node and len(value) < node["minProperties"]:
                ctx.add(path, INVALID, "should have at least %d properties" % node["minProperties"], schema)

    def _walk_object(self, ctx, node, value, path, schema, core, top):
        properties = node.get("properties") or {}
        additional = node.get("additionalProperties")
        preserve = bool(node.get("x-kubernetes-preserve-unknown-fields"))
        embedded = bool(node.get("x-kubernetes-embedded-resource"))
        enums = CORE_ENUMS.get(schema, {}) if core else {}
        for required in node.get("required") or ():
            if required not in value:
                ctx.add(_child(path, required), REQUIRED, "required field is missing", schema)
        # a free-form core type: an object definition without properties nor additionalProperties
        free_form = core and not properties and additional is None
        for key, item in value.items():
            key_path = _child(path, key)
            if key in properties:
                prop = properties[key]
                if embedded and key == "metadata" or (not core and top and key == "metadata"):
                    prop = {"$ref": "#/$defs/" + OBJECT_META}
                self._walk(ctx, prop, item, key_path, self._sub(schema, core, "." + key), in_object=True)
                if key in enums and item is not None and item not in enums[key]:
                    ctx.add(key_path, NOT_SUPPORTED, "unsupported value %s: supported values: %s"
                            % (_short(item), ", ".join(_short(e) for e in enums[key])), schema)
            elif embedded and key in ("apiVersion", "kind", "metadata"):
                if key == "metadata":
                    self._walk(ctx, {"$ref": "#/$defs/" + OBJECT_META}, item, key_path, schema)
                elif not isinstance(item, str):
                    ctx.add(key_path, TYPE_INVALID, "expected string, got %s" % _type_name(item), schema)
            elif isinstance(additional, dict):
                self._walk(ctx, additional, item, _map_key(path, key), self._sub(schema, core, "[*]"))
            elif additional is True or preserve or free_form:
                continue
            elif ctx.strict:
                ctx.add(key_path, UNKNOWN_FIELD, "unknown field", schema)

    def _check_combinators(self, ctx, node, value, path, schema):
        def passes(branch):
            sub = _Context(ctx.kind, ctx.name, False, ctx.crd)
            self._walk(sub, branch, value, path, schema)
            return not sub.problems

        for branch in node.get("allOf") or ():
            self._walk(ctx, dict(branch, **{"x-kubernetes-preserve-unknown-fields": True}), value, path, schema)
        if node.get("anyOf") and not any(passes(b) for b in node["anyOf"]):
            ctx.add(path, INVALID, "must validate against at least one schema of anyOf", schema)
        if node.get("oneOf"):
            count = sum(1 for b in node["oneOf"] if passes(b))
            if count != 1:
                ctx.add(path, INVALID, "must validate against exactly one schema of oneOf (matched %d)" % count, schema)
        if isinstance(node.get("not"), dict) and passes(node["not"]):
            ctx.add(path, INVALID, "must not validate against the schema of not", schema)


def validate_manifest(obj, strict=True, validator=None):
    """The list of problems of ``obj`` (a dict manifest); empty when valid.

    ``validator`` is a :class:`ManifestValidator` (one with the shipped CRDs is
    made when omitted; the schemas it loads are cached per process).
    """
    return (validator or ManifestValidator()).validate(obj, strict=strict)


def check_manifest(obj, strict=True, validator=None):
    """Raise :class:`ManifestValidationError` when ``obj`` does not validate."""
    (validator or ManifestValidator()).check(obj, strict=strict)


# -- OpenAPI definitions of embedded specs (Tekton's pipelineSpec / taskSpec) -------------------

TEKTON_OPENAPI_FILE = "openapi.tekton.dev_v1.json"
# Go types whose JSON is not their struct: Tekton's ParamValue is a string, an array or an object;
# metav1.Duration and metav1.Time are strings
JSON_SHAPES = {
    "v1.ParamValue": {"anyOf": [{"type": "string"}, {"type": "array"}, {"type": "object"}]},
    "v1.Duration": {"type": "string"},
    "v1.Time": {"type": "string", "format": "date-time"},
}


@functools.lru_cache(maxsize=4)
def _openapi_definitions(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["definitions"]


class OpenAPIDefinitionsValidator(ManifestValidator):
    """Validates values against named OpenAPI (swagger) definitions, strictly, as core kinds are:
    Tekton's ``v1.PipelineSpec`` for the ``pipelineSpec`` a PipelineRun embeds (its CRD leaves it
    ``x-kubernetes-preserve-unknown-fields``). Kubernetes types the definitions name by their short
    name (``v1.EnvVar``, ``v1.ResourceRequirements``...) resolve to the core definitions."""

    def __init__(self, openapi_file=None, kube_version=None, crd_dir=DEFAULT_CRD_DIR):
        super().__init__(kube_version=kube_version, crd_dir=crd_dir)
        self.openapi_file = openapi_file or os.path.join(crd_dir or DEFAULT_CRD_DIR, TEKTON_OPENAPI_FILE)
        self._merged = None

    @property
    def definitions(self):
        if self._merged is None:
            core = load_core_definitions(self.kube_version)[1]
            extra = _openapi_definitions(self.openapi_file)
            merged = dict(core)
            merged.update(extra)
            by_short_name = {}
            for name in core:
                parts = name.rsplit(".", 2)
                if len(parts) == 3 and parts[1] == "v1" and (".core." in name or ".meta." in name):
                    by_short_name.setdefault("v1." + parts[2], name)
            referenced = set(re.findall(r'"#/definitions/([^"]+)"', json.dumps(extra)))
            for name in referenced - set(extra):
                if name in by_short_name:
                    merged[name] = core[by_short_name[name]]
            merged.update(JSON_SHAPES)
            self._merged = merged
        return self._merged

    def validate_definition(self, value, definition, path="", kind=None, name=None, strict=True):
        """The problems of ``value`` against the definition ``definition``; paths start at ``path``."""
        ctx = _Context(kind, name, strict, None)
        self._walk(ctx, {"$ref": "#/definitions/" + definition}, value, path, definition)
        return ctx.problems


def validate_pipelinerun(obj, strict=True, validator=None):
    """A Tekton PipelineRun's problems: the CRD's schema, then its embedded ``spec.pipelineSpec``
    against Tekton's ``v1.PipelineSpec``."""
    validator = validator or OpenAPIDefinitionsValidator()
    problems = validator.validate(obj, strict=strict)
    spec = (obj.get("spec") or {}) if isinstance(obj, dict) else {}
    if isinstance(spec.get("pipelineSpec"), dict):
        metadata = obj.get("metadata") or {}
        problems += validator.validate_definition(spec["pipelineSpec"], "v1.PipelineSpec", "spec.pipelineSpec",
                                                  kind=obj.get("kind"), name=metadata.get("name")
                                                  or metadata.get("generateName"), strict=strict)
    return problems
