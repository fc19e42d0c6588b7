"""The built-in controllers of kubesim: :func:`default_registry` (``--disable-controller NAME`` turns
one off). Kubernetes' own (kube-controller-manager, scheduler, kubelet), OLM's, and one reconciler
per custom resource kind of the operators the toolbox drives.

A module of its own, not the package's ``__init__``: every controller module imports siblings of
the package (``controllers.util``, ``controllers.base``), and a package whose ``__init__`` imported
every controller would be an import cycle with each of them.
"""


from kubesim.controllers.base import ControllerRegistry
from kubesim.controllers.core import CRDController, GarbageCollector, NamespaceController
from kubesim.controllers.gateway import (GatewayClassController, GatewayController, HTTPRouteController,
                                         InferencePoolController)
from kubesim.controllers.jobs import JobController
from kubesim.controllers.knative import KnativeServiceController
from kubesim.controllers.kserve import InferenceServiceController, LLMInferenceServiceController
from kubesim.controllers.nfd import NodeFeatureDiscoveryController
from kubesim.controllers.nvidia import ClusterPolicyController
from kubesim.controllers.odh import DataScienceClusterController, DSCInitializationController
from kubesim.controllers.olm import (CatalogSourceController, ClusterServiceVersionController, InstallPlanController,
                                     OperatorGroupController, SubscriptionController)
from kubesim.controllers.openshift import (BuildConfigController, BuildController, ClusterVersionController,
                                          ImageStreamController, MachineConfigPoolController, MachineController,
                                          MachineSetController,
                                          OAuthController, RouteController, UserWorkloadMonitoringController)
from kubesim.controllers.operands import (AuthorinoReconciler, DemoAppReconciler, KnativeServingReconciler,
                                          KueueReconciler, ServiceMeshControlPlaneReconciler,
                                          ServiceMeshMemberRollReconciler)
from kubesim.controllers.csi import AWSEFSCSIDriverController
from kubesim.controllers.dspa import DSPAController
from kubesim.controllers.kfp import ArgoWorkflowController
from kubesim.controllers.pods import PodController
from kubesim.controllers.ray import RayClusterController, RayJobController
from kubesim.controllers.storage import VolumeBinder
from kubesim.controllers.tekton import PipelineRunController, TaskRunController
from kubesim.controllers.training import PyTorchJobController, TrainJobController
from kubesim.controllers.workloads import (DaemonSetController, DeploymentController, ReplicaSetController,
                                           StatefulSetController)

KUBERNETES = (NamespaceController, GarbageCollector, CRDController, PodController, ReplicaSetController,
              DeploymentController, StatefulSetController, DaemonSetController, JobController, VolumeBinder)
OLM = (CatalogSourceController, OperatorGroupController, SubscriptionController, InstallPlanController,
       ClusterServiceVersionController)
OPERATORS = (NodeFeatureDiscoveryController, ClusterPolicyController, DSCInitializationController,
             DataScienceClusterController, InferenceServiceController, LLMInferenceServiceController,
             GatewayClassController, GatewayController, HTTPRouteController, InferencePoolController,
             PyTorchJobController, TrainJobController, RayClusterController, RayJobController, DSPAController, ArgoWorkflowController,
             AWSEFSCSIDriverController, DemoAppReconciler, KueueReconciler,
             ServiceMeshControlPlaneReconciler, ServiceMeshMemberRollReconciler, KnativeServingReconciler,
             AuthorinoReconciler, PipelineRunController, TaskRunController, KnativeServiceController)
OPENSHIFT = (ClusterVersionController, MachineSetController, MachineController, BuildConfigController, BuildController,
             ImageStreamController, RouteController, OAuthController, UserWorkloadMonitoringController,
             MachineConfigPoolController)
BUILTIN = KUBERNETES + OLM + OPERATORS + OPENSHIFT


def default_registry():
    """A new registry with the built-in controllers (add yours with ``register``)."""
    return ControllerRegistry(BUILTIN)

