"""The base of the operators' reconcilers (one class per custom resource kind).

Every operator reconciler:

- acts only while its operator runs (:func:`kubesim.controllers.olm.operator_ready`:
  the CSV that installed the CRD is ``Succeeded``; CRDs installed without OLM count
  as served by a running operator);
- waits ``kubesim.perfscale.io/delay-s`` simulated seconds (its own default) from
  the object's creation before it reports success;
- fails the object with the message of the annotation ``kubesim.perfscale.io/fail``
  or of an injected ``controller`` fault naming its controller (``sim.faults.add(
  "controller", controller="<name>", match={"name": ...}, message=...)``).
"""

import json

from kubesim.controllers.base import Controller, Ref
from kubesim.controllers.olm import operator_ready
from kubesim.controllers.util import annotation, float_annotation, since


class OperatorReconciler(Controller):
    """Base: set ``key`` (the CR's storage key), ``default_delay``; implement ``sync(ref, obj)``."""

    key = None
    default_delay = 5.0
    extra_watches = ()

    @property
    def watches(self):
        return (self.key,) + tuple(self.extra_watches)

    def on_event(self, event):
        if event.key == self.key:
            meta = event.obj["metadata"]
            return [Ref(self.key, meta.get("namespace") or "", meta["name"])]
        return self.related(event)

    def related(self, event):
        """Refs of CRs to reconcile for an event of an ``extra_watches`` kind (default: every CR)."""
        return self.all_refs()

    def all_refs(self, namespace=None):
        return [Ref(self.key, o["metadata"].get("namespace") or "", o["metadata"]["name"])
                for o in self.cluster.store.list(self.key, namespace)[0]]

    @property
    def resource(self):
        return self.cluster.resource_for_key(self.key)

    def running(self):
        resource = self.resource
        return resource is not None and (not resource.crd or operator_ready(self.cluster, resource.crd))

    def fail_message(self, obj):
        return annotation(obj, "fail") or self.failure(obj)

    def delay_left(self, obj, default=None, since_field=None):
        """Simulated seconds left before ``obj`` may report success (0 when the delay passed)."""
        delay = float_annotation(obj, "delay-s", self.default_delay if default is None else default)
        waited = since(since_field or obj["metadata"].get("creationTimestamp"), self.clock)
        return max(0.0, delay - waited)

    def write_status(self, ref, change, key=None):
        """Mutate the status of ``ref`` (an object of ``key``, default this reconciler's kind);
        ``change(status, obj)`` edits ``status`` in place. No write when nothing changed."""
        def write(obj):
            status = obj.setdefault("status", {})
            before = json.dumps(status, sort_keys=True)
            change(status, obj)
            return json.dumps(status, sort_keys=True) != before
        resource = self.resource if key is None else self.cluster.resource_for_key(key)
        return self.cluster.mutate(resource, ref.namespace, ref.name, write, subresource="status")

    def reconcile(self, ref):
        if ref.key != self.key:
            return None
        obj = self.cluster.store.get(self.key, ref.namespace, ref.name)
        if obj is None:
            return self.deleted(ref)
        if obj["metadata"].get("deletionTimestamp"):
            return None
        if not self.running():
            return 5.0
        return self.sync(ref, obj)

    def deleted(self, ref):
        """The CR is gone (its dependents go with it through ownerReferences)."""
        return None

    def sync(self, ref, obj):
        raise NotImplementedError
