#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: multi_user_collect
short_description: Bring the users of a multi-user scale test back and summarize them
version_added: 0.2.0
description:
  - The users of a C(local_ci run_multi) test are the pods of one Indexed Job (one completion
    index per user). For each user, its newest pod's log - the report C(multi_user_pod.py)
    writes there - becomes C(NNN__user_<i>/) in O(dest) (C(user.json), C(exit_code), C(FAILURE)
    when it failed, and the user's artifacts when they were retrieved). The logs are read in
    parallel (O(workers)).
  - Writes C(multi_user_summary.json) and C(multi_user_summary.txt) - success per user, the spread
    of the moments users passed the barrier and started (start skew), barrier wait and duration
    statistics - and returns the summary.
  - A user without a pod, or whose log holds no report, counts as failed and says why.
  - Uses the C(kubernetes.core) client (same connection options; in the C(perfscale.topsail.k8s)
    action group). Makes no change to the cluster.
author:
  - perfscale.topsail developers (@perfscale)
options:
  namespace:
    description: Namespace of the Job.
    type: str
    required: true
  job_name:
    description: Name of the Job whose pods are the users.
    type: str
    required: true
  user_count:
    description: Number of users (the Job's completions).
    type: int
    required: true
  dest:
    description: Directory the C(NNN__user_<i>/) directories and the summary are written in.
    type: path
    required: true
  need_all_success:
    description:
      - The verdict (C(ok) in RV(summary)) requires every user to succeed; otherwise one is enough.
    type: bool
    default: false
  workers:
    description: Logs read at once.
    type: int
    default: 8
  s3:
    description:
      - The S3 store the users uploaded their artifacts to (C(local_ci run_multi) with MinIO) - C(endpoint_url)
        (as this controller reaches it), C(bucket), C(access_key), C(secret_key). Each user's archive named in its
        C(user.json) is downloaded and unpacked into its directory.
    type: dict
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
- name: Collect the users of the test
  perfscale.topsail.multi_user_collect:
    namespace: topsail
    job_name: topsail
    user_count: 100
    dest: "{{ perfscale_artifact_dir }}"
  register: users
"""

RETURN = r"""
summary:
  description:
    - C(user_count), C(succeeded), C(failed), C(success) (user index to true/false),
      C(failed_users) (index, exit code, error), C(barrier), C(barrier_skew_s), C(start_skew_s),
      C(barrier_wait_s) and C(duration_s) (count, min, median, p90, max), C(ok) (the verdict).
  returned: success
  type: dict
"""

import concurrent.futures
import copy
import os

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import multi_user
from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import s3_client

try:
    from kubernetes.dynamic.exceptions import DynamicApiError
except ImportError:  # AnsibleK8SModule reports the missing kubernetes library
    DynamicApiError = OSError


def argspec():
    args = copy.deepcopy(AUTH_ARG_SPEC)
    args.update(
        namespace=dict(type="str", required=True),
        job_name=dict(type="str", required=True),
        user_count=dict(type="int", required=True),
        dest=dict(type="path", required=True),
        need_all_success=dict(type="bool", default=False),
        workers=dict(type="int", default=8),
        s3=dict(type="dict", no_log=True),
    )
    return args


def execute_module(svc, params):
    pods_api = svc.find_resource("Pod", "v1", fail=True)
    listed = pods_api.get(namespace=params["namespace"], label_selector="job-name=%s" % params["job_name"]).to_dict()
    latest = multi_user.latest_pod_per_user(listed.get("items") or [])
    count = params["user_count"]
    store = params.get("s3")
    client = None
    if store:
        client = s3_client.S3Client(store.get("endpoint_url"), store.get("access_key") or "", store.get("secret_key") or "")

    def collect(index):
        pod = latest[index]
        try:
            log = pods_api.log.get(name=pod["metadata"]["name"], namespace=params["namespace"],
                                   serialize=False).data.decode("utf-8", "replace")
        except DynamicApiError:
            log = None
        directory = os.path.join(params["dest"], multi_user.user_dir_name(index, count))
        fetch = None
        if client is not None:
            def fetch(directory, record):
                return multi_user.fetch_s3_artifacts(directory, record, client, store.get("bucket"))
        return index, multi_user.collect_user(directory, index, pod, log, fetch)

    records = {}
    wanted = sorted(i for i in latest if 0 <= i < count)
    with concurrent.futures.ThreadPoolExecutor(max(1, params["workers"])) as pool:
        for index, record in pool.map(collect, wanted):
            records[index] = record
    for index in range(count):
        if index not in records:
            directory = os.path.join(params["dest"], multi_user.user_dir_name(index, count))
            os.makedirs(directory, exist_ok=True)
            artifacts.write_failure(directory, "user %d: no pod ran for this user" % index)
    summary = multi_user.summarize(records, count, params["need_all_success"])
    artifacts.write_json_atomic(os.path.join(params["dest"], multi_user.SUMMARY_FILE), summary)
    artifacts.write_text_atomic(os.path.join(params["dest"], multi_user.SUMMARY_TEXT), multi_user.summary_text(summary))
    return {"changed": True, "summary": summary, "msg": multi_user.summary_text(summary).splitlines()[0]}


def run(module_class):
    """The module's work, with the AnsibleModule class given (on the controller, the action plugin of the same
    name does it in Ansible's worker with a stand-in: plugins/plugin_utils/kube_action.py)."""
    module = AnsibleK8SModule(module_class=module_class, argument_spec=argspec(), supports_check_mode=False)
    if module.params["user_count"] < 1:
        module.fail_json(msg="multi_user_collect: user_count %d: expected at least 1" % module.params["user_count"])
    try:
        svc = K8sService(get_api_client(module=module), module)
        module.exit_json(**execute_module(svc, module.params))
    except CoreException as exc:
        module.fail_from_exception(exc)
    except s3_client.S3Error as exc:
        module.fail_json(msg="multi_user_collect: %s" % exc)
    except OSError as exc:
        module.fail_json(msg="multi_user_collect: %s: %s" % (exc.filename or module.params["dest"], exc.strerror or exc))


def main():
    run(AnsibleModule)


if __name__ == "__main__":
    main()
