"""The API server's proxy subresources, as a client reaches a pod or a service without a route.

``/api/v1/namespaces/<ns>/pods/<[scheme:]name[:port]>/proxy/<path>`` and
``/api/v1/namespaces/<ns>/services/<[scheme:]name[:port]>/proxy/<path>``: the request (method,
query, body, Content-Type) is forwarded to the pod and the answer comes back as it is.

kubesim's pods share the host's network: a pod's port is ``127.0.0.1:<port>`` (a pod that runs
locally listens there, or a test's server stands in for the pod). The port is the one named in
the path (a number, or a container port's name), else the pod's first container port; a service
picks a Ready (else Running) pod its selector matches, and its port's ``targetPort``. As the API
server: a pod that is not running, or nothing listening, answers 503 ``error trying to reach
service``; a service without a matching pod answers 503 ``no endpoints available``.

A pod whose server kubesim itself models (``cluster.pod_servers``: callables ``(pod, port, scheme,
method, path, body, headers)`` answering a Response, or None for a pod they do not serve - the DSP API server
of :mod:`kubesim.controllers.kfp`) is answered in process instead.
"""

import http.client
from urllib.parse import urlsplit

from kubesim import selectors
from kubesim.errors import ApiError
from kubesim.responses import Response

FORWARDED_HEADERS = ("Content-Type", "Accept")
TIMEOUT_S = 30.0


def is_proxy(group, plural, sub):
    return group == "" and plural in ("pods", "services") and (sub == "proxy" or sub.startswith("proxy/"))


def _target(name):
    """(scheme, name, port) of ``[scheme:]name[:port]``."""
    parts = name.split(":")
    if len(parts) == 3:
        return parts[0] or "http", parts[1], parts[2]
    if len(parts) == 2:
        return "http", parts[0], parts[1]
    return "http", parts[0], ""


def _unavailable(message):
    return ApiError(503, "ServiceUnavailable", "error trying to reach service: %s" % message)


def _container_port(pod, port):
    ports = [p for container in (pod.get("spec") or {}).get("containers") or () for p in container.get("ports") or ()]
    if port.isdigit():
        return int(port)
    if port:
        for item in ports:
            if item.get("name") == port:
                return int(item["containerPort"])
        raise _unavailable("pod %s has no container port named %s" % (pod["metadata"]["name"], port))
    if ports:
        return int(ports[0]["containerPort"])
    raise ApiError.bad_request("pod %s: no port given and no container port declared" % pod["metadata"]["name"])


def _running(pod):
    return (pod.get("status") or {}).get("phase") == "Running"


def _ready(pod):
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or ())


def _service_pod(cluster, namespace, service, port):
    pods_resource = cluster.registry.lookup("", "v1", "pods")
    selector = (service.get("spec") or {}).get("selector") or {}
    candidates = []
    if selector:
        items, _rv, _token, _remaining = cluster.list(pods_resource, namespace)
        requirements = [(key, "=", value) for key, value in selector.items()]
        candidates = [pod for pod in items if _running(pod) and selectors.matches_labels(requirements, pod["metadata"].get("labels"))]
    if not candidates:
        raise ApiError(503, "ServiceUnavailable", 'no endpoints available for service "%s"' % service["metadata"]["name"])
    candidates.sort(key=lambda pod: (not _ready(pod), pod["metadata"]["name"]))
    pod = candidates[0]
    service_ports = (service.get("spec") or {}).get("ports") or []
    chosen = None
    for item in service_ports:
        if not port or str(item.get("port")) == port or item.get("name") == port:
            chosen = item
            break
    if chosen is None:
        raise _unavailable('service "%s" has no port %s' % (service["metadata"]["name"], port))
    target = chosen.get("targetPort", chosen.get("port"))
    return pod, _container_port(pod, str(target))


def proxy(cluster, request, plural, namespace, name, sub):
    scheme, target_name, port = _target(name)
    resource = cluster.registry.lookup("", "v1", plural)
    obj = cluster.get(resource, namespace, target_name, copy_=False)
    if plural == "pods":
        if not _running(obj):
            raise _unavailable("pod %s is not running (phase %s)" % (target_name, (obj.get("status") or {}).get("phase")))
        pod, number = obj, _container_port(obj, port)
    else:
        pod, number = _service_pod(cluster, namespace, obj, port)
    path = "/" + sub[len("proxy/"):] if sub.startswith("proxy/") else "/"
    query = urlsplit(request.handler.path).query
    if query:
        path += "?" + query
    for serve in cluster.pod_servers:
        response = serve(pod, number, scheme, request.method, path, request.body, request.headers)
        if response is not None:
            return response
    return forward(scheme, number, request.method, path, request.body, request.headers)


def forward(scheme, port, method, path, body, headers):
    connection_class = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    options = {}
    if scheme == "https":
        import ssl

        options["context"] = ssl._create_unverified_context()  # the API server does not verify a pod's certificate
    connection = connection_class("127.0.0.1", port, timeout=TIMEOUT_S, **options)
    try:
        connection.request(method, path, body=body or None,
                           headers={key: headers[key] for key in FORWARDED_HEADERS if headers.get(key)})
        answer = connection.getresponse()
        data = answer.read()
    except (OSError, http.client.HTTPException) as exc:
        raise _unavailable("dial tcp 127.0.0.1:%d: %s" % (port, exc))
    finally:
        connection.close()
    return Response(answer.status, data, answer.getheader("Content-Type") or "application/octet-stream")
