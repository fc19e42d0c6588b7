"""The inferenceservice wait reads what a cluster says about an InferenceService and its predictor's pods:
whatever they hold (a container's termination message is its log's tail, any text; a field left out; the
API server types the fields - strings, integers - as their schemas say), the answer is a state with one
printable line, or the wait's one-line refusal of a bad max_restarts; never a traceback."""

from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import waits
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import base

WORDS = ["Error", "CrashLoopBackOff", "BlockedByFailedLoad", "InvalidSpec", "RuntimeNotRecognized", "kserve-container",
         "storage-initializer", "Knative", "False", "True", "Unknown", "\x1b[2J\n"]
TEXT = st.text(max_size=40) | st.sampled_from(WORDS)
COUNT = st.integers(-3, 2 ** 31)
SCALAR = st.none() | st.booleans() | COUNT | TEXT
TERMINATED = st.fixed_dictionaries({}, optional={"reason": TEXT, "exitCode": COUNT, "message": TEXT})
WAITING = st.fixed_dictionaries({}, optional={"reason": TEXT, "message": TEXT})
STATE = st.fixed_dictionaries({}, optional={"waiting": WAITING,
                                            "terminated": TERMINATED,
                                            "running": st.fixed_dictionaries({}, optional={"startedAt": TEXT})})
CONTAINER = st.fixed_dictionaries({}, optional={"name": TEXT, "restartCount": COUNT, "state": STATE,
                                                "lastState": STATE})
POD = st.fixed_dictionaries({"metadata": st.fixed_dictionaries({}, optional={"name": TEXT})}, optional={
    "status": st.fixed_dictionaries({}, optional={"phase": TEXT, "containerStatuses": st.lists(CONTAINER, max_size=3),
                                                  "initContainerStatuses": st.lists(CONTAINER, max_size=2)})})
CONDITION = st.fixed_dictionaries({"type": TEXT}, optional={"status": TEXT, "reason": TEXT, "message": TEXT})
FAILURE = st.fixed_dictionaries({}, optional={"reason": TEXT, "message": TEXT, "exitCode": COUNT, "location": TEXT})
ISVC = st.fixed_dictionaries({"kind": st.just("InferenceService"),
                              "metadata": st.just({"name": "isvc", "namespace": "ns"})}, optional={
    "status": st.fixed_dictionaries({}, optional={
        "conditions": st.lists(CONDITION, max_size=5), "deploymentMode": TEXT,
        "modelStatus": st.fixed_dictionaries({}, optional={"transitionStatus": TEXT, "lastFailureInfo": FAILURE})})})


@given(isvc=ISVC, pods=st.lists(POD, max_size=3), max_restarts=st.none() | SCALAR)
def test_the_inferenceservice_wait_answers_a_state_or_one_line(isvc, pods, max_restarts):
    judge = waits.judge("inferenceservice")
    target = base.Target("ns", "isvc", options={"max_restarts": max_restarts})
    try:
        judge.check(target)
    except base.WaitError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("wait inferenceservice: max_restarts: ")
        return
    seen = judge.observe({"subject": [isvc], "events": [], "pods": pods}, target)
    assert seen.state in base.STATES
    assert "\n" not in seen.summary and "\x1b" not in seen.summary and len(seen.summary) < 1200
