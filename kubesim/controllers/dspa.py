"""Data Science Pipelines: DataSciencePipelinesApplication (datasciencepipelinesapplications.opendatahub.io/v1).

As the Data Science Pipelines Operator (the RHOAI ``datasciencepipelines`` component) reconciles a DSPA
named NAME (controllers/dspipeline_controller.go, controllers/dspastatus/dspa_status.go):

- the database and the object store first: ``mariadb-NAME`` (``database.mariaDB``, deployed by
  default; Secret ``ds-pipeline-db-NAME``) and ``minio-NAME`` (``objectStorage.minio.deploy``; Secret
  ``ds-pipeline-s3-NAME``), each with its Service; then their health checks (``SELECT 1``, a stat of
  the bucket) on every reconcile: while one fails (its Deployment not Available yet),
  ``DatabaseAvailable`` / ``ObjectStoreAvailable`` are False ``FailingToDeploy`` with the connection
  error, nothing else is deployed and the operator looks again 20 s later;
- then the API server ``ds-pipeline-NAME`` (Service ``ds-pipeline-NAME`` and ``ml-pipeline``: proxy
  8443, http 8888, grpc 8887; Route ``ds-pipeline-NAME``, reencrypt, with ``apiServer.enableOauth``),
  ``ds-pipeline-persistenceagent-NAME``, ``ds-pipeline-scheduledworkflow-NAME``,
  ``ds-pipeline-workflow-controller-NAME`` and, last, MLMD (``ds-pipeline-metadata-grpc-NAME``,
  ``ds-pipeline-metadata-envoy-NAME``), which waits once for the service-ca to create the secret
  ``ds-pipeline-metadata-grpc-tls-certs-NAME`` (``MLMDProxyReady`` False ``FailingToDeploy`` "secret
  containing the certificate for MLMD gRPC Server was not created yet"); every object labelled
  ``component: data-science-pipelines``, ``dspa: NAME``, ``dsp-version: v2``;
- status: always the ten conditions in upstream's order - ``DatabaseAvailable``,
  ``ObjectStoreAvailable``, ``APIServerReady``, ``PersistenceAgentReady``, ``ScheduledWorkflowReady``,
  ``WorkflowControllerReady``, ``MLMDProxyReady``, ``WebhookReady``, ``ManagedPipelineValid``,
  ``Ready`` - rebuilt on every reconcile (``Unknown`` where the reconcile did not reach); a
  Deployment's condition ``Deploying`` "Component [x] is deploying." until it is Available, then
  True ``MinimumReplicasAvailable`` "Component [x] is minimally available."; ``MLMDProxyReady``
  evaluates the scheduledworkflow Deployment (upstream's prefix constant, kept); ``WebhookReady`` and
  ``ManagedPipelineValid`` False ``NotApplicable``, which do not block ``Ready``; ``Ready`` True
  "All components are ready." or False, reason ``MinimumReplicasAvailable`` all the same, the
  blocking messages each followed by " \\n"; ``components.apiServer`` (``url``
  ``https://ds-pipeline-NAME.NS.svc.cluster.local:8443``, ``externalUrl`` the Route's host) once the
  Service and the Route exist;
- failures: a ``dspVersion`` other than v2 (every condition False ``UnsupportedVersion``, never
  retried), no ``objectStorage.minio`` nor ``externalStorage``, ``mlmd.deploy: false``, a missing
  S3 credentials Secret of ``externalStorage``: ``APIServerReady`` and ``Ready`` False
  ``FailingToDeploy`` with upstream's message, retried every 20 s.

Simplified: no finalizer or ClusterRoleBinding, no NetworkPolicies, RBAC, ConfigMaps or PVCs, no
webhook, no managed pipelines, no KFP API served (a pipeline run needs Argo Workflows).

Upstream sources (kubesim/upstream.py, docs/kubesim.md):
- ``dspa``: opendatahub-io/data-science-pipelines-operator @ 5e01e73f08558c70f5bcf899c540cf3dc1bd8322;
  files: controllers/dspipeline_controller.go, controllers/dspastatus/dspa_status.go,
  controllers/dspipeline_params.go, controllers/database.go, controllers/storage.go, controllers/mlmd.go,
  config/internal/apiserver/default/service.yaml.tmpl.
"""

from kubesim.controllers.operators import OperatorReconciler
from kubesim.controllers.util import condition_true, create_or_skip, owner_reference, set_condition

DSPAS = ("datasciencepipelinesapplications.opendatahub.io", "datasciencepipelinesapplications")
DEPLOYMENTS = ("apps", "deployments")
SERVICES = ("", "services")
SECRETS = ("", "secrets")
ROUTES = ("route.openshift.io", "routes")
RETRY_S = 20.0
CONDITIONS = ("DatabaseAvailable", "ObjectStoreAvailable", "APIServerReady", "PersistenceAgentReady",
              "ScheduledWorkflowReady", "WorkflowControllerReady", "MLMDProxyReady", "WebhookReady",
              "ManagedPipelineValid", "Ready")
NOT_BLOCKING = ("NotApplicable", "ManagedPipelinesFetchError")
# each component's condition and the Deployment prefix it evaluates (MLMD: the scheduledworkflow's, upstream's)
COMPONENTS = (("APIServerReady", "ds-pipeline-"), ("PersistenceAgentReady", "ds-pipeline-persistenceagent-"),
              ("ScheduledWorkflowReady", "ds-pipeline-scheduledworkflow-"),
              ("WorkflowControllerReady", "ds-pipeline-workflow-controller-"),
              ("MLMDProxyReady", "ds-pipeline-scheduledworkflow-"))


class DSPAController(OperatorReconciler):
    name = "dspa"
    key = DSPAS
    default_delay = 0.0
    extra_watches = (DEPLOYMENTS,)
    transients = {"dspa-mlmd-tls-secret": "MLMD waits once for the service-ca's TLS secret (FailingToDeploy)"}

    def related(self, event):
        labels = event.obj["metadata"].get("labels") or {}
        if labels.get("component") != "data-science-pipelines" or not labels.get("dspa"):
            return []
        return [r for r in self.all_refs(event.obj["metadata"]["namespace"]) if r.name == labels["dspa"]]

    # -- objects
    def _labels(self, name, app):
        return {"app": app, "component": "data-science-pipelines", "dspa": name, "dsp-version": "v2"}

    def _deployment(self, dspa, app, container, ports):
        meta = dspa["metadata"]
        labels = self._labels(meta["name"], app)
        create_or_skip(self.cluster, self.cluster.resource_for_key(DEPLOYMENTS), {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": app, "namespace": meta["namespace"], "labels": labels,
                         "ownerReferences": [owner_reference(dspa)]},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": app, "component": "data-science-pipelines"}},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                         "name": container, "image": "quay.io/opendatahub/%s:latest" % container,
                         "ports": [{"name": n, "containerPort": p} for n, p in ports],
                         "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}}}]}}}}, meta["namespace"])

    def _service(self, dspa, name, app, ports, annotations=None):
        meta = dspa["metadata"]
        body = {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": meta["namespace"], "labels": self._labels(meta["name"], app),
                             "ownerReferences": [owner_reference(dspa)]},
                "spec": {"selector": {"app": app, "component": "data-science-pipelines"},
                         "ports": [{"name": n, "port": p, "targetPort": p} for n, p in ports]}}
        if annotations:
            body["metadata"]["annotations"] = annotations
        create_or_skip(self.cluster, self.cluster.resource_for_key(SERVICES), body, meta["namespace"])

    def _secret(self, dspa, name, app, data):
        meta = dspa["metadata"]
        create_or_skip(self.cluster, self.cluster.resource_for_key(SECRETS), {
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": name, "namespace": meta["namespace"], "labels": self._labels(meta["name"], app),
                         "ownerReferences": [owner_reference(dspa)]},
            "stringData": data}, meta["namespace"])

    def _get(self, key, namespace, name):
        return self.cluster.store.get(key, namespace, name)

    # -- conditions
    def _evaluate(self, namespace, deployment_name):
        deployment = self._get(DEPLOYMENTS, namespace, deployment_name)
        if deployment is None:
            return ("False", "ComponentDeploymentNotFound", 'Deployment for component "%s" is missing - pre-requisite '
                    'component may not yet be available.' % deployment_name)
        if int((deployment.get("spec") or {}).get("replicas", 1)) == 0:
            return ("False", "MinimumReplicasAvailable", 'Deployment for component "%s" is scaled down.'
                    % deployment_name)
        if condition_true(deployment, "Available"):
            return ("True", "MinimumReplicasAvailable", "Component [%s] is minimally available." % deployment_name)
        return ("False", "Deploying", "Component [%s] is deploying." % deployment_name)

    def _params_error(self, dspa):
        spec = dspa.get("spec") or {}
        storage = spec.get("objectStorage") or {}
        if not storage.get("minio") and not storage.get("externalStorage"):
            return ("either [spec.objectStorage.minio] or [spec.objectStorage.externalStorage] need to be specified "
                    "in DSPA spec")
        if (spec.get("mlmd") or {}).get("deploy") is False:
            return "MLMD explicitly disabled in DSPA, but is a required component for DSP"
        external = storage.get("externalStorage") or {}
        secret_ref = external.get("s3CredentialsSecret") or {}
        if external and secret_ref.get("secretName"):
            secret = self._get(SECRETS, dspa["metadata"]["namespace"], secret_ref["secretName"])
            if secret is None:
                return ("object storage password from secret [%s] for keys [%s, %s] was not successfully retrieved, "
                        "ensure that the secret with this key exist" % (secret_ref["secretName"],
                                                                        secret_ref.get("accessKey"),
                                                                        secret_ref.get("secretKey")))
        return None

    def sync(self, ref, dspa):
        spec = dspa.get("spec") or {}
        namespace, name = ref.namespace, ref.name
        found = {ctype: ("Unknown", "Unknown", "") for ctype in CONDITIONS}
        override = None
        requeue = None
        version = spec.get("dspVersion") or "v2"
        if version != "v2":
            message = ("unsupported DSP version %s detected. Please manually remove this DSP resource and re-apply with "
                       "a supported version field set" % version)
            for ctype in ("DatabaseAvailable", "ObjectStoreAvailable", "APIServerReady", "PersistenceAgentReady",
                          "ScheduledWorkflowReady", "MLMDProxyReady"):
                found[ctype] = ("False", "UnsupportedVersion", message)
            override = ("False", "UnsupportedVersion", message)
            return self._write(ref, dspa, found, override)
        error = self._params_error(dspa)
        if error:
            found["APIServerReady"] = ("False", "FailingToDeploy", error)
            override = ("False", "FailingToDeploy", error)
            self._write(ref, dspa, found, override)
            return RETRY_S
        database = spec.get("database") or {}
        storage = spec.get("objectStorage") or {}
        deploy_db = not database.get("externalDB") and (database.get("mariaDB") or {}).get("deploy", True)
        deploy_minio = bool(storage.get("minio")) and not storage.get("externalStorage") and \
            (storage.get("minio") or {}).get("deploy", True)
        if deploy_db:
            self._secret(dspa, "ds-pipeline-db-%s" % name, "mariadb-%s" % name, {"password": "kubesim-db-pass"})
            self._deployment(dspa, "mariadb-%s" % name, "mariadb", [("mariadb", 3306)])
            self._service(dspa, "mariadb-%s" % name, "mariadb-%s" % name, [("mariadb", 3306)])
        if deploy_minio:
            self._secret(dspa, "ds-pipeline-s3-%s" % name, "minio-%s" % name,
                         {"accesskey": "kubesimaccesskey", "secretkey": "kubesim-secret-key-0123456",
                          "host": "minio-%s.%s.svc.cluster.local" % (name, namespace), "port": "9000", "secure": "false"})
            self._deployment(dspa, "minio-%s" % name, "minio", [("http", 9000)])
            self._service(dspa, "minio-%s" % name, "minio-%s" % name, [("http", 9000), ("kfp-ui-http", 80)])
        healthy = True
        if deploy_db and not condition_true(self._get(DEPLOYMENTS, namespace, "mariadb-%s" % name) or {}, "Available"):
            found["DatabaseAvailable"] = ("False", "FailingToDeploy", "dial tcp mariadb-%s.%s.svc.cluster.local:3306: "
                                          "connect: connection refused" % (name, namespace))
            healthy = False
        else:
            found["DatabaseAvailable"] = ("True", "DatabaseAvailable", "Database connectivity successfully verified")
        if deploy_minio and not condition_true(self._get(DEPLOYMENTS, namespace, "minio-%s" % name) or {}, "Available"):
            found["ObjectStoreAvailable"] = ("False", "FailingToDeploy", "Could not connect to (minio-%s.%s.svc.cluster"
                                             ".local:9000), Error: connection refused" % (name, namespace))
            healthy = False
        else:
            found["ObjectStoreAvailable"] = ("True", "ObjectStoreAvailable",
                                             "Object Store connectivity successfully verified")
        if not healthy:
            # "Health check for Database or Object Store failed, retrying in 20 seconds."
            self._write(ref, dspa, found)
            return RETRY_S
        found["WebhookReady"] = ("False", "NotApplicable",
                                 "Webhook deployment not applicable for pipeline storage other than 'kubernetes'")
        found["ManagedPipelineValid"] = ("False", "NotApplicable",
                                         "Managed pipelines not configured or no explicit pipeline list")
        api_ports = [("proxy", 8443), ("http", 8888), ("grpc", 8887)]
        self._deployment(dspa, "ds-pipeline-%s" % name, "ds-pipeline-api-server", [("http", 8888), ("grpc", 8887)])
        for service in ("ds-pipeline-%s" % name, "ml-pipeline"):
            self._service(dspa, service, "ds-pipeline-%s" % name, api_ports,
                          {"service.beta.openshift.io/serving-cert-secret-name": "ds-pipelines-proxy-tls-%s" % name})
        oauth = (spec.get("apiServer") or {}).get("enableOauth", True)
        if oauth and self.cluster.resource_for_key(ROUTES) is not None:
            create_or_skip(self.cluster, self.cluster.resource_for_key(ROUTES), {
                "apiVersion": "route.openshift.io/v1", "kind": "Route",
                "metadata": {"name": "ds-pipeline-%s" % name, "namespace": namespace,
                             "labels": self._labels(name, "ds-pipeline-%s" % name),
                             "annotations": {"kubernetes.io/tls-acme": "true"},
                             "ownerReferences": [owner_reference(dspa)]},
                "spec": {"to": {"kind": "Service", "name": "ds-pipeline-%s" % name}, "port": {"targetPort": "proxy"},
                         "tls": {"termination": "reencrypt", "insecureEdgeTerminationPolicy": "Redirect"}}}, namespace)
        for app, container in (("ds-pipeline-persistenceagent-%s", "ds-pipeline-persistenceagent"),
                               ("ds-pipeline-scheduledworkflow-%s", "ds-pipeline-scheduledworkflow"),
                               ("ds-pipeline-workflow-controller-%s", "ds-pipeline-workflow-controller")):
            self._deployment(dspa, app % name, container, [])
        for ctype, prefix in COMPONENTS[:4]:
            found[ctype] = self._evaluate(namespace, prefix + name)
        tls_secret = "ds-pipeline-metadata-grpc-tls-certs-%s" % name
        self._service(dspa, "ds-pipeline-metadata-grpc-%s" % name, "ds-pipeline-metadata-grpc-%s" % name,
                      [("grpc-api", 8080)], {"service.beta.openshift.io/serving-cert-secret-name": tls_secret})
        if self._get(SECRETS, namespace, tls_secret) is None:
            # the service-ca answers the Service's annotation a moment later
            self._secret(dspa, tls_secret, "ds-pipeline-metadata-grpc-%s" % name,
                         {"tls.crt": "kubesim-cert", "tls.key": "kubesim-key"})
            if self.transient("dspa-mlmd-tls-secret"):
                found["MLMDProxyReady"] = ("False", "FailingToDeploy", "secret containing the certificate for MLMD gRPC "
                                           "Server was not created yet")
                self._write(ref, dspa, found)
                return 1.0
        self._deployment(dspa, "ds-pipeline-metadata-grpc-%s" % name, "ds-pipeline-metadata-grpc", [("grpc-api", 8080)])
        self._deployment(dspa, "ds-pipeline-metadata-envoy-%s" % name, "ds-pipeline-metadata-envoy",
                         [("md-envoy", 9090)])
        found["MLMDProxyReady"] = self._evaluate(namespace, COMPONENTS[4][1] + name)
        self._write(ref, dspa, found)
        return requeue

    def _components(self, dspa):
        namespace, name = dspa["metadata"]["namespace"], dspa["metadata"]["name"]
        service = self._get(SERVICES, namespace, "ds-pipeline-%s" % name)
        route = self._get(ROUTES, namespace, "ds-pipeline-%s" % name) if self.cluster.resource_for_key(ROUTES) else None
        host = ((route or {}).get("spec") or {}).get("host") or (((route or {}).get("status") or {}).get("ingress")
                                                                 or [{}])[0].get("host")
        if service is None or route is None or not host:
            return {"apiServer": {}, "mlmdProxy": {}}
        return {"apiServer": {"url": "https://ds-pipeline-%s.%s.svc.cluster.local:8443" % (name, namespace),
                              "externalUrl": "https://%s" % host}, "mlmdProxy": {}}

    def _write(self, ref, dspa, found, override=None):
        now = self.clock.timestamp()
        generation = dspa["metadata"].get("generation", 1)
        if override is None:
            blocking = [found[c] for c in CONDITIONS[:-1]
                        if found[c][0] != "True" and found[c][1] not in NOT_BLOCKING]
            if blocking:
                found["Ready"] = ("False", "MinimumReplicasAvailable", "".join(m + " \n" for _s, _r, m in blocking))
            else:
                found["Ready"] = ("True", "MinimumReplicasAvailable", "All components are ready.")
        else:
            found["Ready"] = override
        components = self._components(dspa)

        def change(status, _obj):
            previous = status.get("conditions") or []
            conditions = []
            for ctype in CONDITIONS:
                value, reason, message = found[ctype]
                kept = [c for c in previous if c.get("type") == ctype]
                conditions += set_condition(kept, ctype, value, reason, message, now, observedGeneration=generation)
            status["conditions"] = conditions
            status["components"] = components
        self.write_status(ref, change)
        return None
