"""The harness that drives kubesim into the situations of the reality corpus (tests/fixtures/upstream/).

A :class:`Session` is one in-process kubesim whose every write is recorded: for each object, the
distinct states it went through, in order (a store listener, so no state is missed however short).
A scenario function creates objects in a session, waits for what the upstream scenario ends with, and
returns the recorded states of the object each corpus file was taken from. :func:`signature` is what
is compared with the corpus object: the condition types, statuses and reasons, the phase-like fields,
and for kinds without conditions the relations a wait reads (messages, times and counters' values are
not compared).
"""

import copy
import os
import re
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "tests", "fixtures", "upstream")
PREFIX = "kubesim.perfscale.io/"


def load_corpus():
    """``{relative path: entry}`` of every corpus file."""
    entries = {}
    for project in sorted(os.listdir(CORPUS)):
        folder = os.path.join(CORPUS, project)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith(".yaml"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    entries["%s/%s" % (project, name)] = yaml.safe_load(handle)
    return entries


# -- signatures ----------------------------------------------------------------------------------

PHASE_FIELDS = ("phase", "state", "jobStatus", "jobDeploymentStatus")


def _reason(reason):
    """An empty reason is no reason; a reason written as a sentence (the machine-config operator's "7 nodes
    are reporting degraded status on sync") is compared without its numbers."""
    if not reason:
        return None
    return re.sub(r"\d+", "N", reason) if " " in reason else reason


def _conditions(conditions, ignore=()):
    """``{type: (status, reason)}``."""
    return {
        c.get("type"): (c.get("status"), _reason(c.get("reason")))
        for c in conditions or ()
        if c.get("type") not in ignore
    }


def _base(obj, ignore=()):
    status = obj.get("status") or {}
    sig = {field: status.get(field) for field in PHASE_FIELDS}
    if "conditions" in status:
        sig["conditions"] = _conditions(status["conditions"], ignore)
    return sig


def _generation_observed(obj):
    status = obj.get("status") or {}
    generation = (obj.get("metadata") or {}).get("generation")
    observed = status.get("observedGeneration")
    return observed is not None and (generation is None or observed >= generation)


def _deployment(obj, ignore=()):
    status = obj.get("status") or {}
    replicas = (obj.get("spec") or {}).get("replicas", 1)
    sig = _base(obj, ignore)
    sig.update(
        observed=_generation_observed(obj),
        all_updated=status.get("updatedReplicas", 0) == replicas,
        all_available=status.get("availableReplicas", 0) == replicas,
    )
    return sig


def _statefulset(obj, ignore=()):
    status = obj.get("status") or {}
    replicas = (obj.get("spec") or {}).get("replicas", 1)
    return {
        "observed": _generation_observed(obj),
        "all_ready": status.get("readyReplicas", 0) == replicas,
        "revision_current": status.get("currentRevision") == status.get("updateRevision"),
    }


def _daemonset(obj, ignore=()):
    status = obj.get("status") or {}
    desired = status.get("desiredNumberScheduled", 0)
    return {
        "observed": _generation_observed(obj),
        "scheduled": desired > 0,
        "all_ready": status.get("numberReady", 0) == desired,
        "all_available": status.get("numberAvailable", 0) == desired,
        "all_updated": status.get("updatedNumberScheduled", 0) == desired,
    }


def _job(obj, ignore=()):
    sig = _base(obj, ignore)
    sig["terminating"] = bool((obj.get("status") or {}).get("terminating"))
    return sig


def _pod(obj, ignore=()):
    sig = _base(obj, ignore)
    states = []
    for container in (obj.get("status") or {}).get("containerStatuses") or ():
        state = container.get("state") or {}
        kind = next(iter(state), None)
        states.append((kind, (state.get(kind) or {}).get("reason") if kind != "running" else None))
    sig["containers"] = states
    return sig


def _node(obj, ignore=()):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    allocatable = (obj.get("status") or {}).get("allocatable") or {}
    sig = {
        "nfd_gpu_label": any(
            labels.get(k) == "true"
            for k in (
                "feature.node.kubernetes.io/pci-10de.present",
                "feature.node.kubernetes.io/pci-0302_10de.present",
                "feature.node.kubernetes.io/pci-0300_10de.present",
            )
        ),
        "gpu_present": labels.get("nvidia.com/gpu.present"),
        "gpu_allocatable": int(allocatable.get("nvidia.com/gpu", "0") or 0) > 0,
    }
    if "nvidia.com/mig.strategy" in labels:
        sig.update(_mig(labels, allocatable))
    return sig


def _mig(labels, allocatable):
    """A MIG node as the gpu waits read it: the strategy and the MIG manager's state, whether GFD's product names
    a MIG profile (single) or is MIG-INVALID, whether GFD's GPU count is what the device plugin advertises as
    nvidia.com/gpu, and whether every profile GFD counted (``nvidia.com/mig-<profile>.count``) is advertised
    with that count (mixed). The profiles and counts themselves depend on the GPU model."""
    product = labels.get("nvidia.com/gpu.product") or ""
    counted = {
        key[len("nvidia.com/") : -len(".count")]: value
        for key, value in labels.items()
        if key.startswith("nvidia.com/mig-") and key.endswith(".count")
    }
    return {
        "mig_strategy": labels.get("nvidia.com/mig.strategy"),
        "mig_config_state": labels.get("nvidia.com/mig.config.state"),
        "gpu_product_mig": "invalid" if product.endswith("-MIG-INVALID") else "-MIG-" in product,
        "gpu_count_advertised": labels.get("nvidia.com/gpu.count") == allocatable.get("nvidia.com/gpu"),
        "mig_profiles_advertised": bool(counted)
        and all(allocatable.get("nvidia.com/" + name) == count for name, count in counted.items()),
    }


def _inferenceservice(obj, ignore=()):
    """The conditions, and whether the model is blocked as the inferenceservice wait reads it (transitionStatus
    ``BlockedByFailedLoad`` or ``InvalidSpec``, with the failure's reason). Other transition states are not
    compared: the corpus's envtest objects have no pods, so their model stays InProgress even when Ready."""
    model = (obj.get("status") or {}).get("modelStatus") or {}
    sig = _base(obj, ignore)
    sig["model_blocked"] = None
    if model.get("transitionStatus") in ("BlockedByFailedLoad", "InvalidSpec"):
        sig["model_blocked"] = [model["transitionStatus"], (model.get("lastFailureInfo") or {}).get("reason")]
    return sig


def _catalogsource(obj, ignore=()):
    status = obj.get("status") or {}
    return {
        "reason": status.get("reason"),
        "lastObservedState": (status.get("connectionState") or {}).get("lastObservedState"),
    }


def _csv(obj, ignore=()):
    status = obj.get("status") or {}
    return {"phase": status.get("phase"), "reason": status.get("reason")}


def _parents(obj, ignore=()):
    """HTTPRoute and InferencePool: the conditions of each parent (the v1alpha2 field is ``parent``)."""
    status = obj.get("status") or {}
    parents = status.get("parents", status.get("parent")) or ()
    return {"parents": [_conditions(p.get("conditions"), ignore) for p in parents]}


def _route(obj, ignore=()):
    return {
        "ingress": [_conditions(i.get("conditions"), ignore) for i in (obj.get("status") or {}).get("ingress") or ()]
    }


def _rayjob(obj, ignore=()):
    status = obj.get("status") or {}
    return {
        "jobStatus": status.get("jobStatus") or None,
        "jobDeploymentStatus": status.get("jobDeploymentStatus"),
        "reason": status.get("reason"),
    }


def _reasoned(obj, ignore=()):
    """Kinds whose status has a top-level ``reason`` beside the phase (Build, Machine's errorReason)."""
    status = obj.get("status") or {}
    sig = _base(obj, ignore)
    sig["reason"] = status.get("reason") or status.get("errorReason")
    return sig


def _trainjob(obj, ignore=()):
    """The trainer's Job (``node``) only: the initializer Jobs belong to runtimes that have them."""
    status = obj.get("status") or {}
    sig = {"conditions": _conditions(status.get("conditions"), ignore)}
    sig["node"] = next(
        (
            tuple(k for k in ("active", "succeeded", "failed") if j.get(k))
            for j in status.get("jobsStatus") or ()
            if j.get("name") == "node"
        ),
        None,
    )
    return sig


SIGNATURES = {
    "Deployment": _deployment,
    "StatefulSet": _statefulset,
    "DaemonSet": _daemonset,
    "Job": _job,
    "Pod": _pod,
    "Node": _node,
    "InferenceService": _inferenceservice,
    "CatalogSource": _catalogsource,
    "ClusterServiceVersion": _csv,
    "HTTPRoute": _parents,
    "InferencePool": _parents,
    "Route": _route,
    "RayJob": _rayjob,
    "Build": _reasoned,
    "Machine": _reasoned,
    "TrainJob": _trainjob,
}


def signature(obj, ignore=()):
    """What kubesim must write as upstream does, of ``obj`` (see the module docstring)."""
    return SIGNATURES.get(obj.get("kind"), _base)(obj, ignore)


def same(expected, actual):
    """Does ``actual`` (kubesim's signature) agree with ``expected`` (the corpus object's)? Every key of
    the corpus's is compared; a corpus object without ``conditions`` (the upstream sample leaves the field
    out) says nothing about them."""
    return all(actual.get(key) == value for key, value in expected.items())


# -- a recorded kubesim ---------------------------------------------------------------------------


def _recorded_part(obj):
    meta = obj.get("metadata") or {}
    return (meta.get("generation"), meta.get("labels"), obj.get("status"))


class Session:
    """One in-process kubesim; ``history(...)`` is every distinct state of an object, in order."""

    def __init__(self, **settings):
        from kubesim.app import KubeSim

        self.sim = KubeSim(**settings)
        self.cluster = self.sim.cluster
        self._history = {}
        self.cluster.store.add_listener(self._listen)
        self.sim.start()

    def stop(self):
        self.sim.stop()

    def _listen(self, event_type, key, obj, old):
        if event_type == "DELETED":
            return
        meta = obj["metadata"]
        states = self._history.setdefault((obj.get("kind"), meta.get("namespace") or "", meta["name"]), [])
        if not states or _recorded_part(states[-1]) != _recorded_part(obj):
            states.append(copy.deepcopy(obj))

    def history(self, kind, namespace, name):
        return list(self._history.get((kind, namespace or "", name), ()))

    # -- writes ---------------------------------------------------------------------------------
    def resource(self, api_version, kind):
        return self.cluster.resource(api_version, kind)

    def namespace(self, name):
        if self.cluster.find(self.resource("v1", "Namespace"), "", name) is None:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def create(self, *bodies):
        created = []
        for body in bodies:
            body = copy.deepcopy(body)
            namespace = body["metadata"].get("namespace")
            created.append(self.cluster.create(self.resource(body["apiVersion"], body["kind"]), body, namespace))
        return created[0] if len(created) == 1 else created

    def change(self, api_version, kind, namespace, name, edit):
        """Edit the object (spec, metadata) as a client's update does."""

        def write(obj):
            edit(obj)

        return self.cluster.mutate(self.resource(api_version, kind), namespace or "", name, write)

    def annotate(self, api_version, kind, namespace, name, **annotations):
        def edit(obj):
            current = obj["metadata"].setdefault("annotations", {})
            for key, value in annotations.items():
                key = PREFIX + key.replace("_", "-")
                if value is None:
                    current.pop(key, None)
                else:
                    current[key] = value

        return self.change(api_version, kind, namespace, name, edit)

    def get(self, api_version, kind, namespace, name):
        return self.cluster.find(self.resource(api_version, kind), namespace or "", name)

    def list(self, api_version, kind, namespace=None):
        items, _rv, _cont, _rem = self.cluster.list(self.resource(api_version, kind), namespace)
        return [copy.deepcopy(i) for i in items]

    def wait(self, api_version, kind, namespace, name, predicate, timeout=60.0, what=""):
        """Wait (real seconds) until ``predicate(obj)`` holds for the object, or held for a state it went
        through since the call (however short); returns that state."""
        deadline = time.monotonic() + timeout
        obj = None
        seen = len(self.history(kind, namespace, name))
        while time.monotonic() < deadline:
            states = self.history(kind, namespace, name)
            passed = next((state for state in states[seen:] if predicate(state)), None)
            if passed is not None:
                return passed
            try:
                obj = self.get(api_version, kind, namespace, name)
            except Exception as exc:  # the kind is not served yet (its CRD is being established)
                if type(exc).__name__ != "ApiError":
                    raise
                obj = None
            if obj is not None and predicate(obj):
                return obj
            time.sleep(0.05)
        raise AssertionError(
            "kubesim: %s %s/%s never %s; last status: %s"
            % (kind, namespace, name, what or "reached the state waited for", (obj or {}).get("status"))
        )

    def http(self, method, path, body=None, content_type="application/json"):
        """``(status, document)`` of a request to kubesim's API with the admin token."""
        import json
        import ssl
        import urllib.error
        import urllib.request

        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.sim.url + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + self.sim.admin_token)
        request.add_header("Content-Type", content_type)
        context = ssl.create_default_context(cafile=self.sim.ca_file)
        try:
            with urllib.request.urlopen(request, context=context, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")

    def wait_for(self, condition, timeout=60.0, what=""):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError("kubesim: never %s" % what)


# -- helpers of scenarios --------------------------------------------------------------------------


def cond(obj, ctype):
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == ctype), {})


def has(ctype, status="True", reason=None):
    def predicate(obj):
        found = cond(obj, ctype)
        return found.get("status") == status and (reason is None or found.get("reason") == reason)

    return predicate


def field(path, value):
    def predicate(obj):
        current = obj
        for part in path.split("."):
            current = (current or {}).get(part) if isinstance(current, dict) else None
        return current == value

    return predicate


def install_operator(
    session, namespace, package, source, own_namespace=True, channel=None, config=None, annotations=None, wait=True
):
    """What a deploy_operator role does (OperatorGroup + Subscription); returns the Succeeded CSV."""
    session.namespace(namespace)
    if own_namespace is not None:
        session.create(
            {
                "apiVersion": "operators.coreos.com/v1",
                "kind": "OperatorGroup",
                "metadata": {"name": namespace, "namespace": namespace},
                "spec": {"targetNamespaces": [namespace]} if own_namespace else {},
            }
        )
    spec = {"name": package, "source": source, "sourceNamespace": "openshift-marketplace"}
    if channel:
        spec["channel"] = channel
    if config:
        spec["config"] = config
    session.create(
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": package, "namespace": namespace, "annotations": annotations or {}},
            "spec": spec,
        }
    )
    if not wait:
        return None
    sub = session.wait(
        "operators.coreos.com/v1alpha1",
        "Subscription",
        namespace,
        package,
        lambda o: (o.get("status") or {}).get("installedCSV"),
        what="had an installed CSV",
    )
    name = sub["status"]["installedCSV"]
    return session.wait(
        "operators.coreos.com/v1alpha1",
        "ClusterServiceVersion",
        namespace,
        name,
        field("status.phase", "Succeeded"),
        what="Succeeded",
    )


def alm_example(csv, kind):
    import json

    return next(e for e in json.loads(csv["metadata"]["annotations"]["alm-examples"]) if e["kind"] == kind)
