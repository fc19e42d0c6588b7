"""perfscale.topsail.k8s on the controller (kubernetes.core.k8s's code, done in Ansible's worker process:
plugins/action/k8s.py) against kubernetes.core.k8s itself and against perfscale.topsail.k8s as its module
(perfscale_kube_tasks_in_controller=false), each a process of its own that imports the Kubernetes client.

One playbook of ten separate tasks on a namespace of its own - a namespace, four ConfigMaps applied, two
patched, three deleted with a wait: what a toolbox role's creating and deleting looks like - against a
kubesim in a process of its own (its CPU is not counted), run the three ways side by side in interleaved
rounds; medians of wall and CPU of ansible-playbook and its children. The three must leave the same
objects (the playbook reads them last). Each run pays Ansible's fixed cost (~1 CPU-s) once.
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
APPLIED, PATCHED, DELETED = 4, 2, 3
TASKS = 1 + APPLIED + PATCHED + DELETED
WAYS = {"in_controller": ("perfscale.topsail.k8s", "true"), "module": ("perfscale.topsail.k8s", "false"),
        "kubernetes_core": ("kubernetes.core.k8s", "true")}


def config_map(namespace, index, size):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings-%d" % index, "namespace": namespace},
            "data": {"size": str(size)}}


def tasks(action, namespace):
    steps = [{action: {"definition": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}}}]
    steps += [{action: {"definition": config_map(namespace, index, 1), "apply": True}} for index in range(APPLIED)]
    steps += [{action: {"state": "patched", "definition": config_map(namespace, index, 2)}} for index in range(PATCHED)]
    steps += [{action: {"state": "absent", "kind": "ConfigMap", "namespace": namespace, "name": "settings-%d" % index,
                        "wait": True}} for index in range(APPLIED - DELETED, APPLIED)]
    text = "".join("    - %s\n" % json.dumps(step) for step in steps)
    read = {"queries": {"left": {"kind": "ConfigMap", "namespace": namespace}}}
    text += "    - perfscale.topsail.k8s_read: %s\n      register: left\n" % json.dumps(read)
    found = "left.resources.left | map(attribute='metadata.name') | list"
    sizes = "left.resources.left | map(attribute='data.size') | list"
    return text + "    - ansible.builtin.debug:\n        msg: \"FOUND {{ [%s, %s] | to_json }}\"\n" % (found, sizes)


def main():
    with tempfile.TemporaryDirectory() as tmp, kubesim_cluster(subprocess=True, profile="vanilla", time_scale=20) as sim:
        samples = {way: {"wall": [], "cpu": []} for way in WAYS}
        found = {way: [] for way in WAYS}
        for round_index in range(ROUNDS):
            for way, (action, flag) in WAYS.items():
                namespace = "bench-%s-%d" % (way.replace("_", "-"), round_index)
                path = _common.write_playbooks(tmp, {way: tasks(action, namespace)})[way]
                wall, cpu, output = _common.run_playbook(path, env={"KUBECONFIG": sim.kubeconfig}, extra_args=[
                    "-e", "perfscale_kube_tasks_in_controller=%s" % flag])
                samples[way]["wall"].append(wall)
                samples[way]["cpu"].append(cpu)
                found[way] += re.findall(r"FOUND (\[.*\])", output)
    if len({json.dumps(values) for values in found.values()}) != 1 or len(found["module"]) != ROUNDS:
        raise SystemExit("the three ways left different objects: %s" % found)
    medians = {way: {"wall_s": round(_common.median(s["wall"]), 3), "cpu_s": round(_common.median(s["cpu"]), 3)}
               for way, s in samples.items()}
    here = medians["in_controller"]["cpu_s"]
    result = {"rounds": ROUNDS, "tasks": TASKS, "medians": medians, "found": json.loads(found["module"][0]),
              "cpu_ratio_kubernetes_core_to_in_controller": round(medians["kubernetes_core"]["cpu_s"] / here, 2),
              "cpu_ratio_module_to_in_controller": round(medians["module"]["cpu_s"] / here, 2),
              "cpu_s_saved_per_task": round((medians["kubernetes_core"]["cpu_s"] - here) / TASKS, 3)}
    _common.record("k8s_in_controller", result)
    for way, values in medians.items():
        print("%-16s wall %.2f s  cpu %.2f s (median of %d)" % (way, values["wall_s"], values["cpu_s"], ROUNDS))
    print("CPU ratio (kubernetes.core.k8s / perfscale.topsail.k8s in the worker): %.2f"
          % result["cpu_ratio_kubernetes_core_to_in_controller"])


if __name__ == "__main__":
    main()
