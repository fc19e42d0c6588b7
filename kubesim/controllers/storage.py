"""PersistentVolumeClaims: dynamic provisioning and binding (the PV controller + a provisioner, simplified).

A claim whose storage class exists (``spec.storageClassName``, else the class
annotated ``storageclass.kubernetes.io/is-default-class``) gets a PersistentVolume
``pvc-<claim uid>`` of the requested size and both are ``Bound``
(``pv.kubernetes.io/bind-completed``). A claim naming a missing class stays
``Pending`` with a ``ProvisioningFailed`` event, as the external provisioner reports it.
``WaitForFirstConsumer`` is treated like ``Immediate``. No data is stored anywhere.

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``persistentvolume-binder``: kubernetes/kubernetes @ 0097adc1c512c86eb48ecc8aaddbe1ce615086ae; files:
  pkg/controller/volume/persistentvolume/pv_controller.go.
"""

from kubesim.controllers.base import Controller
from kubesim.controllers.util import create_or_skip

PVCS = ("", "persistentvolumeclaims")
PVS = ("", "persistentvolumes")
CLASSES = ("storage.k8s.io", "storageclasses")


class VolumeBinder(Controller):
    name = "persistentvolume-binder"
    watches = (PVCS,)

    def _storage_class(self, claim):
        name = (claim.get("spec") or {}).get("storageClassName")
        if name is not None:
            return name, self.cluster.store.get(CLASSES, "", name) if name else None
        for sc in self.cluster.store.list(CLASSES)[0]:
            if (sc["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class") == "true":
                return sc["metadata"]["name"], sc
        return None, None

    def reconcile(self, ref):
        cluster = self.cluster
        claim = cluster.store.get(PVCS, ref.namespace, ref.name)
        if claim is None or claim["metadata"].get("deletionTimestamp"):
            return None
        if (claim.get("status") or {}).get("phase") == "Bound":
            return None
        class_name, storage_class = self._storage_class(claim)
        if storage_class is None:
            if class_name:
                cluster.record_event(claim, "ProvisioningFailed", 'storageclass.storage.k8s.io "%s" not found'
                                     % class_name, "Warning", "persistentvolume-controller")
            cluster.mutate(cluster.resource_for_key(PVCS), ref.namespace, ref.name,
                           lambda obj: obj.setdefault("status", {}).update(phase="Pending"), subresource="status")
            return None
        spec = claim.get("spec") or {}
        size = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        modes = spec.get("accessModes") or ["ReadWriteOnce"]
        volume_name = spec.get("volumeName") or "pvc-" + claim["metadata"]["uid"]
        create_or_skip(cluster, cluster.resource_for_key(PVS), {
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": volume_name, "annotations": {"pv.kubernetes.io/provisioned-by": storage_class.get(
                "provisioner", "kubesim")}},
            "spec": {"capacity": {"storage": size}, "accessModes": modes,
                     "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy", "Delete"),
                     "storageClassName": class_name, "volumeMode": spec.get("volumeMode", "Filesystem"),
                     "hostPath": {"path": "/var/lib/kubesim/volumes/" + volume_name},
                     "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": ref.namespace,
                                  "name": ref.name, "uid": claim["metadata"]["uid"]}}})
        cluster.mutate(cluster.resource_for_key(PVS), "", volume_name,
                       lambda obj: obj.setdefault("status", {}).update(phase="Bound"), subresource="status")

        def bind(obj):
            obj["spec"]["volumeName"] = volume_name
            obj["spec"].setdefault("storageClassName", class_name)
            obj["metadata"].setdefault("annotations", {}).update({"pv.kubernetes.io/bind-completed": "yes",
                                                                  "pv.kubernetes.io/bound-by-controller": "yes"})
        cluster.mutate(cluster.resource_for_key(PVCS), ref.namespace, ref.name, bind)
        cluster.mutate(cluster.resource_for_key(PVCS), ref.namespace, ref.name,
                       lambda obj: obj.setdefault("status", {}).update(phase="Bound", accessModes=modes,
                                                                       capacity={"storage": size}),
                       subresource="status")
        cluster.record_event(claim, "ProvisioningSucceeded", "Successfully provisioned volume %s" % volume_name,
                             component="persistentvolume-controller")
        return None
