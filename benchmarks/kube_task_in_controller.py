"""The cluster-reading tasks (k8s_read, k8s_wait, k8s_capture) on the controller: done in Ansible's worker
process by their action plugins (plugins/plugin_utils/kube_action.py) against their modules, each in a
process of its own that imports the Kubernetes client (perfscale_kube_tasks_in_controller=false, the way of
before).

One playbook of twelve separate tasks (six k8s_read, four k8s_wait, two k8s_capture: what a toolbox role's
reads and waits look like) against a kubesim in a process of its own (its CPU is not counted), run both ways
side by side with interleaved rounds; medians of wall and CPU of ansible-playbook and its children. Both
ways must report the same objects. Each run pays Ansible's fixed cost (~1 CPU-s) once.
"""

import json
import os
import re
import sys
import tempfile

import _common

sys.path.insert(0, os.path.join(_common.REPO, "tests"))
from kube_fixtures import kubesim_cluster  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "5"))
QUERIES = {"namespace": {"kind": "Namespace", "name": "openshift-marketplace"},
           "catalogs": {"api_version": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
                        "namespace": "openshift-marketplace"}}
WAIT = {"judge": "nodes_ready", "timeout": 60, "delay": 1}
CAPTURE = {"namespaces": ["openshift-marketplace"], "kinds": ["Pod", "Service"], "events": False, "logs": False}
# how many tasks of each the playbook runs
READS, WAITS, CAPTURES = 6, 4, 2
TASKS = READS + WAITS + CAPTURES


def tasks():
    text = ""
    for index in range(READS):
        text += "    - perfscale.topsail.k8s_read:\n        queries: %s\n      register: read_%d\n" % (
            json.dumps(QUERIES), index)
    for _index in range(WAITS):
        text += "    - perfscale.topsail.k8s_wait: %s\n" % json.dumps(WAIT)
    for index in range(CAPTURES):
        text += "    - perfscale.topsail.k8s_capture: %s\n      register: capture_%d\n" % (json.dumps(CAPTURE), index)
    last_read, last_capture = READS - 1, CAPTURES - 1
    found = "{'catalogs': read_%d.resources.catalogs | length, 'captured': capture_%d.counts}" % (last_read, last_capture)
    return text + "    - ansible.builtin.debug:\n        msg: \"FOUND {{ %s | to_json }}\"\n" % found


def main():
    with tempfile.TemporaryDirectory() as tmp, \
            kubesim_cluster(subprocess=True, profile="openshift", time_scale=20) as sim:
        path = _common.write_playbooks(tmp, {"reads": tasks()})["reads"]
        ways = {"in_controller": "true", "modules": "false"}
        samples = {way: {"wall": [], "cpu": []} for way in ways}
        found = {}
        for _round in range(ROUNDS):
            for way, flag in ways.items():
                wall, cpu, output = _common.run_playbook(path, env={"KUBECONFIG": sim.kubeconfig}, extra_args=[
                    "-e", "perfscale_kube_tasks_in_controller=%s" % flag])
                samples[way]["wall"].append(wall)
                samples[way]["cpu"].append(cpu)
                found[way] = re.findall(r"FOUND (\{.*\})", output)
    if found["in_controller"] != found["modules"] or not found["modules"]:
        raise SystemExit("the two ways found different objects: %s" % found)
    medians = {way: {"wall_s": round(_common.median(s["wall"]), 3), "cpu_s": round(_common.median(s["cpu"]), 3)}
               for way, s in samples.items()}
    ratio = medians["modules"]["cpu_s"] / medians["in_controller"]["cpu_s"]
    result = {"rounds": ROUNDS, "tasks": TASKS, "medians": medians, "found": found["modules"][0],
              "cpu_ratio_modules_to_in_controller": round(ratio, 2),
              "cpu_s_saved_per_task": round((medians["modules"]["cpu_s"] - medians["in_controller"]["cpu_s"]) / TASKS, 3)}
    _common.record("kube_task_in_controller", result)
    for way, values in medians.items():
        print("%-14s wall %.2f s  cpu %.2f s (median of %d)" % (way, values["wall_s"], values["cpu_s"], ROUNDS))
    print("CPU ratio (modules / in the controller's workers): %.2f" % ratio)


if __name__ == "__main__":
    main()
