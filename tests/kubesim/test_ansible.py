"""kubernetes.core modules (k8s, k8s_info, k8s_log) through a real ansible-playbook run, and an OLM install."""

import os
import subprocess
import sys

import pytest
import yaml

from kube_fixtures import kubesim_cluster


@pytest.fixture(scope="module")
def sim():
    with kubesim_cluster(profile="openshift", pod_start_delay=0.2, time_scale=20) as server:
        yield server


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
             "vars": {"ansible_python_interpreter": "{{ ansible_playbook_python }}"}, "tasks": tasks},
            {"name": "OLM with kubernetes.core", "hosts": "localhost", "gather_facts": False,
             "vars": {"ansible_python_interpreter": "{{ ansible_playbook_python }}", "ns": "demo-ansible"},
             "tasks": _olm_tasks()}]
    path.write_text(yaml.safe_dump(play, sort_keys=False))


def _olm_tasks():
    """What a deploy_operator role does: package look-up, Manual Subscription, approval, CSV, CR from alm-examples."""
    sub_v = "operators.coreos.com/v1alpha1"
    return [
        {"name": "Look the package up", "register": "package", "kubernetes.core.k8s_info": {
            "api_version": "packages.operators.coreos.com/v1", "kind": "PackageManifest", "name": "demo-operator",
            "namespace": "openshift-marketplace"}},
        {"name": "Pick the default channel's head", "ansible.builtin.set_fact": {
            "channel": "{{ package.resources[0].status.defaultChannel }}",
            "csv_name": "{{ (package.resources[0].status.channels | selectattr('name', 'equalto', "
                        "package.resources[0].status.defaultChannel) | first).currentCSV }}"}},
        {"name": "Create the namespace and its OperatorGroup", "kubernetes.core.k8s": {"state": "present", "definition": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{{ ns }}"}},
            {"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
             "metadata": {"name": "{{ ns }}", "namespace": "{{ ns }}"}, "spec": {"targetNamespaces": ["{{ ns }}"]}}]}},
        {"name": "Subscribe (Manual approval)", "kubernetes.core.k8s": {"state": "present", "definition": {
            "apiVersion": sub_v, "kind": "Subscription", "metadata": {"name": "demo-operator", "namespace": "{{ ns }}"},
            "spec": {"name": "demo-operator", "channel": "{{ channel }}", "startingCSV": "{{ csv_name }}",
                     "source": "community-operators", "sourceNamespace": "openshift-marketplace",
                     "installPlanApproval": "Manual"}}}},
        {"name": "Wait for the InstallPlan", "register": "sub", "until": "sub.resources[0].status.installPlanRef is defined",
         "retries": 40, "delay": 1, "kubernetes.core.k8s_info": {
             "api_version": sub_v, "kind": "Subscription", "name": "demo-operator", "namespace": "{{ ns }}"}},
        {"name": "Approve it", "kubernetes.core.k8s": {
            "state": "patched", "api_version": sub_v, "kind": "InstallPlan", "namespace": "{{ ns }}",
            "name": "{{ sub.resources[0].status.installPlanRef.name }}", "merge_type": "merge",
            "definition": {"spec": {"approved": True}}}},
        {"name": "Wait for the CSV", "register": "csv", "retries": 60, "delay": 1,
         "until": "csv.resources | length > 0 and csv.resources[0].status.phase | default('') == 'Succeeded'",
         "kubernetes.core.k8s_info": {"api_version": sub_v, "kind": "ClusterServiceVersion", "name": "{{ csv_name }}",
                                      "namespace": "{{ ns }}"}},
        {"name": "Read the CRD it owns", "register": "crd", "kubernetes.core.k8s_info": {
            "api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "name": "demoapps.demo.kubesim.perfscale.io"}},
        {"name": "Create the CR of alm-examples and wait for it", "register": "app", "kubernetes.core.k8s": {
            "state": "present", "namespace": "{{ ns }}", "wait": True, "wait_timeout": 60,
            "wait_condition": {"type": "Ready", "status": "True"},
            "definition": "{{ (csv.resources[0].metadata.annotations['alm-examples'] | from_json)[0] }}"}},
        {"name": "Check", "ansible.builtin.assert": {"that": [
            "csv_name == 'demo-operator.v1.1.0'",
            "crd.resources[0].status.conditions | selectattr('type', 'equalto', 'Established') | list | length == 1",
            "app.result.status.phase == 'Ready'"]}},
    ]


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


def test_k8s_wait_sees_a_change_at_once_through_a_watch(sim, tmp_path):
    """A Job that completes ~10 s after its creation, waited for with a 60 s delay between looks: the
    watch on the Job brings the next look forward, so the wait ends long before the first delay."""
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "watched", "namespace": "default"},
           "spec": {"template": {"metadata": {"annotations": {"kubesim.perfscale.io/duration-s": "200"}},
                                 "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}
    tasks = [
        {"name": "Create the Job", "kubernetes.core.k8s": {"state": "present", "definition": job}},
        {"name": "Wait for it", "register": "waited", "perfscale.topsail.k8s_wait": {
            "judge": "job", "namespace": "default", "name": "watched", "timeout": 120, "delay": 60}},
        {"name": "Check", "ansible.builtin.assert": {"that": [
            "waited.state == 'ready'", "waited.elapsed_s < 30", "waited.states | length >= 2"]}},
    ]
    playbook = tmp_path / "wait.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks,
                                         "vars": {"ansible_python_interpreter": "{{ ansible_playbook_python }}"}}]))
    env = dict(os.environ, KUBECONFIG=sim.kubeconfig, K8S_AUTH_KUBECONFIG=sim.kubeconfig, HOME=str(tmp_path),
               ANSIBLE_HOME=str(tmp_path / ".ansible"), ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                             "-c", "local", str(playbook)], capture_output=True, text=True, env=env, timeout=240)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def _run_tasks(sim, tmp_path, tasks, name):
    playbook = tmp_path / name
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks,
                                         "vars": {"ansible_python_interpreter": "{{ ansible_playbook_python }}"}}]))
    env = dict(os.environ, KUBECONFIG=sim.kubeconfig, K8S_AUTH_KUBECONFIG=sim.kubeconfig, HOME=str(tmp_path),
               ANSIBLE_HOME=str(tmp_path / ".ansible"), ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                           "-c", "local", str(playbook)], capture_output=True, text=True, env=env, timeout=240)


def test_k8s_wait_waits_for_several_objects_in_one_call_and_names_the_one_that_failed(sim, tmp_path):
    """One k8s_wait call for three Jobs (two succeed at different times, each its own result), then one
    for a Job that fails beside a Job still running: the failure ends the call, naming the failed Job;
    a malformed wait is one line naming its place before anything is read."""
    def job(name, outcome="Succeeded", duration="20"):
        annotations = {"kubesim.perfscale.io/duration-s": duration, "kubesim.perfscale.io/outcome": outcome}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
                "spec": {"backoffLimit": 0, "template": {
                    "metadata": {"annotations": annotations},
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}
    tasks = [
        {"name": "Create the Jobs in one call", "kubernetes.core.k8s": {"state": "present", "definition": [
            job("several-a"), job("several-b", duration="60"), job("several-c"),
            job("several-bad", outcome="Failed"), job("several-long", duration="2000")]}},
        {"name": "Wait for three", "register": "three", "perfscale.topsail.k8s_wait": {
            "judge": "job", "namespace": "default", "timeout": 120, "delay": 1,
            "waits": [{"name": "several-a"}, {"name": "several-b"}, {"name": "several-c"}]}},
        {"name": "Wait for a failing one beside a long one", "register": "failing", "ignore_errors": True,
         "perfscale.topsail.k8s_wait": {"judge": "job", "namespace": "default", "timeout": 120, "delay": 1,
                                        "waits": [{"name": "several-long"}, {"name": "several-bad"}]}},
        {"name": "A malformed wait", "register": "malformed", "ignore_errors": True,
         "perfscale.topsail.k8s_wait": {"namespace": "default", "waits": [{"judge": "job", "name": "x"}, {"nmae": "y"}]}},
        {"name": "Check", "ansible.builtin.assert": {"that": [
            "three.state == 'ready' and three.waits | length == 3",
            "three.waits | map(attribute='state') | unique == ['ready']",
            "three.waits[1].elapsed_s > three.waits[0].elapsed_s",
            "three.waits[1].resources.subject[0].metadata.name == 'several-b'",
            "failing is failed and failing.state == 'failed'",
            "failing.msg is search('^Job default/several-bad: Failed=True')",
            "failing.waits[0].state == 'waiting' and not failing.waits[0].timed_out",
            "malformed is failed",
            "malformed.msg == 'waits[1]: unknown key(s) nmae (expected some of judge, namespace, name, "
            "label_selectors, options)'"]}},
    ]
    result = _run_tasks(sim, tmp_path, tasks, "several.yml")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
