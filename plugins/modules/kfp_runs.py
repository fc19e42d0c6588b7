#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kfp_runs
short_description: Submit Kubeflow Pipelines runs to a DataSciencePipelinesApplication, as a KFP notebook does
version_added: 0.4.0
description:
  - What the reference's KFP notebooks do in C(pipelines run_kfp_notebook) - upload the compiled
    pipeline O(pipeline_file) as pipeline O(name) (a new version when it exists), create or reuse the
    experiment C(experiment-NAME), submit O(run_count) runs C(NAME-run0), C(NAME-run1), ... O(run_delay)
    seconds apart, waiting for each to end with O(wait_for_run_completion).
  - Through KFP's v2beta1 REST API on the DSPA's API server C(ds-pipeline-DSPA), reached through the API
    server's service proxy (C(services/https:ds-pipeline-DSPA:8888/proxy/apis/v2beta1/...)) with the
    kubeconfig's credentials (they need C(services/proxy)) - no route, no token of a service account.
  - Writes into O(dest_dir) C(NAME_runs_submit.json) and C(NAME_runs_complete.json) (run name to the
    controller's ISO time, as the reference's notebook writes them) and C(runs.json) (the pipeline,
    version, experiment and runs as the API returned them).
  - In the C(perfscale.topsail.k8s) action group (the toolbox sets its connection).
author:
  - perfscale.topsail developers (@perfscale)
options:
  namespace:
    description: Namespace of the DSPA.
    type: str
    required: true
  dspa:
    description: Name of the DataSciencePipelinesApplication.
    type: str
    required: true
  scheme:
    description: Scheme of the API server's port (V(https) while the DSPA's C(podToPodTLS) is on, its default).
    type: str
    choices: [http, https]
    default: https
  port:
    description: The API server's port on its Service.
    type: str
    default: "8888"
  name:
    description: The pipeline's name and the runs' prefix.
    type: str
    required: true
  pipeline_file:
    description: The compiled KFP v2 pipeline (YAML).
    type: path
    required: true
  run_count:
    description: How many runs to submit.
    type: int
    default: 1
  run_delay:
    description: Seconds between two submissions.
    type: float
    default: 0
  wait_for_run_completion:
    description: Wait for each run to end before the next one (and record when it did).
    type: bool
    default: false
  run_timeout:
    description: Seconds to wait for one run with O(wait_for_run_completion).
    type: float
    default: 3600
  timeout:
    description: Seconds for one API request.
    type: float
    default: 60
  dest_dir:
    description: Where the records are written.
    type: path
    required: true
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
- name: Submit ten runs of the hello-world pipeline, 5 s apart
  perfscale.topsail.kfp_runs:
    namespace: pipelines-test
    dspa: sample
    name: user0-pl0
    pipeline_file: "{{ role_path }}/files/notebooks/hello-world/pipeline.yaml"
    run_count: 10
    run_delay: 5
    dest_dir: "{{ perfscale_artifact_dir }}/notebook-artifacts"
"""

RETURN = r"""
runs:
  description: The runs as the API returned them at submission (or at their end with O(wait_for_run_completion)).
  returned: success
  type: list
  elements: dict
pipeline_id:
  description: The pipeline's id.
  returned: success
  type: str
experiment_id:
  description: The experiment's id.
  returned: success
  type: str
submitted:
  description: Each run's name and when it was submitted (the controller's ISO time).
  returned: success
  type: dict
"""

import copy
import os

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import api_proxy, kfp_api
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts


def argspec():
    args = copy.deepcopy(AUTH_ARG_SPEC)
    args.update(
        namespace=dict(type="str", required=True),
        dspa=dict(type="str", required=True),
        scheme=dict(type="str", default="https", choices=["http", "https"]),
        port=dict(type="str", default="8888"),
        name=dict(type="str", required=True),
        pipeline_file=dict(type="path", required=True),
        run_count=dict(type="int", default=1),
        run_delay=dict(type="float", default=0),
        wait_for_run_completion=dict(type="bool", default=False),
        run_timeout=dict(type="float", default=3600),
        timeout=dict(type="float", default=60),
        dest_dir=dict(type="path", required=True),
    )
    return args


def run(module_class):
    """The module's work, with the AnsibleModule class given (on the controller, the action plugin of the same
    name does it in Ansible's worker with a stand-in: plugins/plugin_utils/kube_action.py)."""
    module = AnsibleK8SModule(module_class=module_class, argument_spec=argspec())
    params = module.params
    if params["run_count"] < 0:
        module.fail_json(msg="run_count: %d: expected 0 or more runs" % params["run_count"])
    try:
        content, _spec = kfp_api.load_pipeline_file(params["pipeline_file"])
        client = get_api_client(module=module)
        transport = api_proxy.ApiServerProxy(client.client.client, params["namespace"], "services",
                                             "ds-pipeline-%s" % params["dspa"], params["port"], params["scheme"],
                                             params["timeout"], error=kfp_api.KfpError)
        record = kfp_api.submit_runs(kfp_api.KfpClient(transport), params["name"], content, params["run_count"],
                                     params["run_delay"], params["wait_for_run_completion"], params["run_timeout"])
        artifacts.ensure_dir(params["dest_dir"])
        artifacts.write_json_atomic(os.path.join(params["dest_dir"], "%s_runs_submit.json" % params["name"]),
                                    record["submitted"])
        artifacts.write_json_atomic(os.path.join(params["dest_dir"], "%s_runs_complete.json" % params["name"]),
                                    record["completed"])
        artifacts.write_json_atomic(os.path.join(params["dest_dir"], "runs.json"), record)
    except CoreException as exc:
        module.fail_from_exception(exc)
    except (PerfscaleError, OSError) as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=bool(record["runs"]), runs=record["runs"], pipeline_id=record["pipeline"]["pipeline_id"],
                     experiment_id=record["experiment"]["experiment_id"], submitted=record["submitted"])


def main():
    run(AnsibleModule)


if __name__ == "__main__":
    main()
