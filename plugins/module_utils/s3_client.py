# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The few S3 calls a user pod and the controller need, with the standard library only.

Path-style requests (``<endpoint>/<bucket>/<key>``: MinIO, Ceph RGW, any S3-compatible store)
signed with AWS Signature Version 4 (``UNSIGNED-PAYLOAD`` is not used: the payload's SHA-256 is
signed). A user pod loads this file by path (``multi_user_pod.py``), so it imports nothing of the
collection.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import http.client
import urllib.parse

SERVICE = "s3"


class S3Error(Exception):
    """An S3 request that failed: the HTTP status (None when the server was not reached) and one line."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def _sign(key, message):
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def _quote(path):
    return urllib.parse.quote(path, safe="/-_.~")


class S3Client:
    def __init__(self, endpoint_url, access_key, secret_key, region="us-east-1", timeout=60):
        parsed = urllib.parse.urlsplit(endpoint_url or "")
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise S3Error("S3 endpoint %r: expected http(s)://host[:port]" % endpoint_url)
        self.endpoint = "%s://%s" % (parsed.scheme, parsed.netloc)
        self.host = parsed.netloc
        self.access_key = access_key
        self.secret_key = secret_key
        self.region = region
        self.timeout = timeout

    def _headers(self, method, path, payload, now=None):
        now = now or datetime.datetime.now(datetime.timezone.utc)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        digest = hashlib.sha256(payload).hexdigest()
        headers = {"host": self.host, "x-amz-content-sha256": digest, "x-amz-date": stamp}
        signed = ";".join(sorted(headers))
        canonical = "\n".join([method, _quote(path), "", "".join("%s:%s\n" % (k, headers[k]) for k in sorted(headers)),
                               signed, digest])
        scope = "%s/%s/%s/aws4_request" % (day, self.region, SERVICE)
        to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode("utf-8")).hexdigest()])
        key = _sign(_sign(_sign(_sign(("AWS4" + self.secret_key).encode("utf-8"), day), self.region), SERVICE),
                    "aws4_request")
        signature = hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
        headers["authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
            self.access_key, scope, signed, signature)
        return headers

    def _request(self, method, bucket, key="", payload=b""):
        path = "/%s/%s" % (bucket, key) if key else "/%s" % bucket
        headers = self._headers(method, path, payload)
        headers["content-type"] = "application/octet-stream"
        headers["content-length"] = str(len(payload))
        # http.client, not urllib: the user pod has no Ansible, and nothing here follows redirects
        connection_class = http.client.HTTPSConnection if self.endpoint.startswith("https:") else http.client.HTTPConnection
        connection = connection_class(self.host, timeout=self.timeout)
        try:
            connection.request(method, _quote(path), body=payload if method == "PUT" else None, headers=headers)
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise S3Error("%s %s%s: %s" % (method, self.endpoint, path, exc)) from None
        finally:
            connection.close()
        if response.status >= 300:
            text = body[:2000].decode("utf-8", "replace")
            code = text.split("<Code>", 1)[1].split("</Code>", 1)[0] if "<Code>" in text else response.reason
            raise S3Error("%s %s/%s: %s %s" % (method, bucket, key, response.status, code), status=response.status)
        return body

    def put_object(self, bucket, key, data):
        self._request("PUT", bucket, key, data)

    def get_object(self, bucket, key):
        return self._request("GET", bucket, key)

    def create_bucket(self, bucket):
        self._request("PUT", bucket)
