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
