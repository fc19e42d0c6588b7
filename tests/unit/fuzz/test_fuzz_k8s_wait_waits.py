"""k8s_wait's ``waits`` (kube/waits/several.py): whatever a role, or a user through a role's parameters,
gives as the list of waits - any keys, any types, unknown judges and options - the answer is the list of
(judge, target) pairs or one line naming the wait at fault; and whatever the cluster answers to those
waits (typed as the API server types them), the loop ends in a state with one-line summaries. Never a traceback."""

from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import base, several

JUDGES = st.sampled_from(["pvc_bound", "deployment", "job", "pods_ready", "jsonpath", "condition", "nope", ""])
SCALAR = st.none() | st.booleans() | st.integers(-3, 10) | st.text(max_size=12) | JUDGES
VALUE = SCALAR | st.lists(SCALAR, max_size=3) | st.dictionaries(st.text(max_size=8) | JUDGES, SCALAR, max_size=3)
KEYS = st.sampled_from(list(several.WAIT_KEYS) + ["nmae", "timeout"])
WAIT = st.dictionaries(KEYS, VALUE, max_size=5) | st.fixed_dictionaries(
    {"judge": JUDGES}, optional={"name": st.text(max_size=8), "namespace": st.text(max_size=8),
                                 "label_selectors": st.lists(st.text(max_size=8), max_size=2),
                                 "options": st.dictionaries(st.sampled_from(["minimum", "count", "kind", "jsonpath",
                                                                             "api_version", "value", "type"]),
                                                            SCALAR, max_size=3)})
SPECS = st.lists(WAIT | SCALAR, max_size=4) | SCALAR
# the API server types an object's fields as their schemas say (strings, integers, lists of conditions)
TEXT = st.text(max_size=8) | st.sampled_from(["Bound", "Pending", "Lost", "True", "False", "Available", "Complete"])
CONDITION = st.fixed_dictionaries({"type": TEXT}, optional={"status": TEXT, "reason": TEXT, "message": TEXT})
OBJECT = st.fixed_dictionaries({"metadata": st.fixed_dictionaries({}, optional={
    "name": TEXT, "namespace": TEXT, "generation": st.integers(0, 3)})}, optional={
    "kind": TEXT, "spec": st.fixed_dictionaries({}, optional={"replicas": st.integers(0, 3)}),
    "status": st.fixed_dictionaries({}, optional={
        "phase": TEXT, "conditions": st.lists(CONDITION, max_size=3), "replicas": st.integers(0, 3),
        "availableReplicas": st.integers(0, 3), "updatedReplicas": st.integers(0, 3),
        "observedGeneration": st.integers(0, 3)})})


def one_line(text):
    return isinstance(text, str) and "\n" not in text and "Traceback" not in text


@given(specs=SPECS, judge=st.none() | JUDGES, namespace=st.none() | st.text(max_size=8),
       answers=st.lists(st.lists(OBJECT, max_size=2) | st.just("error"), min_size=1, max_size=4))
def test_any_waits_are_pairs_or_one_line_and_any_answers_end_in_a_state(specs, judge, namespace, answers):
    try:
        entries = several.waits_from(specs, judge=judge, namespace=namespace)
    except base.WaitError as exc:
        assert one_line(str(exc)) and str(exc).startswith("waits"), str(exc)
        return
    assert entries and all(isinstance(target, base.Target) for _judge, target in entries)
    looks = iter(answers * 50)

    def fetch(query):
        answer = next(looks)
        if answer == "error":
            raise base.FetchError("503 Service Unavailable")
        return answer
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds
    try:
        result = several.wait_for_all(entries, fetch, 6, 2, clock=lambda: now[0], sleep=sleep)
    except base.WaitError as exc:   # a judge's own check of what it is given (a jsonpath that does not parse)
        assert one_line(str(exc)), str(exc)
        return
    assert result.state in base.STATES and one_line(result.message(6))
    assert len(result.results) == len(entries) and all(one_line(r.summary) for r in result.results)
    # objects typed as the API server types them are never taken for mistyped ones (base.observe)
    assert not any("is not of the type its schema gives it" in r.summary for r in result.results), result.message(6)
