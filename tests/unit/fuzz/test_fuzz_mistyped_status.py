"""Every wait judge, through the wait loops (one wait and several), on objects whose fields are not of the
type their schema gives them (a list where an object goes, ``conditions: true``, a generation ``"x"``): no API
server sends those - it validates status against the kind's schema - but a proxy, a CRD whose status
preserves unknown fields or a hand-written fake can. The answer is a state with one line naming the judge
and the objects, never a traceback; a judge that reads well-typed objects never says they are mistyped
(tests/unit/fuzz/test_fuzz_k8s_wait_waits.py and the reality corpus hold that)."""

from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import waits
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import base, several

# a well-typed object of each shape the judges read; the fuzz puts a value of the wrong type in its fields
CONTAINER = {"name": "c", "ready": False, "restartCount": 2,
             "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
             "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}
WELL_TYPED = {
    "apiVersion": "v1", "kind": "Example",
    "metadata": {"name": "a", "namespace": "ns", "generation": 2, "labels": {"app": "a"}},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}}},
    "status": {"phase": "Running", "observedGeneration": 2, "replicas": 2, "readyReplicas": 1,
               "availableReplicas": 1, "updatedReplicas": 2, "succeeded": 1, "failed": 0, "active": 0,
               "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "ok"},
                              {"type": "Available", "status": "False"}],
               "containerStatuses": [CONTAINER], "initContainerStatuses": [CONTAINER],
               "modelStatus": {"states": {"activeModelState": "Loaded"}, "transitionStatus": "UpToDate",
                               "lastFailureInfo": {"reason": "ModelLoadFailed", "exitCode": 1}},
               "components": {"predictor": {"latestReadyRevision": "r1"}},
               "state": "AtLatestKnown", "installedCSV": "op.v1", "currentCSV": "op.v1",
               "connectionState": {"lastObservedState": "READY"},
               "capacity": {"nvidia.com/gpu": "2"}, "allocatable": {"nvidia.com/gpu": "2"},
               "jobDeploymentStatus": "Running", "jobStatus": "RUNNING",
               "machineCount": 3, "readyMachineCount": 2, "updatedMachineCount": 3}}
WRONG = st.sampled_from([True, False, 0, 3, -1, 1.5, "x", "3", "", [], [1], ["a"], [True], {}, {"a": 1}, None,
                         [{"type": 1}], [{"type": "Ready", "status": True}], [None]])


def paths(obj, prefix=()):
    """Every field path of a nested object."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield prefix + (key,)
            yield from paths(value, prefix + (key,))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield prefix + (index,)
            yield from paths(value, prefix + (index,))


PATHS = sorted(set(paths(WELL_TYPED)) - {("apiVersion",), ("kind",), ("metadata",)}, key=str)


def mistyped(changes):
    import copy

    obj = copy.deepcopy(WELL_TYPED)
    for path, value in changes:
        parent = obj
        for step in path[:-1]:
            if not isinstance(parent, (dict, list)):
                break
            try:
                parent = parent[step]
            except (KeyError, IndexError, TypeError):
                break
        else:
            if isinstance(parent, dict) or (isinstance(parent, list) and isinstance(path[-1], int)
                                            and path[-1] < len(parent)):
                parent[path[-1]] = value
    return obj


OBJECTS = st.lists(st.tuples(st.sampled_from(PATHS), WRONG), min_size=1, max_size=4).map(mistyped)


def one_line(text):
    return isinstance(text, str) and text and "\n" not in text and "Traceback" not in text


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


# the options a judge cannot go without (its check refuses a wait without them)
OPTIONS = {
    "clusterversion": {"version": "4.18.1"},
    "condition": {"api_version": "v1", "kind": "Example", "type": "Ready"},
    "jsonpath": {"api_version": "v1", "kind": "Example", "jsonpath": "{.status.phase}", "value": "Running"},
    "node_labels": {"label": "nvidia.com/gpu.present"},
}


def targets(name):
    """A target each judge accepts (a name for those that need one or that are waited on by name)."""
    judge = waits.judge(name)
    named = judge.needs_name or name in ("csv", "job")
    target = base.Target("ns", "a" if named else None, options=OPTIONS.get(name))
    judge.check(target)
    return judge, target


@given(name=st.sampled_from(sorted(waits.JUDGES)), objects=st.lists(OBJECTS, min_size=1, max_size=2))
def test_any_judge_on_mistyped_objects_ends_in_a_state_with_one_line(name, objects):
    judge, target = targets(name)
    clock = Clock()
    result = base.wait_for(judge, target, lambda query: objects, 4, 2, clock, clock.sleep)
    assert result.state in base.STATES and one_line(result.summary), result.summary
    assert one_line(result.message(4))


@given(names=st.lists(st.sampled_from(sorted(waits.JUDGES)), min_size=1, max_size=3),
       objects=st.lists(OBJECTS, min_size=1, max_size=2))
def test_several_waits_on_mistyped_objects_end_in_states_with_one_line(names, objects):
    entries = [targets(name) for name in names]
    clock = Clock()
    result = several.wait_for_all(entries, lambda query: objects, 4, 2, clock=clock, sleep=clock.sleep)
    assert result.state in base.STATES and one_line(result.message(4))
    assert all(one_line(r.summary) for r in result.results)


def test_a_mistyped_field_fails_the_wait_in_one_line_naming_the_judge_and_the_object():
    deployment = mistyped([(("spec",), "replicas: 2")])
    deployment["kind"] = "Deployment"
    clock = Clock()
    result = base.wait_for(waits.judge("deployment"), base.Target("ns", "a"), lambda query: [deployment], 30, 2,
                           clock, clock.sleep)
    assert result.state == base.FAILED and not result.timed_out
    assert result.summary.startswith("deployment cannot read Deployment ns/a: a field is not of the type its schema "
                                     "gives it (AttributeError: "), result.summary
    assert clock.now == 0, "a mistyped object is not waited on: waiting cannot fix it"


def test_well_typed_objects_are_never_called_mistyped():
    clock = Clock()
    for name in sorted(waits.JUDGES):
        judge, target = targets(name)
        result = base.wait_for(judge, target, lambda query: [WELL_TYPED], 4, 2, clock, clock.sleep)
        assert "is not of the type its schema gives it" not in result.summary, (name, result.summary)
