"""Where each kubesim controller comes from: the upstream repository, the commit read, the files modelled.

kubesim is a model of other people's controllers: every controller of
:data:`kubesim.controllers.BUILTIN` has an entry here, its module docstring names
the same commit, and docs/kubesim.md ("Upstream sources") has a row for it
(tests/kubesim/test_upstream_sources.py holds the three together). The status
objects those upstream projects write are in tests/fixtures/upstream/, where the
roles' waits are held against them.

An entry is ``(repository, commit, files)``; ``repository`` None marks a
controller with no upstream (kubesim's own test operator).
"""

import collections

Source = collections.namedtuple("Source", "repository commit files")

K8S = "https://github.com/kubernetes/kubernetes"
OLM = "https://github.com/operator-framework/operator-lifecycle-manager"
OLM_COMMIT = "992bb097749e5994eedc5e4882583df952d8a70e"
GATEWAY_API = "https://github.com/kubernetes-sigs/gateway-api"
GATEWAY_API_COMMIT = "4564255ac2c35d582249b3cdf261bdf51c8bca32"
KSERVE = "https://github.com/kserve/kserve"
KSERVE_COMMIT = "aaac4e294dae2c7b1aa1886447793f3aa1c30912"
ODH = "https://github.com/opendatahub-io/opendatahub-operator"
ODH_COMMIT = "6d30a3241082501fd5b930408906eaeb62f99d59"
TEKTON = "https://github.com/tektoncd/pipeline"
TEKTON_COMMIT = "3ee1745ae5b2d9175b11917d7c1935eaad44910c"
MAO = "https://github.com/openshift/machine-api-operator"
MAO_COMMIT = "951196122fe4f1115782da6c14660116905029c4"
KUBERAY = "https://github.com/ray-project/kuberay"
KUBERAY_COMMIT = "feeaf72facab4881ba2b179248bb67315634e229"
OCM = "https://github.com/openshift/openshift-controller-manager"
OCM_COMMIT = "26d20feae8892f648f5b06ed3f5492fe6ffb4532"

SOURCES = {
    # Kubernetes (each file at the commit it was read at)
    "namespace": Source(K8S, "023feb4a622fb6828dad0c1af0a0770746a37ee4",
                        "pkg/controller/namespace/deletion/namespaced_resources_deleter.go"),
    "garbage-collector": Source(K8S, "cb6ff2d8ce3595f88570f82c7d0e6d98910afd3c",
                                "pkg/controller/garbagecollector/garbagecollector.go"),
    "crd": Source(K8S, "ccb4acda6ab11289fb8ba4f9753b8df692398781",
                  "staging/src/k8s.io/apiextensions-apiserver/pkg/controller/establish/establishing_controller.go"),
    "pods": Source(K8S, "00a3928bde544dbb4fd046bb78439178ec37fb5a",
                   "pkg/kubelet/images/image_manager.go, pkg/kubelet/images/types.go, pkg/kubelet/status/generate.go, "
                   "pkg/scheduler/framework/types.go (FitError)"),
    "replicaset": Source(K8S, "3e4a7900d75552087b6d82edb80ac44be8f71d67", "pkg/controller/replicaset/replica_set.go"),
    "deployment": Source(K8S, "008b3652959ca58af8be3fb5b6ecfe9ae7638282",
                         "pkg/controller/deployment/progress.go, pkg/controller/deployment/sync.go"),
    "statefulset": Source(K8S, "d232dfe7989b8bfe230d9b313938b6417bdcab09",
                          "pkg/controller/statefulset/stateful_set_status_updater.go"),
    "daemonset": Source(K8S, "d826f92a2f903298ea56d9a893395deaba71c89e", "pkg/controller/daemon/daemon_controller.go"),
    "job": Source(K8S, "6ae037f1db843e99547258d7dd292301a74ba0eb", "pkg/controller/job/job_controller.go"),
    "persistentvolume-binder": Source(K8S, "0097adc1c512c86eb48ecc8aaddbe1ce615086ae",
                                      "pkg/controller/volume/persistentvolume/pv_controller.go"),
    # OLM
    "catalogsource": Source(OLM, OLM_COMMIT, "pkg/controller/operators/catalog/operator.go (syncCatalogSources), "
                                             "pkg/controller/registry/grpc/source.go, "
                                             "pkg/controller/registry/reconciler/grpc.go"),
    "operatorgroup": Source(OLM, OLM_COMMIT, "pkg/controller/operators/olm/operatorgroup.go"),
    "subscription": Source(OLM, OLM_COMMIT, "pkg/controller/operators/catalog/operator.go (syncResolvingNamespace), "
                                            "pkg/controller/operators/catalog/subscription/state.go"),
    "installplan": Source(OLM, OLM_COMMIT, "pkg/controller/operators/catalog/operator.go (syncInstallPlans)"),
    "clusterserviceversion": Source(OLM, OLM_COMMIT, "pkg/controller/operators/olm/operator.go (transitionCSVState), "
                                                     "pkg/controller/install/errors.go"),
    # the operators the toolbox drives
    "nodefeaturediscovery": Source("https://github.com/openshift/cluster-nfd-operator",
                                   "0e25cc101cfcb83719d64deef8184b320100c3c6",
                                   "internal/controllers/nodefeaturediscovery_reconciler.go, internal/status/status.go"),
    "clusterpolicy": Source("https://github.com/NVIDIA/gpu-operator", "a22dbf671f2e26f9a1e342f8eea28e196235e110",
                            "controllers/clusterpolicy_controller.go, controllers/state_manager.go, "
                            "controllers/nodelabeling_controller.go, controllers/object_controls.go, "
                            "internal/conditions/clusterpolicy.go; MIG: NVIDIA/k8s-device-plugin @ "
                            "1b826acc6af3079d8923bac395c3124b8861a9a6 internal/lm/mig-strategy.go, "
                            "internal/lm/resource.go, internal/rm/nvml_manager.go; NVIDIA/mig-parted @ "
                            "bd7160f43f16462eeb21e1eda5e67b5b6b03fd7d deployments/systemd/config-default.yaml, "
                            "pkg/mig/reconfigure/reconfigure.go"),
    "dscinitialization": Source(ODH, ODH_COMMIT,
                                "internal/controller/dscinitialization/dscinitialization_controller.go, "
                                "internal/controller/dscinitialization/servicemesh.go, "
                                "internal/controller/services/servicemesh/servicemesh_controller_actions.go, "
                                "pkg/upgrade/upgrade.go"),
    "datasciencecluster": Source(ODH, ODH_COMMIT,
                                 "internal/controller/datasciencecluster/datasciencecluster_controller.go, "
                                 "internal/controller/datasciencecluster/datasciencecluster_controller_support.go, "
                                 "internal/controller/components/kserve/kserve_controller_actions.go, "
                                 "internal/controller/components/modelcontroller, "
                                 "pkg/controller/reconciler/reconciler.go, pkg/controller/conditions/conditions.go"),
    "inferenceservice": Source(KSERVE, KSERVE_COMMIT, "pkg/controller/v1beta1/inferenceservice/controller.go, "
                                                      "pkg/apis/serving/v1beta1/inference_service_status.go, "
                                                      "pkg/controller/v1beta1/inferenceservice/components/"
                                                      "predictor.go, "
                                                      "pkg/controller/v1beta1/inferenceservice/reconcilers/ingress/"
                                                      "kube_ingress_reconciler.go, ingress_reconciler.go"),
    "knativeservice": Source("https://github.com/knative/serving", "69aa052f143657969e5f0d7e0902088da6f22566",
                             "pkg/apis/serving/v1/service_lifecycle.go, configuration_lifecycle.go, "
                             "revision_lifecycle.go, route_lifecycle.go, pkg/reconciler/service/service.go, "
                             "pkg/reconciler/configuration/configuration.go, "
                             "pkg/reconciler/revision/reconcile_resources.go, pkg/reconciler/route/traffic/errors.go"),
    "llminferenceservice": Source(KSERVE, KSERVE_COMMIT, "pkg/controller/v1alpha2/llmisvc/controller.go, router.go, "
                                                         "pkg/apis/serving/v1alpha2/llm_inference_service_lifecycle.go"),
    "gatewayclass": Source(GATEWAY_API, GATEWAY_API_COMMIT, "apis/v1/gatewayclass_types.go, geps/gep-2162/index.md "
                                                            "(only the profile's controllerNames are answered)"),
    "gateway": Source(GATEWAY_API, GATEWAY_API_COMMIT, "apis/v1/gateway_types.go, conformance/tests"),
    "httproute": Source(GATEWAY_API, GATEWAY_API_COMMIT, "apis/v1/shared_types.go, apis/v1/httproute_types.go"),
    "inferencepool": Source("https://github.com/kubernetes-sigs/gateway-api-inference-extension",
                            "84436a96b9e6ce2b59ddacd3d04c31b4fbd442de", "api/v1/inferencepool_types.go, conformance/tests"),
    "pytorchjob": Source("https://github.com/kubeflow/trainer", "3a3a1da8d5287f9f96e1b2d3be6a4b6ad756566d",
                         "pkg/controller.v1/common/job.go, pkg/controller.v1/pytorch/pytorchjob_controller.go, "
                         "pkg/util/status.go (branch release-1.9, the training-operator v1 line)"),
    "raycluster": Source(KUBERAY, KUBERAY_COMMIT, "ray-operator/controllers/ray/raycluster_controller.go, "
                                                  "ray-operator/controllers/ray/common/pod.go, "
                                                  "ray-operator/controllers/ray/common/service.go, "
                                                  "ray-operator/apis/ray/v1/raycluster_types.go"),
    "rayjob": Source(KUBERAY, KUBERAY_COMMIT, "ray-operator/controllers/ray/rayjob_controller.go, "
                                              "ray-operator/controllers/ray/common/job.go, "
                                              "ray-operator/apis/ray/v1/rayjob_types.go"),
    "dspa": Source("https://github.com/opendatahub-io/data-science-pipelines-operator",
                   "5e01e73f08558c70f5bcf899c540cf3dc1bd8322",
                   "controllers/dspipeline_controller.go, controllers/dspastatus/dspa_status.go, "
                   "controllers/dspipeline_params.go, controllers/database.go, controllers/storage.go, controllers/mlmd.go"),
    "argo-workflow": Source("https://github.com/kubeflow/pipelines", "7b70c7b95f6832772efd6fd0029a4024491a0f44",
                            "backend/api/v2beta1/run.proto, backend/api/v2beta1/pipeline.proto, "
                            "backend/api/v2beta1/experiment.proto, backend/src/apiserver/resource/resource_manager.go, "
                            "backend/src/v2/compiler/argocompiler/argo.go, "
                            "backend/src/agent/persistence/worker/workflow_saver.go"),
    "awsefscsidriver": Source("https://github.com/openshift/csi-operator", "f7f9dc59603d190abbcda1ae818f489c9dc2f167",
                              "pkg/driver/aws-efs/aws_efs.go, pkg/operator/starter.go, vendor/github.com/openshift/"
                              "library-go/pkg/operator/deploymentcontroller/deployment_controller.go, "
                              "vendor/github.com/openshift/library-go/pkg/operator/csi/csidrivernodeservicecontroller"),
    "trainjob": Source("https://github.com/kubeflow/trainer", "8c0f5059bd51ec3ba6d6a6a7b2e1471de7bc13b3",
                       "pkg/controller/trainjob_controller.go, pkg/runtime/framework/plugins/jobset"),
    "tekton-pipelinerun": Source(TEKTON, TEKTON_COMMIT, "pkg/reconciler/pipelinerun/pipelinerun.go, timeout.go, "
                                                        "pkg/reconciler/pipelinerun/resources/pipelinerunstate.go, "
                                                        "pkg/apis/pipeline/v1/pipelinerun_defaults.go, "
                                                        "pipelinerun_validation.go, config/config-defaults.yaml"),
    "tekton-taskrun": Source(TEKTON, TEKTON_COMMIT, "pkg/reconciler/taskrun/taskrun.go, pkg/pod/status.go, "
                                                    "pkg/apis/pipeline/v1/taskrun_defaults.go"),
    "demoapp": Source(None, None, "kubesim's own test operator (the demo-operator catalog package): no upstream"),
    "kueue": Source("https://github.com/openshift/kueue-operator", "dc3b65774c4536465086f076f8b4b2d78326f890",
                    "pkg/operator/target_config_reconciler.go"),
    "servicemeshcontrolplane": Source("https://github.com/maistra/istio-operator", "8143614c5f13ef9b894d107d47353507b70f45ea",
                                      "pkg/controller/servicemesh/controlplane/reconciler.go, readiness.go "
                                      "(branch maistra-2.5)"),
    "servicemeshmemberroll": Source("https://github.com/maistra/istio-operator", "8143614c5f13ef9b894d107d47353507b70f45ea",
                                    "pkg/controller/servicemesh/memberroll/controller.go (branch maistra-2.5)"),
    "knativeserving": Source("https://github.com/knative/operator", "b4f2c2549cd01859c393b3d01f1df8f35bb22638",
                             "pkg/reconciler/knativeserving/knativeserving.go, "
                             "pkg/apis/operator/v1beta1/knativeserving_lifecycle.go"),
    "authorino": Source("https://github.com/Kuadrant/authorino-operator", "9650cce26bcab3a545ef39c01e91110211b01257",
                        "controllers/authorino_controller.go, pkg/reconcilers/authorino_reconciler.go"),
    # OpenShift
    "clusterversion": Source("https://github.com/openshift/cluster-version-operator",
                             "6e719331fb5863141397f35b1f47bed42148a6dd", "pkg/cvo/status.go, pkg/cvo/sync_worker.go"),
    "machineset": Source(MAO, MAO_COMMIT, "pkg/controller/machineset/controller.go, status.go"),
    "machine": Source(MAO, MAO_COMMIT, "pkg/controller/machine/controller.go"),
    "buildconfig": Source(OCM, OCM_COMMIT, "pkg/build/controller/buildconfig/buildconfig_controller.go"),
    "build": Source(OCM, OCM_COMMIT, "pkg/build/controller/build/build_controller.go"),
    "imagestream": Source("https://github.com/openshift/openshift-apiserver", "56aa2d96edd725e44ddd7ff13f23e53e6c509828",
                          "pkg/image/apiserver/registry/imagestream"),
    "route": Source("https://github.com/openshift/router", "4b401a86dccc657a8a5254c2794a312241f40e87",
                    "pkg/router/controller/status.go"),
    "oauth": Source("https://github.com/openshift/cluster-authentication-operator",
                    "f3df4f5b26043e7c0f2bc724cd3cbc0a2a6d14f7",
                    "pkg/controllers/deployment/deployment_controller.go, "
                    "vendor/github.com/openshift/library-go/pkg/operator/status/condition.go"),
    "user-workload-monitoring": Source("https://github.com/openshift/cluster-monitoring-operator",
                                       "f581865b41267ff23bbf1cb30fbdd2e02cecd42f",
                                       "pkg/tasks/prometheus_user_workload.go, pkg/client/client.go"),
    "machineconfigpool": Source("https://github.com/openshift/machine-config-operator",
                                "7ff337a4ffac8e7562692181178ede61e4b2eec5",
                                "pkg/controller/node/status.go, pkg/controller/kubelet-config/helpers.go"),
}
