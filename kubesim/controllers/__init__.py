"""Controllers of kubesim; :func:`default_registry` lists the built-in ones."""

from kubesim.controllers.base import Controller, ControllerRegistry, Event, Manager, Ref, ref_of
from kubesim.controllers.core import CRDController, GarbageCollector, NamespaceController
from kubesim.controllers.jobs import JobController
from kubesim.controllers.pods import PodController
from kubesim.controllers.storage import VolumeBinder
from kubesim.controllers.workloads import (DaemonSetController, DeploymentController, ReplicaSetController,
                                           StatefulSetController)

BUILTIN = (NamespaceController, GarbageCollector, CRDController, PodController, ReplicaSetController,
           DeploymentController, StatefulSetController, DaemonSetController, JobController, VolumeBinder)


def default_registry():
    """A new registry with the built-in controllers (add yours with ``register``)."""
    return ControllerRegistry(BUILTIN)


__all__ = ["Controller", "ControllerRegistry", "Event", "Manager", "Ref", "ref_of", "default_registry", "BUILTIN"]
