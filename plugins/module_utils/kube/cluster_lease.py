# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One test run at a time per cluster: a ``coordination.k8s.io`` Lease and a queue of waiters.

A test run (a flow, or a benchmark whose executor runs points on a cluster) takes the cluster's
lease before it touches the cluster and gives it back at the end. Everything lives in one
namespace of the collection's (``clusters.lease.namespace``, ``perfscale-topsail``):

- the **lock**, Lease ``perfscale-cluster-lock``: ``spec.holderIdentity`` is the holder's run id,
  ``acquireTime`` / ``renewTime`` / ``leaseDurationSeconds`` / ``leaseTransitions`` as Kubernetes'
  own leader election writes them, and annotations with the holder's artifacts URL, start time,
  host and controller pid;
- the **tickets**, Lease ``perfscale-cluster-queue``: its annotation ``perfscale.io/next-ticket``
  is a counter a waiter increments with an optimistic update (``resourceVersion``), so that the
  API server, not the waiters' clocks, orders them;
- one **waiter** Lease per waiting run, ``perfscale-queue-<ticket>``, renewed while it waits.

A waiter takes the lock when no live waiter has a smaller ticket and the lock is absent, released
or expired. Expiry is judged as client-go's leader election does, by observation: a lease (lock or
waiter) whose ``renewTime`` has not changed for its ``leaseDurationSeconds`` on this process's
monotonic clock is dead, whatever the machines' clocks say. A dead waiter is dropped from the
queue; a dead holder's lock is taken over (``leaseTransitions`` + 1), and said so in one line.
Every write is a create (409: someone was first) or a replace/delete with the ``resourceVersion``
read (409: someone changed it): two runs can never both believe they hold the lock.

While a run holds the lock, a *renewer* process (this file run by path:
``python -P cluster_lease.py renew ...``, standard library and the ``kubernetes`` client only)
renews it every third of its duration as long as the run's ``ansible-playbook`` process lives,
and releases it as soon as that process is gone - at the end, after a failure, after Ctrl-C or
``kill -9``. The playbooks also release it explicitly when their test is over.

A run holding the lock that asks again (an imported playbook, a nested ``ansible-playbook`` of the
same run, e.g. a matrix point) is already served: same run id, or its controller is a descendant
of the holder's on the same host.

Anyone who may write Leases in the namespace can leave objects there the queue did not write: a
Lease ``perfscale-queue-abc``, a waiter without ``spec``, a counter whose annotation is not a
number, times without a timezone, fields of the wrong type. Such an object is ignored with one
warning naming it (once per run) and the queue goes on for everyone: a waiter the queue did not
write does not hold anyone up, a counter that is not a number is numbered again after the waiting
runs. Every name, holder identity and annotation read from the cluster is printed with its control
characters escaped (``display_text``): a holder identity cannot recolour the terminal or forge a
line.
"""

from __future__ import annotations

import datetime
import importlib.util
import os
import signal
import socket
import sys
import time

try:
    from ansible_collections.perfscale.topsail.plugins.module_utils import display_text
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError
    from ansible_collections.perfscale.topsail.plugins.module_utils.run import lock as run_lock
except ImportError:  # run by path as the renewer: the sibling modules by their paths
    class ClusterError(Exception):
        """A cluster cannot be used as asked."""

    def _load_by_path(name, *parts):
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), *parts))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    run_lock = _load_by_path("perfscale_run_lock", "run", "lock.py")
    display_text = _load_by_path("perfscale_display_text", "display_text.py")

DEFAULT_NAMESPACE = "perfscale-topsail"
LOCK_NAME = "perfscale-cluster-lock"
TICKETS_NAME = "perfscale-cluster-queue"
WAITER_PREFIX = "perfscale-queue-"
ANNOTATION = "perfscale.io/"
NEXT_TICKET = ANNOTATION + "next-ticket"
DEFAULT_DURATION_S = 60
MANAGED_BY = {"app.kubernetes.io/managed-by": "perfscale.topsail"}
# a ticket as the queue writes it: decimal digits, far fewer than a counter could ever reach
MAX_TICKET_DIGITS = 12
# a controller pid (Linux: at most 2**22) and its start time (clock ticks since boot) as written
MAX_PID_DIGITS = 9
MAX_START_DIGITS = 20


class LeaseConflict(Exception):
    """A create of an existing lease, or a write with a stale resourceVersion (HTTP 409)."""


class ClusterLeaseError(ClusterError):
    """The cluster's lease cannot be taken (the API refused, or the wait timed out)."""


def micro_time(moment=None):
    """A ``metav1.MicroTime`` as the API server writes it."""
    moment = moment or datetime.datetime.now(datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text):
    """A ``metav1.MicroTime`` (or ``Time``) as a timezone-aware datetime; None for anything else (a
    time without a timezone is not one the API server writes: it would compare with nothing)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None and moment.utcoffset() is not None else None


def duration_text(seconds):
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return "%dh%02dm" % (hours, minutes)
    return "%dm%02ds" % (minutes, seconds) if minutes else "%ds" % seconds


def waiter_name(ticket):
    return "%s%08d" % (WAITER_PREFIX, ticket)


def shown(value):
    """A name, holder identity or annotation read from the cluster, printable in one line."""
    return display_text.escape(value)


# -- reading leases the queue may not have written ---------------------------------------------------

def _mapping(value):
    return value if isinstance(value, dict) else {}


def _whole(value):
    """``value`` when it is a whole number (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _digits(text, most):
    """``text`` as a number when it is 1 to ``most`` ASCII digits, else None."""
    if isinstance(text, str) and 0 < len(text) <= most and text.isascii() and text.isdigit():
        return int(text)
    return None


def lease_name(lease):
    return _mapping(_mapping(lease).get("metadata")).get("name")


def lease_spec(lease):
    return _mapping(_mapping(lease).get("spec"))


def lease_annotations(lease):
    """The annotations that are text (the API server stores nothing else)."""
    annotations = _mapping(_mapping(_mapping(lease).get("metadata")).get("annotations"))
    return {key: value for key, value in annotations.items() if isinstance(key, str) and isinstance(value, str)}


def holder_identity(lease):
    """The lease's holder, a non-empty string; None when nobody holds it."""
    holder = lease_spec(lease).get("holderIdentity")
    return holder if isinstance(holder, str) and holder else None


def lease_duration(lease, default):
    """``spec.leaseDurationSeconds`` when it is a positive whole number, else ``default``."""
    duration = _whole(lease_spec(lease).get("leaseDurationSeconds"))
    return duration if duration is not None and duration > 0 else default


def parse_ticket(text):
    """A ticket number as the queue writes it (1 to ``MAX_TICKET_DIGITS`` decimal digits), else None."""
    return _digits(text, MAX_TICKET_DIGITS)


def waiter_ticket(lease):
    """``(ticket, None)`` for a waiter lease as the queue writes it; ``(None, why)`` for a lease named
    like a waiter (``perfscale-queue-...``) that the queue did not write."""
    name = lease_name(lease)
    ticket = parse_ticket(name[len(WAITER_PREFIX):]) if isinstance(name, str) else None
    if ticket is None or waiter_name(ticket) != name:
        return None, "its name does not end in a ticket number (%s<8 digits>)" % WAITER_PREFIX
    spec = _mapping(lease).get("spec")
    if not isinstance(spec, dict):
        return None, "it has no spec"
    if holder_identity(lease) is None:
        return None, "its spec.holderIdentity is not a run id"
    if parse_time(spec.get("renewTime")) is None:
        return None, "its spec.renewTime is not a time with a timezone"
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and lease_duration(lease, None) is None:
        return None, "its spec.leaseDurationSeconds %s is not a positive whole number" % shown(duration)
    annotated = lease_annotations(lease).get(ANNOTATION + "ticket")
    if annotated is not None and parse_ticket(annotated) != ticket:
        return None, "its annotation %sticket '%s' is not the ticket of its name" % (ANNOTATION, shown(annotated))
    return ticket, None


# -- the API ----------------------------------------------------------------------------------------

class KubeLeases:
    """Leases of one namespace through the ``kubernetes`` client's typed API, as plain dicts (the
    API's camelCase keys)."""

    def __init__(self, api_client, namespace):
        from kubernetes import client

        self.client = api_client
        self.namespace = namespace
        self.leases = client.CoordinationV1Api(api_client)
        self.core = client.CoreV1Api(api_client)

    def _call(self, what, function, *args, **kwargs):
        from kubernetes.client.exceptions import ApiException

        try:
            answer = function(*args, _request_timeout=30, **kwargs)
        except ApiException as exc:
            if exc.status == 404:
                return None
            if exc.status == 409:
                raise LeaseConflict(what) from None
            raise ClusterLeaseError("cluster lease: %s in namespace %s: the API answered %s %s"
                                    % (shown(what), shown(self.namespace), exc.status, shown(exc.reason))) from None
        except OSError as exc:  # urllib3's connection errors are OSErrors
            raise ClusterLeaseError("cluster lease: %s in namespace %s: %s"
                                    % (shown(what), shown(self.namespace), shown(exc))) from None
        return self.client.sanitize_for_serialization(answer)

    def ensure_namespace(self):
        if self._call("read the namespace", self.core.read_namespace, self.namespace) is not None:
            return
        body = {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": self.namespace, "labels": dict(MANAGED_BY)}}
        try:
            self._call("create the namespace", self.core.create_namespace, body)
        except LeaseConflict:
            pass

    def get(self, name):
        return self._call("read lease %s" % name, self.leases.read_namespaced_lease, name, self.namespace)

    def list(self):
        answer = self._call("list leases", self.leases.list_namespaced_lease, self.namespace) or {}
        return answer.get("items") or []

    def create(self, body):
        return self._call("create lease %s" % body["metadata"]["name"], self.leases.create_namespaced_lease,
                          self.namespace, body)

    def replace(self, body):
        """Replace with the body's ``metadata.resourceVersion`` (LeaseConflict when it moved on)."""
        name = body["metadata"]["name"]
        answer = self._call("replace lease %s" % name, self.leases.replace_namespaced_lease, name, self.namespace,
                            body)
        if answer is None:
            raise LeaseConflict(name)
        return answer

    def delete(self, lease):
        """Delete ``lease`` as it was read (LeaseConflict when it changed since); gone already is fine."""
        metadata = lease["metadata"]
        self._call("delete lease %s" % metadata["name"], self.leases.delete_namespaced_lease, metadata["name"],
                   self.namespace, body={"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {
                       "uid": metadata.get("uid"), "resourceVersion": metadata.get("resourceVersion")}})


def api_client(kubeconfig=None, context=None, environ=None):
    """A ``kubernetes`` ApiClient for a cluster: its kubeconfig / context (the inventory's), else
    ``K8S_AUTH_HOST`` (+ ``K8S_AUTH_API_KEY``, ``K8S_AUTH_SSL_CA_CERT``, ``K8S_AUTH_VERIFY_SSL``,
    ``K8S_AUTH_CLIENT_CERT`` / ``K8S_AUTH_CLIENT_KEY``), ``K8S_AUTH_KUBECONFIG`` / ``KUBECONFIG`` /
    ``~/.kube/config`` with ``K8S_AUTH_CONTEXT``, else the pod's service account."""
    from kubernetes import client, config

    environ = os.environ if environ is None else environ
    if not kubeconfig and environ.get("K8S_AUTH_HOST"):
        configuration = client.Configuration()
        configuration.host = environ["K8S_AUTH_HOST"]
        if environ.get("K8S_AUTH_API_KEY"):
            configuration.api_key = {"authorization": "Bearer " + environ["K8S_AUTH_API_KEY"]}
        configuration.ssl_ca_cert = environ.get("K8S_AUTH_SSL_CA_CERT") or None
        configuration.cert_file = environ.get("K8S_AUTH_CLIENT_CERT") or None
        configuration.key_file = environ.get("K8S_AUTH_CLIENT_KEY") or None
        configuration.verify_ssl = str(environ.get("K8S_AUTH_VERIFY_SSL", "true")).lower() not in ("0", "false", "no")
        return client.ApiClient(configuration)
    path = kubeconfig or environ.get("K8S_AUTH_KUBECONFIG") or environ.get("KUBECONFIG") or "~/.kube/config"
    files = [os.path.expanduser(p) for p in path.split(os.pathsep) if p]
    if not any(os.path.isfile(p) for p in files) and environ.get("KUBERNETES_SERVICE_HOST"):
        configuration = client.Configuration()
        config.load_incluster_config(client_configuration=configuration)
        return client.ApiClient(configuration)
    return config.new_client_from_config(config_file=os.pathsep.join(files),
                                         context=context or environ.get("K8S_AUTH_CONTEXT") or None)


# -- the protocol -----------------------------------------------------------------------------------

class Holder:
    """Who holds (or waits for) the cluster: run id, artifacts, host, controller pid."""

    def __init__(self, run_id, artifacts="", host=None, pid=None, pid_start=None, started=None):
        self.run_id = str(run_id)
        self.artifacts = artifacts or ""
        self.host = host or socket.gethostname()
        self.pid = pid
        self.pid_start = pid_start
        self.started = started or micro_time()

    def annotations(self):
        return {ANNOTATION + "run-id": self.run_id, ANNOTATION + "artifacts": self.artifacts,
                ANNOTATION + "started": self.started, ANNOTATION + "host": self.host,
                ANNOTATION + "controller-pid": "%s/%s" % (self.pid or "", self.pid_start or "")}

    def holds(self, lease):
        """Whether ``lease`` is this run's: the same run id, or the holder's controller started ours."""
        if holder_identity(lease) == self.run_id:
            return True
        annotations = lease_annotations(lease)
        if annotations.get(ANNOTATION + "host") != self.host or not self.pid:
            return False
        pid, _slash, start = annotations.get(ANNOTATION + "controller-pid", "").partition("/")
        pid = _digits(pid, MAX_PID_DIGITS)
        if not pid:
            return False
        start_time = _digits(start, MAX_START_DIGITS)
        return run_lock.is_ancestor(pid, self.pid) and run_lock.is_alive(pid, start_time)


def describe(lease, now=None):
    """``run <id> for 5m03s (artifacts ...)``: the holder of a lock lease, for the waiters' lines
    (what came from the cluster escaped; a time without a timezone is left out)."""
    acquired = parse_time(lease_spec(lease).get("acquireTime"))
    now = now or datetime.datetime.now(datetime.timezone.utc)
    held = " for %s" % duration_text((now - acquired).total_seconds()) if acquired else ""
    where = lease_annotations(lease).get(ANNOTATION + "artifacts")
    return "run %s%s%s" % (shown(holder_identity(lease) or "?"), held,
                           " (artifacts: %s)" % shown(where) if where else "")


class Observer:
    """Client-go's expiry by observation: a lease is dead when its renewTime (and version) did not
    change for its duration on our own monotonic clock."""

    def __init__(self, clock):
        self.clock = clock
        self.seen = {}

    def expired(self, lease, default_duration):
        metadata = _mapping(_mapping(lease).get("metadata"))
        spec = lease_spec(lease)
        record = (spec.get("holderIdentity"), spec.get("renewTime"), metadata.get("resourceVersion"))
        name = metadata.get("name")
        name = name if isinstance(name, str) else repr(name)
        now = self.clock()
        if self.seen.get(name, (None, None))[0] != record:
            self.seen[name] = (record, now)
            return None
        silent = now - self.seen[name][1]
        return silent if silent >= lease_duration(lease, default_duration) else None


class Outcome:
    """What ``ClusterLease.acquire`` did: ``state`` taken / already_held, who it took over from, waits."""

    def __init__(self, state, lease, waited_s=0.0, taken_over=None, dropped=(), ticket=None, ignored=()):
        self.state = state
        self.ticket = ticket
        self.lease = lease
        self.waited_s = waited_s
        self.taken_over = taken_over
        self.dropped = list(dropped)
        self.ignored = list(ignored)

    def message(self):
        if self.state == "already_held":
            return "cluster lease: already held by this run (%s)" % describe(self.lease)
        text = "cluster lease: taken by run %s" % shown(holder_identity(self.lease) or "?")
        if self.waited_s >= 1:
            text += " after waiting %s" % duration_text(self.waited_s)
        if self.taken_over:
            text += "; taken over from %s" % self.taken_over
        return text


class ClusterLease:
    """The lease protocol against a ``KubeLeases``-like store (``get``, ``list``, ``create``, ``replace``,
    ``delete``); ``clock`` / ``sleep`` / ``now`` are injectable for tests. ``warn`` gets one line per
    lease the queue did not write (once per lease and reason); ``ignored`` keeps them."""

    def __init__(self, store, holder, duration_s=DEFAULT_DURATION_S, poll_s=2.0, clock=time.monotonic,
                 sleep=time.sleep, now=None, warn=lambda line: None):
        self.store = store
        self.holder = holder
        self.duration_s = int(duration_s)
        self.poll_s = float(poll_s)
        self.clock = clock
        self.sleep = sleep
        self.now = now or (lambda: datetime.datetime.now(datetime.timezone.utc))
        self.observer = Observer(clock)
        self.warn = warn
        self.ignored = []
        self._warned = set()

    def _ignore(self, name, why, then="it is ignored"):
        """Warn once about a lease not as the queue writes it (``name`` as read; ``why`` escaped already)."""
        key = (repr(name), why)
        if key in self._warned:
            return
        self._warned.add(key)
        where = getattr(self.store, "namespace", None)
        line = "cluster lease: lease %s%s is not as the queue writes it: %s; %s" % (
            "%s/" % shown(where) if isinstance(where, str) else "", shown(name), why, then)
        self.ignored.append(line)
        self.warn(line)

    def _metadata(self, lease, name):
        """The metadata of a lease read by name; a one-line error when it is not an object an API
        server answers (no metadata, no resourceVersion to write it back with)."""
        metadata = _mapping(lease).get("metadata")
        if not isinstance(metadata, dict) or not metadata.get("resourceVersion"):
            raise ClusterLeaseError("cluster lease: lease %s as read has no metadata.resourceVersion; expected a "
                                    "Lease as the API server answers it" % shown(name))
        return metadata

    # -- bodies
    def _lease(self, name, holder_identity, annotations, extra_spec=None):
        now = micro_time(self.now())
        spec = {"holderIdentity": holder_identity, "leaseDurationSeconds": self.duration_s,
                "acquireTime": now, "renewTime": now}
        spec.update(extra_spec or {})
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "labels": dict(MANAGED_BY), "annotations": annotations},
                "spec": spec}

    # -- tickets
    def take_ticket(self):
        """The next number of the queue (the counter lease, incremented optimistically). A counter
        whose annotation is not a ticket number is numbered again after the waiting runs."""
        while True:
            counter = self.store.get(TICKETS_NAME)
            try:
                if counter is None:
                    self.store.create(self._lease(TICKETS_NAME, None, {NEXT_TICKET: "1"}))
                    return 0
                metadata = self._metadata(counter, TICKETS_NAME)
                annotations = lease_annotations(counter)
                ticket = parse_ticket(annotations.get(NEXT_TICKET))
                if ticket is None:
                    ticket = self._after_the_waiters()
                    found = annotations.get(NEXT_TICKET)
                    self._ignore(TICKETS_NAME, "its annotation %s is %s, not a ticket number" % (
                        NEXT_TICKET, "'%s'" % shown(found) if found is not None else "missing"),
                        then="tickets go on from %d, after those of the waiting runs" % ticket)
                annotations[NEXT_TICKET] = str(ticket + 1)
                metadata["annotations"] = annotations
                self.store.replace(counter)
                return ticket
            except LeaseConflict:
                continue

    def _after_the_waiters(self):
        """The ticket after every waiter lease's (0 when none waits): no two runs share a number."""
        tickets = [waiter_ticket(lease)[0] for lease in self.store.list()]
        return max([ticket for ticket in tickets if ticket is not None], default=-1) + 1

    def _renew_waiter(self, ticket, waiter):
        """Create or renew this run's waiter lease (made again when another waiter dropped it)."""
        name = waiter_name(ticket)
        while True:
            current = waiter if waiter is not None else self.store.get(name)
            waiter = None
            try:
                if current is None:
                    return self.store.create(self._lease(name, self.holder.run_id, dict(
                        self.holder.annotations(), **{ANNOTATION + "ticket": str(ticket)})))
                self._metadata(current, name)
                spec = current.get("spec")
                if isinstance(spec, dict) and holder_identity(current) == self.holder.run_id:
                    spec["renewTime"] = micro_time(self.now())
                else:  # not as this run wrote it (emptied, or another holder): this run's again
                    current["spec"] = self._lease(name, self.holder.run_id, {})["spec"]
                return self.store.replace(current)
            except LeaseConflict:
                continue

    def _live_waiters(self, dropped, notify):
        """The waiters still renewing, by ticket; the dead ones deleted (and reported); leases named
        like waiters that the queue did not write ignored (and reported once)."""
        live = []
        for lease in self.store.list():
            name = lease_name(lease)
            if not isinstance(name, str) or not name.startswith(WAITER_PREFIX):
                continue
            ticket, why = waiter_ticket(lease)
            if why:
                self._ignore(name, why)
                continue
            silent = self.observer.expired(lease, self.duration_s)
            if silent is not None:
                try:
                    self.store.delete(lease)
                except LeaseConflict:
                    continue
                line = "cluster lease: dropped waiting run %s from the queue (no renewal for %s)" % (
                    shown(holder_identity(lease)), duration_text(silent))
                dropped.append(line)
                notify(line)
                continue
            live.append((ticket, lease))
        return sorted(live, key=lambda item: item[0])

    # -- the lock
    def _try_lock(self):
        """``(lease, taken_over)`` when this run got the lock now, else None (someone else holds it)."""
        lock = self.store.get(LOCK_NAME)
        if lock is None:
            try:
                return self.store.create(self._lease(LOCK_NAME, self.holder.run_id, self.holder.annotations(),
                                                     {"leaseTransitions": 0})), None
            except LeaseConflict:
                return None
        metadata = self._metadata(lock, LOCK_NAME)
        spec = lease_spec(lock)
        if spec.get("holderIdentity") not in (None, "") and holder_identity(lock) is None:
            self._ignore(LOCK_NAME, "its spec.holderIdentity %s is not a run id" % shown(spec.get("holderIdentity")),
                         then="it is taken as released")
        previous = holder_identity(lock)
        silent = None if not previous else self.observer.expired(lock, self.duration_s)
        if previous and silent is None:
            return None
        transitions = _whole(spec.get("leaseTransitions"))
        if transitions is None or transitions < 0:
            if spec.get("leaseTransitions") is not None:
                self._ignore(LOCK_NAME, "its spec.leaseTransitions %s is not a count"
                             % shown(spec.get("leaseTransitions")), then="transitions are counted again from 0")
            transitions = 0
        body = self._lease(LOCK_NAME, self.holder.run_id, self.holder.annotations(),
                           {"leaseTransitions": transitions + 1})
        body["metadata"]["resourceVersion"] = metadata["resourceVersion"]
        try:
            taken = self.store.replace(body)
        except LeaseConflict:
            return None
        over = ("%s, which stopped renewing it (no renewal for %s)" % (describe(lock, self.now()),
                                                                       duration_text(silent))) if previous else None
        return taken, over

    def acquire(self, notify=lambda line: None, timeout_s=0, report_every_s=30.0):
        """Wait in line for the cluster, then hold it; ``notify`` gets the waiting lines. ``timeout_s``
        > 0 bounds the wait (ClusterLeaseError naming the holder)."""
        lock = self.store.get(LOCK_NAME)
        if lock is not None and self.holder.holds(lock):
            return Outcome("already_held", lock)
        started = self.clock()
        ticket = self.take_ticket()
        waiter = None
        dropped = []
        last_line, last_report = None, None
        try:
            while True:
                waiter = self._renew_waiter(ticket, waiter)
                live = self._live_waiters(dropped, notify)
                ahead = [item for item in live if item[0] < ticket]
                if not ahead:
                    got = self._try_lock()
                    if got:
                        return Outcome("taken", got[0], self.clock() - started, taken_over=got[1], dropped=dropped,
                                       ticket=ticket, ignored=self.ignored)
                lock = self.store.get(LOCK_NAME)
                held_by = holder_identity(lock)
                holder = describe(lock, self.now()) if held_by else "nobody (being handed over)"
                line = "cluster lease: waiting for the cluster, position %d of %d in the queue; held by %s" % (
                    len(ahead) + 1, len(live), holder)
                moment = self.clock()
                key = (len(ahead), len(live), held_by)
                if key != last_line or last_report is None or moment - last_report >= report_every_s:
                    notify(line)
                    last_line, last_report = key, moment
                if timeout_s and moment - started > timeout_s:
                    raise ClusterLeaseError("cluster lease: waited %s for the cluster (clusters.lease.wait_timeout_s);"
                                            " it is held by %s" % (duration_text(moment - started), holder))
                self.sleep(self.poll_s)
        finally:
            if waiter is not None:
                try:
                    self.store.delete(self.store.get(waiter["metadata"]["name"]) or waiter)
                except LeaseConflict:
                    pass

    def renew(self):
        """Renew the lock; False when it is no longer this run's (released, taken over)."""
        lock = self.store.get(LOCK_NAME)
        if lock is None or holder_identity(lock) != self.holder.run_id:
            return False
        lock["spec"]["renewTime"] = micro_time(self.now())
        try:
            self.store.replace(lock)
        except LeaseConflict:
            return False
        return True

    def release(self):
        """Give the lock back (delete it) when it is this run's; whether it was."""
        lock = self.store.get(LOCK_NAME)
        if lock is None or holder_identity(lock) != self.holder.run_id:
            return False
        try:
            self.store.delete(lock)
        except LeaseConflict:
            return False
        return True


# -- the renewer process ----------------------------------------------------------------------------

def renewer_argv(python, namespace, run_id, duration_s, controller_pid, controller_start, kubeconfig=None,
                 context=None, log_path=None):
    return [python or sys.executable, "-P", os.path.abspath(__file__), "renew", "--namespace", namespace,
            "--run-id", str(run_id), "--duration", str(int(duration_s)), "--pid", str(controller_pid),
            "--pid-start", str(controller_start), "--kubeconfig", kubeconfig or "", "--context", context or "",
            "--log", log_path or ""]


def start_renewer(argv):
    """The renewer, detached from the play's process group (Ctrl-C reaches the play, not it)."""
    import subprocess

    # pylint: disable-next=consider-using-with
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, close_fds=True).pid


def stop_renewer(pid, start_time=None):
    """Stop a renewer (after an explicit release); nothing when it is gone already."""
    if pid and run_lock.is_alive(int(pid), start_time):
        try:
            os.kill(int(pid), signal.SIGTERM)
        except ProcessLookupError:
            pass


def renew_while_alive(lease, controller_pid, controller_start, log, sleep=time.sleep, stopped=lambda: False,
                      clock=time.monotonic, tick_s=run_lock.POLL_S):
    """Renew every third of the duration while the controller lives (looked at every ``tick_s``);
    release as soon as it is gone."""
    period = max(tick_s, lease.duration_s / 3.0)
    renewed = None
    while not stopped():
        if not run_lock.is_alive(controller_pid, controller_start):
            released = lease.release()
            log("controller %d ended: lease %s" % (controller_pid, "released" if released else "no longer held"))
            return 0
        if renewed is None or clock() - renewed >= period:
            try:
                if not lease.renew():
                    log("lease no longer held by run %s (released or taken over): renewer stops" % lease.holder.run_id)
                    return 0
                renewed = clock()
            except ClusterLeaseError as exc:  # the API did not answer this time: try again next tick
                log("renewal failed: %s" % exc)
        sleep(tick_s)
    return 0


def main(argv):
    import argparse

    parser = argparse.ArgumentParser(prog="cluster_lease.py")
    parser.add_argument("action", choices=["renew"])
    for option in ("--namespace", "--run-id", "--kubeconfig", "--context", "--log"):
        parser.add_argument(option, default="")
    parser.add_argument("--duration", type=int, default=DEFAULT_DURATION_S)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--pid-start", default="None")
    options = parser.parse_args(argv[1:])
    start = int(options.pid_start) if options.pid_start.isdigit() else None

    def log(line):
        if options.log:
            with open(options.log, "a", encoding="utf-8") as handle:
                handle.write("%s %s\n" % (micro_time(), line))

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    store = KubeLeases(api_client(options.kubeconfig or None, options.context or None), options.namespace)
    lease = ClusterLease(store, Holder(options.run_id), duration_s=options.duration)
    log("renewing lease %s/%s for run %s every %.1f s" % (options.namespace, LOCK_NAME, options.run_id,
                                                          max(run_lock.POLL_S, options.duration / 3.0)))
    return renew_while_alive(lease, options.pid, start, log, stopped=lambda: bool(stop))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
