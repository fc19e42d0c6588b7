# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The few S3 calls a user pod and the controller need, with the standard library only.

Path-style requests (``<endpoint>/<bucket>/<key>``: MinIO, Ceph RGW, any S3-compatible store)
signed with AWS Signature Version 4 (``UNSIGNED-PAYLOAD`` is not used: the payload's SHA-256 is
signed). A user pod loads this file by path (``multi_user_pod.py``), so it imports nothing of the
collection but ``config/secrets.py`` (standard library only), by its path when there is no package.

The keys never leave in an error: every request runs under the ``SecretMask`` of both keys (an error
answer or a connection error that quotes them is masked), and a key with a line break is refused
before anything is sent. The secret key itself never travels (Signature Version 4 signs with it),
so a plain http:// endpoint (an in-cluster MinIO) stays allowed.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import http.client
import importlib.util
import os
import time
import urllib.parse
from xml.etree import ElementTree

try:
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
except ImportError:  # loaded by path (a user pod): the sibling module by its path
    _SPEC = importlib.util.spec_from_file_location(
        "perfscale_secrets", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config",
                                          "secrets.py"))
    secret_refs = importlib.util.module_from_spec(_SPEC)
    _SPEC.loader.exec_module(secret_refs)

SERVICE = "s3"
XML_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
# statuses worth a second try: the store is busy or restarting
RETRIED_STATUSES = (500, 502, 503, 504)


class S3Error(Exception):
    """An S3 request that failed: the HTTP status (None when the server was not reached) and one line."""

    def __init__(self, message, status=None, code=None):
        super().__init__(message)
        self.status = status
        self.code = code


def _sign(key, message):
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def _quote(path):
    return urllib.parse.quote(path, safe="/-_.~")


def canonical_query(query):
    return "&".join("%s=%s" % (urllib.parse.quote(str(k), safe="-_.~"), urllib.parse.quote(str(v), safe="-_.~"))
                    for k, v in sorted((query or {}).items()))


def _error_code(body, reason):
    text = body[:2000].decode("utf-8", "replace")
    return text.split("<Code>", 1)[1].split("</Code>", 1)[0] if "<Code>" in text else reason


def sign_v4(method, host, path, query, payload, service, region, access_key, secret_key, now=None,
            content_sha256=False, session_token=None, extra_headers=None):
    """The headers of an AWS Signature Version 4 request (``host``, ``x-amz-date``, the payload's
    SHA-256 as ``x-amz-content-sha256`` when asked - S3 wants it -, ``x-amz-security-token`` with
    temporary credentials, ``extra_headers`` signed too, and ``authorization``) for any AWS service."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    digest = hashlib.sha256(payload).hexdigest()
    headers = {"host": host, "x-amz-date": stamp}
    if content_sha256:
        headers["x-amz-content-sha256"] = digest
    if session_token:
        headers["x-amz-security-token"] = session_token
    headers.update({k.lower(): v for k, v in (extra_headers or {}).items()})
    signed = ";".join(sorted(headers))
    canonical = "\n".join([method, _quote(path), canonical_query(query),
                           "".join("%s:%s\n" % (k, headers[k]) for k in sorted(headers)), signed, digest])
    scope = "%s/%s/%s/aws4_request" % (day, region, service)
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode("utf-8")).hexdigest()])
    key = _sign(_sign(_sign(_sign(("AWS4" + secret_key).encode("utf-8"), day), region), service), "aws4_request")
    signature = hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    headers["authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        access_key, scope, signed, signature)
    return headers


class S3Client:
    """``retries``: how many times a request is sent again when the store could not be reached
    or answered 5xx (with a growing pause); 4xx answers (credentials, missing key) are final."""

    def __init__(self, endpoint_url, access_key, secret_key, region="us-east-1", timeout=60, retries=2):
        parsed = urllib.parse.urlsplit(endpoint_url or "")
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise S3Error("S3 endpoint %r: expected http(s)://host[:port]" % endpoint_url)
        for value, what in ((access_key, "the S3 access key"), (secret_key, "the S3 secret key")):
            problem = secret_refs.header_problem(value, what)
            if problem:
                raise S3Error(problem)
        self._mask = secret_refs.SecretMask([access_key, secret_key])
        self.endpoint = "%s://%s" % (parsed.scheme, parsed.netloc)
        self.host = parsed.netloc
        self.access_key = access_key
        self.secret_key = secret_key
        self.region = region
        self.timeout = timeout
        self.retries = retries

    def _headers(self, method, path, payload, now=None, query=None):
        return sign_v4(method, self.host, path, query, payload, SERVICE, self.region, self.access_key,
                       self.secret_key, now=now, content_sha256=True)

    def _send_once(self, method, path, query, payload, sink):
        headers = self._headers(method, path, payload, query=query)
        headers["content-type"] = "application/octet-stream"
        headers["content-length"] = str(len(payload))
        if payload:
            # the store checks the bytes it received against this (BadDigest otherwise)
            headers["content-md5"] = base64.b64encode(hashlib.md5(payload).digest()).decode("ascii")  # nosec B324
        target = _quote(path) + ("?" + canonical_query(query) if query else "")
        # http.client, not urllib: the user pod has no Ansible, and nothing here follows redirects
        connection_class = http.client.HTTPSConnection if self.endpoint.startswith("https:") else http.client.HTTPConnection
        connection = connection_class(self.host, timeout=self.timeout)
        try:
            connection.request(method, target, body=payload if payload else None, headers=headers)
            response = connection.getresponse()
            if response.status < 300 and sink is not None:
                for chunk in iter(lambda: response.read(1 << 20), b""):
                    sink(chunk)
                body = b""
            else:
                body = response.read()
            return response.status, response.reason, dict((k.lower(), v) for k, v in response.getheaders()), body
        finally:
            connection.close()

    def _request(self, method, bucket, key="", payload=b"", query=None, sink=None):
        """Send one request (again on a 5xx or a lost connection); the answer's headers and body.
        ``sink`` receives the body of a successful answer in chunks instead. Errors leave masked of the keys."""
        with self._mask.guard(S3Error, keep=(S3Error,)):
            return self._request_unmasked(method, bucket, key, payload, query, sink)

    def _request_unmasked(self, method, bucket, key, payload, query, sink):
        path = "/%s/%s" % (bucket, key) if key else "/%s" % bucket
        attempt = 0
        while True:
            try:
                status, reason, headers, body = self._send_once(method, path, query, payload, sink)
            except (OSError, http.client.HTTPException) as exc:
                if attempt < self.retries and sink is None:
                    attempt += 1
                    time.sleep(0.2 * 2 ** attempt)
                    continue
                raise S3Error("%s %s%s: %s" % (method, self.endpoint, path, exc)) from None
            if status in RETRIED_STATUSES and attempt < self.retries:
                attempt += 1
                time.sleep(0.2 * 2 ** attempt)
                continue
            if status >= 300:
                code = _error_code(body, reason)
                raise S3Error("%s %s/%s: %s %s" % (method, bucket, key, status, code), status=status, code=code)
            return headers, body

    def put_object(self, bucket, key, data):
        """Upload ``data``; returns the store's ETag (without quotes)."""
        headers, _body = self._request("PUT", bucket, key, data)
        return headers.get("etag", "").strip('"')

    def get_object(self, bucket, key):
        return self._request("GET", bucket, key)[1]

    def get_object_into(self, bucket, key, handle):
        """Stream the object into the binary file ``handle``."""
        self._request("GET", bucket, key, sink=handle.write)

    def create_bucket(self, bucket):
        self._request("PUT", bucket)

    def list_objects(self, bucket, prefix=""):
        """{key: {"size": int, "etag": str}} of the objects under ``prefix`` (ListObjectsV2, every page)."""
        found, token = {}, None
        while True:
            query = {"list-type": "2", "prefix": prefix}
            if token:
                query["continuation-token"] = token
            root = ElementTree.fromstring(self._request("GET", bucket, query=query)[1])  # nosec B314 - the store's answer
            for item in root.iter(XML_NS + "Contents"):
                found[item.findtext(XML_NS + "Key")] = {
                    "size": int(item.findtext(XML_NS + "Size") or 0),
                    "etag": (item.findtext(XML_NS + "ETag") or "").strip('"')}
            if (root.findtext(XML_NS + "IsTruncated") or "false").lower() != "true":
                return found
            token = root.findtext(XML_NS + "NextContinuationToken")

    def put_multipart(self, bucket, key, parts):
        """Upload an object in parts (``parts``: an iterable of bytes, each but the last at least
        5 MiB); aborted on a failure, so no orphan parts stay in the store. Returns the ETag."""
        root = ElementTree.fromstring(self._request("POST", bucket, key, query={"uploads": ""})[1])  # nosec B314
        upload_id = root.findtext(XML_NS + "UploadId") or root.findtext("UploadId")
        done = []
        try:
            for number, data in enumerate(parts, start=1):
                headers, _body = self._request("PUT", bucket, key, data,
                                               query={"partNumber": str(number), "uploadId": upload_id})
                done.append((number, headers.get("etag", "")))
            document = "<CompleteMultipartUpload>%s</CompleteMultipartUpload>" % "".join(
                "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>" % (number, etag) for number, etag in done)
            _headers, body = self._request("POST", bucket, key, document.encode("utf-8"), query={"uploadId": upload_id})
        except S3Error:
            try:
                self._request("DELETE", bucket, key, query={"uploadId": upload_id})
            except S3Error:
                pass  # the first error is the one to report; the store expires orphan parts itself
            raise
        answer = ElementTree.fromstring(body)  # nosec B314
        return (answer.findtext(XML_NS + "ETag") or answer.findtext("ETag") or "").strip('"')
