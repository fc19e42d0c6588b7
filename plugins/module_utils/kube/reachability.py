# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the clusters a play needs answer, checked before any work.

``server_of(options, environ)`` finds the API server a ``kubernetes.core`` module would reach
with the connection options of a cluster (``kubeconfig``, ``context`` from the inventory, see
``clusters.py``), else with the standard environment (``K8S_AUTH_HOST``,
``K8S_AUTH_KUBECONFIG``, ``KUBECONFIG`` - a list of files, merged as kubectl does -,
``K8S_AUTH_CONTEXT``, else ``~/.kube/config``, else the in-cluster service account of a pod).
``check(server)`` opens a TCP connection to it
(or to the cluster's ``proxy-url``) within a timeout: a name that does not resolve, a refused
connection or no answer is one line with the reason. Nothing is sent: credentials are the
modules' business, and a cluster that answers with 401 is reachable.
"""

from __future__ import annotations

import os
import socket
import urllib.parse

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError


class Target:
    """The server a cluster role resolves to: ``url``, ``proxy`` (or None) and ``source`` (where it
    came from, for the message)."""

    def __init__(self, url, source, proxy=None):
        self.url, self.source, self.proxy = url, source, proxy


def _load(path):
    import yaml

    with open(path, encoding="utf-8") as handle:
        document = yaml.safe_load(handle) or {}
    if not isinstance(document, dict):
        raise ClusterError("kubeconfig %s: expected a mapping (apiVersion: v1, kind: Config)" % path)
    return document


def _named(document, key):
    return {item.get("name"): item.get(key[:-1]) or {} for item in document.get(key) or () if isinstance(item, dict)}


def _expand(path, environ):
    """``~`` of a path with the given environment's HOME (the process's when it has none)."""
    if path.startswith("~/") and environ.get("HOME"):
        return os.path.join(environ["HOME"], path[2:])
    return os.path.expanduser(path)


def server_of(options, environ=None, cluster="sutest"):
    """The ``Target`` a kubernetes client reaches for a cluster role; ClusterError when no kubeconfig
    says it (the message names the cluster role and the files looked at)."""
    environ = os.environ if environ is None else environ
    if not options.get("kubeconfig") and environ.get("K8S_AUTH_HOST"):
        return Target(environ["K8S_AUTH_HOST"], "K8S_AUTH_HOST")
    if options.get("kubeconfig"):
        paths, source = [options["kubeconfig"]], "kubeconfig %s" % options["kubeconfig"]
    elif environ.get("K8S_AUTH_KUBECONFIG"):
        paths, source = [environ["K8S_AUTH_KUBECONFIG"]], "K8S_AUTH_KUBECONFIG=%s" % environ["K8S_AUTH_KUBECONFIG"]
    elif environ.get("KUBECONFIG"):
        paths = [p for p in environ["KUBECONFIG"].split(os.pathsep) if p]
        source = "KUBECONFIG=%s" % environ["KUBECONFIG"]
    else:
        paths, source = ["~/.kube/config"], "~/.kube/config"
    paths = [_expand(p, environ) for p in paths]
    existing = [p for p in paths if os.path.isfile(p)]
    if not existing and not options.get("kubeconfig") and environ.get("KUBERNETES_SERVICE_HOST"):
        # in a pod (an AWX execution environment, a point's Job): the service account's cluster
        host, port = environ["KUBERNETES_SERVICE_HOST"], environ.get("KUBERNETES_SERVICE_PORT", "443")
        return Target("https://%s:%s" % ("[%s]" % host if ":" in host else host, port), "the in-cluster service account")
    if not existing:
        raise ClusterError("cluster %s: no kubeconfig to reach it (%s: no such file); set the inventory's "
                           "perfscale_kubeconfig or KUBECONFIG" % (cluster, source))
    contexts, clusters, current = {}, {}, None
    for path in existing:
        try:
            document = _load(path)
        except (OSError, ValueError) as exc:
            raise ClusterError("cluster %s: kubeconfig %s cannot be read: %s" % (cluster, path, exc)) from None
        # merged as kubectl does: the first file that names a context, a cluster or current-context wins
        for name, value in _named(document, "contexts").items():
            contexts.setdefault(name, value)
        for name, value in _named(document, "clusters").items():
            clusters.setdefault(name, value)
        current = current or document.get("current-context")
    context = options.get("context") or environ.get("K8S_AUTH_CONTEXT") or current
    if not context or context not in contexts:
        raise ClusterError("cluster %s: context %r is not in %s (contexts: %s)"
                           % (cluster, context, source, ", ".join(sorted(str(c) for c in contexts)) or "none"))
    entry = clusters.get(contexts[context].get("cluster")) or {}
    if not entry.get("server"):
        raise ClusterError("cluster %s: context %s of %s names cluster %r, which has no server"
                           % (cluster, context, source, contexts[context].get("cluster")))
    return Target(entry["server"], "%s, context %s" % (source, context), proxy=entry.get("proxy-url"))


def _address(url):
    parsed = urllib.parse.urlsplit(url if "://" in url else "https://" + url)
    if not parsed.hostname:
        raise ClusterError("server %r: expected a URL such as https://api.example.com:6443" % url)
    return parsed.hostname, parsed.port or (80 if parsed.scheme == "http" else 443)


def check(target, timeout=5.0):
    """None when a TCP connection to the server (or its proxy) opens within ``timeout``, else the
    reason in a few words."""
    host, port = _address(target.proxy or target.url)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except socket.gaierror:
        return "the host name %s does not resolve" % host
    except ConnectionRefusedError:
        return "connection refused on %s:%d" % (host, port)
    except socket.timeout:
        return "no answer from %s:%d within %g s" % (host, port, timeout)
    except OSError as exc:
        return "%s:%d: %s" % (host, port, exc.strerror or exc)


def unreachable_message(cluster, target, reason):
    return "cluster %s (%s%s, from %s) is unreachable: %s" % (
        cluster, target.url, " through proxy %s" % target.proxy if target.proxy else "", target.source, reason)


def require_reachable(cluster, options, timeout=5.0, environ=None):
    """The ``Target`` of a cluster role (its inventory ``options``), after a TCP connection to it
    opened; ClusterError with ``unreachable_message`` when it does not."""
    target = server_of(options, environ, cluster=cluster)
    reason = check(target, timeout=timeout)
    if reason:
        raise ClusterError(unreachable_message(cluster, target, reason))
    return target
