"""kube/waits/several.py: several waits in one look loop (k8s_wait's ``waits``), as several waits one after
the other would end, with a query shared by two waits read once per look."""

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import base, several


class FakeTime:
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def pvc(phase, name="data"):
    return {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "ns"}, "status": {"phase": phase}}


def deployment(available, name="web"):
    return {"kind": "Deployment", "metadata": {"name": name, "namespace": "ns", "generation": 1},
            "spec": {"replicas": 1},
            "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1,
                       "availableReplicas": 1 if available else 0, "readyReplicas": 1 if available else 0}}


class Cluster:
    """Answers each query by (kind, name) from a list of answers per object (the last one repeated),
    counting the reads."""

    def __init__(self, answers):
        self.answers = answers
        self.reads = []

    def fetch(self, query):
        key = (query.kind, query.name)
        count = sum(1 for read in self.reads if read == key)
        self.reads.append(key)
        answers = self.answers[key]
        answer = answers[min(count, len(answers) - 1)]
        if isinstance(answer, Exception):
            raise answer
        return answer


def wait(cluster, specs, timeout=30, delay=5, watch=None, **defaults):
    time_ = FakeTime()
    entries = several.waits_from(specs, **defaults)
    return several.wait_for_all(entries, cluster.fetch, timeout, delay, time_.clock, time_.sleep, watch), time_


def test_the_waits_end_when_all_are_ready_and_a_ready_one_is_not_read_again():
    cluster = Cluster({("PersistentVolumeClaim", "data"): [[pvc("Bound")]],
                       ("Deployment", "web"): [[deployment(False)], [deployment(False)], [deployment(True)]]})
    result, time_ = wait(cluster, [{"judge": "pvc_bound", "name": "data"}, {"judge": "deployment", "name": "web"}],
                         namespace="ns")
    assert result.state == "ready" and not result.timed_out and time_.sleeps == [5, 5]
    assert cluster.reads.count(("PersistentVolumeClaim", "data")) == 1
    assert cluster.reads.count(("Deployment", "web")) == 3
    assert [r.state for r in result.results] == ["ready", "ready"]
    assert result.results[0].elapsed_s == 0 and result.results[1].elapsed_s == 10
    assert result.summary == "PersistentVolumeClaim ns/data: Bound; " + result.results[1].summary
    assert result.results[0].found == {"subject": [pvc("Bound")]}
    assert [s["state"] for s in result.states] == ["waiting", "ready"]
    assert result.states[0]["summary"] == result.results[1].states[0]["summary"]


def test_a_query_two_waits_share_is_read_once_per_look():
    cluster = Cluster({("PersistentVolumeClaim", None): [[pvc("Pending"), pvc("Bound", "logs")],
                                                         [pvc("Bound"), pvc("Bound", "logs")]]})
    specs = [{"judge": "jsonpath", "name": None, "label_selectors": ["app=x"],
              "options": {"api_version": "v1", "kind": "PersistentVolumeClaim", "jsonpath": ".status.phase",
                          "value": "Bound"}}] * 2
    result, _time = wait(cluster, specs, namespace="ns")
    assert result.state == "ready"
    assert cluster.reads == [("PersistentVolumeClaim", None)] * 2


def test_the_first_failure_ends_every_wait_and_names_its_object():
    cluster = Cluster({("PersistentVolumeClaim", "data"): [[pvc("Pending")], [pvc("Lost")]],
                       ("Deployment", "web"): [[deployment(False)]]})
    result, time_ = wait(cluster, [{"judge": "deployment", "name": "web"}, {"judge": "pvc_bound", "name": "data"}],
                         namespace="ns")
    assert result.state == "failed" and not result.timed_out and time_.sleeps == [5]
    assert result.message(30) == "PersistentVolumeClaim ns/data: Lost (its volume is gone)"
    assert [(r.state, r.timed_out) for r in result.results] == [("waiting", False), ("failed", False)]
    assert result.results[1].message(30) == "PersistentVolumeClaim ns/data: Lost (its volume is gone)"


def test_time_running_out_names_the_waits_still_waiting_in_one_line():
    cluster = Cluster({("PersistentVolumeClaim", "data"): [[pvc("Bound")]],
                       ("PersistentVolumeClaim", "logs"): [[pvc("Pending", "logs")]],
                       ("PersistentVolumeClaim", "cache"): [[]]})
    specs = [{"name": "data"}, {"name": "logs"}, {"name": "cache"}]
    result, time_ = wait(cluster, specs, timeout=12, judge="pvc_bound", namespace="ns")
    assert result.state == "waiting" and result.timed_out and time_.sleeps == [5, 5, 2]
    assert result.message(12) == ("not ready after 12 s; last state: PersistentVolumeClaim ns/logs: Pending; "
                                  "PersistentVolumeClaim cache -n ns does not exist (yet)")
    assert [(r.state, r.timed_out) for r in result.results] == [("ready", False), ("waiting", True), ("waiting", True)]
    assert result.results[1].message(12) == "not ready after 12 s; last state: PersistentVolumeClaim ns/logs: Pending"


def test_api_errors_are_waited_through_unless_they_are_final():
    cluster = Cluster({("PersistentVolumeClaim", "data"): [base.FetchError("503 Service Unavailable"), [pvc("Bound")]],
                       ("Deployment", "web"): [[deployment(True)]]})
    result, _time = wait(cluster, [{"judge": "pvc_bound", "name": "data"}, {"judge": "deployment", "name": "web"}],
                         namespace="ns")
    assert result.state == "ready"
    assert result.results[0].states[0]["summary"] == "API error: 503 Service Unavailable"
    cluster = Cluster({("PersistentVolumeClaim", "data"): [base.FetchError("403 Forbidden", terminal=True)],
                       ("Deployment", "web"): [[deployment(False)]]})
    result, time_ = wait(cluster, [{"judge": "deployment", "name": "web"}, {"judge": "pvc_bound", "name": "data"}],
                         namespace="ns")
    assert result.state == "failed" and result.summary == "API error: 403 Forbidden" and time_.sleeps == []


def test_the_watch_is_given_the_subjects_of_the_waits_still_waiting():
    cluster = Cluster({("PersistentVolumeClaim", "data"): [[pvc("Bound")]],
                       ("Deployment", "web"): [[deployment(False)], [deployment(True)]]})
    watched = []

    def watch(seconds, queries):
        watched.append((seconds, [(q.kind, q.name) for q in queries]))
        return True
    result, time_ = wait(cluster, [{"judge": "pvc_bound", "name": "data"}, {"judge": "deployment", "name": "web"}],
                         namespace="ns", watch=watch)
    assert result.state == "ready"
    assert watched == [(5, [("Deployment", "web")])]
    assert time_.sleeps == [pytest.approx(0.5)]


def test_defaults_and_a_waits_own_keys():
    entries = several.waits_from([{"name": "a"}, {"judge": "deployment", "name": "b", "namespace": "other",
                                                  "options": {"minimum": 2}}],
                                 judge="job", namespace="ns", options={})
    assert [(judge.name, target.namespace, target.name) for judge, target in entries] == [
        ("job", "ns", "a"), ("deployment", "other", "b")]
    assert entries[1][1].options == {"minimum": 2}
    # the options of every wait, and a wait's own added to them
    entries = several.waits_from([{"label_selectors": "app=x"}, {"name": "b", "options": {"minimum_desired": 3}}],
                                 judge="daemonset", namespace="ns", options={"minimum": 2})
    assert [target.options for _judge, target in entries] == [{"minimum": 2}, {"minimum": 2, "minimum_desired": 3}]
    assert entries[0][1].label_selectors == ("app=x",)


@pytest.mark.parametrize("specs, defaults, message", [
    ([], {}, "waits: []; expected a list of at least one wait (mappings of judge, namespace, name, label_selectors, "
             "options)"),
    ("pvc_bound", {}, "waits: 'pvc_bound'; expected a list of at least one wait"),
    (["data"], {"judge": "pvc_bound"}, "waits[0]: 'data'; expected a mapping of judge, namespace, name"),
    ([{"name": "a"}, {"nmae": "b"}], {"judge": "pvc_bound"},
     "waits[1]: unknown key(s) nmae (expected some of judge, namespace, name, label_selectors, options)"),
    ([{"name": "a"}], {}, "waits[0]: judge: missing; expected the judge of this wait (or a judge for every wait)"),
    ([{"judge": "nope", "name": "a"}], {}, "waits[0]: wait: unknown judge 'nope' (known: "),
    ([{"judge": "pvc_bound"}], {}, "waits[0]: wait pvc_bound: name: missing; expected the PersistentVolumeClaim"),
    ([{"judge": "pvc_bound", "name": 3}], {}, "waits[0]: name: 3; expected a string"),
    ([{"judge": "job", "label_selectors": [1]}], {}, "waits[0]: label_selectors: [1]; expected a list of strings"),
    ([{"judge": "pvc_bound", "name": "a", "options": "x"}], {}, "waits[0]: options: 'x'; expected a mapping"),
    ([{"judge": "pvc_bound", "name": "a", "options": {"colour": "red"}}], {},
     "waits[0]: wait pvc_bound: unknown option(s) colour (it takes: none)"),
    ([{"judge": "pvc_bound", "name": "a"}] * 51, {}, "waits: 51 waits; expected at most 50"),
])
def test_a_malformed_wait_is_one_line_naming_its_place(specs, defaults, message):
    with pytest.raises(base.WaitError) as caught:
        several.waits_from(specs, **defaults)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_bad_timings_are_refused():
    entries = several.waits_from([{"judge": "pvc_bound", "name": "a"}])
    with pytest.raises(base.WaitError, match=r"^waits: expected timeout >= 0 and delay > 0 seconds \(got 5 and 0\)$"):
        several.wait_for_all(entries, lambda query: [], 5, 0)
