# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""EC2 (Query API, XML answers) and EFS (REST, JSON) calls, signed with Signature Version 4.

Credentials as the AWS CLI takes them from the environment (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``); endpoints as the SDKs do
(``AWS_ENDPOINT_URL_EC2`` / ``AWS_ENDPOINT_URL_EFS``, else ``AWS_ENDPOINT_URL``, else the
service's public endpoint in the region): an S3-like stand-in (moto) for the tests, or a VPC
endpoint. A secret never reaches a message. Answers are parsed without their XML namespace
(AWS writes ``2016-11-15``, stand-ins mix versions).
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from xml.etree import ElementTree

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError
from ansible_collections.perfscale.topsail.plugins.module_utils.transfer.s3_client import (
    RETRIED_STATUSES, canonical_query, sign_v4)

EC2_VERSION = "2016-11-15"
EFS_VERSION = "2015-02-01"


class AwsError(PerfscaleError):
    """An AWS call that failed: ``status`` (None when not reached) and AWS's error ``code``."""

    def __init__(self, message, status=None, code=None):
        super().__init__(message)
        self.status = status
        self.code = code


class Credentials:
    def __init__(self, access_key, secret_key, session_token=None):
        self.access_key = access_key
        self.secret_key = secret_key
        self.session_token = session_token or None

    @classmethod
    def from_environ(cls, environ):
        missing = [name for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if not environ.get(name)]
        if missing:
            raise AwsError("AWS credentials: %s not set in the environment (as for the AWS CLI)" % " and ".join(missing))
        return cls(environ["AWS_ACCESS_KEY_ID"], environ["AWS_SECRET_ACCESS_KEY"], environ.get("AWS_SESSION_TOKEN"))


def endpoint_url(service_id, region, environ):
    """The endpoint of ``service_id`` (``EC2``, ``EFS``): the SDKs' environment variables, else AWS's."""
    url = environ.get("AWS_ENDPOINT_URL_%s" % service_id) or environ.get("AWS_ENDPOINT_URL")
    if url:
        return url
    host = {"EC2": "ec2", "EFS": "elasticfilesystem"}[service_id]
    return "https://%s.%s.amazonaws.com" % (host, region)


def strip_namespaces(element):
    for node in element.iter():
        if isinstance(node.tag, str) and node.tag.startswith("{"):
            node.tag = node.tag.split("}", 1)[1]
    return element


class AwsClient:
    """One signed HTTP request at a time; 5xx and lost connections tried again ``retries`` times."""

    service = None
    service_id = None

    def __init__(self, region, credentials, environ=None, timeout=30, retries=2):
        url = endpoint_url(self.service_id, region, environ or {})
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise AwsError("%s endpoint %r: expected http(s)://host[:port]" % (self.service_id, url))
        self.scheme, self.host, self.base_path = parsed.scheme, parsed.netloc, parsed.path.rstrip("/")
        self.region = region
        self.credentials = credentials
        self.timeout = timeout
        self.retries = retries

    def send(self, method, path, query=None, body=b"", content_type=None):
        full_path = self.base_path + path
        attempt = 0
        while True:
            extra = {"content-type": content_type} if content_type else {}
            headers = sign_v4(method, self.host, full_path, query, body, self.service, self.region,
                              self.credentials.access_key, self.credentials.secret_key,
                              session_token=self.credentials.session_token, extra_headers=extra)
            target = urllib.parse.quote(full_path, safe="/-_.~") + ("?" + canonical_query(query) if query else "")
            connection_class = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            connection = connection_class(self.host, timeout=self.timeout)
            try:
                connection.request(method, target, body=body or None, headers=headers)
                response = connection.getresponse()
                # an answer is a few KiB: a server sending more than a document's limit is not AWS
                status, data = response.status, response.read(bounded_input.MAX_DOCUMENT_BYTES + 1)
            except (OSError, http.client.HTTPException) as exc:
                if attempt < self.retries:
                    attempt += 1
                    time.sleep(0.2 * 2 ** attempt)
                    continue
                raise AwsError("%s %s %s://%s%s: %s" % (self.service_id, method, self.scheme, self.host, path, exc)) \
                    from None
            finally:
                connection.close()
            if status in RETRIED_STATUSES and attempt < self.retries:
                attempt += 1
                time.sleep(0.2 * 2 ** attempt)
                continue
            limit = bounded_input.MAX_DOCUMENT_BYTES
            if len(data) > limit:
                raise AwsError("%s %s %s: the answer is larger than %d bytes" % (self.service_id, method, path, limit))
            return status, data


class Ec2(AwsClient):
    service = "ec2"
    service_id = "EC2"

    def call(self, action, params=None):
        """The answer of ``action`` as an ElementTree element, namespaces stripped."""
        form = {"Action": action, "Version": EC2_VERSION}
        form.update({k: str(v) for k, v in (params or {}).items()})
        body = urllib.parse.urlencode(sorted(form.items())).encode("utf-8")
        status, data = self.send("POST", "/", body=body, content_type="application/x-www-form-urlencoded; charset=utf-8")
        try:
            root = strip_namespaces(ElementTree.fromstring(data)) if data else None
        except ElementTree.ParseError:
            root = None
        if status >= 300:
            code = root.findtext(".//Error/Code") if root is not None else None
            message = root.findtext(".//Error/Message") if root is not None else None
            raise AwsError("EC2 %s: %s %s%s" % (action, status, code or "error", ": " + message if message else ""),
                           status=status, code=code)
        if root is None:
            raise AwsError("EC2 %s: the answer is not XML" % action)
        return root

    @staticmethod
    def filters(values):
        """``{name: value or [values]}`` as the Query API's ``Filter.N.Name`` / ``Filter.N.Value.M``."""
        params = {}
        for index, (name, value) in enumerate(sorted(values.items()), start=1):
            params["Filter.%d.Name" % index] = name
            for position, item in enumerate(value if isinstance(value, (list, tuple)) else [value], start=1):
                params["Filter.%d.Value.%d" % (index, position)] = item
        return params

    @staticmethod
    def _tags(item):
        return {t.findtext("key"): t.findtext("value") or "" for t in item.findall("tagSet/item")}

    def describe_instances(self, instance_ids=(), filters=None):
        params = {"InstanceId.%d" % i: v for i, v in enumerate(instance_ids, start=1)}
        params.update(self.filters(filters or {}))
        root = self.call("DescribeInstances", params)
        return [{"instance_id": item.findtext("instanceId"), "vpc_id": item.findtext("vpcId"),
                 "subnet_id": item.findtext("subnetId"), "tags": self._tags(item),
                 "security_groups": [g.findtext("groupId") for g in item.findall("groupSet/item")]}
                for item in root.findall("reservationSet/item/instancesSet/item")]

    def describe_subnets(self, filters):
        root = self.call("DescribeSubnets", self.filters(filters))
        return [{"subnet_id": item.findtext("subnetId"), "vpc_id": item.findtext("vpcId"),
                 "availability_zone": item.findtext("availabilityZone"), "cidr": item.findtext("cidrBlock"),
                 "tags": self._tags(item)} for item in root.findall("subnetSet/item")]

    def describe_vpc_cidr(self, vpc_id):
        root = self.call("DescribeVpcs", {"VpcId.1": vpc_id})
        cidr = root.findtext("vpcSet/item/cidrBlock")
        if not cidr:
            raise AwsError("EC2 DescribeVpcs: VPC %s has no CIDR block" % vpc_id)
        return cidr

    def describe_security_group(self, group_id):
        root = self.call("DescribeSecurityGroups", {"GroupId.1": group_id})
        item = root.find("securityGroupInfo/item")
        if item is None:
            raise AwsError("EC2 DescribeSecurityGroups: no security group %s" % group_id)
        rules = []
        for rule in item.findall("ipPermissions/item"):
            rules.append({"protocol": rule.findtext("ipProtocol"), "from": rule.findtext("fromPort"),
                          "to": rule.findtext("toPort"),
                          "cidrs": [r.findtext("cidrIp") for r in rule.findall("ipRanges/item")]})
        return {"group_id": item.findtext("groupId"), "group_name": item.findtext("groupName"),
                "vpc_id": item.findtext("vpcId"), "ingress": rules}

    def authorize_ingress(self, group_id, protocol, port, cidr, description):
        self.call("AuthorizeSecurityGroupIngress", {
            "GroupId": group_id, "IpPermissions.1.IpProtocol": protocol, "IpPermissions.1.FromPort": port,
            "IpPermissions.1.ToPort": port, "IpPermissions.1.IpRanges.1.CidrIp": cidr,
            "IpPermissions.1.IpRanges.1.Description": description})


class Efs(AwsClient):
    service = "elasticfilesystem"
    service_id = "EFS"

    def call(self, method, path, query=None, payload=None):
        body = json.dumps(payload).encode("utf-8") if payload is not None else b""
        status, data = self.send(method, "/%s%s" % (EFS_VERSION, path), query=query, body=body,
                                 content_type="application/json" if payload is not None else None)
        try:
            answer = bounded_input.load_json(data.decode("utf-8", "replace"), "EFS %s %s" % (method, path)) if data else {}
        except bounded_input.InputError:
            answer = None
        if status >= 300:
            answer = answer if isinstance(answer, dict) else {}
            code = answer.get("ErrorCode") or answer.get("__type") or answer.get("code")
            message = answer.get("Message") or answer.get("message")
            raise AwsError("EFS %s %s: %s %s%s" % (method, path, status, code or "error",
                                                   ": " + message if message else ""), status=status, code=code)
        if not isinstance(answer, dict):
            raise AwsError("EFS %s %s: the answer is not a JSON object" % (method, path))
        return answer

    def file_systems(self, creation_token):
        return self.call("GET", "/file-systems", query={"CreationToken": creation_token}).get("FileSystems") or []

    def create_file_system(self, creation_token, tags):
        return self.call("POST", "/file-systems", payload={
            "CreationToken": creation_token, "PerformanceMode": "generalPurpose", "Encrypted": True,
            "Tags": [{"Key": k, "Value": v} for k, v in sorted(tags.items())]})

    def file_system(self, file_system_id):
        found = self.call("GET", "/file-systems", query={"FileSystemId": file_system_id}).get("FileSystems") or []
        if not found:
            raise AwsError("EFS: no file system %s" % file_system_id)
        return found[0]

    def mount_targets(self, file_system_id):
        return self.call("GET", "/mount-targets", query={"FileSystemId": file_system_id}).get("MountTargets") or []

    def create_mount_target(self, file_system_id, subnet_id, security_groups):
        return self.call("POST", "/mount-targets", payload={"FileSystemId": file_system_id, "SubnetId": subnet_id,
                                                            "SecurityGroups": list(security_groups)})
