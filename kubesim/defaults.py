"""API-server defaulting and the few validations written in Go that clients trip over.

The defaults the controllers and clients rely on (``SetDefaults_*`` in
``k8s.io/kubernetes/pkg/apis/*/v1``), applied to every create and update after
server-side apply tracked the managers' fields (so defaulted fields belong to
no manager, as on a real server):

- Deployment: ``replicas: 1``, ``strategy`` RollingUpdate 25 %/25 %,
  ``revisionHistoryLimit: 10``, ``progressDeadlineSeconds: 600``;
- ReplicaSet: ``replicas: 1``; StatefulSet: ``replicas: 1``, ``podManagementPolicy:
  OrderedReady``, ``updateStrategy`` RollingUpdate partition 0, ``revisionHistoryLimit: 10``;
- DaemonSet: ``updateStrategy`` RollingUpdate maxUnavailable 1 maxSurge 0, ``revisionHistoryLimit: 10``;
- Job: ``parallelism: 1``, ``completions: 1`` when neither is set, ``backoffLimit: 6``,
  ``completionMode: NonIndexed``, ``suspend: false``, and at creation the generated
  selector ``batch.kubernetes.io/controller-uid: <uid>`` plus the matching template labels;
  a template ``restartPolicy`` other than ``Never``/``OnFailure`` is ``422 Invalid``;
- pods and pod templates: ``restartPolicy: Always``, ``dnsPolicy: ClusterFirst``,
  ``schedulerName: default-scheduler``, ``terminationGracePeriodSeconds: 30``;
  pods: ``serviceAccountName: default``, ``priority: 0``;
- Secret: ``type: Opaque``; ``stringData`` merged into ``data`` (base64) and dropped.
"""

import base64
import copy

from kubesim.errors import ApiError


def _pod_spec_defaults(spec):
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)


def _template_defaults(obj):
    template = (obj.get("spec") or {}).get("template")
    if isinstance(template, dict):
        _pod_spec_defaults(template.setdefault("spec", {}))


def default_pod(cluster, obj, old):
    spec = obj.setdefault("spec", {})
    _pod_spec_defaults(spec)
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("priority", 0)


def default_deployment(cluster, obj, old):
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy["type"] = "RollingUpdate"
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template_defaults(obj)


def default_replicaset(cluster, obj, old):
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _template_defaults(obj)


def default_statefulset(cluster, obj, old):
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if strategy.get("type") == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template_defaults(obj)


def default_daemonset(cluster, obj, old):
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if strategy.get("type") == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template_defaults(obj)


def default_job(cluster, obj, old):
    spec = obj.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    template = spec.setdefault("template", {})
    policy = (template.get("spec") or {}).get("restartPolicy")
    if policy not in ("Never", "OnFailure"):
        # validation.ValidateJob: a Job's pods must not restart forever
        raise ApiError.invalid("Job", "batch", obj["metadata"].get("name") or "", [(
            "FieldValueNotSupported" if policy else "FieldValueRequired", "spec.template.spec.restartPolicy",
            ('Unsupported value: "%s": supported values: "OnFailure", "Never"' % policy) if policy else
            'Required value: valid values: "OnFailure", "Never"')])
    if old is None and not spec.get("manualSelector"):
        uid = obj["metadata"]["uid"]
        generated = {"batch.kubernetes.io/controller-uid": uid}
        spec["selector"] = {"matchLabels": generated}
        labels = template.setdefault("metadata", {}).setdefault("labels", {})
        labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": obj["metadata"]["name"],
                       "controller-uid": uid, "job-name": obj["metadata"]["name"]})
    _template_defaults(obj)


def default_secret(cluster, obj, old):
    """``type`` Opaque by default; ``stringData`` is write-only: merged into ``data`` (base64; it wins
    over a ``data`` key of the same name) and never stored, as the API server does."""
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if string_data:
        data = dict(obj.get("data") or {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode("utf-8")).decode("ascii")
        obj["data"] = data


DEFAULTERS = {
    ("", "pods"): default_pod,
    ("", "secrets"): default_secret,
    ("apps", "deployments"): default_deployment,
    ("apps", "replicasets"): default_replicaset,
    ("apps", "statefulsets"): default_statefulset,
    ("apps", "daemonsets"): default_daemonset,
    ("batch", "jobs"): default_job,
}


def apply_defaults(cluster, resource, old, new):
    """The cluster's defaulting step: the defaulter registered for the resource, if any."""
    defaulter = DEFAULTERS.get(resource.storage_key)
    if defaulter is not None and not resource.custom:
        defaulter(cluster, new, old)


def _schema_defaults(schema, node):
    """Fill ``node`` (an object) with the ``default`` of every absent property of ``schema``, recursively."""
    if not isinstance(schema, dict) or not isinstance(node, dict):
        return
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            continue
        if name not in node and "default" in prop:
            node[name] = copy.deepcopy(prop["default"])
        value = node.get(name)
        if isinstance(value, dict):
            _schema_defaults(prop, value)
        elif isinstance(value, list) and isinstance(prop.get("items"), dict):
            for item in value:
                _schema_defaults(prop["items"], item)


def apply_crd_defaults(cluster, resource, old, new):
    """Structural schema defaulting of custom resources (apiextensions-apiserver pkg/apiserver/schema/defaulting):
    every absent field whose schema has a ``default`` gets it - including ``status`` of a kind whose schema
    defaults it (a Gateway's "Waiting for controller" conditions before any controller looks at it)."""
    if not getattr(resource, "custom", False):
        return
    validator = getattr(cluster, "validator", None)
    found = validator.crd_schema(resource.group, resource.version, resource.kind) if validator is not None else None
    if not found:
        return
    _schema_defaults(found[1], new)
