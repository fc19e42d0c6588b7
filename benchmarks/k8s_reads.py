"""The reads a role makes before it acts: four kubernetes.core.k8s_info tasks against one
perfscale.topsail.k8s_read of the same four queries (cluster deploy_operator's: the package in
the catalog and by name, the namespace's OperatorGroups, the namespace).

Against a kubesim (OpenShift profile, in a process of its own, so that its CPU is not counted),
side by side in one run with interleaved rounds; medians of wall and CPU of ansible-playbook and
its children. Both playbooks check they found the same objects. Each playbook pays Ansible's
fixed cost (~1 CPU-s, benchmarks/playbook_unit_costs.py) once.
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

QUERIES = {
    "in_catalog": {"api_version": "packages.operators.coreos.com/v1", "kind": "PackageManifest",
                   "namespace": "openshift-marketplace", "label_selectors": ["catalog=redhat-operators"]},
    "by_name": {"api_version": "packages.operators.coreos.com/v1", "kind": "PackageManifest",
                "namespace": "openshift-marketplace", "name": "nfd"},
    "groups": {"api_version": "operators.coreos.com/v1", "kind": "OperatorGroup", "namespace": "openshift-nfd"},
    "namespace": {"api_version": "v1", "kind": "Namespace", "name": "openshift-marketplace"},
}


def four_k8s_info():
    tasks = ""
    for key, query in QUERIES.items():
        tasks += "    - kubernetes.core.k8s_info: %s\n      register: found_%s\n" % (query, key)
    found = ", ".join("'%s': found_%s.resources | length" % (key, key) for key in QUERIES)
    return tasks + "    - ansible.builtin.debug:\n        msg: \"FOUND {{ {%s} | to_json }}\"\n" % found


def one_k8s_read():
    found = ", ".join("'%s': found.resources.%s | length" % (key, key) for key in QUERIES)
    return ("    - perfscale.topsail.k8s_read:\n        queries: %s\n      register: found\n" % (QUERIES,) +
            "    - ansible.builtin.debug:\n        msg: \"FOUND {{ {%s} | to_json }}\"\n" % found)


def run_playbook(path, kubeconfig):
    """``(wall, CPU, [what the playbook found])``."""
    wall, cpu, output = _common.run_playbook(path, env={"KUBECONFIG": kubeconfig})
    return wall, cpu, [json.loads(match) for match in re.findall(r"FOUND (\{[^}]*\})", output)]


def main():
    playbooks = {"four_k8s_info": four_k8s_info(), "one_k8s_read": one_k8s_read()}
    samples = {name: {"wall": [], "cpu": []} for name in playbooks}
    found = {}
    with tempfile.TemporaryDirectory() as tmp, \
            kubesim_cluster(subprocess=True, profile="openshift", time_scale=20) as sim:
        paths = _common.write_playbooks(tmp, playbooks)
        for _round in range(ROUNDS):
            for name, path in paths.items():
                wall, cpu, seen = run_playbook(path, sim.kubeconfig)
                samples[name]["wall"].append(wall)
                samples[name]["cpu"].append(cpu)
                found[name] = seen
    if found["four_k8s_info"] != found["one_k8s_read"]:
        raise SystemExit("the two playbooks found different objects: %s" % found)
    medians = {name: {"wall_s": round(_common.median(s["wall"]), 3), "cpu_s": round(_common.median(s["cpu"]), 3)}
               for name, s in samples.items()}
    ratio = medians["four_k8s_info"]["cpu_s"] / medians["one_k8s_read"]["cpu_s"]
    result = {"rounds": ROUNDS, "medians": medians, "found": found["one_k8s_read"],
              "cpu_ratio_four_k8s_info_to_one_k8s_read": round(ratio, 2)}
    _common.record("k8s_reads", result)
    for name, values in medians.items():
        print("%-14s wall %.2f s  cpu %.2f s (median of %d)" % (name, values["wall_s"], values["cpu_s"], ROUNDS))
    print("CPU ratio (four k8s_info / one k8s_read): %.2f; found %s" % (ratio, found["one_k8s_read"]))


if __name__ == "__main__":
    main()
