#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: aws_efs
short_description: An EFS file system for an OpenShift cluster on AWS, with its network
version_added: 0.4.0
description:
  - From a worker's EC2 instance (its VPC, its first security group) and the cluster's subnets (by their
    C(Name) tag, as the MachineSets filter them; none - the workers' own subnets), allows NFS (tcp 2049)
    into that security group from the VPC's CIDR, makes the EFS file system whose creation token is
    C(EFS <infra_id>) (encrypted, tagged C(Name) and C(kubernetes.io/cluster/<infra_id>=owned)) and one
    mount target per availability zone, and waits until all are available. What exists is found and
    kept; the result is changed only when something was made (RV(actions) says what).
  - Credentials from the environment as the AWS CLI reads them (C(AWS_ACCESS_KEY_ID),
    C(AWS_SECRET_ACCESS_KEY), C(AWS_SESSION_TOKEN)); endpoints from C(AWS_ENDPOINT_URL_EC2),
    C(AWS_ENDPOINT_URL_EFS) or C(AWS_ENDPOINT_URL), else AWS's in O(region). Standard library only (no
    boto3); a secret never reaches a message.
author:
  - perfscale.topsail developers (@perfscale)
options:
  instance_id:
    description: The EC2 instance of a worker (its Machine's C(status.providerStatus.instanceId)).
    type: str
    required: true
  infra_id:
    description: The cluster's infrastructure name (C(kubernetes.io/cluster/<infra_id>)).
    type: str
    required: true
  region:
    description: The AWS region.
    type: str
    required: true
  subnet_names:
    description: The C(Name) tags of the subnets that get a mount target.
    type: list
    elements: str
    default: []
  timeout:
    description: Seconds to wait for the file system and its mount targets.
    type: int
    default: 600
extends_documentation_fragment:
  - perfscale.topsail.action_attributes.module
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
"""

EXAMPLES = r"""
- name: Make the cluster's EFS file system
  perfscale.topsail.aws_efs:
    instance_id: i-0a1b2c3d4e5f67890
    infra_id: perf-x7k2p
    region: us-east-1
    subnet_names: [perf-x7k2p-subnet-private-us-east-1a]
  register: efs
"""

RETURN = r"""
file_system_id:
  description: The file system's id.
  returned: success
  type: str
vpc_id:
  description: The cluster's VPC.
  returned: success
  type: str
security_group_id:
  description: The security group NFS was allowed into.
  returned: success
  type: str
subnets:
  description: The subnets with a mount target (one per availability zone).
  returned: success
  type: list
  elements: str
mount_targets:
  description: The file system's mount targets.
  returned: success
  type: list
  elements: str
actions:
  description: What was made, one line each (empty when everything existed).
  returned: success
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.perfscale.topsail.plugins.module_utils.aws import api, efs


def main():
    module = AnsibleModule(argument_spec=dict(
        instance_id=dict(type="str", required=True),
        infra_id=dict(type="str", required=True),
        region=dict(type="str", required=True),
        subnet_names=dict(type="list", elements="str", default=[]),
        timeout=dict(type="int", default=600),
    ), supports_check_mode=False)
    params = module.params
    try:
        credentials = api.Credentials.from_environ(os.environ)
        ec2 = api.Ec2(params["region"], credentials, os.environ)
        filesystems = api.Efs(params["region"], credentials, os.environ)
        result = efs.ensure_file_system(ec2, filesystems, params["instance_id"], params["infra_id"],
                                        params["subnet_names"], timeout_s=params["timeout"])
    except api.AwsError as exc:
        module.fail_json(msg="aws_efs: %s" % exc)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
