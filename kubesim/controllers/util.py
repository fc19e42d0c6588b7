"""Helpers shared by controllers: conditions, owner references, pod templates, steering annotations.

Conventions followed:

- conditions (API conventions, "Typical status properties"): a list of
  ``{type, status, reason, message, lastTransitionTime}``; ``lastTransitionTime``
  changes only when ``status`` changes;
- owner references (garbage collection design): a controller marks what it
  creates with ``controller: true`` and ``blockOwnerDeletion: true``;
- pods from a template (workload controllers): the template's labels and
  annotations, ``generateName`` ``<owner>-``, the owner's namespace.

Steering annotations live under ``kubesim.perfscale.io/``; an operator's
custom resource passes its own to the pods it creates (see :func:`propagate`).
"""

import copy
import hashlib
import json
import random

from kubesim.clock import parse_timestamp
from kubesim.errors import ApiError

PREFIX = "kubesim.perfscale.io/"
FAIL = PREFIX + "fail"
DELAY = PREFIX + "delay-s"
SAFE_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def random_suffix(length=5):
    """A name's random part, from the letters the API server's generateName uses."""
    return "".join(random.choice(SAFE_CHARS) for _ in range(length))  # nosec - names, not secrets


def annotation(obj, name, default=None):
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(PREFIX + name, default)


def float_annotation(obj, name, default):
    try:
        return float(annotation(obj, name, default))
    except (TypeError, ValueError):
        return default


def steering_annotations(obj):
    """The ``kubesim.perfscale.io/*`` annotations of ``obj``."""
    return {k: v for k, v in ((obj.get("metadata") or {}).get("annotations") or {}).items() if k.startswith(PREFIX)}


def propagate(source, template_meta, skip=("fail", "delay-s", "url")):
    """Copy ``source``'s steering annotations into a pod template's metadata (template values win)."""
    annotations = template_meta.setdefault("annotations", {})
    for key, value in steering_annotations(source).items():
        if key[len(PREFIX):] not in skip:
            annotations.setdefault(key, value)
    return template_meta


def set_condition(conditions, ctype, status, reason=None, message=None, now=None, **extra):
    """A new list with the condition ``ctype`` set; ``lastTransitionTime`` kept when the status did not change."""
    conditions = [dict(c) for c in conditions or ()]
    for condition in conditions:
        if condition.get("type") == ctype:
            if condition.get("status") != status:
                condition["lastTransitionTime"] = now
            condition["status"] = status
            _set_optional(condition, reason, message, extra)
            return conditions
    condition = {"type": ctype, "status": status, "lastTransitionTime": now}
    _set_optional(condition, reason, message, extra)
    conditions.append(condition)
    return conditions


def _set_optional(condition, reason, message, extra):
    for key, value in (("reason", reason), ("message", message)):
        if value is None:
            condition.pop(key, None)
        else:
            condition[key] = value
    condition.update({k: v for k, v in extra.items() if v is not None})


def condition(obj, ctype):
    for entry in ((obj.get("status") or {}).get("conditions")) or ():
        if entry.get("type") == ctype:
            return entry
    return None


def condition_true(obj, ctype):
    found = condition(obj, ctype)
    return found is not None and found.get("status") == "True"


def owner_reference(owner, controller=True):
    ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"]}
    if controller:
        ref.update(controller=True, blockOwnerDeletion=True)
    return ref


def controller_of(obj):
    """The ownerReference with ``controller: true``, or None."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


def owned_by(obj, owner):
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == owner["metadata"]["uid"]


def template_hash(template, collision_count=0):
    """A stable short hash of a pod template (``pod-template-hash``, ``controller-revision-hash``)."""
    digest = hashlib.sha256((json.dumps(template, sort_keys=True) + str(collision_count or "")).encode()).digest()
    return "".join(SAFE_CHARS[b % len(SAFE_CHARS)] for b in digest[:10])


def since(timestamp, clock):
    """Simulated seconds since an RFC 3339 ``timestamp`` (0 when missing)."""
    parsed = parse_timestamp(timestamp)
    return clock.time() - parsed if parsed else 0.0


def pod_phase(pod):
    return (pod.get("status") or {}).get("phase") or "Pending"


def pod_ready(pod):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def pod_active(pod):
    return pod_phase(pod) not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def new_pod(template, owner, namespace, name=None, generate_name=None, labels=None, annotations=None, spec_changes=None):
    """A Pod body from a pod template, owned by ``owner``."""
    template = copy.deepcopy(template or {})
    meta = template.get("metadata") or {}
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": namespace, "labels": dict(meta.get("labels") or {}),
                         "annotations": dict(meta.get("annotations") or {}),
                         "ownerReferences": [owner_reference(owner)]},
            "spec": template.get("spec") or {}}
    if name:
        body["metadata"]["name"] = name
    else:
        body["metadata"]["generateName"] = generate_name or owner["metadata"]["name"] + "-"
    body["metadata"]["labels"].update(labels or {})
    body["metadata"]["annotations"].update(annotations or {})
    if not body["metadata"]["annotations"]:
        del body["metadata"]["annotations"]
    if spec_changes:
        spec_changes(body["spec"])
    return body


def create_or_skip(cluster, resource, body, namespace=None):
    """Create ``body``; None when it already exists (409)."""
    try:
        return cluster.create(resource, body, namespace)
    except ApiError as exc:
        if exc.code == 409:
            return None
        raise


def delete_quietly(cluster, resource, namespace, name, propagation="Background"):
    try:
        cluster.delete(resource, namespace, name, propagation=propagation)
        return True
    except ApiError as exc:
        if exc.code == 404:
            return False
        raise


def ensure_namespace(cluster, name, labels=None):
    resource = cluster.resource_for_key(("", "namespaces"))
    if cluster.store.get(("", "namespaces"), "", name) is None:
        create_or_skip(cluster, resource, {"metadata": {"name": name, "labels": dict(labels or {})}})


def apply_owned(cluster, resource, body, namespace=None, update=None):
    """Create ``body`` or, when it exists, bring it in line with ``update(existing)`` (returns the stored object)."""
    ns = namespace or body["metadata"].get("namespace")
    existing = cluster.store.get(resource.storage_key, ns if resource.namespaced else "", body["metadata"]["name"])
    if existing is None:
        created = create_or_skip(cluster, resource, body, ns)
        return created
    if update is not None:
        return cluster.mutate(resource, ns, body["metadata"]["name"], update)
    return existing


def status_writer(cluster, resource, namespace, name):
    """``write(change)``: mutate the status of one object; returns the stored object."""
    def write(change):
        return cluster.mutate(resource, namespace, name, change, subresource="status")
    return write


class ChildIndex:
    """Objects of one storage key by the uid of their controller owner of kind ``owner_kind``.

    Kept from store events (``update`` in ``on_event``) so that a controller finds
    its pods without listing a namespace: what an informer's owner index does.
    """

    def __init__(self, store, key, owner_kind):
        self.store = store
        self.key = key
        self.owner_kind = owner_kind
        self._children = {}   # owner uid -> {(namespace, name)}
        self._owner_of = {}   # (namespace, name) -> (owner uid, owner name)

    def rebuild(self):
        with self.store.lock:
            for obj in self.store.list(self.key)[0]:
                self.update("ADDED", obj)

    def update(self, event_type, obj):
        """Index ``obj``; returns the owner's name when ``obj`` is controlled by an ``owner_kind``, else None."""
        meta = obj["metadata"]
        ident = (meta.get("namespace") or "", meta["name"])
        previous = self._owner_of.pop(ident, None)
        if previous is not None:
            self._children.get(previous[0], set()).discard(ident)
        ref = controller_of(obj)
        if ref is None or ref.get("kind") != self.owner_kind:
            return previous[1] if previous else None
        if event_type != "DELETED":
            self._children.setdefault(ref["uid"], set()).add(ident)
            self._owner_of[ident] = (ref["uid"], ref["name"])
        return ref["name"]

    def children(self, owner):
        """The stored children of ``owner`` (not copies), sorted by name."""
        found = []
        for namespace, name in sorted(self._children.get(owner["metadata"]["uid"], ())):
            obj = self.store.get(self.key, namespace, name)
            if obj is not None:
                found.append(obj)
        return found
