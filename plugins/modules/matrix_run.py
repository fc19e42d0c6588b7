#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: matrix_run
short_description: Expand a benchmark matrix from the configuration and run every point
version_added: 0.1.0
description:
  - Reads the benchmark section of the effective configuration (O(config_key)),
    validates it, expands the matrix (cartesian product of the factors, then
    C(exclude), then C(include) as Tekton's C(matrix.include)), checks every point
    (known indicator, valid parameters, unique directory name) and only then runs.
  - Every point runs with a timeout, as a subprocess of the controller (C(executor=local)) or as
    a Job on the C(driver) or C(sutest) cluster of the inventory (C(executor=kubernetes); its files
    come back through the pod log), in
    C(NNN__matbenchmarking/NNN__<name>/), which holds C(settings.yaml), C(.uuid),
    C(stdout.log), C(stderr.log), C(output.json) (the validated harness document),
    C(point.json), C(FAILURE) when it failed and C(exit_code).
  - With C(executor=tekton) no point runs here - the matrix is written as a Tekton PipelineRun
    (C(pipelinerun.yaml) and C(task.yaml) in the matrix directory, validated strictly) and
    RV(rendered_only) is true.
  - With C(executor=inventory_hosts) - set, or the default C(local) with hosts in the inventory group
    C(benchmark_hosts) - no point runs here either - each host of the group runs the matrix
    (M(perfscale.topsail.matrix_host_run), the play's next task); RV(hosts_run) is true and RV(hosts)
    names them. C(inventory_hosts) with an empty group, or C(kubernetes)/C(tekton) with hosts in the
    group, fails in one line before anything runs (with O(status_only) too).
  - Re-running the same matrix into the same artifact directory skips points whose
    C(exit_code) is 0 and re-runs the others (earlier attempts are kept in
    C(_previous/)).
  - Parallelism policies from the section's C(parallelism) key - C(sequential),
    C(barrier:N) or C(sliding:N). Progress (done/total, failures, elapsed, time
    left) is shown while it runs and written to C(progress.json).
  - Failed points do not fail the task; RV(failed_points) lists them so that the
    play can post-process first and decide at the end.
  - With the section's C(capacity.enabled), every point is planned first (docs/capacity.md) - the
    memory it needs per GPU and whether its pods can be placed on O(capacity_nodes) - and a point
    that cannot fit or be placed is skipped before anything is deployed - C(SKIPPED) and
    C(capacity_plan.json) in its directory, RV(infeasible_points). What the matrix will cost (points,
    GPUs, estimated time and GPU-hours from earlier points in the results store) is shown and kept in
    the matrix directory as C(cost_estimate.json); a rehearsal lists it per point.
  - Runs on the controller (action plugin); the whole matrix is one task.
author:
  - perfscale.topsail developers (@perfscale)
options:
  config_key:
    description:
      - Dotted key of the benchmark section in the effective configuration.
    type: str
    default: tests.benchmark
  rehearsal:
    description:
      - List every point (with its directory name) and run nothing. Defaults to the
        section's C(rehearsal) key.
    type: bool
  dest:
    description:
      - Directory in which C(NNN__matbenchmarking) is created or resumed. Defaults to
        the artifact directory currently open.
    type: path
  status_only:
    description:
      - Run nothing; say what is left to do in O(dest) - RV(pending) points, and whether the
        newest plots directory post-processed every finished point (RV(nothing_to_do)).
    type: bool
    default: false
  capacity_nodes:
    description:
      - The cluster's nodes as M(perfscale.topsail.k8s_environment) summarises them (its C(nodes.json)),
        for the placement of each point when the section's C(capacity.enabled) is true. Omitted, the
        placement is not checked and the GPU product comes from C(capacity.gpu).
    type: list
    elements: dict
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: full
    details: Check mode is a rehearsal.
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Run the benchmark matrix of the configuration
  perfscale.topsail.matrix_run:
  register: matrix

- name: List the points of a matrix without running them
  perfscale.topsail.matrix_run:
    rehearsal: true
"""

RETURN = r"""
cluster_role:
  description: The cluster role (C(sutest), C(driver)) the executor runs points on, null when none
    (the benchmark playbook takes that cluster's lease, see M(perfscale.topsail.cluster_lease)).
  returned: success
  type: str
  version_added: 0.4.0
rehearsal:
  description: Whether this was a rehearsal.
  returned: always
  type: bool
points:
  description: In rehearsal, each point's directory name, settings and command.
  returned: when rehearsal
  type: list
  elements: dict
total:
  description: In rehearsal, the number of points.
  returned: when rehearsal
  type: int
matrix_dir:
  description: The matrix directory.
  returned: when not rehearsal
  type: str
summary:
  description: Counts (total, succeeded, failed, skipped, not_run), elapsed time, policy, whether it resumed.
  returned: when not rehearsal
  type: dict
failed_points:
  description: Name, directory, exit code and error of every failed point.
  returned: when not rehearsal
  type: list
  elements: dict
infeasible_points:
  description: Name, directory and reason of every point skipped before deploy (it cannot fit or be placed).
  returned: when not rehearsal
  type: list
  elements: dict
capacity_estimate:
  description: What the matrix will cost - points, skipped, GPUs, estimated duration (s) and GPU-hours, and how
    many points the estimate rests on (same settings, nearest, without history).
  returned: when the section's capacity.enabled is true
  type: dict
capacity_line:
  description: The same in one line.
  returned: when the section's capacity.enabled is true
  type: str
fail_on_point_failure:
  description: The section's C(fail_on_point_failure) - whether the play should fail, after post-processing,
    when points failed.
  returned: when not rehearsal
  type: bool
  version_added: 0.2.0
rendered_only:
  description: True when the executor hands the matrix to another engine (C(tekton)) - nothing ran here.
  returned: when executor is tekton
  type: bool
  version_added: 0.2.0
rendered:
  description: What was written for that engine - C(pipelinerun) and C(task) (paths) and C(pipeline_tasks) (count).
  returned: when executor is tekton
  type: dict
  version_added: 0.2.0
executor:
  description:
    - The executor that runs the matrix - C(tests.benchmark.executor), or C(inventory_hosts) when it is
      the default C(local) and the inventory group C(benchmark_hosts) has hosts.
  returned: always
  type: str
  version_added: 0.3.0
hosts:
  description: The hosts of the inventory group C(benchmark_hosts) that run the matrix (empty unless RV(executor) is C(inventory_hosts)).
  returned: when status_only, or when the hosts run it
  type: list
  elements: str
  version_added: 0.3.0
hosts_run:
  description: True when the hosts of C(benchmark_hosts) run the matrix (executor C(inventory_hosts)) - nothing ran here.
  returned: when executor is inventory_hosts and not rehearsal
  type: bool
  version_added: 0.3.0
pending:
  description: With O(status_only), the points still to run.
  returned: when status_only
  type: int
nothing_to_do:
  description: With O(status_only), whether every point finished and the newest plots directory post-processed them.
  returned: when status_only
  type: bool
index:
  description: With O(status_only), the reports index of that plots directory (null when there is none).
  returned: when status_only
  type: str
"""
