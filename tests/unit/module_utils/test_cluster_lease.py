"""The cluster lease protocol (module_utils/kube/cluster_lease.py) against an in-memory API with the
API server's optimistic concurrency: never two holders, first come first served, dead holders
and waiters taken over / dropped after their duration, the renewer releasing a dead run's lease."""

import copy
import datetime
import itertools
import subprocess
import sys
import threading
import time

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import cluster_lease as cl


class FakeLeases:
    """Leases with resourceVersion checks on replace and delete, as the API server does them."""

    def __init__(self):
        self.items = {}
        self.versions = itertools.count(1)
        self.mutex = threading.Lock()
        self.writes = 0

    def get(self, name):
        with self.mutex:
            return copy.deepcopy(self.items.get(name))

    def list(self):
        with self.mutex:
            return [copy.deepcopy(item) for _name, item in sorted(self.items.items())]

    def create(self, body):
        with self.mutex:
            name = body["metadata"]["name"]
            if name in self.items:
                raise cl.LeaseConflict(name)
            stored = copy.deepcopy(body)
            stored["metadata"]["resourceVersion"] = str(next(self.versions))
            stored["metadata"]["uid"] = "uid-%s-%s" % (name, stored["metadata"]["resourceVersion"])
            self.items[name] = stored
            self.writes += 1
            return copy.deepcopy(stored)

    def replace(self, body):
        with self.mutex:
            name = body["metadata"]["name"]
            current = self.items.get(name)
            if current is None or body["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
                raise cl.LeaseConflict(name)
            stored = copy.deepcopy(body)
            stored["metadata"]["uid"] = current["metadata"]["uid"]
            stored["metadata"]["resourceVersion"] = str(next(self.versions))
            self.items[name] = stored
            self.writes += 1
            return copy.deepcopy(stored)

    def delete(self, lease):
        with self.mutex:
            name = lease["metadata"]["name"]
            current = self.items.get(name)
            if current is None:
                return
            if lease["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
                raise cl.LeaseConflict(name)
            del self.items[name]


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def lease_for(store, run_id, clock=None, duration=10, poll=1.0):
    clock = clock or FakeClock()
    return cl.ClusterLease(store, cl.Holder(run_id, artifacts="s3://bucket/%s" % run_id, pid=None),
                           duration_s=duration, poll_s=poll, clock=clock, sleep=clock.sleep)


def test_first_run_takes_the_lock_with_its_identity_and_annotations():
    store = FakeLeases()
    outcome = lease_for(store, "run-a").acquire()
    assert outcome.state == "taken"
    lock = store.get(cl.LOCK_NAME)
    assert lock["spec"]["holderIdentity"] == "run-a"
    assert lock["spec"]["leaseDurationSeconds"] == 10
    assert lock["spec"]["leaseTransitions"] == 0
    assert lock["metadata"]["annotations"]["perfscale.io/artifacts"] == "s3://bucket/run-a"
    assert lock["spec"]["acquireTime"].endswith("Z") and "." in lock["spec"]["acquireTime"]
    # the waiter lease is gone once the lock is held
    assert [name for name in store.items if name.startswith(cl.WAITER_PREFIX)] == []
    assert outcome.message() == "cluster lease: taken by run run-a"


def test_the_same_run_asking_again_is_already_served():
    store = FakeLeases()
    lease_for(store, "run-a").acquire()
    outcome = lease_for(store, "run-a").acquire()
    assert outcome.state == "already_held"
    assert "already held by this run (run run-a" in outcome.message()


def test_a_waiter_reports_its_position_and_the_holder_then_times_out():
    store = FakeLeases()
    lease_for(store, "run-a").acquire()
    lines = []
    waiting = lease_for(store, "run-b")
    with pytest.raises(cl.ClusterLeaseError) as error:
        # the holder keeps renewing: it never expires
        waiting.acquire(notify=lines.append, timeout_s=5)
    assert lines[0].startswith("cluster lease: waiting for the cluster, position 1 of 1 in the queue; held by "
                               "run run-a for ")
    assert "(artifacts: s3://bucket/run-a)" in lines[0]
    assert "waited 6s for the cluster" in str(error.value) and "held by run run-a" in str(error.value)
    # no waiter left behind by the run that gave up
    assert [name for name in store.items if name.startswith(cl.WAITER_PREFIX)] == []


def test_a_lease_whose_holder_stopped_renewing_is_taken_over_after_its_duration():
    store = FakeLeases()
    lease_for(store, "dead-run", duration=10).acquire()
    clock = FakeClock()
    lines = []
    outcome = lease_for(store, "run-b", clock=clock, duration=10).acquire(notify=lines.append)
    assert outcome.state == "taken"
    # seen first at t0, silent for its 10 s duration on our own clock, then taken over
    assert 10 <= outcome.waited_s <= 12
    assert "taken over from run dead-run" in outcome.message()
    assert "no renewal for 10s" in outcome.message()
    lock = store.get(cl.LOCK_NAME)
    assert lock["spec"]["holderIdentity"] == "run-b" and lock["spec"]["leaseTransitions"] == 1


def test_a_renewing_holder_is_never_taken_over():
    store = FakeLeases()
    holder = lease_for(store, "run-a", duration=3)
    holder.acquire()
    clock = FakeClock()
    waiter = lease_for(store, "run-b", clock=clock, duration=3)
    original_sleep = waiter.sleep

    def sleep_and_renew(seconds):
        assert holder.renew()
        original_sleep(seconds)

    waiter.sleep = sleep_and_renew
    with pytest.raises(cl.ClusterLeaseError):
        waiter.acquire(timeout_s=30)
    assert store.get(cl.LOCK_NAME)["spec"]["holderIdentity"] == "run-a"


def test_release_hands_the_cluster_to_the_next_and_only_the_holder_releases():
    store = FakeLeases()
    first = lease_for(store, "run-a")
    first.acquire()
    assert lease_for(store, "run-b").release() is False
    assert store.get(cl.LOCK_NAME)["spec"]["holderIdentity"] == "run-a"
    assert first.release() is True
    assert store.get(cl.LOCK_NAME) is None
    assert lease_for(store, "run-b").acquire().state == "taken"
    # a renewal after being taken over says so
    assert first.renew() is False


def test_a_dead_waiter_ahead_is_dropped_from_the_queue():
    store = FakeLeases()
    holder = lease_for(store, "run-a")
    holder.acquire()
    # a waiter that took ticket and then died (never renews)
    ghost = lease_for(store, "ghost", duration=5)
    ticket = ghost.take_ticket()
    ghost._renew_waiter(ticket, None)  # pylint: disable=protected-access
    clock = FakeClock()
    waiter = lease_for(store, "run-c", clock=clock, duration=5)
    lines = []
    steps = []

    def sleep(seconds):
        steps.append(seconds)
        holder.renew()
        if len(steps) == 12:
            holder.release()
        clock.sleep(seconds)

    waiter.sleep = sleep
    outcome = waiter.acquire(notify=lines.append)
    assert outcome.state == "taken"
    assert any(line.startswith("cluster lease: dropped waiting run ghost from the queue (no renewal for 5s)")
               for line in lines)
    assert lines[0].startswith("cluster lease: waiting for the cluster, position 2 of 2")
    assert any("position 1 of 1" in line for line in lines)


def test_ten_concurrent_runs_one_holder_at_a_time_first_come_first_served():
    store = FakeLeases()
    holding, order, problems = [], [], []
    guard = threading.Lock()
    tickets_taken = []

    def run(index):
        lease = cl.ClusterLease(store, cl.Holder("run-%d" % index), duration_s=30, poll_s=0.002)
        outcome = lease.acquire()
        with guard:
            holding.append(index)
            if len(holding) > 1:
                problems.append(list(holding))
            order.append(outcome.ticket)
        time.sleep(0.01)
        with guard:
            holding.remove(index)
        assert lease.release()

    threads = []
    for index in range(10):
        thread = threading.Thread(target=run, args=(index,))
        thread.start()
        threads.append(thread)
        # each has its ticket before the next starts (its waiter lease or the lock exists)
        deadline = time.monotonic() + 5
        while len([n for n in store.items if n.startswith(cl.WAITER_PREFIX) or n == cl.LOCK_NAME]) < 1 and \
                time.monotonic() < deadline:
            time.sleep(0.001)
        tickets_taken.append(index)
    for thread in threads:
        thread.join(30)
    assert not problems
    assert len(order) == 10
    assert order == sorted(order)
    assert store.get(cl.LOCK_NAME) is None


def test_renewer_releases_the_lease_when_the_controller_is_gone():
    store = FakeLeases()
    lease = lease_for(store, "run-a")
    lease.acquire()
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    lines = []
    assert cl.renew_while_alive(lease, process.pid, None, lines.append, sleep=lambda s: None) == 0
    assert store.get(cl.LOCK_NAME) is None
    assert lines == ["controller %d ended: lease released" % process.pid]


def test_renewer_takes_a_reused_pid_for_a_gone_controller():
    # the controller's pid now belongs to another process (this one, started at another time):
    # the renewer must not keep the cluster for it (after a reboot or a pid wrap)
    store = FakeLeases()
    lease = lease_for(store, "run-a")
    lease.acquire()
    me = cl.os.getpid()
    lines = []
    other_start = cl.run_lock.process_start_time(me) + 1
    assert cl.renew_while_alive(lease, me, other_start, lines.append, sleep=lambda s: None) == 0
    assert store.get(cl.LOCK_NAME) is None
    assert lines == ["controller %d ended: lease released" % me]


def test_renewer_renews_while_the_controller_lives_and_stops_when_taken_over():
    store = FakeLeases()
    lease = lease_for(store, "run-a")
    lease.acquire()
    renewals = []

    clock = FakeClock()

    def sleep(seconds):
        clock.sleep(seconds)
        if clock.now - 1000.0 < len(renewals) * 10 / 3.0 + 1:
            return  # not a renewal period yet: only the controller was looked at
        renewals.append(store.get(cl.LOCK_NAME)["spec"]["renewTime"])
        if len(renewals) == 3:
            # another run took it over meanwhile
            lock = store.get(cl.LOCK_NAME)
            lock["spec"]["holderIdentity"] = "run-b"
            store.replace(lock)

    lines = []
    assert cl.renew_while_alive(lease, cl.os.getpid(), None, lines.append, sleep=sleep, clock=clock) == 0
    # every third of the 10 s duration, the controller looked at every tick in between
    assert len(renewals) == 3 and len(set(renewals)) == 3
    assert lines == ["lease no longer held by run run-a (released or taken over): renewer stops"]
    assert store.get(cl.LOCK_NAME)["spec"]["holderIdentity"] == "run-b"


def test_a_nested_run_of_the_holder_controller_is_already_served():
    store = FakeLeases()
    me = cl.os.getpid()
    outer = cl.ClusterLease(store, cl.Holder("outer", pid=cl.os.getppid(), pid_start=cl.run_lock.process_start_time(
        cl.os.getppid())))
    outer.acquire()
    inner = cl.ClusterLease(store, cl.Holder("inner", pid=me))
    assert inner.acquire().state == "already_held"
    stranger = cl.ClusterLease(store, cl.Holder("stranger", pid=me, host="another-host"), poll_s=0.001)
    with pytest.raises(cl.ClusterLeaseError):
        stranger.acquire(timeout_s=0.01)


def test_durations_and_times_are_written_as_the_api_does():
    assert cl.duration_text(5) == "5s"
    assert cl.duration_text(303) == "5m03s"
    assert cl.duration_text(3 * 3600 + 120) == "3h02m"
    moment = datetime.datetime(2026, 11, 26, 10, 0, 0, 123456, tzinfo=datetime.timezone.utc)
    assert cl.micro_time(moment) == "2026-11-26T10:00:00.123456Z"
    assert cl.parse_time("2026-11-26T10:00:00.123456Z") == moment


# -- leases the queue did not write (issue 41) --------------------------------------------------------

def foreign(store, name, spec=None, annotations=None, with_spec=True):
    """A Lease created by someone else than the queue (kubectl, another tool) in the lease namespace."""
    body = {"metadata": {"name": name, "annotations": annotations or {}}}
    if with_spec:
        body["spec"] = {"holderIdentity": "someone", "renewTime": "2026-01-01T00:00:00.000000Z",
                        "leaseDurationSeconds": 10} if spec is None else spec
    return store.create(body)


def take_counter(store, value):
    store.create({"metadata": {"name": cl.TICKETS_NAME, "annotations": {cl.NEXT_TICKET: value}}, "spec": {}})


def acquire_with_warnings(store, run_id="run-b"):
    clock = FakeClock()
    warnings, lines = [], []
    lease = cl.ClusterLease(store, cl.Holder(run_id, pid=None), duration_s=10, poll_s=1.0, clock=clock,
                            sleep=clock.sleep, warn=warnings.append)
    outcome = lease.acquire(notify=lines.append, timeout_s=60)
    return outcome, warnings, lines


def test_a_lease_named_like_a_waiter_without_a_ticket_number_is_ignored_and_the_queue_goes_on():
    # on main: int('abc') - "invalid literal for int()" for every run on the cluster
    store = FakeLeases()
    foreign(store, "perfscale-queue-abc")
    outcome, warnings, _lines = acquire_with_warnings(store)
    assert outcome.state == "taken" and outcome.waited_s < 1
    assert warnings == ["cluster lease: lease perfscale-queue-abc is not as the queue writes it: its name does not "
                        "end in a ticket number (perfscale-queue-<8 digits>); it is ignored"]
    assert outcome.ignored == warnings
    # not the queue's to delete
    assert store.get("perfscale-queue-abc") is not None


def test_a_ticket_counter_that_is_not_a_number_is_numbered_again_after_the_waiting_runs():
    # on main: int('abc') in take_ticket - nobody could take a ticket any more
    store = FakeLeases()
    take_counter(store, "abc")
    ghost = lease_for(store, "ghost")
    ghost._renew_waiter(7, None)  # pylint: disable=protected-access
    warnings = []
    lease = cl.ClusterLease(store, cl.Holder("run-b"), warn=warnings.append)
    assert lease.take_ticket() == 8
    assert store.get(cl.TICKETS_NAME)["metadata"]["annotations"][cl.NEXT_TICKET] == "9"
    assert warnings == ["cluster lease: lease perfscale-cluster-queue is not as the queue writes it: its annotation "
                        "perfscale.io/next-ticket is 'abc', not a ticket number; tickets go on from 8, after those of "
                        "the waiting runs"]
    # the counter is a number again: the next run counts on without a warning
    assert lease.take_ticket() == 9 and len(warnings) == 1


@pytest.mark.parametrize("value", ["-5", "", "1e3", "\u0661\u0662", "9" * 13])
def test_a_ticket_counter_that_is_not_decimal_digits_is_numbered_again(value):
    # a negative counter would have put the run ahead of every waiter; a huge one named waiters the
    # API server refuses
    store = FakeLeases()
    take_counter(store, value)
    warnings = []
    assert cl.ClusterLease(store, cl.Holder("run-b"), warn=warnings.append).take_ticket() == 0
    assert len(warnings) == 1 and ", not a ticket number; tickets go on from 0," in warnings[0]


def test_a_waiter_lease_without_spec_is_ignored_and_holds_nobody_up():
    # on main: the spec-less waiter was ahead in line until its silence, then lease["spec"] - KeyError
    store = FakeLeases()
    take_counter(store, "5")
    foreign(store, cl.waiter_name(2), with_spec=False)
    outcome, warnings, lines = acquire_with_warnings(store)
    assert outcome.state == "taken" and outcome.ticket == 5 and outcome.waited_s < 1
    assert warnings == ["cluster lease: lease perfscale-queue-00000002 is not as the queue writes it: it has no "
                        "spec; it is ignored"]
    assert lines == []


@pytest.mark.parametrize("name, spec, annotations, why", [
    ("perfscale-queue-7", None, None, "its name does not end in a ticket number (perfscale-queue-<8 digits>)"),
    ("perfscale-queue-000000001", None, None,
     "its name does not end in a ticket number (perfscale-queue-<8 digits>)"),
    ("perfscale-queue--0000001", None, None, "its name does not end in a ticket number (perfscale-queue-<8 digits>)"),
    (cl.waiter_name(1), {"renewTime": "2026-01-01T00:00:00.000000Z"}, None,
     "its spec.holderIdentity is not a run id"),
    (cl.waiter_name(1), {"holderIdentity": "x", "renewTime": "2026-01-01T00:00:00"}, None,
     "its spec.renewTime is not a time with a timezone"),
    (cl.waiter_name(1), {"holderIdentity": "x", "renewTime": "2026-01-01T00:00:00Z", "leaseDurationSeconds": -5},
     None, "its spec.leaseDurationSeconds -5 is not a positive whole number"),
    (cl.waiter_name(1), {"holderIdentity": "x", "renewTime": "2026-01-01T00:00:00Z", "leaseDurationSeconds": "60"},
     None, "its spec.leaseDurationSeconds 60 is not a positive whole number"),
    (cl.waiter_name(1), None, {"perfscale.io/ticket": "0"},
     "its annotation perfscale.io/ticket '0' is not the ticket of its name"),
])
def test_leases_in_the_queue_not_as_the_queue_writes_them_are_ignored_with_one_warning(name, spec, annotations, why):
    store = FakeLeases()
    take_counter(store, "3")
    foreign(store, name, spec=spec, annotations=annotations)
    outcome, warnings, _lines = acquire_with_warnings(store)
    assert outcome.state == "taken" and outcome.waited_s < 1
    assert warnings == ["cluster lease: lease %s is not as the queue writes it: %s; it is ignored" % (name, why)]


def test_the_warning_names_the_namespace_of_the_store_and_is_given_once_per_lease():
    store = FakeLeases()
    store.namespace = "perfscale-topsail"
    take_counter(store, "3")
    foreign(store, cl.waiter_name(1), with_spec=False)
    holder = lease_for(store, "run-a")
    holder.acquire()
    clock = FakeClock()
    warnings = []
    waiting = cl.ClusterLease(store, cl.Holder("run-b"), duration_s=10, poll_s=1.0, clock=clock, sleep=clock.sleep,
                              warn=warnings.append)
    with pytest.raises(cl.ClusterLeaseError):
        waiting.acquire(timeout_s=5)  # six rounds of the queue, one warning
    assert warnings == ["cluster lease: lease perfscale-topsail/perfscale-queue-00000001 is not as the queue writes "
                        "it: it has no spec; it is ignored"]


HOSTILE = "evil\x1b[2J\x1b]0;owned\x07\r\nTASK [fake] ok\x9b1m\u202e"
HOSTILE_SHOWN = "evil\\x1b[2J\\x1b]0;owned\\x07\\x0d\\x0aTASK [fake] ok\\x9b1m\\u202e"


def test_holder_names_and_artifacts_from_the_cluster_are_printed_with_control_characters_escaped():
    # on main: the holder identity went raw into "waiting ... held by" lines and the timeout error
    store = FakeLeases()
    store.create({"metadata": {"name": cl.LOCK_NAME, "annotations": {"perfscale.io/artifacts": "s3://b/\x1b[31mred"}},
                  "spec": {"holderIdentity": HOSTILE, "renewTime": "2026-01-01T00:00:00.000000Z",
                           "acquireTime": "2026-01-01T00:00:00.000000Z", "leaseDurationSeconds": 3600}})
    lines = []
    with pytest.raises(cl.ClusterLeaseError) as error:
        lease_for(store, "run-b").acquire(notify=lines.append, timeout_s=3)
    printed = lines + [str(error.value)]
    for text in printed:
        assert not any(ord(char) < 0x20 or 0x7f <= ord(char) <= 0x9f or char == "\u202e" for char in text), text
    assert "held by run %s for " % HOSTILE_SHOWN in lines[0]
    assert "(artifacts: s3://b/\\x1b[31mred)" in lines[0]
    assert "it is held by run %s" % HOSTILE_SHOWN in str(error.value)


def test_a_dead_holder_and_a_dead_waiter_are_named_escaped_when_taken_over_and_dropped():
    store = FakeLeases()
    cl.ClusterLease(store, cl.Holder("dead\nholder"), duration_s=10).acquire()
    ghost = cl.ClusterLease(store, cl.Holder(HOSTILE), duration_s=10)
    ghost._renew_waiter(ghost.take_ticket(), None)  # pylint: disable=protected-access
    clock = FakeClock()
    lines = []
    outcome = cl.ClusterLease(store, cl.Holder("run-b"), duration_s=10, poll_s=1.0, clock=clock,
                              sleep=clock.sleep).acquire(notify=lines.append)
    assert outcome.state == "taken"
    assert "cluster lease: dropped waiting run %s from the queue (no renewal for 10s)" % HOSTILE_SHOWN in lines
    assert "taken over from run dead\\x0aholder" in outcome.message()
    assert "\n" not in outcome.message() and all("\x1b" not in line for line in lines)


def test_a_time_without_a_timezone_is_no_time_and_describe_leaves_it_out():
    # on main: describe() subtracted a naive time from an aware one - TypeError
    assert cl.parse_time("2026-11-26T10:00:00") is None
    assert cl.parse_time("2026-11-26T10:00:00.000000+02:00") == datetime.datetime(
        2026, 11, 26, 8, 0, tzinfo=datetime.timezone.utc)
    assert cl.parse_time(12) is None and cl.parse_time("yesterday") is None
    lease = {"spec": {"holderIdentity": "run-a", "acquireTime": "2026-11-26T10:00:00"}}
    assert cl.describe(lease) == "run run-a"


def test_a_lock_whose_transitions_are_not_a_count_is_taken_over_counting_from_zero():
    store = FakeLeases()
    store.create({"metadata": {"name": cl.LOCK_NAME}, "spec": {"leaseTransitions": "abc"}})
    outcome, warnings, _lines = acquire_with_warnings(store)
    assert outcome.state == "taken" and store.get(cl.LOCK_NAME)["spec"]["leaseTransitions"] == 1
    assert warnings == ["cluster lease: lease perfscale-cluster-lock is not as the queue writes it: its "
                        "spec.leaseTransitions abc is not a count; transitions are counted again from 0"]


def test_a_waiter_of_this_run_emptied_by_someone_is_written_as_this_runs_again():
    store = FakeLeases()
    lease = lease_for(store, "run-b")
    written = lease._renew_waiter(4, None)  # pylint: disable=protected-access
    emptied = dict(written, spec=None)
    store.replace(emptied)
    renewed = lease._renew_waiter(4, None)  # pylint: disable=protected-access
    assert renewed["spec"]["holderIdentity"] == "run-b" and cl.waiter_ticket(renewed) == (4, None)


def test_a_lease_read_without_metadata_is_one_line():
    class Odd(FakeLeases):
        def get(self, name):
            return {"spec": {}} if name == cl.TICKETS_NAME else None

    with pytest.raises(cl.ClusterLeaseError) as error:
        cl.ClusterLease(Odd(), cl.Holder("run-b")).take_ticket()
    assert str(error.value) == ("cluster lease: lease perfscale-cluster-queue as read has no metadata.resourceVersion;"
                                " expected a Lease as the API server answers it")


def test_the_renewer_run_by_path_loads_its_helpers_by_path():
    # the renewer runs as `python -P cluster_lease.py` where the collection is not importable
    result = subprocess.run([sys.executable, "-P", cl.__file__, "renew", "--help"], capture_output=True, text=True,
                            timeout=60, env={"PATH": "/usr/bin:/bin"}, check=False)
    assert result.returncode == 0, result.stderr
    assert "--run-id" in result.stdout
