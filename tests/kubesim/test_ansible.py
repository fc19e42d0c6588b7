"""kubernetes.core modules (k8s, k8s_info, k8s_log) through a real ansible-playbook run."""

import os
import subprocess
import sys

import yaml


def _playbook(path):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ans", "namespace": "default"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "ans"}},
                           "template": {"metadata": {"labels": {"app": "ans"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "ans-pod", "namespace": "default",
                        "annotations": {"kubesim.perfscale.io/log": "line one\nline two"}},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ans-cm", "namespace": "default"},
          "data": {"a": "1"}}
    tasks = [
        {"name": "Apply a deployment", "register": "first", "kubernetes.core.k8s": {"apply": True, "definition": deployment}},
        {"name": "Apply it again", "register": "second", "kubernetes.core.k8s": {"apply": True, "definition": deployment}},
        {"name": "Create a config map", "register": "cm_created", "kubernetes.core.k8s": {"state": "present", "definition": cm}},
        {"name": "Merge into it", "register": "cm_merged", "kubernetes.core.k8s": {
            "state": "present", "definition": {"apiVersion": "v1", "kind": "ConfigMap",
                                               "metadata": {"name": "ans-cm", "namespace": "default"},
                                               "data": {"b": "2"}}}},
        {"name": "Create a pod and wait for it", "register": "pod", "kubernetes.core.k8s": {
            "state": "present", "definition": pod, "wait": True, "wait_timeout": 30,
            "wait_condition": {"type": "Ready", "status": "True"}}},
        {"name": "Read pods", "register": "info", "kubernetes.core.k8s_info": {
            "kind": "Pod", "namespace": "default", "label_selectors": [], "field_selectors": ["metadata.name=ans-pod"]}},
        {"name": "Read its log", "register": "log", "kubernetes.core.k8s_log": {"name": "ans-pod", "namespace": "default"}},
        {"name": "Delete the config map", "register": "cm_deleted", "kubernetes.core.k8s": {
            "state": "absent", "kind": "ConfigMap", "name": "ans-cm", "namespace": "default", "wait": True}},
        {"name": "Delete it again", "register": "cm_deleted_again", "kubernetes.core.k8s": {
            "state": "absent", "kind": "ConfigMap", "name": "ans-cm", "namespace": "default"}},
        {"name": "Check", "ansible.builtin.assert": {"that": [
            "first.changed", "not second.changed", "cm_created.changed", "cm_merged.changed",
            "cm_merged.result.data == {'a': '1', 'b': '2'}",
            "pod.result.status.phase == 'Running'",
            "info.resources | length == 1",
            "log.log_lines[:2] == ['line one', 'line two']",
            "cm_deleted.changed", "not cm_deleted_again.changed"]}},
    ]
    play = [{"name": "kubernetes.core against kubesim", "hosts": "localhost", "gather_facts": False,
             "vars": {"ansible_python_interpreter": "{{ ansible_playbook_python }}"}, "tasks": tasks}]
    path.write_text(yaml.safe_dump(play, sort_keys=False))


def test_kubernetes_core_modules(sim, tmp_path):
    playbook = tmp_path / "play.yml"
    _playbook(playbook)
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ, KUBECONFIG=sim.kubeconfig, K8S_AUTH_KUBECONFIG=sim.kubeconfig, HOME=str(tmp_path),
               ANSIBLE_HOME=str(tmp_path / ".ansible"), ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    result = subprocess.run([os.path.join(bin_dir, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)],
                            capture_output=True, text=True, env=env, timeout=240)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "failed=0" in result.stdout
