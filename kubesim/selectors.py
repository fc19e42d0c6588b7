"""Label and field selectors (API conventions: "Label selector operators"; field selectors).

Label selectors: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``,
``a`` (exists), ``!a`` (does not exist), comma-separated (AND).
Field selectors: ``=``, ``==``, ``!=`` on ``metadata.name``,
``metadata.namespace``, ``status.phase``, ``spec.nodeName`` and other scalar
paths (a real server accepts a per-kind list; unsupported ones are 400 there).
"""

import re

from kubesim.errors import ApiError

_SET = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(notin|in)\s*\(([^)]*)\)|(==|=|!=)\s*([A-Za-z0-9_.-]*))?\s*$")
FIELD_LABELS = {"metadata.name", "metadata.namespace", "status.phase", "spec.nodeName", "spec.restartPolicy",
                "spec.schedulerName", "spec.serviceAccountName", "status.podIP", "status.nominatedNodeName",
                "involvedObject.kind", "involvedObject.name", "involvedObject.namespace", "involvedObject.uid",
                "reason", "type", "spec.unschedulable", "status.successful", "spec.signerName", "type"}


def _split(expression):
    """Split on commas that are not inside parentheses."""
    parts, depth, current = [], 0, ""
    for char in expression:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current)
    return parts


def parse_label_selector(expression):
    """A list of (key, op, values) requirements; raises 400 on a malformed selector."""
    requirements = []
    for part in _split(expression or ""):
        match = _SET.match(part)
        if not match:
            raise ApiError.bad_request('unable to parse requirement: found "%s", expected a label selector' % part.strip())
        negate, key, set_op, set_values, op, value = match.groups()
        if negate:
            if set_op or op:
                raise ApiError.bad_request('unable to parse requirement: "!" must only prefix a key: %s' % part.strip())
            requirements.append((key, "!", None))
        elif set_op:
            requirements.append((key, set_op, {v.strip() for v in set_values.split(",") if v.strip()}))
        elif op:
            requirements.append((key, "!=" if op == "!=" else "=", value))
        else:
            requirements.append((key, "exists", None))
    return requirements


def label_selector_from_dict(selector):
    """A ``LabelSelector`` object (matchLabels, matchExpressions) as requirements."""
    requirements = [(k, "=", v) for k, v in (selector.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in selector.get("matchExpressions") or ():
        requirements.append((expr["key"], ops.get(expr.get("operator"), "in"), set(expr.get("values") or ())))
    return requirements


def matches_labels(requirements, labels):
    labels = labels or {}
    for key, op, value in requirements:
        present = key in labels
        if op == "=" and labels.get(key) != value:
            return False
        if op == "!=" and present and labels[key] == value:
            return False
        if op == "in" and (not present or labels[key] not in value):
            return False
        if op == "notin" and present and labels[key] in value:
            return False
        if op == "exists" and not present:
            return False
        if op == "!" and present:
            return False
    return True


def parse_field_selector(expression):
    requirements = []
    for part in _split(expression or ""):
        match = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$", part)
        if not match:
            raise ApiError.bad_request('invalid selector: \'%s\'; can\'t understand \'%s\'' % (expression, part))
        requirements.append((match.group(1), "!=" if match.group(2) == "!=" else "=", match.group(3)))
    return requirements


def _field_value(obj, path):
    node = obj
    for part in path.split("."):
        if not isinstance(node, dict):
            return ""
        node = node.get(part)
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def matches_fields(requirements, obj):
    for path, op, value in requirements:
        actual = _field_value(obj, path)
        if (op == "=") != (actual == value):
            return False
    return True
