# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An EFS file system for an OpenShift cluster on AWS, as the reference's ``storage deploy_aws_efs`` makes it.

From one worker's instance (its VPC and first security group) and the subnets of the cluster's
MachineSets (their ``tag:Name`` filters; else the workers' own subnets): NFS (tcp 2049) allowed
into that security group from the VPC's CIDR, a file system whose creation token is
``EFS <infra id>`` (tagged ``Name: <infra id>``, ``kubernetes.io/cluster/<infra id>: owned``),
and one mount target per availability zone of those subnets, waited for until available.
Idempotent: what exists is found (the token, the rule, the subnet's mount target) and kept.
"""

from __future__ import annotations

import time

from ansible_collections.perfscale.topsail.plugins.module_utils.aws.api import AwsError

NFS_PORT = 2049
RULE_DESCRIPTION = "Allow NFS communications"


def creation_token(infra_id):
    return "EFS %s" % infra_id


def _rule_present(group, cidr):
    for rule in group["ingress"]:
        if rule["protocol"] in ("tcp", "6", "-1") and cidr in rule["cidrs"]:
            if rule["protocol"] == "-1" or (int(rule["from"] or 0) <= NFS_PORT <= int(rule["to"] or 0)):
                return True
    return False


def _wait(what, check, timeout_s, sleep, clock):
    deadline = clock() + timeout_s
    while True:
        state = check()
        if state is True:
            return
        if clock() > deadline:
            raise AwsError("EFS: %s not available after %d s (%s)" % (what, timeout_s, state))
        sleep(5)


def ensure_file_system(ec2, efs, instance_id, infra_id, subnet_names=(), timeout_s=600, sleep=time.sleep,
                       clock=time.monotonic):
    """Make (or find) the file system and its network; returns what it found and did (``actions``)."""
    actions = []
    instances = ec2.describe_instances([instance_id])
    if not instances:
        raise AwsError("EC2: instance %s (the first worker's machine) not found" % instance_id)
    instance = instances[0]
    vpc_id = instance["vpc_id"]
    if not instance["security_groups"]:
        raise AwsError("EC2: instance %s has no security group" % instance_id)
    group_id = instance["security_groups"][0]

    subnets = []
    for name in subnet_names:
        found = ec2.describe_subnets({"vpc-id": vpc_id, "tag:Name": name})
        if not found:
            raise AwsError("EC2: no subnet named %r in VPC %s (from the MachineSets' subnet filters)" % (name, vpc_id))
        subnets.append(found[0])
    if not subnets:
        # MachineSets that name their subnet by id: the workers' own subnets
        workers = ec2.describe_instances(filters={"vpc-id": vpc_id, "tag:kubernetes.io/cluster/%s" % infra_id: "owned"})
        ids = sorted({w["subnet_id"] for w in workers if w["subnet_id"]} | {instance["subnet_id"]})
        subnets = ec2.describe_subnets({"subnet-id": ids})
    by_zone = {}
    for subnet in subnets:
        by_zone.setdefault(subnet["availability_zone"], subnet)

    cidr = ec2.describe_vpc_cidr(vpc_id)
    group = ec2.describe_security_group(group_id)
    if not _rule_present(group, cidr):
        ec2.authorize_ingress(group_id, "tcp", NFS_PORT, cidr, RULE_DESCRIPTION)
        actions.append("allowed NFS (tcp %d) from %s into security group %s" % (NFS_PORT, cidr, group_id))

    token = creation_token(infra_id)
    existing = [fs for fs in efs.file_systems(token) if fs.get("LifeCycleState") not in ("deleting", "deleted")]
    if existing:
        file_system = existing[0]
    else:
        file_system = efs.create_file_system(token, {"Name": infra_id, "kubernetes.io/cluster/%s" % infra_id: "owned"})
        actions.append("created file system %s (creation token %r)" % (file_system["FileSystemId"], token))
    fs_id = file_system["FileSystemId"]

    def available():
        state = efs.file_system(fs_id).get("LifeCycleState")
        return True if state == "available" else "file system %s" % state
    _wait("file system %s" % fs_id, available, timeout_s, sleep, clock)

    targets = {t["SubnetId"]: t for t in efs.mount_targets(fs_id)}
    zones_with_target = {t.get("AvailabilityZoneName") for t in targets.values()}
    for zone, subnet in sorted(by_zone.items()):
        if subnet["subnet_id"] in targets or zone in zones_with_target:
            continue
        created = efs.create_mount_target(fs_id, subnet["subnet_id"], [group_id])
        targets[subnet["subnet_id"]] = created
        actions.append("created mount target %s in %s (%s)" % (created.get("MountTargetId"), subnet["subnet_id"], zone))

    def targets_available():
        states = {t["SubnetId"]: t.get("LifeCycleState") for t in efs.mount_targets(fs_id)}
        waiting = sorted(s for s, state in states.items() if state != "available")
        return True if not waiting else "mount targets not available yet: %s" % ", ".join(waiting)
    _wait("the mount targets of %s" % fs_id, targets_available, timeout_s, sleep, clock)

    return {"file_system_id": fs_id, "creation_token": token, "vpc_id": vpc_id, "vpc_cidr": cidr,
            "security_group_id": group_id, "subnets": sorted(s["subnet_id"] for s in by_zone.values()),
            "mount_targets": sorted(t.get("MountTargetId") for t in efs.mount_targets(fs_id)),
            "actions": actions, "changed": bool(actions)}
