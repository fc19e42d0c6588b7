"""The real kubectl 1.35 against kubesim."""

import json
import os
import signal
import subprocess
import time

import yaml

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{containerPort: 80}]
"""

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wdg]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, description: how big the widget is}
"""


def test_version_and_api_resources(kubectl):
    assert "Server Version: v1.35.0-kubesim" in kubectl("version").stdout
    out = kubectl("api-resources").stdout
    for line in ("deployments", "customresourcedefinitions", "pods", "leases", "priorityclasses"):
        assert line in out
    assert "deploy" in next(l for l in out.splitlines() if l.startswith("deployments"))


def test_client_side_apply_is_idempotent_and_reconfigures(kubectl):
    assert kubectl("apply", "-f", "-", input=DEPLOYMENT).stdout.strip() == "deployment.apps/web created"
    # the Deployment controller writes status until the rollout is done; then nothing changes it
    assert "successfully rolled out" in kubectl("rollout", "status", "deployment/web", "--timeout=30s").stdout
    first = json.loads(kubectl("get", "deployment", "web", "-o", "json").stdout)
    assert kubectl("apply", "-f", "-", input=DEPLOYMENT).stdout.strip() == "deployment.apps/web unchanged"
    again = json.loads(kubectl("get", "deployment", "web", "-o", "json").stdout)
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert "kubectl.kubernetes.io/last-applied-configuration" in again["metadata"]["annotations"]
    changed = DEPLOYMENT.replace("replicas: 2", "replicas: 3").replace("labels: {app: web}\nspec", "labels: {app: web, tier: fe}\nspec")
    assert kubectl("apply", "-f", "-", input=changed).stdout.strip() == "deployment.apps/web configured"
    after = json.loads(kubectl("get", "deployment", "web", "-o", "json").stdout)
    assert after["spec"]["replicas"] == 3 and after["metadata"]["labels"]["tier"] == "fe"
    assert after["metadata"]["generation"] == first["metadata"]["generation"] + 1
    # removing a label from the manifest removes it from the object (three-way merge)
    assert kubectl("apply", "-f", "-", input=DEPLOYMENT).stdout.strip() == "deployment.apps/web configured"
    final = json.loads(kubectl("get", "deployment", "web", "-o", "json").stdout)
    assert "tier" not in final["metadata"]["labels"] and final["spec"]["replicas"] == 2


def test_strict_validation_rejects_unknown_field(kubectl):
    bad = DEPLOYMENT.replace("name: web\n  namespace", "name: web-bad\n  namespace").replace(
        "image: nginx:1.27", "image: nginx:1.27\n        imagePullPolcy: Always")
    result = kubectl("apply", "-f", "-", input=bad, check=False)
    assert result.returncode != 0
    assert 'strict decoding error: unknown field "spec.template.spec.containers[0].imagePullPolcy"' in result.stderr
    assert kubectl("get", "deployment", "web-bad", check=False).returncode != 0
    # --validate=false (fieldValidation=Ignore) accepts it and drops the field
    kubectl("apply", "--validate=false", "-f", "-", input=bad)
    stored = json.loads(kubectl("get", "deployment", "web-bad", "-o", "json").stdout)
    assert "imagePullPolcy" not in stored["spec"]["template"]["spec"]["containers"][0]
    kubectl("delete", "deployment", "web-bad")


def test_warn_validation_prints_warning(kubectl):
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: warned}\ndata: {a: b}\nbogus: 1\n"
    result = kubectl("apply", "--validate=warn", "-f", "-", input=cm)
    assert 'Warning: unknown field "bogus"' in result.stderr
    kubectl("delete", "configmap", "warned")


def test_server_side_apply_conflicts_and_force(kubectl):
    manifest = DEPLOYMENT.replace("name: web\n", "name: ssa\n")
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", input=manifest).stdout
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", input=manifest).stdout
    obj = json.loads(kubectl("get", "deployment", "ssa", "-o", "json", "--show-managed-fields").stdout)
    managers = {(m["manager"], m["operation"]) for m in obj["metadata"]["managedFields"]}
    assert ("kubectl", "Apply") in managers
    other = manifest.replace("replicas: 2", "replicas: 5")
    result = kubectl("apply", "--server-side", "--field-manager", "someone-else", "-f", "-", input=other, check=False)
    assert result.returncode != 0 and 'conflict with "kubectl"' in result.stderr and ".spec.replicas" in result.stderr
    kubectl("apply", "--server-side", "--field-manager", "someone-else", "--force-conflicts", "-f", "-", input=other)
    assert json.loads(kubectl("get", "deployment", "ssa", "-o", "json").stdout)["spec"]["replicas"] == 5
    kubectl("delete", "deployment", "ssa")


def test_get_json_and_yaml(kubectl):
    nodes = json.loads(kubectl("get", "nodes", "-o", "json").stdout)
    assert nodes["kind"] == "List" or nodes["kind"] == "NodeList"
    # a fresh node advertises no GPU: NFD labels the PCI devices and the GPU operator's device plugin adds
    # nvidia.com/gpu (test_operators); the profile declares the hardware in an annotation
    assert not any("feature.node.kubernetes.io/pci-10de.present" in n["metadata"]["labels"] for n in nodes["items"])
    assert not any("nvidia.com/gpu" in n["status"]["capacity"] for n in nodes["items"])
    gpu = [n for n in nodes["items"] if any(d["vendor"] == "10de" for d in json.loads(
        n["metadata"]["annotations"]["kubesim.perfscale.io/pci-devices"]))]
    assert [n["metadata"]["name"] for n in gpu] == ["worker-gpu-0", "worker-gpu-1"]
    ns = yaml.safe_load(kubectl("get", "namespace", "default", "-o", "yaml").stdout)
    assert ns["status"]["phase"] == "Active"
    table = kubectl("get", "pods", "-A").stdout + kubectl("get", "nodes").stdout
    assert "worker-gpu-0" in table


def test_crd_apply_establish_custom_resource_and_explain(kubectl):
    kubectl("apply", "-f", "-", input=CRD)
    kubectl("wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=20s")
    kubectl("apply", "-f", "-", input="apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n")
    out = kubectl("get", "widgets").stdout
    assert "w1" in out and "SIZE" in out and "3" in out
    assert "wdg" in kubectl("api-resources", "--api-group", "example.com").stdout
    bad = kubectl("apply", "-f", "-", input="apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2}\n"
                                          "spec: {size: 3, colour: red}\n", check=False)
    assert bad.returncode != 0 and 'unknown field "spec.colour"' in bad.stderr
    explained = kubectl("explain", "widgets.spec.size").stdout
    assert "how big the widget is" in explained
    assert "replicas" in kubectl("explain", "deployment.spec").stdout
    kubectl("delete", "crd", "widgets.example.com", "--timeout=20s")
    assert kubectl("get", "widgets", check=False).returncode != 0


def test_wait_logs_and_delete_pod(kubectl):
    pod = """
apiVersion: v1
kind: Pod
metadata:
  name: job-pod
  annotations:
    kubesim.perfscale.io/outcome: Succeeded
    kubesim.perfscale.io/duration-s: "0.5"
    kubesim.perfscale.io/log: "hello from kubesim\\nsecond line"
spec:
  restartPolicy: Never
  containers: [{name: main, image: busybox}]
"""
    kubectl("apply", "-f", "-", input=pod)
    kubectl("run", "server", "--image=nginx")
    kubectl("wait", "--for=condition=Ready", "pod/server", "--timeout=20s")
    kubectl("delete", "pod", "server")
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/job-pod", "--timeout=20s")
    assert kubectl("logs", "job-pod").stdout == "hello from kubesim\nsecond line\n"
    assert kubectl("logs", "job-pod", "--tail=1").stdout == "second line\n"
    assert kubectl("logs", "-f", "job-pod").stdout.endswith("second line\n")
    assert 'pod "job-pod" deleted' in kubectl("delete", "pod", "job-pod").stdout
    missing = kubectl("get", "pod", "job-pod", check=False)
    assert 'pods "job-pod" not found' in missing.stderr


def test_get_watch_streams_changes(sim, kubectl_path, kube_home, kubectl):
    env = dict(os.environ, KUBECONFIG=sim.kubeconfig, HOME=kube_home)
    watcher = subprocess.Popen([kubectl_path, "get", "configmaps", "-w", "-o", "name"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        time.sleep(1.0)
        kubectl("apply", "-f", "-", input="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched}\ndata: {a: b}\n")
        deadline = time.monotonic() + 10
        seen = ""
        import select
        while time.monotonic() < deadline and "configmap/watched" not in seen:
            ready, _, _ = select.select([watcher.stdout], [], [], 0.5)
            if ready:
                seen += watcher.stdout.readline()
        assert "configmap/watched" in seen
    finally:
        os.killpg(watcher.pid, signal.SIGTERM)
        watcher.wait(timeout=5)
        kubectl("delete", "configmap", "watched")


def test_authentication_and_namespace_limited_user(kubectl, sim):
    forbidden = kubectl("get", "pods", "-n", "default", context="kubesim-team-a-user", check=False)
    assert forbidden.returncode != 0
    assert 'User "kubesim-team-a-user" cannot list resource "pods" in API group "" in the namespace "default"' in forbidden.stderr
    assert kubectl("get", "pods", "-n", "team-a", context="kubesim-team-a-user").returncode == 0
    nodes = kubectl("get", "nodes", context="kubesim-team-a-user", check=False)
    assert "at the cluster scope" in nodes.stderr
    no_token = kubectl("get", "pods", "--token", "wrong", check=False)
    assert no_token.returncode != 0 and "Unauthorized" in no_token.stderr


def test_scale_and_deployment_subresources(kubectl):
    kubectl("scale", "deployment", "web", "--replicas=4")
    assert json.loads(kubectl("get", "deployment", "web", "-o", "json").stdout)["spec"]["replicas"] == 4
    kubectl("delete", "deployment", "web")


def test_typed_generators_send_protobuf(kubectl):
    # kubectl create <kind> sends application/vnd.kubernetes.protobuf: kubesim decodes it
    assert kubectl("create", "configmap", "gen-cm", "--from-literal=a=b", "--from-literal=c=d").returncode == 0
    assert json.loads(kubectl("get", "configmap", "gen-cm", "-o", "json").stdout)["data"] == {"a": "b", "c": "d"}
    kubectl("create", "secret", "generic", "gen-secret", "--from-literal=user=admin")
    secret = json.loads(kubectl("get", "secret", "gen-secret", "-o", "json").stdout)
    assert secret["data"] == {"user": "YWRtaW4="} and secret["type"] == "Opaque"
    kubectl("create", "deployment", "gen-web", "--image=nginx:1.27", "--replicas=2", "--port=8080")
    kubectl("rollout", "status", "deployment/gen-web", "--timeout=30s")
    deployment = json.loads(kubectl("get", "deployment", "gen-web", "-o", "json").stdout)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"][0]["containerPort"] == 8080 and deployment["status"]["readyReplicas"] == 2
    kubectl("create", "job", "gen-job", "--image=busybox", "--", "echo", "hi")
    kubectl("wait", "--for=condition=complete", "job/gen-job", "--timeout=30s")
    kubectl("create", "namespace", "gen-ns")
    kubectl("create", "role", "gen-role", "--verb=get", "--resource=pods")
    kubectl("create", "service", "clusterip", "gen-svc", "--tcp=80:8080")
    service = json.loads(kubectl("get", "service", "gen-svc", "-o", "json").stdout)
    assert service["spec"]["ports"][0]["targetPort"] == 8080
    kubectl("delete", "deployment", "gen-web")
