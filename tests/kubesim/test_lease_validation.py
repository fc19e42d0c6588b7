"""Leases validated as kube-apiserver validates them (kubesim/defaults.py ``validate_lease``, after
pkg/apis/coordination/validation/validation.go and metav1.MicroTime's decoding): a lease duration
of -5 would let any waiter take a live holder's lease over, a time without a timezone crashed the
readers of acquireTime."""

import pytest

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def lease(name, **spec):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize("spec, field, message", [
    ({"leaseDurationSeconds": -5}, "spec.leaseDurationSeconds", "Invalid value: -5: must be greater than 0"),
    ({"leaseDurationSeconds": 0}, "spec.leaseDurationSeconds", "Invalid value: 0: must be greater than 0"),
    ({"leaseTransitions": -1}, "spec.leaseTransitions", "Invalid value: -1: must be greater than or equal to 0"),
])
def test_durations_and_transitions_out_of_range_are_422_with_the_field(http, spec, field, message):
    status, _headers, body = http("POST", LEASES, lease("bad", holderIdentity="run-a", **spec))
    assert status == 422
    assert body["reason"] == "Invalid"
    assert body["message"] == 'Lease.coordination.k8s.io "bad" is invalid: %s: %s' % (field, message)
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid", "message": message, "field": field}]


def test_both_causes_are_listed_and_an_update_is_validated_too(http):
    status, _headers, body = http("POST", LEASES, lease("both", leaseDurationSeconds=-5, leaseTransitions=-1))
    assert status == 422 and [c["field"] for c in body["details"]["causes"]] == ["spec.leaseDurationSeconds",
                                                                                 "spec.leaseTransitions"]
    status, _headers, created = http("POST", LEASES, lease("fine", holderIdentity="run-a", leaseDurationSeconds=60))
    assert status == 201
    created["spec"]["leaseDurationSeconds"] = -5
    status, _headers, body = http("PUT", LEASES + "/fine", created)
    assert status == 422 and body["details"]["causes"][0]["field"] == "spec.leaseDurationSeconds"
    status, _headers, body = http("PATCH", LEASES + "/fine", {"spec": {"leaseTransitions": -3}},
                                  content_type="application/merge-patch+json")
    assert status == 422 and body["details"]["causes"][0]["field"] == "spec.leaseTransitions"


@pytest.mark.parametrize("value, why", [
    ("2026-01-01T00:00:00.000000", 'cannot parse "" as "Z07:00"'),
    ("2026-01-01T00:00:00", 'cannot parse "" as ".000000"'),
    ("2026-01-01T00:00:00Z", 'cannot parse "Z" as ".000000"'),
    ("2026-01-01T00:00:00.000000 UTC", 'cannot parse " UTC" as "Z07:00"'),
    ("yesterday", 'cannot parse "yesterday" as "2006-01-02T15:04:05.000000Z07:00"'),
    ("2026-13-01T00:00:00.000000Z", "date or time out of range"),
])
@pytest.mark.parametrize("field", ["acquireTime", "renewTime"])
def test_times_that_are_not_micro_times_with_a_timezone_are_400_as_the_decoder_answers(http, field, value, why):
    status, _headers, body = http("POST", LEASES, lease("naive", holderIdentity="run-a", **{field: value}))
    assert status == 400 and body["reason"] == "BadRequest"
    assert body["message"] == ('Lease in version "v1" cannot be handled as a Lease: parsing time "%s" as '
                               '"2006-01-02T15:04:05.000000Z07:00": %s' % (value, why))


@pytest.mark.parametrize("name, value", [("utc", "2026-01-01T00:00:00.123456Z"),
                                         ("offset", "2026-01-01T02:00:00.000000+02:00")])
def test_micro_times_with_a_timezone_are_stored(http, name, value):
    status, _headers, body = http("POST", LEASES, lease(name, holderIdentity="run-a", acquireTime=value,
                                                        renewTime=value, leaseDurationSeconds=1, leaseTransitions=0))
    assert status == 201 and body["spec"]["leaseDurationSeconds"] == 1
