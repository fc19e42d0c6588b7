#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_prometheus_db
short_description: Reset, query or snapshot the cluster's own Prometheus, reached through the API server
version_added: 0.2.0
description:
  - The in-cluster mode of C(cluster reset_prometheus_db), C(cluster query_prometheus_db) and
    C(cluster dump_prometheus_db) - when no URL is given. The Prometheus is the first Running pod
    (by name) that O(label) selects in O(namespace), reached on O(port) through the API server's pod
    proxy (C(/api/v1/namespaces/NS/pods/POD:PORT/proxy/...)) with the kubeconfig's credentials (they
    need C(pods/proxy)) - no route, no port-forward.
  - The operations and the files they write are those of M(perfscale.topsail.prometheus_db).
    A snapshot stays in the pod's data directory (its name is recorded in C(snapshot.json)).
  - Runs where the cluster's API is reachable from (the toolbox's localhost) and writes into O(dest_dir).
  - In the C(perfscale.topsail.k8s) action group (the toolbox sets its connection).
author:
  - perfscale.topsail developers (@perfscale)
options:
  operation:
    description: What to do.
    type: str
    required: true
    choices: [reset, query, snapshot]
  namespace:
    description: Namespace of the Prometheus pod.
    type: str
    default: openshift-monitoring
  label:
    description: Label selector of the Prometheus pod.
    type: str
    default: app.kubernetes.io/component=prometheus
  port:
    description: Port of the Prometheus HTTP API in the pod (a number or a container port's name).
    type: str
    default: "9090"
  scheme:
    description: Scheme the pod serves its API with.
    type: str
    choices: [http, https]
    default: http
  mode:
    description: V(reset) deletes every series (admin API); V(mark) only records the time.
    type: str
    choices: [reset, mark]
    default: reset
  promquery_file:
    description: The queries (see M(perfscale.topsail.prometheus_db)); required with O(operation=query).
    type: path
  start_ts:
    description: Start of the window (Unix time or ISO 8601); default C(end - duration_s), else the run's last reset.
    type: str
  end_ts:
    description: End of the window (Unix time or ISO 8601); default now.
    type: str
  duration_s:
    description: Length of the window when O(start_ts) is not given (0 - since the run's last reset).
    type: float
    default: 0
  step_s:
    description: Resolution of the queries, in seconds.
    type: float
    default: 15
  dump_name_prefix:
    description: Name recorded with the snapshot.
    type: str
    default: prometheus
  dest_dir:
    description: Where the files go (the command's artifact directory).
    type: path
    required: true
  run_root:
    description: The run's directory, where the last reset is looked for when the window has no start.
    type: path
  timeout_s:
    description: Seconds allowed to each request.
    type: float
    default: 30
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - perfscale.topsail.action_attributes.module
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
"""

EXAMPLES = r"""
- name: Query the monitoring stack's Prometheus over the test's window
  perfscale.topsail.k8s_prometheus_db:
    operation: query
    namespace: monitoring
    label: app.kubernetes.io/name=prometheus
    promquery_file: /etc/perfscale/promqueries.yaml
    dest_dir: "{{ perfscale_artifact_dir }}"
    run_root: "{{ perfscale_run_root }}"
"""

RETURN = r"""
pod:
  description: The Prometheus pod reached (namespace/name).
  returned: always
  type: str
record:
  description: With V(reset) and V(snapshot), what C(reset.json) or C(snapshot.json) holds.
  returned: when operation is reset or snapshot
  type: dict
index:
  description: With V(query), what C(queries.json) holds.
  returned: when operation is query
  type: dict
"""

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import prometheus
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError


def argspec():
    args = copy.deepcopy(AUTH_ARG_SPEC)
    args.update(prometheus.operation_argument_spec())
    args.update(
        namespace=dict(type="str", default="openshift-monitoring"),
        label=dict(type="str", default="app.kubernetes.io/component=prometheus"),
        port=dict(type="str", default="9090"),
        scheme=dict(type="str", default="http", choices=["http", "https"]),
        dest_dir=dict(type="path", required=True),
        run_root=dict(type="path"),
    )
    return args


def run(module_class):
    """The module's work, with the AnsibleModule class given (on the controller, the action plugin of the same
    name does it in Ansible's worker with a stand-in: plugins/plugin_utils/kube_action.py)."""
    module = AnsibleK8SModule(module_class=module_class, argument_spec=argspec(),
                              required_if=[("operation", "query", ("promquery_file",))])
    params = module.params
    try:
        client = get_api_client(module=module)
        svc = K8sService(client, module)
        pods = svc.find_resource("Pod", "v1", fail=True).get(namespace=params["namespace"],
                                                             label_selector=params["label"]).to_dict()["items"]
        pod = prometheus.choose_pod(pods, params["namespace"], params["label"])
        transport = prometheus.KubeProxyTransport(client.client.client, params["namespace"], pod, params["port"],
                                                  params["scheme"], params["timeout_s"])
        result = prometheus.run_operation(prometheus.PrometheusClient(transport=transport), params["operation"],
                                          params, params["dest_dir"], params.get("run_root"))
    except CoreException as exc:
        module.fail_from_exception(exc)
    except (PerfscaleError, OSError) as exc:
        module.fail_json(msg=str(exc))
    result["pod"] = "%s/%s" % (params["namespace"], pod)
    if result.pop("failed", False):
        module.fail_json(**result)
    module.exit_json(**result)


def main():
    run(AnsibleModule)


if __name__ == "__main__":
    main()
