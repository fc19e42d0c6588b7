"""Server-side apply: field sets, ownership in ``metadata.managedFields``, conflicts.

A reasonable model of structured-merge-diff (API conventions and the
"Server-Side Apply" reference): a field set holds the leaf paths of an object;
list items of ``x-kubernetes-list-type: map`` lists (or lists with a patch
merge key) are addressed by their keys (``k:{...}``), items of sets by value
(``v:...``), atomic lists and maps are leaves. An apply:

- conflicts (409) when it sets a field that another manager owns to a different
  value, unless ``force=true`` (then ownership moves to the applier);
- removes the fields that the same manager applied before and no longer
  applies, when no other manager owns them;
- merges the configuration into the live object (maps recursively, list maps
  by key, sets as unions, atomic values replaced).

Updates (PUT, patches) give the fields they change to their field manager with
``operation: Update``. Managed fields are serialized as ``FieldsV1``.
"""

import copy
import json

from kubesim.errors import ApiError

IGNORED_METADATA = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
                    "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "generateName"}


def _key_json(item, keys):
    return json.dumps({k: item.get(k) for k in keys if k in item}, separators=(",", ":"), sort_keys=True)


def _value_json(value):
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


class FieldSets:
    """Computes, compares and serializes field sets with the schemas of :class:`SchemaNav`."""

    def __init__(self, nav):
        self.nav = nav

    # -- field sets ----------------------------------------------------------------------
    def of(self, obj, node, skip_status=True):
        paths = set()
        for key, value in (obj or {}).items():
            if key in ("apiVersion", "kind") or (skip_status and key == "status"):
                continue
            if key == "metadata" and isinstance(value, dict):
                value = {k: v for k, v in value.items() if k not in IGNORED_METADATA}
                if not value:
                    continue
            self._collect(value, self.nav.field(node, key), (("f", key),), paths)
        return paths

    def _collect(self, value, node, prefix, paths):
        if isinstance(value, dict) and value and not self.nav.is_atomic_map(node):
            for key, item in value.items():
                self._collect(item, self.nav.field(node, key), prefix + (("f", key),), paths)
        elif isinstance(value, list) and value:
            list_type, keys, _, _ = self.nav.list_meta(node)
            if list_type == "map" and keys and all(isinstance(i, dict) for i in value):
                items = self.nav.items(node)
                for item in value:
                    item_path = prefix + (("k", _key_json(item, keys)),)
                    paths.add(item_path)
                    for key, sub in item.items():
                        self._collect(sub, self.nav.field(items, key), item_path + (("f", key),), paths)
            elif list_type == "set" and all(not isinstance(i, (dict, list)) for i in value):
                for item in value:
                    paths.add(prefix + (("v", _value_json(item)),))
            else:
                paths.add(prefix)
        else:
            paths.add(prefix)

    # -- navigation ------------------------------------------------------------------------
    _MISSING = object()

    def value_at(self, obj, path):
        node = obj
        for kind, name in path:
            if kind == "f":
                if not isinstance(node, dict) or name not in node:
                    return self._MISSING
                node = node[name]
            elif kind == "k":
                if not isinstance(node, list):
                    return self._MISSING
                wanted = json.loads(name)
                node = next((i for i in node if isinstance(i, dict) and all(i.get(k) == v for k, v in wanted.items())),
                            self._MISSING)
                if node is self._MISSING:
                    return node
            elif kind == "v":
                value = json.loads(name)
                return True if isinstance(node, list) and value in node else self._MISSING
            else:
                return self._MISSING
        return node

    def remove(self, obj, path):
        """Delete ``path`` from ``obj`` in place (a list-map item or a set value when last)."""
        parent = obj
        for kind, name in path[:-1]:
            parent = self.value_at(parent, ((kind, name),))
            if parent is self._MISSING:
                return
        kind, name = path[-1]
        if kind == "f" and isinstance(parent, dict):
            parent.pop(name, None)
        elif kind == "k" and isinstance(parent, list):
            wanted = json.loads(name)
            parent[:] = [i for i in parent if not (isinstance(i, dict) and all(i.get(k) == v for k, v in wanted.items()))]
        elif kind == "v" and isinstance(parent, list):
            value = json.loads(name)
            parent[:] = [i for i in parent if i != value]

    @staticmethod
    def path_string(path):
        parts = []
        for kind, name in path:
            if kind == "f":
                parts.append("." + name)
            elif kind == "k":
                parts.append("[%s]" % ",".join("%s=%s" % (k, json.dumps(v)) for k, v in json.loads(name).items()))
            else:
                parts.append("[%s]" % name)
        return "".join(parts)

    # -- FieldsV1 ----------------------------------------------------------------------------
    @staticmethod
    def to_fields_v1(paths):
        tree = {}
        for path in sorted(paths):
            node = tree
            for kind, name in path:
                node = node.setdefault("%s:%s" % (kind, name), {})
        for path in paths:
            node = tree
            for kind, name in path:
                node = node["%s:%s" % (kind, name)]
            if node:
                node["."] = {}
        return tree

    @staticmethod
    def from_fields_v1(tree, prefix=()):
        paths = set()
        for key, child in (tree or {}).items():
            if key == ".":
                paths.add(prefix)
                continue
            kind, _, name = key.partition(":")
            path = prefix + ((kind, name),)
            if not child:
                paths.add(path)
            else:
                paths |= FieldSets.from_fields_v1(child, path)
        return paths

    # -- merge -----------------------------------------------------------------------------
    def merge(self, live, config, node):
        if not isinstance(config, dict):
            return copy.deepcopy(config)
        result = dict(live) if isinstance(live, dict) else {}
        if self.nav.is_atomic_map(node):
            return copy.deepcopy(config)
        for key, value in config.items():
            sub = self.nav.field(node, key)
            if isinstance(value, dict):
                result[key] = self.merge(result.get(key), value, sub)
            elif isinstance(value, list):
                result[key] = self._merge_list(result.get(key), value, sub)
            else:
                result[key] = copy.deepcopy(value)
        return result

    def _merge_list(self, live, config, node):
        list_type, keys, _, _ = self.nav.list_meta(node)
        live = list(live) if isinstance(live, list) else []
        if list_type == "map" and keys and all(isinstance(i, dict) for i in config):
            items = self.nav.items(node)
            for item in config:
                key = _key_json(item, keys)
                index = next((i for i, o in enumerate(live) if isinstance(o, dict) and _key_json(o, keys) == key), None)
                if index is None:
                    live.append(copy.deepcopy(item))
                else:
                    live[index] = self.merge(live[index], item, items)
            return live
        if list_type == "set":
            return live + [copy.deepcopy(v) for v in config if v not in live]
        return copy.deepcopy(config)


class ManagedFields:
    """``metadata.managedFields`` as {(manager, operation, subresource): (apiVersion, time, paths)}."""

    def __init__(self, entries):
        self.entries = {}
        for entry in entries or ():
            if entry.get("fieldsType", "FieldsV1") != "FieldsV1":
                continue
            key = (entry.get("manager", ""), entry.get("operation", "Update"), entry.get("subresource", ""))
            self.entries[key] = [entry.get("apiVersion"), entry.get("time"), FieldSets.from_fields_v1(entry.get("fieldsV1"))]

    def owners(self, path, exclude=None):
        return [key for key, (_, _, paths) in self.entries.items() if key != exclude and path in paths]

    def others_paths(self, exclude):
        union = set()
        for key, (_, _, paths) in self.entries.items():
            if key != exclude:
                union |= paths
        return union

    def take(self, paths, new_owner, api_version, now):
        """``new_owner`` now owns ``paths``; other managers lose them."""
        for key, entry in self.entries.items():
            if key != new_owner:
                entry[2] -= paths
        if new_owner in self.entries:
            self.entries[new_owner][2] |= paths
            self.entries[new_owner][0] = api_version
            self.entries[new_owner][1] = now
        elif paths:
            self.entries[new_owner] = [api_version, now, set(paths)]

    def set(self, owner, paths, api_version, now):
        self.entries[owner] = [api_version, now, set(paths)]

    def drop(self, paths):
        for entry in self.entries.values():
            entry[2] -= paths

    def serialize(self):
        out = []
        for (manager, operation, subresource), (api_version, time, paths) in self.entries.items():
            if not paths:
                continue
            entry = {"manager": manager, "operation": operation, "apiVersion": api_version, "time": time,
                     "fieldsType": "FieldsV1", "fieldsV1": FieldSets.to_fields_v1(paths)}
            if subresource:
                entry["subresource"] = subresource
            out.append(entry)
        return out


def server_side_apply(fieldsets, resource, node, live, config, manager, force, now, subresource=""):
    """The object after applying ``config`` as ``manager`` to ``live`` (None when creating).

    Raises :class:`ApiError` 409 on conflicts unless ``force``.
    """
    live = copy.deepcopy(live) if live else {}
    managed = ManagedFields((live.get("metadata") or {}).get("managedFields"))
    owner = (manager, "Apply", subresource)
    skip_status = resource.has_status and subresource != "status"
    new_paths = fieldsets.of(config, node, skip_status=skip_status)
    if subresource == "status":
        new_paths = {p for p in new_paths if p[0] == ("f", "status")}
    old_paths = managed.entries.get(owner, [None, None, set()])[2]
    conflicts = []
    forced = set()
    for path in sorted(new_paths):
        if path[-1][0] in ("k", "v"):
            continue
        for other in managed.owners(path, exclude=owner):
            if fieldsets.value_at(live, path) != fieldsets.value_at(config, path):
                if force:
                    forced.add(path)
                else:
                    conflicts.append((other[0], fieldsets.path_string(path)))
    if conflicts:
        raise ApiError.apply_conflict(resource, (config.get("metadata") or {}).get("name"), conflicts)
    orphaned = old_paths - new_paths - managed.others_paths(owner)
    merged = copy.deepcopy(live)
    for path in sorted(orphaned, key=len, reverse=True):
        fieldsets.remove(merged, path)
    body = {k: v for k, v in config.items() if k not in ("status",) or not skip_status}
    meta = dict(body.get("metadata") or {})
    for key in IGNORED_METADATA:
        meta.pop(key, None)
    body["metadata"] = meta
    merged = fieldsets.merge(merged, body, node)
    for key in ("name", "namespace"):
        if (config.get("metadata") or {}).get(key):
            merged.setdefault("metadata", {})[key] = config["metadata"][key]
    managed.drop(forced)
    managed.set(owner, new_paths, resource.api_version, now)
    merged.setdefault("metadata", {})["managedFields"] = managed.serialize()
    return merged


def track_update(fieldsets, resource, node, old, new, manager, now, subresource=""):
    """Record in ``new``'s managedFields the fields that ``manager`` changed from ``old``."""
    metadata = new.setdefault("metadata", {})
    requested = metadata.get("managedFields")
    previous = (old or {}).get("metadata", {}).get("managedFields")
    if old is not None and requested is not None and requested != previous:
        return  # the client wrote managedFields explicitly: keep them (managed fields convention)
    managed = ManagedFields(previous)
    skip_status = resource.has_status and subresource != "status"
    old_paths = fieldsets.of(old or {}, node, skip_status=skip_status)
    new_paths = fieldsets.of(new, node, skip_status=skip_status)
    changed = {p for p in new_paths if p not in old_paths
               or fieldsets.value_at(old, p) != fieldsets.value_at(new, p)}
    managed.drop(old_paths - new_paths)
    if manager:
        managed.take(changed, (manager, "Update", subresource), resource.api_version, now)
    metadata["managedFields"] = managed.serialize()
    if not metadata["managedFields"]:
        del metadata["managedFields"]
