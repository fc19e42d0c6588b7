# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading cluster objects through kubernetes.core's client (its ``K8sService``): one object by name
or a list by namespace and selectors, as ``k8s_read`` returns them and ``k8s_wait``'s judges look
at them, and watching the object a wait is about.

A kind the cluster does not serve (a CRD its operator has not installed yet) is ``None``, not an
error: ``k8s_read`` reports it as not found, ``k8s_wait`` waits for it. An object that does not
exist is an empty list. Any other answer of the API is a ``FetchError`` of one line naming the
query; ``terminal`` when retrying cannot help (401, 403).
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.query import FetchError, Query


class _LibraryMissing(Exception):
    """Stands for the client's exceptions when its library is missing (never raised then)."""


try:
    from kubernetes.client.exceptions import ApiException
    from kubernetes.dynamic.exceptions import DynamicApiError, NotFoundError
except ImportError:  # AnsibleK8SModule reports the missing kubernetes library
    ApiException = DynamicApiError = _LibraryMissing

    class NotFoundError(_LibraryMissing):
        """Never raised: the kubernetes library is missing."""
try:
    from urllib3.exceptions import HTTPError as TransportError
except ImportError:
    class TransportError(_LibraryMissing):
        """Never raised: urllib3 is missing."""

# the keys of a query as k8s_read takes them (k8s_info's names), and ``logs`` for pods
QUERY_KEYS = ("api_version", "kind", "namespace", "name", "label_selectors", "field_selectors", "logs")


def reason(exc):
    """One line of at most 300 characters: the API's status and reason, or the exception's text."""
    status = getattr(exc, "status", None)
    summary = getattr(exc, "summary", None)
    text = summary() if callable(summary) else (getattr(exc, "reason", None) or str(exc))
    return " ".join(("%s %s" % (status, text) if status else str(text)).split())[:300]


def query_from(key, spec):
    """A ``Query`` from one entry of k8s_read's ``queries`` (ValueError naming the entry when it is malformed)."""
    if not isinstance(spec, dict):
        raise ValueError("query %s: expected a mapping of %s, got %r" % (key, ", ".join(QUERY_KEYS), spec))
    unknown = sorted(set(spec) - set(QUERY_KEYS))
    if unknown:
        raise ValueError("query %s: unknown key(s) %s (expected some of %s)" % (key, ", ".join(unknown), ", ".join(QUERY_KEYS)))
    if not isinstance(spec.get("kind"), str) or not spec["kind"]:
        raise ValueError("query %s: expected a kind" % key)
    selectors = {}
    for name in ("label_selectors", "field_selectors"):
        value = spec.get(name) or []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError("query %s: expected %s to be a list of strings, got %r" % (key, name, value))
        selectors[name] = value
    return Query(spec.get("api_version") or "v1", spec["kind"], spec.get("namespace"), spec.get("name"),
                 selectors["label_selectors"], selectors["field_selectors"])


def wants_logs(key, spec):
    """Whether a query of k8s_read asks for its pods' logs (``logs: true``, for kind Pod of v1 only)."""
    value = spec.get("logs", False)
    if not isinstance(value, bool):
        raise ValueError("query %s: expected logs to be true or false, got %r" % (key, value))
    if value and (spec.get("kind") != "Pod" or (spec.get("api_version") or "v1") != "v1"):
        raise ValueError("query %s: logs are read for kind Pod (v1) only, not %s" % (key, spec.get("kind")))
    return value


def container_log(pod_resource, namespace, pod, container, previous=False, tail_lines=0):
    """The text of one container's log (its previous instance with ``previous``, the last ``tail_lines``
    lines when not 0); ``FetchError`` naming the container when the API cannot give it (a container that
    never started)."""
    query = {"container": container}
    if previous:
        query["previous"] = True
    if tail_lines:
        query["tailLines"] = tail_lines
    try:
        answer = pod_resource.log.get(name=pod, namespace=namespace, query_params=query, serialize=False)
    except (DynamicApiError, ApiException, TransportError, OSError) as exc:
        raise FetchError("log of %s/%s container %s: %s" % (namespace, pod, container, reason(exc))) from None
    return answer.data.decode("utf-8", "replace")


def pod_logs(svc, pods):
    """``({pod name: text}, {pod name: reason})``: the logs of ``pods`` (objects as read), each the logs of
    its containers in the order of its spec, one after the other (as ``kubernetes.core.k8s_log`` with
    ``all_containers``: the log of a one-container pod as it is). A pod whose log cannot be read is in
    the second mapping, not the first: the caller decides whether that fails."""
    pod_resource = find_resource(svc, Query("v1", "Pod")) if pods else None
    texts, errors = {}, {}
    for pod in pods:
        metadata = pod.get("metadata") or {}
        if pod_resource is None:
            errors[metadata.get("name")] = "the cluster serves no v1 Pods"
            continue
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or [] if c.get("name")]
        try:
            texts[metadata.get("name")] = "".join(container_log(pod_resource, metadata.get("namespace"), metadata.get("name"),
                                                                container) for container in containers)
        except FetchError as exc:
            errors[metadata.get("name")] = str(exc)
    return texts, errors


def find_resource(svc, query):
    """The API resource of the query's kind; None when the cluster does not serve it."""
    try:
        return svc.find_resource(query.kind, query.api_version, fail=False)
    except (DynamicApiError, TransportError, OSError) as exc:
        raise FetchError("discovery of %s %s: %s" % (query.api_version, query.kind, reason(exc))) from None


def read(svc, query):
    """``([objects], resourceVersion to watch from or None)``; None when the kind is not served."""
    resource = find_resource(svc, query)
    if resource is None:
        return None
    namespace = query.namespace if resource.namespaced else None
    try:
        if query.name:
            obj = resource.get(name=query.name, namespace=namespace).to_dict()
            return [obj], (obj.get("metadata") or {}).get("resourceVersion")
        answer = resource.get(namespace=namespace, label_selector=",".join(query.label_selectors) or None,
                              field_selector=",".join(query.field_selectors) or None).to_dict()
    except NotFoundError:
        return [], None
    except DynamicApiError as exc:
        status = getattr(exc, "status", None)
        raise FetchError("%s: %s" % (query.describe(), reason(exc)), terminal=status in (401, 403)) from None
    except (TransportError, OSError) as exc:
        raise FetchError("%s: %s" % (query.describe(), reason(exc))) from None
    return list(answer.get("items") or []), (answer.get("metadata") or {}).get("resourceVersion")


class ApiReader:
    """Looks at the cluster for ``waits.base.wait_for``: ``fetch(query) -> [objects]``, and ``watch(seconds)``,
    which waits for a change of the subject (a watch from the resourceVersion of the last look at it).
    ``watch_any(seconds, queries)`` does the same for several waits: it watches the first of ``queries``
    already read."""

    def __init__(self, svc, subject):
        self.svc = svc
        self.subject = subject
        # the resourceVersion of the last look, by query
        self.versions = {}

    @property
    def subject_version(self):
        return self.versions.get(self.subject) if self.subject is not None else None

    def fetch(self, query):
        found = read(self.svc, query)
        if found is None:
            # a kind whose CRD its operator has not installed yet: waited for
            raise FetchError("the cluster serves no %s (%s) yet" % (query.kind, query.api_version))
        objects, version = found
        self.versions[query] = version
        return objects

    def watch_any(self, seconds, queries):
        """``watch`` of the first of ``queries`` with a resourceVersion (False when none has one)."""
        for query in queries:
            if self.versions.get(query) is not None:
                return self.watch(seconds, query)
        return False

    def watch(self, seconds, query=None):
        """True when the subject (or ``query``) changed within ``seconds``; False when the watch ended
        without a change or could not be opened (the caller sleeps the rest)."""
        query = query if query is not None else self.subject
        version = self.versions.get(query) if query is not None else None
        if version is None or seconds < 1:
            return False
        try:
            resource = self.svc.find_resource(query.kind, query.api_version, fail=False)
            if resource is None:
                return False
            events = resource.watch(namespace=query.namespace if resource.namespaced else None, name=query.name,
                                    label_selector=",".join(query.label_selectors) or None,
                                    field_selector=",".join(query.field_selectors) or None,
                                    resource_version=version, timeout=int(seconds))
            for event in events:
                if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                    events.close()
                    return True
        except (DynamicApiError, ApiException, TransportError, OSError, ValueError) as exc:
            raise FetchError("watch of %s: %s" % (query.describe(), reason(exc))) from None
        return False
