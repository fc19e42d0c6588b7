#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: prometheus_db
short_description: Reset, query or snapshot a Prometheus around a test step
version_added: 0.1.0
description:
  - The machinery of the toolbox commands C(cluster reset_prometheus_db),
    C(cluster query_prometheus_db) and C(cluster dump_prometheus_db), for a Prometheus reached
    by URL.
  - V(reset) deletes every series and cleans the tombstones (admin API; O(mode=mark) deletes
    nothing), and records the time in C(reset.json); a later V(query) without a start takes it
    as the start of the test's window.
  - V(query) runs each PromQL expression of O(promquery_file) over the window at O(step_s)
    (C(query_range)) and writes C(<name>.json) per query and C(queries.json) (the window, each
    query's series and sample counts, or its error). A query that fails does not stop the others;
    the task fails naming it.
  - V(snapshot) takes a TSDB snapshot (admin API) and, with O(prometheus_data_dir), packs it into
    C(<dump_name_prefix>.tar.gz); C(snapshot.json) records it.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  operation:
    description: What to do.
    type: str
    required: true
    choices: [reset, query, snapshot]
  prometheus_url:
    description: C(http(s)://host:port) of the Prometheus (the admin operations need C(--web.enable-admin-api)).
    type: str
    required: true
  mode:
    description: V(reset) deletes every series; V(mark) only records the time (a shared Prometheus).
    type: str
    choices: [reset, mark]
    default: reset
  promquery_file:
    description:
      - YAML - a mapping of name to PromQL, or a list of C({name, query}). Names become file names.
      - Required with O(operation=query).
    type: path
  start_ts:
    description: Start of the window (Unix time or ISO 8601); default C(end - duration_s), else the run's last reset.
    type: str
  end_ts:
    description: End of the window (Unix time or ISO 8601); default now.
    type: str
  duration_s:
    description: Length of the window, when O(start_ts) is not given (0 - since the run's last reset).
    type: float
    default: 0
  step_s:
    description: Resolution of the queries, in seconds.
    type: float
    default: 15
  dump_name_prefix:
    description: Name of the snapshot archive (C(<prefix>.tar.gz)).
    type: str
    default: prometheus
  prometheus_data_dir:
    description: The Prometheus's C(--storage.tsdb.path), when readable here, to pack the snapshot.
    type: path
  dest_dir:
    description: Where the files go; default the open artifact directory.
    type: path
  timeout_s:
    description: Seconds allowed to each request.
    type: float
    default: 30
  prometheus_token_secret:
    description:
      - A file of the secrets directory holding a bearer token, sent with every request (a query
        front-end behind an authenticating proxy, such as OpenShift's C(thanos-querier) route). Never
        logged nor written.
    type: str
    default: ""
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
- name: Query the test's window
  perfscale.topsail.prometheus_db:
    operation: query
    prometheus_url: http://prometheus.lab:9090
    promquery_file: "{{ playbook_dir }}/files/gpu_queries.yml"
"""

RETURN = r"""
record:
  description: What V(reset) or V(snapshot) recorded (C(reset.json), C(snapshot.json)).
  returned: reset, snapshot
  type: dict
index:
  description: C(queries.json) of V(query).
  returned: query
  type: dict
"""
