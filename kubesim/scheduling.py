"""Scheduling predicates: does a pod fit a node? (kube-scheduler's filter plugins, simplified).

Filters, in kube-scheduler's default plugin order (a node reports the first that fails):

- ``NodeUnschedulable`` and node readiness: ``spec.unschedulable`` and a node whose
  ``Ready`` condition is not ``True`` carry the ``node.kubernetes.io/unschedulable``
  and ``node.kubernetes.io/not-ready`` taints (the node lifecycle controller's taints);
- ``TaintToleration``: ``NoSchedule``/``NoExecute`` taints need a toleration
  (``Equal`` or ``Exists``, empty key with ``Exists`` tolerates everything);
- ``NodeAffinity``: ``spec.nodeSelector`` and
  ``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``
  (``matchExpressions`` with ``In``, ``NotIn``, ``Exists``, ``DoesNotExist``,
  ``Gt``, ``Lt`` on labels, ``matchFields`` on ``metadata.name``; terms are ORed);
- ``NodeResourcesFit``: the pod's requests (``cpu``, ``memory``, ``pods`` and
  extended resources such as ``nvidia.com/gpu``; limits stand for missing
  requests, as API defaulting does) must fit the node's allocatable minus what
  the non-terminated pods bound to it request.

Scoring: the least allocated node (by requested fraction), then the name.
The failure message follows the scheduler's ``FitError``:
``0/4 nodes are available: 1 node(s) had untolerated taint {key: value}, 3 Insufficient nvidia.com/gpu.``
"""

import collections
import re

QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
SUFFIXES = {"": 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
            "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def parse_quantity(value):
    """A resource quantity as a float (``500m`` -> 0.5, ``64Gi`` -> 68719476736); 0 when malformed."""
    if isinstance(value, (int, float)):
        return float(value)
    match = QUANTITY.match(str(value or "").strip())
    if not match or match.group(2) not in SUFFIXES:
        return 0.0
    return float(match.group(1)) * SUFFIXES[match.group(2)]


def format_quantity(value):
    """An integer quantity as a string (``4``)."""
    return str(int(value)) if float(value).is_integer() else str(value)


def pod_requests(pod):
    """``{resource: amount}`` the pod requests: containers summed, an init container's max, plus one ``pods``."""
    spec = pod.get("spec") or {}
    total = collections.Counter()
    for container in spec.get("containers") or ():
        for name, amount in container_requests(container).items():
            total[name] += amount
    for container in spec.get("initContainers") or ():
        for name, amount in container_requests(container).items():
            total[name] = max(total[name], amount)
    for name, amount in (spec.get("overhead") or {}).items():
        total[name] += parse_quantity(amount)
    total["pods"] = 1
    return dict(total)


def container_requests(container):
    resources = container.get("resources") or {}
    requests = dict(resources.get("limits") or {})  # defaulting: requests default to limits
    requests.update(resources.get("requests") or {})
    return {name: parse_quantity(amount) for name, amount in requests.items()}


def qos_class(pod):
    """Guaranteed, Burstable or BestEffort (the kubelet's QoS classes)."""
    containers = (pod.get("spec") or {}).get("containers") or ()
    any_set = False
    guaranteed = True
    for container in containers:
        resources = container.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        if requests or limits:
            any_set = True
        for name in ("cpu", "memory"):
            if name not in limits or parse_quantity(requests.get(name, limits[name])) != parse_quantity(limits[name]):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def tolerates(tolerations, taint):
    for toleration in tolerations or ():
        if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
            continue
        operator = toleration.get("operator") or "Equal"
        key = toleration.get("key") or ""
        if operator == "Exists":
            if not key or key == taint.get("key"):
                return True
        elif key == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def node_taints(node):
    taints = list((node.get("spec") or {}).get("taints") or ())
    if (node.get("spec") or {}).get("unschedulable"):
        taints.append(UNSCHEDULABLE_TAINT)
    if not node_ready(node):
        taints.append(NOT_READY_TAINT)
    return taints


def node_ready(node):
    for condition in (node.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def untolerated_taint(node, tolerations, effects=("NoSchedule", "NoExecute")):
    """The first taint of ``node`` (with one of ``effects``) that ``tolerations`` do not tolerate, or None."""
    for taint in node_taints(node):
        if taint.get("effect") in effects and not tolerates(tolerations, taint):
            return taint
    return None


def _expression_matches(expression, value_of):
    key, operator = expression.get("key"), expression.get("operator")
    values = expression.get("values") or []
    present, value = value_of(key)
    if operator == "In":
        return present and value in values
    if operator == "NotIn":
        return not present or value not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and values:
        try:
            number, bound = int(value), int(values[0])
        except ValueError:
            return False
        return number > bound if operator == "Gt" else number < bound
    return False


def matches_node_selector_term(node, term):
    labels = node["metadata"].get("labels") or {}
    name = node["metadata"]["name"]
    for expression in term.get("matchExpressions") or ():
        if not _expression_matches(expression, lambda k: (k in labels, labels.get(k))):
            return False
    for expression in term.get("matchFields") or ():
        if not _expression_matches(expression, lambda k: (k == "metadata.name", name)):
            return False
    return bool(term.get("matchExpressions") or term.get("matchFields"))


def matches_node_affinity(node, spec):
    """``nodeSelector`` and the required node affinity of a pod spec."""
    labels = node["metadata"].get("labels") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = ((((spec.get("affinity") or {}).get("nodeAffinity") or {})
                 .get("requiredDuringSchedulingIgnoredDuringExecution")) or {})
    terms = required.get("nodeSelectorTerms")
    if terms:
        return any(matches_node_selector_term(node, term) for term in terms)
    return True


class NodeUsage:
    """What the non-terminated pods bound to each node request (kept up to date from pod events)."""

    def __init__(self):
        self._by_node = collections.defaultdict(dict)  # node -> {pod uid: requests}
        self._node_of = {}

    def update(self, pod, deleted=False):
        uid = pod["metadata"]["uid"]
        node = (pod.get("spec") or {}).get("nodeName")
        phase = (pod.get("status") or {}).get("phase")
        previous = self._node_of.pop(uid, None)
        if previous is not None:
            self._by_node[previous].pop(uid, None)
        if deleted or not node or phase in ("Succeeded", "Failed"):
            return previous is not None
        self._by_node[node][uid] = pod_requests(pod)
        self._node_of[uid] = node
        return False

    def used(self, node_name):
        total = collections.Counter()
        for requests in self._by_node.get(node_name, {}).values():
            total.update(requests)
        return total


def fit_failure(node, pod, used):
    """Why ``pod`` does not fit ``node`` (a short reason as the scheduler words it), or None when it fits."""
    spec = pod.get("spec") or {}
    taint = untolerated_taint(node, spec.get("tolerations"))
    if taint is not None:
        return "had untolerated taint {%s: %s}" % (taint.get("key"), taint.get("value") or "")
    if not matches_node_affinity(node, spec):
        return "didn't match Pod's node affinity/selector"
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    for name, amount in sorted(pod_requests(pod).items()):
        if amount <= 0:
            continue
        if name not in allocatable and name not in ("cpu", "memory", "ephemeral-storage", "pods"):
            return "Insufficient %s" % name
        # compared in thousandths (the scheduler counts milli-units as integers): 47.98 + 0.02 fits in 48
        if name in allocatable and round((parse_quantity(allocatable[name]) - used.get(name, 0.0)) * 1000) < round(amount * 1000):
            return "Insufficient %s" % name
    return None


def schedule(pod, nodes, usage):
    """``(node name, None)`` for the best node, or ``(None, message)`` explaining why none fits."""
    reasons = collections.Counter()
    candidates = []
    requests = pod_requests(pod)
    for node in nodes:
        used = usage.used(node["metadata"]["name"])
        reason = fit_failure(node, pod, used)
        if reason is not None:
            reasons["node(s) " + reason if not reason.startswith("Insufficient") else reason] += 1
            continue
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        score = 0.0
        for name in ("cpu", "memory", "pods"):
            capacity = parse_quantity(allocatable.get(name, 0)) or 1.0
            score += (used.get(name, 0.0) + requests.get(name, 0.0)) / capacity
        candidates.append((score, node["metadata"]["name"]))
    if candidates:
        return min(candidates)[1], None
    detail = ", ".join(sorted("%d %s" % (count, reason) for reason, count in reasons.items()))  # FitError.Error()
    message = "0/%d nodes are available: %s." % (len(nodes), detail) if nodes else "no nodes available to schedule pods"
    if nodes:
        message += " preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling." % (
            len(nodes), len(nodes))
    return None, message
