"""Server-side printing: ``meta.k8s.io/v1 Table`` for ``kubectl get`` (API conventions: Table).

Columns per kind (a short version of the real printers) or the CRD's
``additionalPrinterColumns``; rows carry ``PartialObjectMetadata``.
"""

from kubesim.clock import parse_timestamp


def human_duration(seconds):
    """kube's ``HumanDuration`` (``translateTimestampSince``): 5s, 3m2s, 4h, 2d3h..."""
    seconds = int(max(0, seconds))
    if seconds < 120:
        return "%ds" % seconds
    minutes = seconds // 60
    if minutes < 10:
        return "%dm%ds" % (minutes, seconds % 60) if seconds % 60 else "%dm" % minutes
    if minutes < 180:
        return "%dm" % minutes
    hours = minutes // 60
    if hours < 8:
        return "%dh%dm" % (hours, minutes % 60) if minutes % 60 else "%dh" % hours
    if hours < 48:
        return "%dh" % hours
    days = hours // 24
    return "%dd%dh" % (days, hours % 24) if days < 8 and hours % 24 else "%dd" % days


def _age(obj, now):
    created = parse_timestamp(obj["metadata"].get("creationTimestamp"))
    return human_duration(now - created) if created else "<unknown>"


def _pod_columns(obj, now):
    statuses = (obj.get("status") or {}).get("containerStatuses") or []
    containers = (obj.get("spec") or {}).get("containers") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    reason = (obj.get("status") or {}).get("phase") or "Pending"
    for s in statuses:
        state = s.get("state") or {}
        if "waiting" in state and state["waiting"].get("reason"):
            reason = state["waiting"]["reason"]
        elif "terminated" in state and state["terminated"].get("reason") and reason not in ("Running",):
            reason = state["terminated"]["reason"]
    if obj["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    return ["%d/%d" % (ready, len(containers)), reason, restarts, _age(obj, now),
            (obj.get("status") or {}).get("podIP") or "<none>", (obj.get("spec") or {}).get("nodeName") or "<none>"]


def _deployment_columns(obj, now):
    status = obj.get("status") or {}
    replicas = (obj.get("spec") or {}).get("replicas", 1)
    return ["%d/%d" % (status.get("readyReplicas", 0), replicas), status.get("updatedReplicas", 0),
            status.get("availableReplicas", 0), _age(obj, now)]


def _node_columns(obj, now):
    conditions = {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or ()}
    roles = sorted(k.split("/", 1)[1] for k in obj["metadata"].get("labels") or {} if k.startswith("node-role.kubernetes.io/"))
    return ["Ready" if conditions.get("Ready") == "True" else "NotReady", ",".join(roles) or "<none>", _age(obj, now),
            ((obj.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")]


def _job_columns(obj, now):
    status = obj.get("status") or {}
    conditions = {c["type"]: c["status"] for c in status.get("conditions") or ()}
    state = "Complete" if conditions.get("Complete") == "True" else "Failed" if conditions.get("Failed") == "True" else "Running"
    return [state, "%d/%d" % (status.get("succeeded", 0), (obj.get("spec") or {}).get("completions", 1)), _age(obj, now)]


def _event_columns(obj, now):
    involved = obj.get("involvedObject") or {}
    last = parse_timestamp(obj.get("lastTimestamp") or obj["metadata"].get("creationTimestamp"))
    return [human_duration(now - last) if last else "<unknown>", obj.get("type", ""), obj.get("reason", ""),
            "%s/%s" % ((involved.get("kind") or "").lower(), involved.get("name", "")), obj.get("message", "")]


def _col(name, type_="string", priority=0, fmt=""):
    return {"name": name, "type": type_, "format": fmt, "description": name, "priority": priority}


KIND_COLUMNS = {
    ("", "pods"): ([_col("Ready"), _col("Status"), _col("Restarts", "string"), _col("Age"), _col("IP", priority=1),
                    _col("Node", priority=1)], _pod_columns),
    ("apps", "deployments"): ([_col("Ready"), _col("Up-to-date", "integer"), _col("Available", "integer"), _col("Age")],
                              _deployment_columns),
    ("", "nodes"): ([_col("Status"), _col("Roles"), _col("Age"), _col("Version")], _node_columns),
    ("", "namespaces"): ([_col("Status"), _col("Age")],
                         lambda o, now: [(o.get("status") or {}).get("phase", "Active"), _age(o, now)]),
    ("batch", "jobs"): ([_col("Status"), _col("Completions"), _col("Age")], _job_columns),
    ("", "configmaps"): ([_col("Data", "integer"), _col("Age")],
                         lambda o, now: [len(o.get("data") or {}) + len(o.get("binaryData") or {}), _age(o, now)]),
    ("", "secrets"): ([_col("Type"), _col("Data", "integer"), _col("Age")],
                      lambda o, now: [o.get("type", "Opaque"), len(o.get("data") or {}), _age(o, now)]),
    ("", "events"): ([_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Message")], _event_columns),
    ("apiextensions.k8s.io", "customresourcedefinitions"): (
        [_col("Created At", "date")], lambda o, now: [o["metadata"].get("creationTimestamp")]),
}


def _json_path(obj, path):
    node = obj
    for part in path.strip().lstrip(".").split("."):
        if not part:
            continue
        if "[" in part:
            name, _, index = part.partition("[")
            node = node.get(name) if isinstance(node, dict) else None
            index = index.rstrip("]")
            if isinstance(node, list) and index.isdigit() and int(index) < len(node):
                node = node[int(index)]
            else:
                return None
        else:
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return None
    return node


def table(resource, objects, rv, now, continue_=None, remaining=None):
    key = resource.storage_key
    columns = [_col("Name", fmt="name")]
    if key in KIND_COLUMNS:
        extra, cells = KIND_COLUMNS[key]
        columns += extra
    elif resource.printer_columns:
        extra = [_col(c["name"], c.get("type", "string"), c.get("priority", 0), c.get("format", ""))
                 for c in resource.printer_columns]
        has_age = any(c["name"].lower() == "age" for c in resource.printer_columns)
        columns += extra + ([] if has_age else [_col("Age", "date")])

        def cells(obj, now_, specs=resource.printer_columns, has_age=has_age):
            values = []
            for spec in specs:
                value = _json_path(obj, spec.get("jsonPath", ""))
                if spec.get("type") == "date" and value:
                    parsed = parse_timestamp(value)
                    value = human_duration(now_ - parsed) if parsed else value
                values.append(value)
            return values + ([] if has_age else [_age(obj, now_)])
    else:
        columns.append(_col("Age", fmt=""))

        def cells(obj, now_):
            return [_age(obj, now_)]
    rows = []
    for obj in objects:
        meta = obj["metadata"]
        rows.append({"cells": [meta["name"]] + cells(obj, now), "object": {
            "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}})
    metadata = {"resourceVersion": str(rv)}
    if continue_:
        metadata["continue"] = continue_
    if remaining is not None:
        metadata["remainingItemCount"] = remaining
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "columnDefinitions": columns, "rows": rows}
