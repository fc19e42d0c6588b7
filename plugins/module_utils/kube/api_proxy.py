# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pod's or a service's HTTP port reached through the API server's proxy subresource.

``/api/v1/namespaces/<ns>/{pods|services}/[<scheme>:]<name>:<port>/proxy/<path>``: no route, no
port-forward, no DNS name the controller must resolve; the caller's credentials are the
kubeconfig's (they need ``pods/proxy`` or ``services/proxy``). The API server does not verify the
certificate of an ``https`` target. ``api_client`` is a ``kubernetes`` ``ApiClient``.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

KINDS = ("pods", "services")


class ProxyError(PerfscaleError):
    """The API server could not be asked (connection, TLS): one line."""


class ApiServerProxy:
    """``request(method, path, params, body, content_type)`` -> ``(status, body bytes)``; ``url`` names the
    target for messages. ``body``: a dict (sent as JSON), bytes (sent as they are, with
    ``content_type``) or a list of multipart fields ``(name, (filename, bytes, type))``."""

    def __init__(self, api_client, namespace, kind, name, port, scheme="http", timeout=30, error=ProxyError):
        if kind not in KINDS:
            raise ValueError("kind %r: expected one of %s" % (kind, ", ".join(KINDS)))
        self.api_client = api_client
        self.timeout = timeout
        self.error = error
        target = "%s:%s:%s" % (scheme, name, port) if scheme != "http" else "%s:%s" % (name, port)
        self.base_path = "/api/v1/namespaces/%s/%s/%s/proxy" % (namespace, kind, target)
        self.url = "%s %s/%s:%s (through the API server)" % (kind[:-1], namespace, name, port)

    def request(self, method, path, params=None, body=None, content_type=None):
        from kubernetes.client.exceptions import ApiException

        query = list((params or {}).items())
        headers = {"Accept": "application/json"}
        post_params = []
        if isinstance(body, list):
            post_params, body, content_type = body, None, "multipart/form-data"
        elif isinstance(body, dict):
            content_type = "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        try:
            # the client of requirements.txt (kubernetes >= 30: param_serialize, then call_api)
            request = self.api_client.param_serialize(method, self.base_path + path, query_params=query,
                                                      header_params=headers, body=body, post_params=post_params,
                                                      auth_settings=["BearerToken"])
            response = self.api_client.call_api(*request, _request_timeout=self.timeout)
            return response.status, response.read()
        except ApiException as exc:
            answer = exc.body or b""
            return exc.status, answer if isinstance(answer, bytes) else answer.encode()
        except (OSError, ValueError) as exc:
            raise self.error("%s %s%s: %s" % (method, self.url, path, exc)) from None
