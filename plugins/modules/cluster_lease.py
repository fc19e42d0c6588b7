#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: cluster_lease
short_description: One test run at a time per cluster - take the cluster's lease, or give it back
version_added: 0.4.0
description:
  - With O(state=held), waits in line for the cluster and takes its lease, a C(coordination.k8s.io)
    Lease C(perfscale-cluster-lock) in the namespace C(clusters.lease.namespace) (created when
    missing), held by the run id and annotated with the run's artifacts URL, start time, host and
    controller pid. While another run holds it, prints the position in the queue, the holder's run
    id and how long it has held the cluster; a holder that stopped renewing for
    C(clusters.lease.duration_s) is taken over, said in one line.
  - Leases in that namespace that the queue did not write (another name starting with
    C(perfscale-queue-), a waiter without C(spec), a ticket counter that is not a number) are
    ignored with one warning each; the queue goes on for everyone. Holder identities, names and
    annotations read from the cluster are printed with their control characters escaped.
  - Once taken, a renewer process renews the lease every third of its duration while this
    C(ansible-playbook) lives and releases it as soon as it is gone (end, failure, Ctrl-C,
    C(kill -9)). Writes C(cluster-lease.log) in the run directory.
  - With O(state=released), gives the lease back and stops the renewer (nothing when this play did
    not take it).
  - A run holding the lease asking again (an imported playbook, a nested playbook of the same run)
    is already served.
  - The flows and the benchmark playbook (with an executor on a cluster) take it unless
    C(-e cluster_lock=false); the toolbox playbook only with C(-e cluster_lock=true).
    See docs/flows.md, "One test run at a time per cluster".
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  state:
    description: C(held) to wait for and take the lease, C(released) to give it back.
    type: str
    choices: [held, released]
    default: held
  cluster:
    description: The cluster role whose lease is taken (C(sutest) or C(driver)).
    type: str
    default: sutest
  enabled:
    description: Whether to take the lease at all (the playbooks pass C(cluster_lock)).
    type: bool
    default: true
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: full
    details: In check mode nothing is taken.
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Wait for the cluster and take its lease
  perfscale.topsail.cluster_lease:
    enabled: "{{ cluster_lock | default(true) | bool }}"

- name: Give the cluster back
  perfscale.topsail.cluster_lease:
    state: released
"""

RETURN = r"""
state:
  description: C(taken), C(already_held) (by this run) with O(state=held).
  returned: success with O(state=held)
  type: str
waited_s:
  description: Seconds waited in line.
  returned: success with O(state=held)
  type: float
taken_over:
  description: The run whose silent lease was taken over, or null.
  returned: success with O(state=held)
  type: str
dropped:
  description: Lines about dead waiters dropped from the queue while waiting.
  returned: success with O(state=held)
  type: list
  elements: str
ignored:
  description:
    - One line per Lease in the lease namespace that is not as the queue writes it (a foreign name,
      a waiter without C(spec), a ticket counter that is not a number), also shown as a warning;
      the queue went on without it. Names read from the cluster have their control characters
      escaped.
  returned: success with O(state=held)
  type: list
  elements: str
lease:
  description: The lease as this play holds it (also the fact C(perfscale_cluster_lease)).
  returned: success with O(state=held)
  type: dict
"""
