"""perfscale.topsail.k8s against the real kubernetes.core.k8s: the same cases, side by side, must return the same.

perfscale.topsail.k8s is kubernetes.core.k8s's own action plugin and ``run_module`` with the module's process
left out on the controller (plugins/action/k8s.py, plugins/plugin_utils/kube_action.py ``WorkerModule``). One
playbook runs every case three times on objects of their own: with kubernetes.core.k8s (the oracle), with
perfscale.topsail.k8s as is (in the worker) and with ``perfscale_kube_tasks_in_controller`` false (its
module, in a process of its own). The
results must be the same but for the objects' names and what the API server stamps on each object; with
Ansible's remote files kept, the AnsiballZ files show which tasks started a process."""

import difflib
import json
import re

from conftest import run_keeping_module_files

SIM_SETTINGS = dict(profile="vanilla", time_scale=20, pod_start_delay=0.1)
WAYS = {"core": ("kubernetes.core.k8s", {}), "here": ("perfscale.topsail.k8s", {}),
        "module": ("perfscale.topsail.k8s", {"vars": {"perfscale_kube_tasks_in_controller": False}})}
# what the API server stamps on an object, or Ansible on a result, which differs between any two runs
VOLATILE = {"uid", "resourceVersion", "creationTimestamp", "managedFields", "deletionTimestamp", "startTime",
            "lastTransitionTime", "lastProbeTime", "startedAt", "finishedAt", "podIP", "podIPs", "hostIP", "hostIPs", "containerID",
            "invocation", "ansible_job_id", "finished", "started", "results_file", "stderr", "stderr_lines",
            "stdout", "stdout_lines", "_ansible_no_log", "exception", "duration", "generation", "nodeName",
            # ansible-core's notice to kubernetes.core that passing warnings to exit_json is deprecated (2.23): for
            # its developers, not repeated in the worker (the warnings themselves are there)
            "deprecations"}


def cases(way, sim_kubeconfig):
    """(name, args, ignore_errors) of each case, on the objects of ``way`` (namespace ``k8s-<way>``)."""
    ns = "k8s-" + way
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": ns},
          "data": {"size": "1"}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "echo", "namespace": ns},
           "spec": {"containers": [{"name": "echo", "image": "registry.example/echo:1"}]}}
    return [
        ("namespace", {"definition": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}}, False),
        ("apply", {"definition": cm, "apply": True}, False),
        ("apply_again", {"definition": cm, "apply": True}, False),
        ("merge", {"state": "patched", "merge_type": ["merge"], "definition": dict(cm, data={"size": "2"})}, False),
        ("patch_missing", {"state": "patched", "kind": "ConfigMap", "name": "nobody", "namespace": ns,
                           "definition": {"data": {"a": "b"}}}, False),
        ("two", {"definition": [dict(cm, metadata={"name": "one", "namespace": ns}),
                                dict(cm, metadata={"name": "two", "namespace": ns})]}, False),
        ("check_mode_create", {"definition": dict(cm, metadata={"name": "never", "namespace": ns})}, False),
        ("pod_wait", {"definition": pod, "wait": True, "wait_timeout": 60, "wait_sleep": 1,
                      "wait_condition": {"type": "Ready", "status": "True"}}, False),
        ("delete", {"state": "absent", "kind": "ConfigMap", "name": "settings", "namespace": ns, "wait": True,
                    "wait_timeout": 60}, False),
        ("delete_again", {"state": "absent", "kind": "ConfigMap", "name": "settings", "namespace": ns}, False),
        ("unsupported", {"kind": "ConfigMap", "name": "x", "namespace": ns, "bogus": 1}, True),
        # kubernetes.core types resource_definition with a function, perfscale.topsail.k8s as raw plus the same check
        ("bad_definition", {"definition": 3}, True),
        ("exclusive", {"kind": "ConfigMap", "name": "x", "generate_name": "x-", "namespace": ns}, True),
        ("unknown_kind", {"definition": {"apiVersion": "example.com/v1", "kind": "Gizmo",
                                         "metadata": {"name": "g", "namespace": ns}}}, True),
        ("no_kubeconfig", {"kind": "ConfigMap", "name": "x", "namespace": ns,
                           "kubeconfig": "/nonexistent/kubeconfig"}, True),
        ("wait_timeout", {"definition": dict(pod, metadata={"name": "stuck", "namespace": ns}), "wait": True,
                          "wait_timeout": 2, "wait_sleep": 1,
                          "wait_condition": {"type": "Never", "status": "True"}}, True),
    ]


def playbook(sim_kubeconfig, results):
    tasks, registered = [], []
    for way, (action, extra) in WAYS.items():
        for name, args, ignore in cases(way, sim_kubeconfig):
            task = dict({"name": "%s %s" % (name, way), action: args, "register": "%s_%s" % (name, way)}, **extra)
            if ignore:
                task["ignore_errors"] = True
            if name == "check_mode_create":
                task["check_mode"] = True
            tasks.append(task)
            registered.append("%s_%s" % (name, way))
        tasks.append({"name": "Was the check-mode object created? %s" % way, "register": "checked_%s" % way,
                      "perfscale.topsail.k8s_read": {"queries": {"never": {
                          "kind": "ConfigMap", "name": "never", "namespace": "k8s-" + way}}}})
        registered.append("checked_%s" % way)
    everything = "{{ {%s} | to_json }}" % ", ".join("'%s': %s" % (name, name) for name in registered)
    tasks.append({"name": "Keep what each task returned", "ansible.builtin.copy": {"content": everything, "dest": results}})
    return [{"name": "kubernetes.core.k8s and perfscale.topsail.k8s", "hosts": "localhost", "gather_facts": False,
             "environment": {"K8S_AUTH_KUBECONFIG": sim_kubeconfig}, "tasks": tasks}]


def normal(value, way):
    """``value`` with the way's names made common and what differs between runs by nature left out."""
    if isinstance(value, dict):
        return {key: normal(item, way) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [normal(item, way) for item in value]
    if isinstance(value, str):
        value = value.replace("k8s-" + way, "k8s-WAY").replace(WAYS[way][0] + ")", "MODULE)")
        # a wait's elapsed seconds in its message
        return re.sub(r"\b\d+(\.\d+)? seconds?\b", "N seconds", value)
    return value


def test_k8s_in_the_worker_returns_what_kubernetes_core_k8s_returns(sim, tmp_path):
    got, started = run_keeping_module_files(tmp_path, playbook(sim.kubeconfig, str(tmp_path / "results.json")))

    for name, _args, _ignore in cases("core", sim.kubeconfig):
        core = normal(got[name + "_core"], "core")
        for way in ("here", "module"):
            theirs = normal(got["%s_%s" % (name, way)], way)
            assert theirs == core, "%s, %s against kubernetes.core.k8s:\n%s" % (name, way, "\n".join(difflib.unified_diff(
                json.dumps(core, indent=1, sort_keys=True).splitlines(), json.dumps(theirs, indent=1, sort_keys=True).splitlines(),
                lineterm="", n=2)))

    # what the cases are about, seen in the oracle's results (the comparison above carries them to the others)
    assert got["apply_core"]["changed"] and got["apply_core"]["method"] == "apply"
    assert not got["apply_again_here"]["changed"]
    assert got["merge_here"]["result"]["data"] == {"size": "2"}
    assert "was not found but will not be created" in json.dumps(got["patch_missing_here"]["warnings"])
    assert [r["result"]["metadata"]["name"] for r in got["two_here"]["result"]["results"]] == ["one", "two"]
    assert got["check_mode_create_here"]["changed"] and got["checked_here"]["resources"]["never"] == []
    assert got["pod_wait_here"]["result"]["status"]["phase"] == "Running"
    assert got["delete_here"]["changed"] and not got["delete_again_here"]["changed"]
    assert got["unsupported_here"]["msg"].startswith("Unsupported parameters for (perfscale.topsail.k8s) module: bogus.")
    assert "mutually exclusive" in got["exclusive_here"]["msg"]
    assert got["bad_definition_here"]["msg"].startswith("argument 'resource_definition' is of type int")
    assert "Gizmo" in got["unknown_kind_here"]["msg"]
    # kubernetes.core's action plugin looks for the kubeconfig on the controller before any module runs
    assert "Could not find or access '/nonexistent/kubeconfig'" in got["no_kubeconfig_here"]["msg"]
    assert got["wait_timeout_here"]["failed"]

    # perfscale.topsail.k8s in the worker never started a process of its own; as its module it did, once a case
    reaching_a_module = len(cases("core", sim.kubeconfig)) - 1     # all but no_kubeconfig
    assert started.count("AnsiballZ_k8s.py") == 2 * reaching_a_module, started
