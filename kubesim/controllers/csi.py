"""The AWS EFS CSI driver operator: ClusterCSIDriver ``efs.csi.aws.com`` (operator.openshift.io/v1).

What the operator (openshift/csi-operator, the EFS driver's home since 4.17) does once OLM runs it
(its Deployment ``aws-efs-csi-driver-operator``) and the ClusterCSIDriver ``efs.csi.aws.com`` is
``Managed``:

- in the operator's own namespace (``openshift-cluster-csi-drivers`` when installed where its CSV
  suggests), the Deployment ``aws-efs-csi-driver-controller`` and the DaemonSet
  ``aws-efs-csi-driver-node``; the CSIDriver ``efs.csi.aws.com`` (attachRequired false, Persistent);
  the finalizers ``aws-efs-csi-driver-operator.operator.openshift.io/AWSEFSDriverControllerServiceController``
  and ``.../AWSEFSDriverNodeServiceController`` on the ClusterCSIDriver;
- status ``conditions`` per controller, as library-go writes them: ``AWSEFSDriverControllerServiceController``
  ``Available`` False ``Deploying`` "Waiting for Deployment" -> True ``AsExpected`` "Deployment is
  available", ``Progressing`` True ``Deploying`` "Waiting for Deployment to deploy pods" -> False
  ``AsExpected`` "Deployment is not progressing", ``Degraded`` False ``AsExpected``; the same for
  ``AWSEFSDriverNodeServiceController`` with the DaemonSet ("Waiting for the DaemonSet to deploy the
  CSI Node Service" / "DaemonSet is available"); ``ManagementStateDegraded`` False;
  ``AWSEFSCredentialsRequestController`` ``Available`` False / ``Progressing`` True
  ``CredentialsNotProvisionedYet`` for the first 20 simulated seconds (the cloud-credential operator
  provisioning the secret), then True/False and ``Degraded`` False, with ``ConfigObservationDegraded``
  and the control-plane and guest ``StaticResourcesControllerDegraded`` False;
  ``status.generations`` with the Deployment's and the DaemonSet's generations (no
  ``observedGeneration`` or ``readyReplicas``: the operator never writes them);
- a ClusterCSIDriver without a running operator gets no status at all.

Simplified: no CredentialsRequest object (kubesim has no cloud-credential operator: its conditions
follow a fixed delay), no config observer, ServiceMonitor, PDB or RBAC; ``Removed`` or a deletion deletes the
operands (and then the finalizers).

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``awsefscsidriver``: openshift/csi-operator @ f7f9dc59603d190abbcda1ae818f489c9dc2f167; files:
  pkg/driver/aws-efs/aws_efs.go, pkg/operator/starter.go,
  vendor/github.com/openshift/library-go/pkg/operator/deploymentcontroller/deployment_controller.go,
  vendor/github.com/openshift/library-go/pkg/operator/csi/csidrivernodeservicecontroller/csi_driver_node_service_controller.go.
"""

from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import condition_true, create_or_skip, delete_quietly, set_condition, since

CLUSTER_CSI_DRIVERS = ("operator.openshift.io", "clustercsidrivers")
DEPLOYMENTS = ("apps", "deployments")
DAEMONSETS = ("apps", "daemonsets")
CSI_DRIVERS = ("storage.k8s.io", "csidrivers")
DRIVER = "efs.csi.aws.com"
CREDENTIALS_PREFIX = "AWSEFSCredentialsRequestController"
CREDENTIALS_S = 20.0
OPERATOR = "aws-efs-csi-driver-operator"
CONTROLLER = "aws-efs-csi-driver-controller"
NODE = "aws-efs-csi-driver-node"
FINALIZERS = ["%s.operator.openshift.io/AWSEFSDriverControllerServiceController" % OPERATOR,
              "%s.operator.openshift.io/AWSEFSDriverNodeServiceController" % OPERATOR]


def driver_pod(app):
    """The pod template of the driver's controller or node service (its csi-driver container)."""
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{
        "name": "csi-driver", "image": "registry.redhat.io/openshift4/ose-aws-efs-csi-driver-rhel9:v4.19",
        "resources": {"requests": {"cpu": "10m", "memory": "50Mi"}}}]}}


class AWSEFSCSIDriverController(OperatorReconciler):
    name = "awsefscsidriver"
    key = CLUSTER_CSI_DRIVERS
    default_delay = 0.0
    extra_watches = (DEPLOYMENTS, DAEMONSETS)

    def related(self, event):
        name = event.obj["metadata"].get("name")
        if name not in (OPERATOR, CONTROLLER, NODE):
            return []
        return [r for r in self.all_refs() if r.name == DRIVER]

    def _operator_namespace(self):
        for deployment in self.cluster.store.list(DEPLOYMENTS)[0]:
            if deployment["metadata"]["name"] == OPERATOR and condition_true(deployment, "Available"):
                return deployment["metadata"]["namespace"]
        return None

    def reconcile(self, ref):
        driver = self.cluster.store.get(self.key, "", ref.name) if ref.key == self.key else None
        if driver is not None and driver["metadata"].get("deletionTimestamp") and ref.name == DRIVER:
            # deleted (Removable): the operands go, then the finalizers
            namespace = self._operator_namespace()
            if namespace is not None:
                delete_quietly(self.cluster, self.cluster.resource_for_key(DEPLOYMENTS), namespace, CONTROLLER)
                delete_quietly(self.cluster, self.cluster.resource_for_key(DAEMONSETS), namespace, NODE)

            def drop(obj):
                obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or [] if f not in FINALIZERS]
                return True
            self.cluster.mutate(self.resource, "", ref.name, drop)
            return None
        return super().reconcile(ref)

    def sync(self, ref, driver):
        if ref.name != DRIVER:
            return None   # the other drivers' operators are not modelled
        namespace = self._operator_namespace()
        if namespace is None:
            return 5.0    # no operator yet: nobody writes the status
        cluster = self.cluster
        if (driver.get("spec") or {}).get("managementState", "Managed") == "Removed":
            delete_quietly(cluster, cluster.resource_for_key(DEPLOYMENTS), namespace, CONTROLLER)
            delete_quietly(cluster, cluster.resource_for_key(DAEMONSETS), namespace, NODE)
            return None
        if not all(f in (driver["metadata"].get("finalizers") or []) for f in FINALIZERS):
            def add_finalizers(obj):
                current = obj["metadata"].setdefault("finalizers", [])
                current.extend(f for f in FINALIZERS if f not in current)
                return True
            cluster.mutate(self.resource, "", ref.name, add_finalizers)
        create_or_skip(cluster, cluster.resource_for_key(DEPLOYMENTS), {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": CONTROLLER, "namespace": namespace, "labels": {"app": CONTROLLER}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": CONTROLLER}}, "template": driver_pod(CONTROLLER)}},
            namespace)
        create_or_skip(cluster, cluster.resource_for_key(DAEMONSETS), {
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": NODE, "namespace": namespace, "labels": {"app": NODE}},
            "spec": {"selector": {"matchLabels": {"app": NODE}}, "template": driver_pod(NODE)}}, namespace)
        create_or_skip(cluster, cluster.resource_for_key(CSI_DRIVERS), {
            "apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": DRIVER},
            "spec": {"attachRequired": False, "podInfoOnMount": False, "volumeLifecycleModes": ["Persistent"]}})
        deployment = cluster.store.get(DEPLOYMENTS, namespace, CONTROLLER) or {}
        daemonset = cluster.store.get(DAEMONSETS, namespace, NODE) or {}
        deployment_available = int((deployment.get("status") or {}).get("availableReplicas") or 0) > 0
        node_available = int((daemonset.get("status") or {}).get("numberAvailable") or 0) > 0
        now = self.clock.timestamp()
        prefix = "AWSEFSDriverControllerServiceController"
        node_prefix = "AWSEFSDriverNodeServiceController"
        found = [("ManagementStateDegraded", "False", None, None)]
        # the CredentialsRequest controller: its secret comes from the cloud-credential operator (kubesim has none:
        # provisioned CREDENTIALS_S after the driver is managed); until then, only it and the operand
        # controllers report; then the config observer and the static resources controllers too
        credentials = CREDENTIALS_PREFIX
        if since(driver["metadata"].get("creationTimestamp"), self.clock) < CREDENTIALS_S:
            found += [(credentials + "Available", "False", "CredentialsNotProvisionedYet",
                       "Credentials not yet provisioned by cloud-credential-operator"),
                      (credentials + "Progressing", "True", "CredentialsNotProvisionedYet",
                       "Credentials not yet provisioned by cloud-credential-operator")]
            provisioned = False
        else:
            found += [("ConfigObservationDegraded", "False", None, None),
                      ("AWSEFSDriverControlPlaneStaticResourcesControllerDegraded", "False", "AsExpected", None),
                      ("AWSEFSDriverGuestStaticResourcesControllerDegraded", "False", "AsExpected", None),
                      (credentials + "Available", "True", None, None),
                      (credentials + "Progressing", "False", None, None),
                      (credentials + "Degraded", "False", "AsExpected", None)]
            provisioned = True
        if deployment_available:
            found += [(prefix + "Available", "True", "AsExpected", "Deployment is available"),
                      (prefix + "Progressing", "False", "AsExpected", "Deployment is not progressing")]
        else:
            found += [(prefix + "Available", "False", "Deploying", "Waiting for Deployment"),
                      (prefix + "Progressing", "True", "Deploying", "Waiting for Deployment to deploy pods")]
        found.append((prefix + "Degraded", "False", "AsExpected", None))
        if node_available:
            found += [(node_prefix + "Available", "True", "AsExpected", "DaemonSet is available"),
                      (node_prefix + "Progressing", "False", "AsExpected", "DaemonSet is not progressing")]
        else:
            found += [(node_prefix + "Available", "False", "Deploying",
                       "Waiting for the DaemonSet to deploy the CSI Node Service"),
                      (node_prefix + "Progressing", "True", "Deploying", "Waiting for DaemonSet to deploy node pods")]
        found.append((node_prefix + "Degraded", "False", "AsExpected", None))
        generations = [{"group": "apps", "resource": "deployments", "namespace": namespace, "name": CONTROLLER,
                        "lastGeneration": (deployment.get("metadata") or {}).get("generation", 1)},
                       {"group": "apps", "resource": "daemonsets", "namespace": namespace, "name": NODE,
                        "lastGeneration": (daemonset.get("metadata") or {}).get("generation", 1)}]

        def change(status, _obj):
            conditions = status.get("conditions") or []
            for ctype, value, reason, message in found:
                conditions = set_condition(conditions, ctype, value, reason, message, now)
            status["conditions"] = conditions
            status["generations"] = generations
        self.write_status(ref, change)
        if not provisioned:
            return max(0.1, CREDENTIALS_S - since(driver["metadata"].get("creationTimestamp"), self.clock))
        return None if deployment_available and node_available else 2.0
