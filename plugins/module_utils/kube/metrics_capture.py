# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a ServiceMonitor or PodMonitor scrapes, scraped by a pod of ours while a test runs.

``cluster capture_servicemonitor_metrics``: the start resolves the monitor's targets as the
Prometheus Operator does (a ServiceMonitor: the Services its selector picks, their Running pods,
each endpoint's service port to the pod's container port; a PodMonitor: the Running pods its
selector picks, each ``podMetricsEndpoints`` container port) and starts a capture pod in the
namespace that fetches every target each ``capture_frequency`` seconds into its log, each scrape
between a start and an end marker line. The finalize reads that log, splits it into one file per
target, and deletes the pod; a scrape the log holds no end of (the pod was still writing it when
the log was read) is left out and counted, never taken for a whole one. Plain data in, plain data out: the module does the API calls.
"""

from __future__ import annotations

import hashlib
import re

CAPTURE_LABEL = "perfscale.topsail/metrics-capture"
MARKER = "### perfscale-scrape"
ERROR_MARKER = "### perfscale-scrape-error"
END_MARKER = "### perfscale-scrape-end"
DEFAULT_PATH = "/metrics"
MONITOR_KINDS = {False: "ServiceMonitor", True: "PodMonitor"}  # by is_podmonitor
_DNS = re.compile(r"[^a-z0-9-]+")

# the capture pod's loop: the targets come as an environment variable (name=url pairs), never
# interpolated into the script
CAPTURE_SCRIPT = r"""
while true; do
  for target in $PERFSCALE_TARGETS; do
    name="${target%%=*}"; url="${target#*=}"
    echo "### perfscale-scrape $(date -u +%Y-%m-%dT%H:%M:%SZ) $name"
    curl -sS -k --max-time 10 "$url" || echo "### perfscale-scrape-error $name curl exit $?"
    echo "### perfscale-scrape-end $name"
  done
  sleep "$PERFSCALE_CAPTURE_FREQUENCY"
done
"""


class CaptureError(Exception):
    """A monitor that cannot be captured (one line)."""


def capture_pod_name(service_name, is_podmonitor):
    """``perfscale-metrics-<monitor>`` (``-pod`` for a PodMonitor), a DNS label of at most 63 characters."""
    base = "perfscale-metrics-%s%s" % (_DNS.sub("-", service_name.lower()).strip("-"), "-pod" if is_podmonitor else "")
    if len(base) <= 63:
        return base
    digest = hashlib.sha256(base.encode()).hexdigest()[:8]
    return base[:54].rstrip("-") + "-" + digest


def _matches(selector, labels):
    """A LabelSelector (matchLabels, matchExpressions) against labels."""
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or ():
        key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def monitor_namespaces(monitor):
    """The namespaces a monitor selects in (``namespaceSelector.matchNames``; else its own)."""
    selector = (monitor.get("spec") or {}).get("namespaceSelector") or {}
    if selector.get("any"):
        raise CaptureError("%s %s: namespaceSelector.any is not captured; name the namespaces (matchNames)"
                           % (monitor.get("kind"), monitor["metadata"]["name"]))
    return list(selector.get("matchNames") or [monitor["metadata"]["namespace"]])


def _running(pod):
    return (pod.get("status") or {}).get("phase") == "Running" and (pod.get("status") or {}).get("podIP")


def _container_port(pod, port):
    """A container port of the pod: a number, or a port's name."""
    if isinstance(port, int) or str(port).isdigit():
        return int(port)
    for container in (pod.get("spec") or {}).get("containers") or ():
        for item in container.get("ports") or ():
            if item.get("name") == port:
                return int(item["containerPort"])
    return None


def _target(pod, port, endpoint, suffix=""):
    number = _container_port(pod, port)
    if number is None:
        return None
    scheme = endpoint.get("scheme") or "http"
    path = endpoint.get("path") or DEFAULT_PATH
    name = "%s_%s%s" % (pod["metadata"]["name"], number, suffix)
    return {"name": name, "pod": pod["metadata"]["name"], "namespace": pod["metadata"]["namespace"], "port": number,
            "url": "%s://%s:%d%s" % (scheme, pod["status"]["podIP"], number, path)}


def service_monitor_targets(monitor, services, pods):
    """Targets of a ServiceMonitor, from the Services and pods of its namespaces."""
    spec = monitor.get("spec") or {}
    selector = spec.get("selector") or {}
    targets = []
    for service in services:
        if not _matches(selector, service["metadata"].get("labels")):
            continue
        pod_selector = (service.get("spec") or {}).get("selector") or {}
        backends = [pod for pod in pods if pod["metadata"]["namespace"] == service["metadata"]["namespace"]
                    and pod_selector and _running(pod)
                    and all((pod["metadata"].get("labels") or {}).get(k) == v for k, v in pod_selector.items())]
        for index, endpoint in enumerate(spec.get("endpoints") or ()):
            ports = [p for p in (service.get("spec") or {}).get("ports") or ()
                     if endpoint.get("port") and p.get("name") == endpoint["port"]]
            container_port = (ports[0].get("targetPort", ports[0].get("port")) if ports
                              else endpoint.get("targetPort"))
            if container_port is None:
                continue
            for pod in backends:
                found = _target(pod, container_port, endpoint, "" if index == 0 else "_%d" % index)
                if found:
                    targets.append(found)
    return _unique(targets)


def pod_monitor_targets(monitor, pods):
    """Targets of a PodMonitor, from the pods of its namespaces."""
    spec = monitor.get("spec") or {}
    selector = spec.get("selector") or {}
    targets = []
    for pod in pods:
        if not _running(pod) or not _matches(selector, pod["metadata"].get("labels")):
            continue
        for index, endpoint in enumerate(spec.get("podMetricsEndpoints") or ()):
            port = endpoint.get("port") or endpoint.get("targetPort")
            found = _target(pod, port, endpoint, "" if index == 0 else "_%d" % index) if port is not None else None
            if found:
                targets.append(found)
    return _unique(targets)


def _unique(targets):
    seen, unique = set(), []
    for target in targets:
        if target["url"] not in seen:
            seen.add(target["url"])
            unique.append(target)
    return unique


def capture_pod(name, namespace, monitor_name, targets, frequency, image):
    """The capture pod's manifest: the loop of ``CAPTURE_SCRIPT`` over the targets."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {CAPTURE_LABEL: _DNS.sub("-", monitor_name.lower())[:63].strip("-") or "monitor"}},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "containers": [{
                "name": "capture", "image": image,
                "command": ["/bin/sh", "-c", CAPTURE_SCRIPT],
                "env": [{"name": "PERFSCALE_TARGETS", "value": " ".join("%s=%s" % (t["name"], t["url"]) for t in targets)},
                        {"name": "PERFSCALE_CAPTURE_FREQUENCY", "value": str(frequency)}],
                "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}},
            }],
        },
    }


def split_scrapes(log_text):
    """({target: [{"time", "text", "error"}]}, {target: incomplete count}) from the capture pod's log.

    A scrape is whole once its end marker follows it. A scrape without one (the log was read while
    the pod wrote it) is left out and counted as incomplete. A log with no end marker at all comes
    from a capture pod started before end markers existed: its scrapes are taken as they are."""
    text = log_text or ""
    ended = ("\n" + END_MARKER + " ") in ("\n" + text)
    scrapes = {}
    incomplete = {}
    current = None

    def close(scrape, whole):
        if scrape is None:
            return
        if whole or not ended:
            scrapes.setdefault(scrape["target"], []).append(scrape)
        else:
            incomplete[scrape["target"]] = incomplete.get(scrape["target"], 0) + 1

    for line in text.splitlines():
        if line.startswith(END_MARKER + " "):
            if current is not None and current["target"] == line[len(END_MARKER) + 1:]:
                close(current, True)
                current = None
            continue
        if line.startswith(ERROR_MARKER + " "):
            parts = line[len(ERROR_MARKER) + 1:].split(" ", 1)
            if current is not None and current["target"] == parts[0]:
                current["error"] = parts[1] if len(parts) > 1 else "failed"
            continue
        if line.startswith(MARKER + " "):
            parts = line[len(MARKER) + 1:].split(" ", 1)
            if len(parts) == 2:
                close(current, False)
                current = {"target": parts[1], "time": parts[0], "lines": [], "error": None}
            continue
        if current is not None:
            current["lines"].append(line)
    close(current, False)
    whole = {target: [{"time": item["time"], "text": "\n".join(item["lines"]) + ("\n" if item["lines"] else ""),
                       "error": item["error"]} for item in items] for target, items in scrapes.items()}
    return whole, incomplete


def finalize_files(log_text, targets):
    """The files of the finalize: ``metrics/<target>.txt`` (every scrape after a ``# scraped at``
    line), ``scrapes.json`` (per target: count of whole scrapes, first and last time, errors, scrapes
    left out as incomplete) and the raw log."""
    scrapes, incomplete = split_scrapes(log_text)
    files = {"capture_pod.log": log_text or ""}
    index = {}
    for target, items in sorted(scrapes.items()):
        files["metrics/%s.txt" % target] = "".join("# scraped at %s\n%s" % (item["time"], item["text"]) for item in items)
        errors = [item for item in items if item["error"]]
        index[target] = {"scrapes": len(items), "first": items[0]["time"], "last": items[-1]["time"],
                         "errors": len(errors), "last_error": errors[-1]["error"] if errors else None,
                         "incomplete": incomplete.get(target, 0)}
    for target in targets or ():
        index.setdefault(target["name"], {"scrapes": 0, "first": None, "last": None, "errors": 0, "last_error": None,
                                          "incomplete": incomplete.get(target["name"], 0)})
        index[target["name"]]["url"] = target["url"]
    files["scrapes.json"] = index
    return files, index


def targets_of_pod(pod):
    """The targets a capture pod was started with (its ``PERFSCALE_TARGETS``)."""
    for container in (pod.get("spec") or {}).get("containers") or ():
        for variable in container.get("env") or ():
            if variable.get("name") == "PERFSCALE_TARGETS":
                return [{"name": pair.split("=", 1)[0], "url": pair.split("=", 1)[1]}
                        for pair in (variable.get("value") or "").split() if "=" in pair]
    return []
