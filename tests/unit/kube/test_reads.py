"""kube/reads.py: the queries k8s_read takes, and one read through a K8sService (a fake one here,
answering as the kubernetes client's dynamic API does)."""

import pytest
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import ForbiddenError, NotFoundError
from urllib3.exceptions import MaxRetryError

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import reads
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import FetchError, Query


class Answer(dict):
    def to_dict(self):
        return dict(self)


class FakeResource:
    def __init__(self, objects, namespaced=True, error=None):
        self.objects = objects
        self.namespaced = namespaced
        self.error = error
        self.calls = []

    def get(self, name=None, namespace=None, label_selector=None, field_selector=None):
        self.calls.append(dict(name=name, namespace=namespace, label_selector=label_selector, field_selector=field_selector))
        if self.error:
            raise self.error
        if name:
            for obj in self.objects:
                if obj["metadata"]["name"] == name:
                    return Answer(obj)
            raise NotFoundError(ApiException(status=404, reason="Not Found"))
        return Answer(items=list(self.objects), metadata={"resourceVersion": "42"})


class FakeService:
    def __init__(self, resources):
        self.resources = resources

    def find_resource(self, kind, api_version, fail=False):
        return self.resources.get((api_version, kind))


NAMESPACE = {"metadata": {"name": "serving", "resourceVersion": "7"}}


def test_a_query_takes_k8s_info_s_keys_with_v1_by_default():
    query = reads.query_from("ns", {"kind": "Namespace", "name": "serving"})
    assert (query.api_version, query.kind, query.name, query.namespace) == ("v1", "Namespace", "serving", None)
    listed = reads.query_from("pods", {"kind": "Pod", "namespace": "a", "label_selectors": "app=x",
                                       "field_selectors": ["status.phase=Running"]})
    assert listed.label_selectors == ("app=x",) and listed.field_selectors == ("status.phase=Running",)


@pytest.mark.parametrize("spec, expected", [
    ({"kind": "Pod", "labels": ["a=b"]}, "query q: unknown key(s) labels (expected some of api_version, kind"),
    ({"name": "x"}, "query q: expected a kind"),
    ({"kind": "Pod", "label_selectors": [1]}, "query q: expected label_selectors to be a list of strings, got [1]"),
    ("Pod", "query q: expected a mapping of api_version, kind"),
])
def test_a_malformed_query_is_one_line_naming_it(spec, expected):
    with pytest.raises(ValueError) as error:
        reads.query_from("q", spec)
    assert str(error.value).startswith(expected)


def test_by_name_an_object_or_nothing_and_a_list_by_selectors():
    pods = FakeResource([{"metadata": {"name": "p1"}}, {"metadata": {"name": "p2"}}])
    svc = FakeService({("v1", "Namespace"): FakeResource([NAMESPACE], namespaced=False), ("v1", "Pod"): pods})
    assert reads.read(svc, Query("v1", "Namespace", name="serving", namespace="ignored")) == ([NAMESPACE], "7")
    assert reads.read(svc, Query("v1", "Namespace", name="elsewhere")) == ([], None)
    objects, version = reads.read(svc, Query("v1", "Pod", namespace="a", label_selectors=["app=x", "tier=y"]))
    assert [o["metadata"]["name"] for o in objects] == ["p1", "p2"] and version == "42"
    assert pods.calls[-1] == dict(name=None, namespace="a", label_selector="app=x,tier=y", field_selector=None)


def test_a_kind_the_cluster_does_not_serve_is_none_and_a_wait_waits_for_it():
    svc = FakeService({})
    query = Query("serving.knative.dev/v1", "Service")
    assert reads.read(svc, query) is None
    with pytest.raises(FetchError) as error:
        reads.ApiReader(svc, None).fetch(query)
    assert str(error.value) == "the cluster serves no Service (serving.knative.dev/v1) yet" and not error.value.terminal


def test_a_refusal_is_terminal_and_a_lost_connection_is_not():
    forbidden = ForbiddenError(ApiException(status=403, reason="Forbidden"))
    svc = FakeService({("v1", "Secret"): FakeResource([], error=forbidden),
                       ("v1", "Pod"): FakeResource([], error=MaxRetryError(None, "/api/v1/pods", "connection refused"))})
    with pytest.raises(FetchError) as error:
        reads.read(svc, Query("v1", "Secret", namespace="a"))
    assert error.value.terminal and str(error.value).startswith("Secrets -n a: 403")
    with pytest.raises(FetchError) as error:
        reads.read(svc, Query("v1", "Pod", namespace="a"))
    assert not error.value.terminal and "connection refused" in str(error.value)


class Events(list):
    closed = False

    def close(self):
        self.closed = True


def test_several_waits_watch_the_first_of_their_subjects_already_read_from_its_version():
    pods = FakeResource([{"metadata": {"name": "p1"}}])
    watched = []

    def watch(**kwargs):
        watched.append(kwargs)
        return Events([{"type": "MODIFIED"}])
    pods.watch = watch
    namespaces = FakeResource([NAMESPACE], namespaced=False)
    svc = FakeService({("v1", "Namespace"): namespaces, ("v1", "Pod"): pods})
    reader = reads.ApiReader(svc, None)
    never_read = Query("v1", "Namespace", name="serving")
    listed = Query("v1", "Pod", namespace="a", label_selectors=["app=x"])
    assert reader.watch_any(5, [never_read, listed]) is False and watched == []
    reader.fetch(listed)
    assert reader.watch_any(5, [never_read, listed]) is True
    assert watched == [dict(namespace="a", name=None, label_selector="app=x", field_selector=None,
                            resource_version="42", timeout=5)]
    # the single wait's subject keeps its own version
    single = reads.ApiReader(svc, listed)
    assert single.subject_version is None
    single.fetch(listed)
    assert single.subject_version == "42"


class LogAnswer:
    def __init__(self, text):
        self.data = text.encode("utf-8")


class FakeLogs:
    """The pods/log subresource: ``logs[(pod, container)]`` is the text, or an exception to raise."""

    def __init__(self, logs):
        self.logs = logs
        self.calls = []

    def get(self, name, namespace, query_params, serialize):
        assert serialize is False
        self.calls.append((namespace, name, dict(query_params)))
        answer = self.logs[(name, query_params["container"])]
        if isinstance(answer, Exception):
            raise answer
        return LogAnswer(answer)


def pod(name, *containers):
    return {"metadata": {"name": name, "namespace": "burn"}, "spec": {"containers": [{"name": c} for c in containers]}}


@pytest.mark.parametrize("spec, expected", [
    ({"kind": "Pod", "logs": True}, True),
    ({"kind": "Pod", "api_version": "v1"}, False),
    ({"kind": "Pod", "logs": False}, False),
])
def test_logs_are_asked_for_pods(spec, expected):
    reads.query_from("q", spec)
    assert reads.wants_logs("q", spec) is expected


@pytest.mark.parametrize("spec, expected", [
    ({"kind": "Deployment", "logs": True}, "query q: logs are read for kind Pod (v1) only, not Deployment"),
    ({"kind": "Pod", "api_version": "v2", "logs": True}, "query q: logs are read for kind Pod (v1) only, not Pod"),
    ({"kind": "Pod", "logs": "yes"}, "query q: expected logs to be true or false, got 'yes'"),
])
def test_logs_of_something_else_than_pods_are_refused_in_one_line(spec, expected):
    with pytest.raises(ValueError) as raised:
        reads.wants_logs("q", spec)
    assert str(raised.value) == expected


def test_pod_logs_are_each_pod_s_containers_in_spec_order_and_an_unreadable_one_is_said_apart():
    resource = FakeResource([])
    resource.log = FakeLogs({("a", "main"): "a main\n", ("b", "init-like"): "b first\n", ("b", "main"): "b second\n",
                             ("c", "main"): ApiException(status=400, reason="container main is waiting to start")})
    svc = FakeService({("v1", "Pod"): resource})
    texts, errors = reads.pod_logs(svc, [pod("a", "main"), pod("b", "init-like", "main"), pod("c", "main")])
    assert texts == {"a": "a main\n", "b": "b first\nb second\n"}
    assert errors == {"c": "log of burn/c container main: 400 container main is waiting to start"}
    assert resource.log.calls[:3] == [("burn", "a", {"container": "main"}), ("burn", "b", {"container": "init-like"}),
                                      ("burn", "b", {"container": "main"})]


def test_a_container_log_asks_for_the_previous_instance_and_the_tail():
    resource = FakeResource([])
    resource.log = FakeLogs({("a", "main"): "restarted\n"})
    assert reads.container_log(resource, "burn", "a", "main", previous=True, tail_lines=20) == "restarted\n"
    assert resource.log.calls == [("burn", "a", {"container": "main", "previous": True, "tailLines": 20})]


def test_no_pod_no_log_read_and_a_cluster_without_pods_says_so_for_each():
    assert reads.pod_logs(FakeService({}), []) == ({}, {})
    assert reads.pod_logs(FakeService({}), [pod("a", "main")]) == ({}, {"a": "the cluster serves no v1 Pods"})
