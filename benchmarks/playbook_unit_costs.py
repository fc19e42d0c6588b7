"""What one playbook run, one task and one module call cost: the units the test suite's time is made of.

The cluster and integration steps of `make test` are CPU-bound on two cores (tests/profiling/
records every task of every playbook a test runs). This measures, side by side in one run with
interleaved rounds (medians, wall and CPU of the process and its children):
  empty_playbook     - ansible-playbook of one debug task: Ansible's fixed cost per run
  action_tasks_20    - 20 debug tasks (an action plugin: runs in the controller's worker)
  module_tasks_20    - 20 ansible.builtin.ping tasks (a module: a new Python process each)
  k8s_info_tasks_5   - 5 kubernetes.core.k8s_info tasks (refused at once: no kubeconfig), i.e. the
                       import cost of the kubernetes client every k8s module call pays
and in this process:
  toolbox_lookup_before - the toolbox's command lookup as it was (PyYAML's Python parser, every
                          role's tasks and argument specs, done twice per run)
  toolbox_lookup_after  - as it is (libyaml, the tasks only, once)
  resolve_config        - the configuration resolved (libyaml) and every section validated
"""

import os
import sys
import tempfile
import time

import _common
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import checks as config_checks
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import commands as toolbox

ROUNDS = int(os.environ.get("ROUNDS", "5"))
ROLES = os.path.join(_common.REPO, "roles")

PLAYBOOKS = {
    "empty_playbook": "    - ansible.builtin.debug:\n        msg: hi\n",
    "action_tasks_20": "    - ansible.builtin.debug:\n        msg: hi\n      loop: \"{{ range(20) | list }}\"\n",
    "module_tasks_20": "    - ansible.builtin.ping:\n      loop: \"{{ range(20) | list }}\"\n",
    "k8s_info_tasks_5": ("    - kubernetes.core.k8s_info:\n        kind: Pod\n        namespace: default\n"
                         "      environment:\n        KUBECONFIG: /nonexistent\n      ignore_errors: true\n"
                         "      loop: \"{{ range(5) | list }}\"\n"),
}


def run_playbook(path):
    wall, cpu, _output = _common.run_playbook(path)
    return wall, cpu


def in_process(function):
    start_cpu = time.process_time()
    start = time.perf_counter()
    function()
    return time.perf_counter() - start, time.process_time() - start_cpu


def lookup_before():
    """The lookup as it was: PyYAML's Python parser, tasks and argument specs of every role, twice."""
    import yaml

    def load(path):
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)

    for _time in range(2):
        for role in sorted(os.listdir(ROLES)):
            directory = os.path.join(ROLES, role)
            if role in toolbox.INFRASTRUCTURE_ROLES or not os.path.isdir(directory):
                continue
            load(os.path.join(directory, "tasks", "main.yml"))
            if os.path.exists(os.path.join(directory, "meta", "argument_specs.yml")):
                load(os.path.join(directory, "meta", "argument_specs.yml"))


def lookup_after():
    known = toolbox.commands(ROLES, describe=False)
    toolbox.resolve(ROLES, "cluster capture_state", known)


def resolve_config():
    resolved = config_lib.resolve_config(config_lib.default_config_path(_common.REPO))
    config_checks.validate_config(resolved.config)


def main():
    samples = {name: [] for name in list(PLAYBOOKS) + ["toolbox_lookup_before", "toolbox_lookup_after", "resolve_config"]}
    with tempfile.TemporaryDirectory(prefix="perfscale-bench-") as tmp:
        paths = _common.write_playbooks(tmp, PLAYBOOKS)
        for round_number in range(ROUNDS):
            for name, path in paths.items():
                samples[name].append(run_playbook(path))
            for name, function in (("toolbox_lookup_before", lookup_before), ("toolbox_lookup_after", lookup_after),
                                   ("resolve_config", resolve_config)):
                samples[name].append(in_process(function))
            print("round %d done" % (round_number + 1), file=sys.stderr)
    medians = {name: {"wall_s": round(_common.median([s[0] for s in values]), 4),
                      "cpu_s": round(_common.median([s[1] for s in values]), 4)} for name, values in samples.items()}
    empty = medians["empty_playbook"]["cpu_s"]
    derived = {
        "action_task_cpu_s": round((medians["action_tasks_20"]["cpu_s"] - empty) / 19, 4),
        "module_task_cpu_s": round((medians["module_tasks_20"]["cpu_s"] - empty) / 20, 4),
        "k8s_module_task_cpu_s": round((medians["k8s_info_tasks_5"]["cpu_s"] - empty) / 5, 4),
        "toolbox_lookup_speedup": round(medians["toolbox_lookup_before"]["wall_s"] / medians["toolbox_lookup_after"]["wall_s"], 1),
    }
    _common.record("playbook_unit_costs", {"rounds": ROUNDS, "medians": medians, "derived": derived,
                                           "load_average": os.getloadavg(),
                                           "samples": {name: [[round(w, 4), round(c, 4)] for w, c in values]
                                                       for name, values in samples.items()}})


if __name__ == "__main__":
    main()
