"""What each playbook run pays, on its first call of a module, to build the module's AnsiballZ payload:
Ansible parses the module and every module_utils file it imports (``recursive_finder``) and zips them,
and keeps the payload only in the run's temporary directory. Per module: the files in the payload and
the median CPU of a build (ROUNDS builds in this process, side by side, interleaved). A module process
then compiles the same files from the zip (no bytecode is kept for a zip import).

    .venv/bin/python benchmarks/module_payloads.py        (ROUNDS=5)

Another commit's payloads: a worktree of it at DIR/ansible_collections/perfscale/topsail, then the same
command with ANSIBLE_COLLECTIONS_PATH=DIR (and BENCH_RESULTS elsewhere, to keep the recorded result).

Records benchmarks/results/module_payloads.json.
"""

import datetime
import io
import os
import time
import zipfile

import _common

ROUNDS = int(os.environ.get("ROUNDS", "5"))
MODULES = ("ansible.builtin.stat", "kubernetes.core.k8s", "kubernetes.core.k8s_info", "kubernetes.core.k8s_log",
           "perfscale.topsail.k8s_read", "perfscale.topsail.k8s_capture", "perfscale.topsail.k8s_wait",
           "perfscale.topsail.k8s_environment")


def main():
    os.environ.setdefault("ANSIBLE_CONFIG", os.path.join(_common.REPO, "ansible.cfg"))
    from ansible._internal._ansiballz import _builder
    from ansible.executor import module_common
    from ansible.plugins.loader import init_plugin_loader, module_loader

    init_plugin_loader()
    sources = {}
    for name in MODULES:
        path = module_loader.find_plugin_with_context(name).plugin_resolved_path
        with open(path, "rb") as handle:
            sources[name] = (module_common._get_ansible_module_fqn(path), handle.read())
    samples, files = {name: [] for name in MODULES}, {}
    for _round in range(ROUNDS):
        for name in MODULES:
            fqn, data = sources[name]
            payload = zipfile.ZipFile(io.BytesIO(), "w")
            start = time.process_time()
            module_common.recursive_finder(name.rsplit(".", 1)[1], fqn, data, payload, datetime.datetime.now(),
                                           _builder.ExtensionManager.create(task_vars={}))
            samples[name].append(round(time.process_time() - start, 4))
            files[name] = len(payload.namelist())
    _common.record("module_payloads", {
        "rounds": ROUNDS, "files": files, "samples_cpu_s": samples,
        "median_build_cpu_s": {name: _common.median(values) for name, values in samples.items()}})


if __name__ == "__main__":
    main()
