"""k8s_read, k8s_wait, k8s_capture and k8s_environment on the controller run in Ansible's worker process (their
action plugins, plugins/plugin_utils/kube_action.py), anywhere else as their modules: both ways must return the
same thing.

One playbook runs each task twice on the same objects, once as is (the local connection: in the worker) and
once with ``async`` (always the module, in a process of its own), including their failures; the kubeconfig
comes only from the play's ``environment``, which the worker must apply as the module's process has it. With
Ansible's remote files kept, the modules' AnsiballZ files show which way each task ran."""

import json

from conftest import run_keeping_module_files

SIM_SETTINGS = dict(profile="vanilla", time_scale=20, pod_start_delay=0.1)
NAMESPACE = "in-controller"
POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "echo", "namespace": NAMESPACE, "labels": {"app": "echo"},
                    "annotations": {"kubesim.perfscale.io/log": "hello from echo"}},
       "spec": {"containers": [{"name": "echo", "image": "registry.example/echo:1"}]}}


def both_ways(name, module, args, ignore_errors=False):
    """The task as is, then the same as the module (async), each registered."""
    tasks = []
    for way, extra in (("here", {}), ("module", {"async": 120, "poll": 1})):
        task = dict({"name": "%s %s" % (name, way), module: args, "register": "%s_%s" % (name, way)}, **extra)
        if ignore_errors:
            task["ignore_errors"] = True
        tasks.append(task)
    return tasks


def playbook_tasks(kubeconfig, results):
    read_args = {"queries": {"namespace": {"kind": "Namespace", "name": NAMESPACE},
                             "pods": {"kind": "Pod", "namespace": NAMESPACE, "logs": True},
                             "nothing": {"api_version": "example.com/v1", "kind": "Gizmo", "namespace": NAMESPACE}}}
    wait_args = {"judge": "pods_ready", "namespace": NAMESPACE, "label_selectors": ["app=echo"], "timeout": 60,
                 "delay": 1}
    capture_args = {"namespaces": [NAMESPACE], "kinds": ["Pod", "example.com/v1/Gizmo"], "tail_lines": 10}
    tasks = [
        {"name": "Create the namespace and a pod", "kubernetes.core.k8s": {"definition": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}, POD]}},
        {"name": "Wait for the pod first", "perfscale.topsail.k8s_wait": wait_args},
    ]
    tasks += both_ways("read", "perfscale.topsail.k8s_read", read_args)
    tasks += both_ways("wait", "perfscale.topsail.k8s_wait", wait_args)
    tasks += both_ways("capture", "perfscale.topsail.k8s_capture", capture_args)
    tasks += both_ways("environment", "perfscale.topsail.k8s_environment", {})
    tasks += both_ways("bad_query", "perfscale.topsail.k8s_read", {"queries": {"bad": {"kind": 3}}}, True)
    tasks += both_ways("bad_judge", "perfscale.topsail.k8s_wait", {"judge": "no_such_judge", "name": "x"}, True)
    tasks += both_ways("timeout", "perfscale.topsail.k8s_wait",
                       dict(wait_args, label_selectors=["app=nobody"], timeout=2, delay=1), True)
    tasks += both_ways("no_config", "perfscale.topsail.k8s_read",
                       {"queries": {"namespace": {"kind": "Namespace", "name": NAMESPACE}},
                        "kubeconfig": "/nonexistent/kubeconfig"}, True)
    names = ["read", "wait", "capture", "environment", "bad_query", "bad_judge", "timeout", "no_config"]
    pairs = ["'%s_%s': %s_%s" % (n, w, n, w) for n in names for w in ("here", "module")]
    everything = "{{ {%s} | to_json }}" % ", ".join(pairs)
    tasks.append({"name": "Keep what each task returned", "ansible.builtin.copy": {"content": everything, "dest": results}})
    return [{"name": "The cluster-reading tasks both ways", "hosts": "localhost", "gather_facts": False,
             "environment": {"K8S_AUTH_KUBECONFIG": kubeconfig}, "tasks": tasks}]


def comparable(result, drop=()):
    """What a task returned, without what differs by nature between two runs (Ansible's own keys, times)."""
    ignored = {"invocation", "ansible_job_id", "finished", "started", "results_file", "stderr", "stderr_lines",
               "stdout", "stdout_lines", "_ansible_no_log", "exception", "elapsed_s", "states"} | set(drop)
    return {key: value for key, value in result.items() if key not in ignored}


def test_each_task_returns_the_same_in_the_worker_as_its_module(sim, tmp_path):
    got, started = run_keeping_module_files(tmp_path, playbook_tasks(sim.kubeconfig, str(tmp_path / "results.json")))

    here, module = got["read_here"], got["read_module"]
    assert comparable(here) == comparable(module)
    assert here["api_found"] == {"namespace": True, "pods": True, "nothing": False}
    assert here["logs"]["pods"]["echo"] == module["logs"]["pods"]["echo"] and "hello from echo" in \
        json.dumps(here["logs"]["pods"])
    # the objects read twice are the same objects (a pod's status may move on between the two reads)
    assert [p["metadata"]["uid"] for p in here["resources"]["pods"]] == \
        [p["metadata"]["uid"] for p in module["resources"]["pods"]]

    assert comparable(got["wait_here"], ["resources", "msg"]) == comparable(got["wait_module"], ["resources", "msg"])
    assert got["wait_here"]["state"] == "ready"
    assert comparable(got["capture_here"], ["files"]) == comparable(got["capture_module"], ["files"])
    assert got["capture_here"]["missing_kinds"] == ["example.com/v1/Gizmo"]
    assert sorted(got["capture_here"]["files"]) == sorted(got["capture_module"]["files"])
    # k8s_environment: the module's own run(), with a stand-in for AnsibleModule in the worker
    assert comparable(got["environment_here"]) == comparable(got["environment_module"])
    assert got["environment_here"]["labels"]["node_count"] > 0

    # failures: the same message, failed, both ways
    for name in ("bad_query", "bad_judge", "timeout", "no_config"):
        here, module = got[name + "_here"], got[name + "_module"]
        assert here["failed"] and module["failed"], (name, here, module)
        assert here["msg"] == module["msg"], (name, here["msg"], module["msg"])
    assert got["timeout_here"]["state"] == got["timeout_module"]["state"]
    assert "Could not create API client" in got["no_config_here"]["msg"]

    # the tasks without async never started a module of their own; those with async did, once each
    ours = [name for name in started if name.startswith("AnsiballZ_k8s_")]
    assert ours == sorted(["AnsiballZ_k8s_read.py"] * 3 + ["AnsiballZ_k8s_wait.py"] * 3 + ["AnsiballZ_k8s_capture.py"]
                          + ["AnsiballZ_k8s_environment.py"]), started
