"""HTTP(S) front end: routing, authentication, authorization, content negotiation, watch.

Conventions followed: resource paths (``/api/v1/...``, ``/apis/<group>/<version>/...``,
``namespaces/<ns>/`` for namespaced resources, ``/<subresource>`` suffixes),
``Status`` bodies for every error, 401 without a valid bearer token (answered from the headers:
the body is not read), ``413`` for a body over ``MaxRequestBodyBytes`` and ``400`` for one nested
too deeply (before any parser runs, :mod:`kubesim.bodies`), 403
``Forbidden`` worded as RBAC words it, ``Warning`` response headers (RFC 7234
code 299) for field-validation warnings, chunked JSON watch streams
(``{"type": ..., "object": ...}`` per line), ``406`` for media types that are not
served (protobuf), server-side printing (``as=Table``), aggregated discovery.
"""

import json
import logging
import re
import socket
import ssl
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from kubesim import bodies, proxy, protobuf, tables
from kubesim.responses import Response, Stream
from kubesim.cluster import PATCH_TYPES, Options
from kubesim.errors import ApiError

LOG = logging.getLogger("kubesim.server")
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
BOOKMARK_EVERY = 10.0
ANONYMOUS_PATHS = ("/version", "/healthz", "/livez", "/readyz")


class User:
    """An authenticated user: the admin, or a user limited to some namespaces."""

    def __init__(self, name, token, namespaces=None):
        self.name = name
        self.token = token
        self.namespaces = None if namespaces is None else set(namespaces)

    @property
    def admin(self):
        return self.namespaces is None


class Request:
    """A request whose body is read when a handler first asks for it (``body``): after
    authentication, never more than ``bodies.MAX_REQUEST_BODY_BYTES`` (413 past it, unread)."""

    def __init__(self, handler, max_body_bytes=bodies.MAX_REQUEST_BODY_BYTES):
        parts = urlsplit(handler.path)
        self.method = handler.command
        self.path = parts.path.rstrip("/") or "/"
        self.query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.headers = handler.headers
        self.handler = handler
        self.user = None
        self.warnings = []
        self.max_body_bytes = max_body_bytes
        self.length = bodies.content_length(handler.headers)
        # a chunked body is not read (kubesim reads Content-Length bodies only): the connection closes after
        self.chunked = (handler.headers.get("Transfer-Encoding") or "identity").strip().lower() != "identity"
        self._body = None

    @property
    def body(self):
        if self._body is None:
            self._body = bodies.read_body(self.handler.rfile, 0 if self.chunked else self.length,
                                          self.max_body_bytes)
        return self._body

    @body.setter
    def body(self, value):
        self._body = value

    @property
    def body_unread(self):
        """Bytes of the body are still on the connection (a refused or unused body): it must close."""
        return self.chunked or (self._body is None and self.length > 0)

    def flag(self, name):
        return self.query.get(name, "").lower() in ("1", "true")

    def json_body(self, duplicates=None):
        if not self.body:
            raise ApiError.bad_request("the body of the request is empty")
        ctype = (self.headers.get("Content-Type") or "application/json").split(";")[0].strip()
        if ctype == "application/vnd.kubernetes.protobuf":
            # kubectl's typed generators (create configmap|secret|deployment|...) send protobuf
            try:
                return protobuf.decode(self.body)
            except protobuf.ProtobufError as exc:
                raise ApiError(415, "UnsupportedMediaType", "the body of the request could not be decoded: %s" % exc)
            except RecursionError:  # messages nested in messages (JSONSchemaProps) past Python's stack
                raise bodies.not_decodable("exceeded max depth") from None
        if "protobuf" in ctype or "cbor" in ctype:
            raise ApiError(415, "UnsupportedMediaType", 'the body of the request was in an unknown format - accepted '
                                                       'media types include: application/json, application/yaml, '
                                                       'application/vnd.kubernetes.protobuf')

        def pairs(items):
            result = {}
            for key, value in items:
                if key in result and duplicates is not None:
                    duplicates.append(key)
                result[key] = value
            return result
        # nesting and aliases counted before a (recursive) parser sees the body
        bodies.check(self.body, ctype)
        try:
            if ctype in bodies.YAML_TYPES:
                import yaml
                try:
                    return yaml.load(self.body, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
                except yaml.YAMLError as exc:
                    raise bodies.not_decodable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
            return json.loads(self.body, object_pairs_hook=pairs if duplicates is not None else None)
        except ValueError as exc:
            raise bodies.not_decodable(exc) from None
        except RecursionError:  # not reached within MAX_DEPTH; kept so that no parser ends a request with a 500
            raise bodies.not_decodable("exceeded max depth") from None


def _parse_resource_path(parts):
    """``(group, version, namespace, plural, name, subresource)`` from path segments after the group-version."""
    namespace = None
    if len(parts) >= 3 and parts[0] == "namespaces" and not (len(parts) == 3 and parts[2] in ("status", "finalize")):
        namespace, parts = parts[1], parts[2:]
    plural = parts[0] if parts else None
    name = parts[1] if len(parts) > 1 else None
    sub = "/".join(parts[2:]) if len(parts) > 2 else ""
    return namespace, plural, name, sub


class Api:
    """Turns requests into cluster calls; every handler returns a :class:`Response`."""

    def __init__(self, sim):
        self.sim = sim
        self.cluster = sim.cluster

    # -- entry -----------------------------------------------------------------------------
    def handle(self, request):
        try:
            self._authenticate(request)
            return self._route(request)
        except ApiError as exc:
            return Response(exc.code, exc.status(), headers=exc.headers)

    def _authenticate(self, request):
        header = request.headers.get("Authorization") or ""
        token = header[7:].strip() if header.lower().startswith("bearer ") else None
        user = self.sim.users.get(token) if token else None
        if user is None:
            if request.path in ANONYMOUS_PATHS and request.method == "GET":
                request.user = User("system:anonymous", None, namespaces=())
                return
            raise ApiError.unauthorized()
        request.user = user

    def _route(self, request):
        path = request.path
        if path in ANONYMOUS_PATHS[1:]:
            return Response(200, b"ok", "text/plain")
        if path == "/version":
            return Response(200, self.sim.version_info())
        if path.startswith("/kubesim"):
            return self._admin(request)
        if request.method == "GET":
            if path == "/api":
                return self._discovery(request, lambda: self.cluster.registry.api_versions(), core=True)
            if path == "/apis":
                return self._discovery(request, lambda: self.cluster.registry.api_group_list(), core=False)
            if path == "/openapi/v3":
                return Response(200, self.sim.openapi.v3_index())
            if path.startswith("/openapi/v3/"):
                return self._openapi_v3(path[len("/openapi/v3/"):])
            if path == "/openapi/v2":
                return self._openapi_v2(request)
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 2:
            if len(parts) == 2:
                return Response(200, self.cluster.registry.api_group(parts[1]))
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise ApiError.not_found_path()
        if not rest:
            if request.method != "GET":
                raise ApiError.method_not_allowed()
            return Response(200, self.cluster.registry.resource_list(group, version))
        namespace, plural, name, sub = _parse_resource_path(rest)
        resource = self.cluster.registry.lookup(group, version, plural)
        if namespace is not None and not resource.namespaced:
            raise ApiError.not_found_path()
        if name and proxy.is_proxy(resource.group, resource.plural, sub):
            self._authorize(request, "get", resource, namespace, name)
            return proxy.proxy(self.cluster, request, resource.plural, namespace, name, sub)
        if sub and sub not in resource.subresources:
            raise ApiError.not_found_path()
        verb = self._verb(request, name)
        self._authorize(request, verb, resource, namespace, name)
        self.sim.faults.before_request({"verb": verb, "group": group, "resource": plural, "namespace": namespace,
                                        "name": name, "user": request.user.name, "path": request.path,
                                        "subresource": sub})
        if not sub and verb not in resource.verbs:
            # discovery lists the verbs; others are 405 MethodNotAllowed (e.g. packagemanifests: get, list)
            raise ApiError.method_not_allowed()
        handler = self.cluster.subresource_handlers.get((resource.group, resource.plural, sub)) if sub else None
        if handler is not None:
            options = self._options(request)
            body = self._read_body(request, options) if request.body else {}
            code, obj = handler(self.cluster, resource, namespace, name, body)
            return Response(code, obj)
        if resource.alias_of:
            return self._dispatch_alias(request, verb, resource, namespace, name, sub)
        if resource.provider is not None:
            return self._dispatch_virtual(request, verb, resource, namespace, name)
        return self._dispatch(request, verb, resource, namespace, name, sub)

    # -- aggregated kinds that are views (a Project is a Namespace) or computed (PackageManifest) --
    def _dispatch_alias(self, request, verb, resource, namespace, name, sub):
        target = self.cluster.resource(*resource.alias_of)

        def convert(node, kind_from, kind_to, version_to):
            if isinstance(node, dict):
                if node.get("kind") in (kind_from, kind_from + "List") and "apiVersion" in node:
                    node = dict(node, kind=node["kind"].replace(kind_from, kind_to, 1), apiVersion=version_to)
                    if "items" in node:
                        node["items"] = [convert(i, kind_from, kind_to, version_to) for i in node["items"]]
                elif node.get("type") and isinstance(node.get("object"), dict):
                    node = dict(node, object=convert(node["object"], kind_from, kind_to, version_to))
            return node

        if request.body and request.method in ("POST", "PUT"):
            try:
                bodies.check(request.body, "application/json")
                body = json.loads(request.body)
            except (ValueError, ApiError):  # not JSON: the target's handler answers it as it would
                body = None
            if isinstance(body, dict):
                request.body = json.dumps(convert(body, resource.kind, target.kind, target.api_version)).encode()
        response = self._dispatch(request, verb, target, namespace, name, sub)
        if isinstance(response, Stream):
            chunks = response.chunks
            response.chunks = (json.dumps(convert(json.loads(c), target.kind, resource.kind, resource.api_version),
                                          separators=(",", ":")).encode() + b"\n" for c in chunks)
        elif isinstance(response.body, dict):
            response.body = convert(response.body, target.kind, resource.kind, resource.api_version)
        return response

    def _dispatch_virtual(self, request, verb, resource, namespace, name):
        from kubesim import selectors
        provider = resource.provider
        if verb == "get":
            obj = provider.get(namespace, name)
            if obj is None:
                raise ApiError.not_found(resource, name)
            return self._object_response(request, resource, obj)
        query = request.query
        labels = selectors.parse_label_selector(query.get("labelSelector")) if query.get("labelSelector") else None
        fields = selectors.parse_field_selector(query.get("fieldSelector")) if query.get("fieldSelector") else None
        items = [obj for obj in provider.list(namespace)
                 if (labels is None or selectors.matches_labels(labels, obj["metadata"].get("labels")))
                 and (fields is None or selectors.matches_fields(fields, obj))]
        rv = self.cluster.store.resource_version
        if self._wants_table(request):
            return Response(200, tables.table(resource, items, rv, self.cluster.clock.time()))
        return Response(200, {"kind": resource.kind + "List", "apiVersion": resource.api_version,
                              "metadata": {"resourceVersion": str(rv)}, "items": items})

    @staticmethod
    def _verb(request, name):
        method = request.method
        if method == "GET":
            if name is None:
                return "watch" if request.flag("watch") else "list"
            return "get"
        return {"POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete" if name else "deletecollection"}.get(method, method.lower())

    def _authorize(self, request, verb, resource, namespace, name):
        user = request.user
        if user.admin:
            return
        if resource.namespaced and namespace in user.namespaces:
            return
        if resource.plural == "namespaces" and name in user.namespaces and verb == "get":
            return
        raise ApiError.forbidden(user.name, verb, resource, namespace if resource.namespaced else None, name)

    # -- discovery and OpenAPI -------------------------------------------------------------
    def _discovery(self, request, legacy, core):
        accept = request.headers.get("Accept") or ""
        if "as=APIGroupDiscoveryList" in accept and "v=v2;" in accept.replace(" ", "") + ";":
            return Response(200, self.cluster.registry.aggregated(core), AGGREGATED)
        return Response(200, legacy())

    def _openapi_v3(self, rest):
        parts = rest.split("/")
        if parts[0] == "api" and len(parts) == 2:
            doc = self.sim.openapi.group_version_doc("", parts[1])
        elif parts[0] == "apis" and len(parts) == 3:
            doc = self.sim.openapi.group_version_doc(parts[1], parts[2])
        else:
            doc = None
        if doc is None:
            raise ApiError.not_found_path()
        return Response(200, doc[0], headers={"Etag": '"%s"' % doc[1]})

    def _openapi_v2(self, request):
        accept = request.headers.get("Accept") or "*/*"
        if "json" not in accept and "*/*" not in accept:
            raise ApiError.not_acceptable(["application/json"])
        return Response(200, self.sim.openapi.v2()[0])

    # -- admin -----------------------------------------------------------------------------
    def _admin(self, request):
        if not request.user.admin:
            raise ApiError.forbidden(request.user.name, request.method.lower(), None, None, group="kubesim")
        path = request.path
        faults = self.sim.faults
        if path == "/kubesim/faults":
            if request.method == "GET":
                return Response(200, {"faults": faults.list()})
            if request.method == "POST":
                try:
                    return Response(201, faults.from_dict(request.json_body()))
                except ValueError as exc:
                    raise ApiError.bad_request(str(exc))
            if request.method == "DELETE":
                return Response(200, {"removed": faults.remove()})
        match = re.match(r"^/kubesim/faults/(\d+)$", path)
        if match and request.method == "DELETE":
            return Response(200, {"removed": faults.remove(int(match.group(1)))})
        if path == "/kubesim/addons" and request.method == "GET":
            from kubesim.addons import default_addons
            return Response(200, {"installed": list(self.sim.addons), "available": default_addons().names()})
        match = re.match(r"^/kubesim/addons/([a-z0-9-]+)$", path)
        if match and request.method == "POST":
            try:
                self.sim.install_addon(match.group(1))
            except ValueError as exc:
                raise ApiError.bad_request(str(exc))
            return Response(200, {"installed": list(self.sim.addons)})
        if path == "/kubesim/snapshot" and request.method == "POST":
            written = self.sim.snapshot()
            return Response(200, {"snapshot": written})
        if path == "/kubesim/status" and request.method == "GET":
            return Response(200, self.sim.status())
        raise ApiError.not_found_path()

    # -- resources -------------------------------------------------------------------------
    def _options(self, request, patch=False):
        dry_run = request.query.get("dryRun")
        if dry_run not in (None, "", "All"):
            raise ApiError.bad_request('Invalid dry run value "%s": only "All" is supported' % dry_run)
        validation = request.query.get("fieldValidation") or "Warn"  # the server default since 1.27
        if validation not in ("Strict", "Warn", "Ignore"):
            raise ApiError.bad_request('fieldValidation must be one of "Ignore", "Warn" or "Strict", not "%s"' % validation)
        manager = request.query.get("fieldManager")
        if manager is not None and len(manager) > 128:
            raise ApiError.bad_request("fieldManager must not be longer than 128 characters")
        return Options(dry_run=dry_run == "All", field_manager=manager, field_validation=validation,
                       force=request.flag("force"), user_agent=request.headers.get("User-Agent"))

    def _read_body(self, request, options):
        duplicates = []
        body = request.json_body(duplicates if options.field_validation != "Ignore" else None)
        if duplicates:
            message = ", ".join('duplicate field "%s"' % d for d in duplicates)
            if options.field_validation == "Strict":
                raise ApiError.bad_request("strict decoding error: " + message)
            options.warnings.extend(message.split(", "))
        return body

    def _with_warnings(self, response, options):
        if options.warnings:
            response.headers["Warning"] = [('299 - "%s"' % w.replace('"', '\\"')) for w in options.warnings]
        return response

    def _dispatch(self, request, verb, resource, namespace, name, sub):
        cluster = self.cluster
        if sub == "log":
            return self._log(request, namespace, name)
        if sub == "scale":
            return self._scale(request, resource, namespace, name)
        if sub == "finalize":
            options = self._options(request)
            body = self._read_body(request, options)
            return Response(200, cluster.finalize_namespace(name, (body.get("spec") or {}).get("finalizers") or []))
        if verb == "list":
            return self._list(request, resource, namespace)
        if verb == "watch":
            return self._watch(request, resource, namespace)
        if verb == "get":
            obj = cluster.get(resource, namespace, name, copy_=False)
            return self._object_response(request, resource, obj)
        if verb == "create":
            options = self._options(request)
            body = self._read_body(request, options)
            obj = cluster.create(resource, body, namespace, options)
            return self._with_warnings(Response(201, obj), options)
        if verb == "update":
            options = self._options(request)
            body = self._read_body(request, options)
            obj, created = cluster.update(resource, body, namespace, name, options, subresource=sub)
            return self._with_warnings(Response(201 if created else 200, obj), options)
        if verb == "patch":
            options = self._options(request, patch=True)
            ctype = (request.headers.get("Content-Type") or "").split(";")[0].strip()
            patch_type = PATCH_TYPES.get(ctype)
            if patch_type is None:
                raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                                           "accepted media types include: application/json-patch+json, "
                                                           "application/merge-patch+json, application/apply-patch+yaml, "
                                                           "application/strategic-merge-patch+json")
            if patch_type != "apply" and request.query.get("force"):
                raise ApiError.bad_request("force is only allowed for server-side apply")
            body = self._read_body(request, options)
            obj, created = cluster.patch(resource, namespace, name, body, patch_type, options, subresource=sub)
            return self._with_warnings(Response(201 if created else 200, obj), options)
        if verb == "delete":
            return self._delete(request, resource, namespace, name)
        if verb == "deletecollection":
            return self._delete_collection(request, resource, namespace)
        raise ApiError.method_not_allowed()

    def _wants_table(self, request):
        accept = (request.headers.get("Accept") or "").replace(" ", "")
        first = accept.split(",")[0]
        return "as=Table" in first and "g=meta.k8s.io" in first

    def _object_response(self, request, resource, obj):
        if self._wants_table(request):
            return Response(200, tables.table(resource, [obj], obj["metadata"]["resourceVersion"], self.cluster.clock.time()))
        return Response(200, obj)

    def _list(self, request, resource, namespace):
        query = request.query
        try:
            limit = int(query.get("limit") or 0) or None
        except ValueError:
            raise ApiError.bad_request("limit must be an integer")
        items, rv, token, remaining = self.cluster.list(resource, namespace, query.get("labelSelector"),
                                                        query.get("fieldSelector"), limit, query.get("continue"))
        if self._wants_table(request):
            return Response(200, tables.table(resource, items, rv, self.cluster.clock.time(), token, remaining))
        metadata = {"resourceVersion": str(rv)}
        if token:
            metadata["continue"] = token
            if not query.get("labelSelector") and not query.get("fieldSelector"):
                metadata["remainingItemCount"] = remaining
        return Response(200, {"kind": resource.kind + "List", "apiVersion": resource.api_version,
                              "metadata": metadata, "items": items})

    def _watch(self, request, resource, namespace):
        from kubesim import selectors
        query = request.query
        labels = selectors.parse_label_selector(query.get("labelSelector")) if query.get("labelSelector") else None
        fields = selectors.parse_field_selector(query.get("fieldSelector")) if query.get("fieldSelector") else None
        rv = query.get("resourceVersion")
        try:
            timeout = float(query.get("timeoutSeconds") or 1800)
        except ValueError:
            raise ApiError.bad_request("timeoutSeconds must be a number")
        bookmarks = request.flag("allowWatchBookmarks")
        initial_events = request.flag("sendInitialEvents")
        store = self.cluster.store
        ns = namespace if resource.namespaced else None
        with store.lock:
            initial = []
            if not rv or rv == "0" or initial_events:
                initial = [("ADDED", o) for o in store.list(resource.storage_key, ns)[0]]
                since = None
            else:
                try:
                    since = int(rv)
                except ValueError:
                    raise ApiError.bad_request('resourceVersion "%s" is not valid' % rv)
            watcher, backlog = store.watch(resource.storage_key, ns, since)
            if watcher is None:
                # Watch convention: a resourceVersion older than the history is 410 Gone / Expired
                raise ApiError.gone("too old resource version: %s (%s)" % (rv, store.resource_version))
            start_rv = store.resource_version
        table = self._wants_table(request)
        cluster = self.cluster

        def selected(obj):
            meta = obj["metadata"]
            return (labels is None or selectors.matches_labels(labels, meta.get("labels"))) and \
                (fields is None or selectors.matches_fields(fields, obj))

        def encode(event_type, obj):
            if table and event_type != "BOOKMARK":
                obj = tables.table(resource, [obj], obj["metadata"]["resourceVersion"], cluster.clock.time())
            elif obj.get("apiVersion") != resource.api_version and event_type != "BOOKMARK":
                obj = dict(obj, apiVersion=resource.api_version)
            return json.dumps({"type": event_type, "object": obj}, separators=(",", ":")).encode() + b"\n"

        def bookmark(rv_, initial_end=False):
            meta = {"resourceVersion": str(rv_)}
            if initial_end:
                meta["annotations"] = {"k8s.io/initial-events-end": "true"}
            return encode("BOOKMARK", {"kind": resource.kind, "apiVersion": resource.api_version, "metadata": meta})

        def chunks():
            deadline = time.monotonic() + timeout
            last_rv = start_rv
            try:
                for event_type, obj in initial + backlog:
                    if selected(obj):
                        yield encode(event_type, obj)
                if initial_events and bookmarks:
                    yield bookmark(start_rv, True)
                idle_since = time.monotonic()
                while not self.sim.stopping:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return
                    try:
                        item = watcher.queue.get(timeout=min(remaining, 1.0))
                    except Exception:  # queue.Empty
                        if bookmarks and time.monotonic() - idle_since > BOOKMARK_EVERY:
                            idle_since = time.monotonic()
                            yield bookmark(max(last_rv, store.resource_version))
                        continue
                    if item is None:
                        return
                    event_type, obj = item
                    last_rv = int(obj["metadata"]["resourceVersion"])
                    if selected(obj):
                        idle_since = time.monotonic()
                        yield encode(event_type, obj)
            finally:
                store.unwatch(watcher)

        return Stream(chunks())

    def _log(self, request, namespace, name):
        pod = self.cluster.get(self.cluster.resource_for_key(("", "pods")), namespace, name, copy_=False)
        containers = [c["name"] for c in (pod.get("spec") or {}).get("containers") or ()]
        container = request.query.get("container")
        if not container:
            if len(containers) != 1:
                raise ApiError.bad_request("a container name must be specified for pod %s, choose one of: [%s]"
                                           % (name, " ".join(containers)))
            container = containers[0]
        elif container not in containers:
            raise ApiError.bad_request("container %s is not valid for pod %s" % (container, name))
        status = next((s for s in (pod.get("status") or {}).get("containerStatuses") or () if s.get("name") == container), {})
        waiting = (status.get("state") or {}).get("waiting")
        previous = request.flag("previous")
        if waiting and not previous and not status.get("restartCount"):
            raise ApiError.bad_request('container "%s" in pod "%s" is waiting to start: %s'
                                       % (container, name, waiting.get("reason", "ContainerCreating")))
        if not status:
            raise ApiError.bad_request('container "%s" in pod "%s" is waiting to start: ContainerCreating' % (container, name))
        if previous and not status.get("restartCount"):
            raise ApiError.bad_request('previous terminated container "%s" in pod "%s" not found' % (container, name))
        tail = request.query.get("tailLines")
        tail = int(tail) if tail not in (None, "") else None
        timestamps = request.flag("timestamps")
        logs = self.sim.logs
        if request.flag("follow") and not previous:
            stream = logs.follow(namespace, name, container, tail, timestamps, stop=lambda: self.sim.stopping)
            return Stream((line.encode() + b"\n" for line in stream), "text/plain")
        lines = logs.lines(namespace, name, container, previous, tail, timestamps)
        return Response(200, "".join(line + "\n" for line in lines).encode(), "text/plain")

    def _scale(self, request, resource, namespace, name):
        cluster = self.cluster
        spec_path, status_path, selector_path = resource.scale_paths or (".spec.replicas", ".status.replicas",
                                                                         ".status.selector")

        def get_path(obj, path):
            node = obj
            for part in (path or "").lstrip(".").split("."):
                node = node.get(part) if isinstance(node, dict) else None
            return node

        def scale_of(obj):
            meta = obj["metadata"]
            selector = get_path(obj, selector_path)
            if selector is None and not resource.custom:
                match = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
                selector = ",".join("%s=%s" % kv for kv in sorted(match.items()))
            return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                    "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                                 if k in meta},
                    "spec": {"replicas": get_path(obj, spec_path) or 0},
                    "status": {"replicas": get_path(obj, status_path) or 0, "selector": selector or ""}}

        obj = cluster.get(resource, namespace, name, copy_=False)
        if request.method == "GET":
            return Response(200, scale_of(obj))
        options = self._options(request)
        body = self._read_body(request, options)
        current = scale_of(obj)
        if request.method == "PUT":
            new_scale = body
        else:
            from kubesim import patch as patches
            ctype = (request.headers.get("Content-Type") or "").split(";")[0].strip()
            kind = PATCH_TYPES.get(ctype)
            new_scale = patches.json_patch(current, body) if kind == "json" else patches.merge_patch(current, body)
        rv = (new_scale.get("metadata") or {}).get("resourceVersion")
        if rv and rv != obj["metadata"]["resourceVersion"]:
            raise ApiError.stale(resource, name)
        replicas = (new_scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise ApiError.invalid("Scale", "autoscaling", name, [("FieldValueInvalid", "spec.replicas",
                                                                  "Invalid value: %r: must be greater than or equal to 0"
                                                                  % (replicas,))])

        def change(target):
            node = target
            parts = spec_path.lstrip(".").split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = replicas
        updated = cluster.mutate(resource, namespace, name, change, options=options)
        return Response(200, scale_of(updated))

    def _delete_options(self, request):
        body = {}
        if request.body:
            body = request.json_body() or {}
        if not isinstance(body, dict):
            raise ApiError.bad_request("DeleteOptions must be an object")
        propagation = body.get("propagationPolicy") or request.query.get("propagationPolicy")
        if body.get("orphanDependents") is True or request.query.get("orphanDependents") == "true":
            propagation = propagation or "Orphan"
        if propagation not in (None, "Foreground", "Background", "Orphan"):
            raise ApiError.bad_request('propagationPolicy "%s" is not one of Foreground, Background, Orphan' % propagation)
        dry = body.get("dryRun") or ([request.query["dryRun"]] if request.query.get("dryRun") else [])
        return propagation, body.get("preconditions") or {}, "All" in dry

    def _delete(self, request, resource, namespace, name):
        propagation, preconditions, dry_run = self._delete_options(request)
        options = Options(dry_run=dry_run)
        obj, deleted = self.cluster.delete(resource, namespace, name, options, propagation, preconditions)
        if not deleted:
            return Response(202 if not resource.plural == "namespaces" else 200, obj)
        if resource.plural in ("pods", "services", "namespaces", "customresourcedefinitions"):
            return Response(200, obj)
        details = {"name": name, "kind": resource.plural, "uid": obj["metadata"].get("uid")}
        if resource.group:
            details["group"] = resource.group
        return Response(200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})

    def _delete_collection(self, request, resource, namespace):
        propagation, _, dry_run = self._delete_options(request)
        items, _, _, _ = self.cluster.list(resource, namespace, request.query.get("labelSelector"),
                                           request.query.get("fieldSelector"))
        for obj in items:
            try:
                self.cluster.delete(resource, obj["metadata"].get("namespace"), obj["metadata"]["name"],
                                    Options(dry_run=dry_run), propagation)
            except ApiError as exc:
                if exc.code != 404:
                    raise
        return Response(200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kubesim"
    sys_version = ""

    def log_message(self, fmt, *args):  # noqa: D401 - quiet; debug logging only
        LOG.debug("%s " + fmt, self.address_string(), *args)

    def _handle(self):
        request = None
        try:
            request = Request(self)
            response = self.server.api.handle(request)
        except (ConnectionError, socket.timeout):  # the client went away, or sent less than it announced
            self.close_connection = True
            return
        except ApiError as exc:  # a request line or header refused before any handler (Content-Length)
            response = Response(exc.code, exc.status(), headers=exc.headers)
        except Exception as exc:  # a bug must answer 500 with a Status, not drop the connection
            LOG.exception("request %s %s failed", self.command, self.path)
            error = ApiError.internal(str(exc) or exc.__class__.__name__)
            response = Response(500, error.status())
        if request is None or request.body_unread:
            # a body kubesim did not read (a 401, a 413, a GET with a body) is not drained: the connection closes
            response.headers["Connection"] = "close"
            self.close_connection = True
        self._send(response)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    def _send(self, response):
        try:
            self.send_response(response.code)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Cache-Control", "no-cache, private")
            self.send_header("Audit-Id", str(uuid.uuid4()))
            for key, value in response.headers.items():
                for item in value if isinstance(value, list) else [value]:
                    self.send_header(key, item)
            if isinstance(response, Stream):
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.flush()
                for chunk in response.chunks:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                return
            body = response.body
            if not isinstance(body, (bytes, bytearray)):
                body = json.dumps(body, separators=(",", ":")).encode()
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout):
            self.close_connection = True
            if isinstance(response, Stream) and hasattr(response.chunks, "close"):
                response.chunks.close()


class Server(ThreadingHTTPServer):
    """HTTPS (TLS handshakes in the connection threads), daemon threads, 127.0.0.1 only."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, port, api, cert, key):
        self.api = api
        self.ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ssl_context.load_cert_chain(cert, key)
        self.ssl_context.set_alpn_protocols(["http/1.1"])
        self._connections = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), Handler)

    def finish_request(self, request, client_address):
        try:
            request.settimeout(60)
            # headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and the
            # client's delayed ACK add 40 ms to every keep-alive request
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            tls = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        with self._connections_lock:
            self._connections.add(tls)
        try:
            self.RequestHandlerClass(tls, client_address, self)
        except (ConnectionError, ssl.SSLError, socket.timeout, OSError):
            pass
        finally:
            with self._connections_lock:
                self._connections.discard(tls)
            try:
                tls.close()
            except OSError:
                pass

    def close_connections(self):
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
