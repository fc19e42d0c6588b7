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
- Secret: ``type: Opaque``; ``stringData`` merged into ``data`` (base64) and dropped;
- Lease (``coordination.k8s.io/v1``): ``spec.acquireTime`` / ``spec.renewTime`` must be
  ``metav1.MicroTime`` text - microseconds and a timezone, ``2006-01-02T15:04:05.000000Z07:00`` - or
  the body is ``400 BadRequest`` as Go's decoder refuses it; then ``spec.leaseDurationSeconds`` > 0
  and ``spec.leaseTransitions`` >= 0, else ``422 Invalid`` with the field path (``validate_lease``).
"""

import base64
import copy
import datetime
import re

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


# k8s.io/apimachinery/pkg/apis/meta/v1/micro_time.go: RFC3339Micro, parsed with time.Parse on decode
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
_SECONDS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
_FRACTION = re.compile(r"\.\d{6}")
_ZONE = re.compile(r"(?:Z|[+-]\d{2}:\d{2})\Z")


def micro_time_error(value):
    """Why Go's ``time.Parse(RFC3339Micro, value)`` refuses ``value`` (its words, the element it
    stopped at), or None when it parses. Simplified: a date-time prefix that does not match is named
    whole."""
    prefix = _SECONDS.match(value)
    if prefix is None:
        return 'cannot parse "%s" as "%s"' % (value, RFC3339_MICRO)
    rest = value[prefix.end():]
    fraction = _FRACTION.match(rest)
    if fraction is None:
        return 'cannot parse "%s" as ".000000"' % rest
    zone = rest[fraction.end():]
    if not _ZONE.match(zone):
        return 'cannot parse "%s" as "Z07:00"' % zone
    try:
        datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return "date or time out of range"
    return None


def validate_lease(cluster, obj, old):
    """``pkg/apis/coordination/validation/validation.go`` (``ValidateLeaseSpec``): a lease duration is
    > 0, transitions >= 0 (``422 Invalid``, all causes); before that, its MicroTimes must decode
    (``400``, as the decoder answers before validation runs). Types and the int32 range are the
    schema's (``validation.py``)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for field in ("acquireTime", "renewTime"):
        value = spec.get(field)
        why = micro_time_error(value) if isinstance(value, str) else None
        if why:
            raise ApiError.bad_request('Lease in version "v1" cannot be handled as a Lease: parsing time "%s" as '
                                       '"%s": %s' % (value, RFC3339_MICRO, why))
    causes = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and not isinstance(duration, bool) and duration <= 0:
        causes.append(("FieldValueInvalid", "spec.leaseDurationSeconds",
                       "Invalid value: %d: must be greater than 0" % duration))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and not isinstance(transitions, bool) and transitions < 0:
        causes.append(("FieldValueInvalid", "spec.leaseTransitions",
                       "Invalid value: %d: must be greater than or equal to 0" % transitions))
    if causes:
        raise ApiError.invalid("Lease", "coordination.k8s.io", obj["metadata"].get("name") or "", causes)


DEFAULTERS = {
    ("", "pods"): default_pod,
    ("", "secrets"): default_secret,
    ("apps", "deployments"): default_deployment,
    ("apps", "replicasets"): default_replicaset,
    ("apps", "statefulsets"): default_statefulset,
    ("apps", "daemonsets"): default_daemonset,
    ("batch", "jobs"): default_job,
    ("coordination.k8s.io", "leases"): validate_lease,
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
