"""Patches: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

Strategic merge patch follows the Kubernetes design ("Strategic Merge Patch",
sig-api-machinery): lists with ``x-kubernetes-patch-strategy: merge`` merge
their items by ``x-kubernetes-patch-merge-key`` (or as a set for primitive
items); other lists are replaced; ``null`` deletes a key; directives
``$patch: replace|delete|merge``, ``$retainKeys``, ``$setElementOrder/<list>``
and ``$deleteFromPrimitiveList/<list>`` are honoured. The schema navigation
(:class:`SchemaNav`) is shared with server-side apply.
"""

import copy
import json

from kubesim.errors import ApiError


class SchemaNav:
    """Walks the validator's schemas (core definitions and CRD schemas) by key."""

    def __init__(self, validator):
        self.validator = validator

    def root(self, resource):
        if resource.custom:
            return resource.schema or {}
        name = self.validator.core_definition_name(resource.api_version, resource.kind)
        return {"$ref": "#/$defs/" + name} if name else {}

    def resolve(self, node):
        if not node:
            return {}
        return self.validator._resolve(node, "")[0]

    def field(self, node, key):
        node = self.resolve(node)
        props = node.get("properties") or {}
        if key in props:
            return props[key]
        if key == "metadata":
            return {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
        additional = node.get("additionalProperties")
        return additional if isinstance(additional, dict) else {}

    def items(self, node):
        node = self.resolve(node)
        items = node.get("items")
        return items if isinstance(items, dict) else {}

    def list_meta(self, node):
        """``(list_type, keys, patch_strategy, merge_key)`` of an array schema."""
        node = self.resolve(node)
        strategy = node.get("x-kubernetes-patch-strategy") or ""
        merge_key = node.get("x-kubernetes-patch-merge-key")
        list_type = node.get("x-kubernetes-list-type")
        keys = node.get("x-kubernetes-list-map-keys") or ([merge_key] if merge_key else [])
        if list_type is None:
            if merge_key:
                list_type = "map"
            elif "merge" in strategy:
                list_type = "set"
            else:
                list_type = "atomic"
        return list_type, list(keys), strategy, merge_key

    def is_atomic_map(self, node):
        node = self.resolve(node)
        return node.get("x-kubernetes-map-type") == "atomic"


# -- JSON merge patch --------------------------------------------------------------------
def merge_patch(target, patch):
    """RFC 7386: a dict patch merges recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# -- JSON patch --------------------------------------------------------------------------
def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError.bad_request('the server rejected our request due to an error in our request: invalid JSON pointer "%s"' % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _container(doc, parts, path):
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise ApiError(422, "Invalid", 'the server rejected our request due to an error in our request: doc is missing path: "%s"' % path)
    return node


def json_patch(doc, operations):
    """RFC 6902 operations (add, remove, replace, move, copy, test) on a copy of ``doc``."""
    if not isinstance(operations, list):
        raise ApiError.bad_request("json patch must be a list of operations")
    doc = copy.deepcopy(doc)

    def get(path):
        parts = _pointer(path)
        if not parts:
            return doc
        parent = _container(doc, parts, path)
        last = parts[-1]
        if isinstance(parent, dict) and last in parent:
            return parent[last]
        if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
            return parent[int(last)]
        raise ApiError(422, "Invalid", 'the server rejected our request due to an error in our request: doc is missing key: "%s"' % path)

    def remove(path):
        parts = _pointer(path)
        parent = _container(doc, parts, path)
        last = parts[-1]
        if isinstance(parent, dict) and last in parent:
            return parent.pop(last)
        if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
            return parent.pop(int(last))
        raise ApiError(422, "Invalid", 'the server rejected our request due to an error in our request: doc is missing key: "%s"' % path)

    def add(path, value):
        nonlocal doc
        parts = _pointer(path)
        if not parts:
            doc = value
            return
        parent = _container(doc, parts, path)
        last = parts[-1]
        if isinstance(parent, dict):
            parent[last] = value
        elif isinstance(parent, list):
            if last == "-":
                parent.append(value)
            elif last.isdigit() and int(last) <= len(parent):
                parent.insert(int(last), value)
            else:
                raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: "
                                               'index out of range for path "%s"' % path)
        else:
            raise ApiError(422, "Invalid", 'the server rejected our request due to an error in our request: doc is missing path: "%s"' % path)

    for op in operations:
        if not isinstance(op, dict) or "op" not in op:
            raise ApiError.bad_request("json patch operation must be an object with an \"op\"")
        kind = op["op"]
        path = op.get("path", "")
        if kind == "add":
            add(path, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            remove(path)
        elif kind == "replace":
            remove(path)
            add(path, copy.deepcopy(op.get("value")))
        elif kind == "move":
            add(path, remove(op["from"]))
        elif kind == "copy":
            add(path, copy.deepcopy(get(op["from"])))
        elif kind == "test":
            if get(path) != op.get("value"):
                raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: "
                                               "testing value %s failed" % path)
        else:
            raise ApiError.bad_request('unexpected json patch operation "%s"' % kind)
    return doc


# -- strategic merge patch ---------------------------------------------------------------
def _strip(value):
    """A new value without patch directives."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items()
                if not k.startswith("$setElementOrder/") and not k.startswith("$deleteFromPrimitiveList/")
                and k not in ("$patch", "$retainKeys")}
    if isinstance(value, list):
        return [_strip(v) for v in value if not (isinstance(v, dict) and v.get("$patch") == "delete")]
    return value


class StrategicMerge:
    """Applies a strategic merge patch with the patch metadata of the schemas."""

    def __init__(self, nav):
        self.nav = nav

    def apply(self, original, patch, node):
        if not isinstance(patch, dict):
            raise ApiError.bad_request("strategic merge patch must be a JSON object")
        return self._map(copy.deepcopy(original), patch, node) or {}

    def _map(self, original, patch, node):
        directive = patch.get("$patch")
        if directive == "delete":
            return None
        if directive == "replace":
            return _strip(patch)
        result = dict(original) if isinstance(original, dict) else {}
        orders = {}
        for key, value in patch.items():
            if key in ("$patch", "$retainKeys"):
                continue
            if key.startswith("$setElementOrder/"):
                orders[key.split("/", 1)[1]] = value
                continue
            if key.startswith("$deleteFromPrimitiveList/"):
                field = key.split("/", 1)[1]
                if isinstance(result.get(field), list):
                    result[field] = [v for v in result[field] if v not in (value or [])]
                continue
            if value is None:
                result.pop(key, None)
                continue
            sub = self.nav.field(node, key)
            if isinstance(value, dict):
                if self.nav.is_atomic_map(sub):
                    result[key] = _strip(value)
                    continue
                merged = self._map(result.get(key), value, sub)
                if merged is None:
                    result.pop(key, None)
                else:
                    result[key] = merged
            elif isinstance(value, list):
                result[key] = self._list(result.get(key), value, sub)
            else:
                result[key] = value
        for field, order in orders.items():
            if isinstance(result.get(field), list):
                result[field] = self._order(result[field], order, self.nav.list_meta(self.nav.field(node, field))[3])
        retain = patch.get("$retainKeys")
        if isinstance(retain, list):
            result = {k: v for k, v in result.items() if k in retain}
        return result

    def _list(self, original, patch, node):
        _, _, strategy, merge_key = self.nav.list_meta(node)
        if "merge" not in strategy:
            return _strip(patch)
        original = list(original) if isinstance(original, list) else []
        if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
            return [_strip(i) for i in patch if not (isinstance(i, dict) and "$patch" in i)]
        if not merge_key:
            return original + [v for v in patch if v not in original]
        items_node = self.nav.items(node)
        for item in patch:
            if not isinstance(item, dict):
                continue
            key = item.get(merge_key)
            index = next((i for i, o in enumerate(original) if isinstance(o, dict) and o.get(merge_key) == key), None)
            if item.get("$patch") == "delete":
                if index is not None:
                    original.pop(index)
                continue
            if index is None:
                original.append(self._map({}, item, items_node))
            else:
                original[index] = self._map(original[index], item, items_node)
        return original

    @staticmethod
    def _order(items, order, merge_key):
        def ident(item):
            return item.get(merge_key) if merge_key and isinstance(item, dict) else json.dumps(item, sort_keys=True)

        wanted = [ident(o) if merge_key else json.dumps(o, sort_keys=True) for o in order or []]
        position = {w: i for i, w in enumerate(wanted)}
        listed = sorted((i for i in items if ident(i) in position), key=lambda i: position[ident(i)])
        return listed + [i for i in items if ident(i) not in position]
