#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: matrix_host_run
short_description: Run the benchmark matrix on an inventory host and bring its points back
version_added: 0.2.0
description:
  - The benchmark matrix of the effective configuration (O(config_key)) on the host the task
    targets (the C(benchmark_hosts) group of the main job), one task per host - hosts run in
    parallel (forks), and one host's failure does not stop the others.
  - The controller (action plugin) plans the matrix and prepares the host's part of the run
    tree, C(<run>/hosts/<inventory_hostname>/) - a C(settings.yaml) with C(benchmark_host), the
    host's environment capture (C(NNN__host__capture_environment/), its CPU, memory, GPUs and
    Python, the fingerprint post-processing labels the host's KPIs with) and the matrix
    directory as the local executor makes it.
  - The host runs the points still to do (resume as with M(perfscale.topsail.matrix_run)) with
    the same parallelism, timeout and C(stop_on_error) rules, under its own Python
    (C(ansible_python_interpreter)); it gets only the harness's files (the built-in indicators'
    script) and needs only the harness's libraries (numpy, or torch), none of the controller's
    post-processing libraries.
  - The point directories come back as one archive (fetched over the host's connection),
    checked and unpacked into the host's matrix directory; the host's work directory (in the
    connection's remote temporary directory) is removed unless O(keep_remote).
  - Failed points do not fail the task (RV(failed_points)); an unreachable host or a host that
    cannot run the module does.
  - This is the C(inventory_hosts) executor of C(tests.benchmark.executor) (selected explicitly, or by
    hosts in the C(benchmark_hosts) group with the default C(local)); the module and its action
    plugin are thin adapters over C(module_utils/executors/inventory_hosts.py).
  - Only harnesses whose commands are self-contained run on hosts (C(perf_indicator)), with
    C(tests.benchmark.executor) C(local) or C(inventory_hosts).
author:
  - perfscale.topsail developers (@perfscale)
options:
  config_key:
    description:
      - Dotted key of the benchmark section in the effective configuration.
    type: str
    default: tests.benchmark
  dest:
    description:
      - The run directory on the controller (default the run's artifact directory).
    type: path
  capture_environment:
    description:
      - Capture the host's environment (M(perfscale.topsail.capture_environment)) beside its
        matrix before the points run.
    type: bool
    default: true
  gpu:
    description:
      - Query C(nvidia-smi) on the host during the environment capture.
    type: bool
    default: true
  keep_remote:
    description:
      - Leave the host's work directory (points and archive) in place, for debugging.
    type: bool
    default: false
  payload:
    description:
      - Internal - what the controller sends the host (the points to run, the harness's files,
        the run policy). Set by the action plugin; do not set it in a task.
    type: dict
  work_dir:
    description:
      - Internal - the host's work directory. Set by the action plugin.
    type: path
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Benchmark every host of the group
  hosts: benchmark_hosts
  gather_facts: false
  vars:
    perfscale_config: "{{ hostvars['localhost'].perfscale_config }}"
    perfscale_artifact_dir: "{{ hostvars['localhost'].perfscale_artifact_dir }}"
  tasks:
    - name: Run the matrix on this host
      perfscale.topsail.matrix_host_run:
      register: benchmark_host_matrix
"""

RETURN = r"""
matrix_dir:
  description: The host's matrix directory on the controller.
  returned: success
  type: str
summary:
  description:
    - Counts of the matrix's points - C(total), C(succeeded) and C(failed) (ran in this run),
      C(skipped) (finished in an earlier run), C(not_run) (stopped after a failure, or the
      controller went away).
  returned: success
  type: dict
failed_points:
  description: Name, directory, exit code and error of each failed point.
  returned: success
  type: list
  elements: dict
host_python:
  description: The interpreter that ran the points on the host.
  returned: success
  type: str
"""

import os
import sys

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.inventory_hosts import InventoryHostsExecutor


def main():
    module = AnsibleModule(
        argument_spec=dict(
            config_key=dict(type="str", default="tests.benchmark", no_log=False),
            dest=dict(type="path"),
            capture_environment=dict(type="bool", default=True),
            gpu=dict(type="bool", default=True),
            keep_remote=dict(type="bool", default=False),
            payload=dict(type="dict"),
            work_dir=dict(type="path"),
        ),
        supports_check_mode=False,
    )
    payload, work_dir = module.params["payload"], module.params["work_dir"]
    if payload is None or work_dir is None:
        module.fail_json(msg="matrix_host_run: payload and work_dir are set by the action plugin (run the task "
                             "through perfscale.topsail.matrix_host_run, not the module alone)")
    # the shell that started this module is its parent: when the connection goes, so does it
    parent = os.getppid()
    try:
        summary = InventoryHostsExecutor.run_on_host(payload, work_dir, sys.executable,
                                                     controller_alive=lambda: os.getppid() == parent)
    except PerfscaleError as exc:
        module.fail_json(msg=str(exc))
    except OSError as exc:
        module.fail_json(msg="matrix_host_run: %s: %s" % (exc.filename or work_dir, exc.strerror or exc))
    module.exit_json(changed=summary["done"] > 0, host_python=sys.executable, summary=summary)


if __name__ == "__main__":
    main()
