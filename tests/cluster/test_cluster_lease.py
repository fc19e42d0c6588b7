"""One test run at a time per cluster, on kubesim: the Lease and its queue under concurrent runs.

- two toolbox runs with -e cluster_lock=true at once: one holds, the other waits (its position, the
  holder's run id and how long it has held), then takes it; both leave nothing behind;
- ten processes at once: never two holders, served in the order of their tickets;
- a holder killed with kill -9: its renewer releases at once; a holder and its renewer both
  killed (a lost machine): taken over after the lease's duration, said in one line;
- a single command without -e cluster_lock=true does not wait for a busy cluster.
"""

import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import cluster_lease

HERE = os.path.dirname(os.path.abspath(__file__))
# where ansible_collections.perfscale.topsail is importable from (tests/conftest.py put it first)
COLLECTIONS_ROOT = os.path.abspath(cluster_lease.__file__).rsplit(os.sep + "ansible_collections" + os.sep, 1)[0]

DRIVER = os.path.join(HERE, "lease_driver.py")
NAMESPACE = "perfscale-topsail"
# a quick poll; a lease long enough that a loaded machine (CI runs three cluster workers beside the
# lint steps) renews it in time: a takeover after a silence is not what these runs test
FAST = json.dumps({"clusters.lease.poll_s": 0.3, "clusters.lease.duration_s": 30})


def driver(sim, run_id, events, hold, duration=6, renewer=False):
    argv = [sys.executable, DRIVER, sim.kubeconfig, run_id, str(events), str(hold), str(duration)]
    argv += ["--renewer"] if renewer else []
    env = dict(os.environ, PYTHONPATH=COLLECTIONS_ROOT)
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def read_events(path):
    events = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            parts = line.split()
            events.append((parts[0], parts[1], parts[2:-1], float(parts[-1])))
    return events


def leases(kube):
    found = kube.get("Lease", namespace=NAMESPACE, api_version="coordination.k8s.io/v1") or []
    return {item["metadata"]["name"]: item for item in found}


def wait_until(predicate, timeout=30.0, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def test_two_toolbox_runs_take_turns(toolbox, kube, tmp_path):
    def run(name, delay):
        time.sleep(delay)
        return toolbox("cluster capture_state", {"namespaces": ["default"]}, tmp_path / name, "-e",
                       "cluster_lock=true", "-e", "overrides=" + FAST)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(run, name, delay) for name, delay in (("first", 0), ("second", 0.5))}
        done = {name: future.result() for name, future in futures.items()}
    outputs = {name: run.flat for name, run in done.items()}
    for name, completed in done.items():
        assert completed.returncode == 0, completed.output[-3000:]
    run_ids = {}
    for name in done:
        with open(tmp_path / name / "run.json", encoding="utf-8") as handle:
            run_ids[name] = json.load(handle)["run_id"]
    waited = [name for name in done if "cluster lease: waiting for the cluster" in outputs[name]]
    assert len(waited) == 1, outputs
    other = "first" if waited == ["second"] else "second"
    assert "position 1 of 1 in the queue; held by run %s for " % run_ids[other] in outputs[waited[0]]
    assert "cluster lease: taken by run %s after waiting" % run_ids[waited[0]] in outputs[waited[0]]
    assert "cluster lease: released by run %s" % run_ids[other] in outputs[other]
    # nothing left: no lock, no waiter (only the ticket counter)
    assert set(leases(kube)) <= {"perfscale-cluster-queue"}


def test_ten_concurrent_runs_never_two_holders_first_come_first_served(sim, kube, tmp_path):
    events = tmp_path / "events"
    procs = [driver(sim, "run-%02d" % index, events, 0.3) for index in range(10)]
    outputs = [proc.communicate(timeout=300)[0] for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), outputs
    taken = [(run, int(rest[0]), moment) for kind, run, rest, moment in read_events(events) if kind == "taken"]
    released = {run: moment for kind, run, _rest, moment in read_events(events) if kind == "released"}
    assert len(taken) == 10
    # served in ticket order, one at a time: each taken after the previous holder released
    assert [ticket for _run, ticket, _moment in taken] == sorted(ticket for _run, ticket, _moment in taken)
    for (previous, _ticket, _moment), (_run, _next_ticket, moment) in zip(taken, taken[1:]):
        assert moment >= released[previous], (previous, taken)
    assert any("position" in output for output in outputs)
    assert "perfscale-cluster-lock" not in leases(kube)


def test_a_killed_holder_is_released_by_its_renewer(sim, kube, tmp_path):
    events = tmp_path / "events"
    holder = driver(sim, "killed-run", events, -1, renewer=True)
    assert wait_until(lambda: os.path.exists(events) and "taken killed-run" in open(events, encoding="utf-8").read())
    assert wait_until(lambda: os.path.exists(str(events) + ".killed-run.renewer"))
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    # the renewer sees its controller gone within a tick and gives the cluster back
    assert wait_until(lambda: "perfscale-cluster-lock" not in leases(kube), timeout=10)
    # the renewer deletes the lease first and writes its line after: read the log once it has been written
    renewer_log = str(events) + ".killed-run.renewer"
    line = "controller %d ended: lease released" % holder.pid
    assert wait_until(lambda: line in open(renewer_log, encoding="utf-8").read(), timeout=10), \
        open(renewer_log, encoding="utf-8").read()


def test_a_silent_holder_is_taken_over_after_its_duration(sim, kube, tmp_path):
    events = tmp_path / "events"
    # a holder whose machine was lost: the holder and its renewer both gone, the lease left behind
    holder = driver(sim, "lost-run", events, -1, duration=4)
    assert wait_until(lambda: os.path.exists(events) and "taken lost-run" in open(events, encoding="utf-8").read())
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    assert leases(kube)["perfscale-cluster-lock"]["spec"]["holderIdentity"] == "lost-run"
    started = time.monotonic()
    waiter = driver(sim, "next-run", events, 0, duration=4)
    output = waiter.communicate(timeout=60)[0]
    assert waiter.returncode == 0, output
    assert time.monotonic() - started >= 4
    assert "taken over from run lost-run" in output and "(no renewal for 4s)" in output
    assert "perfscale-cluster-lock" not in leases(kube)


def test_a_single_command_does_not_wait_for_a_busy_cluster(toolbox, kube, sim, tmp_path):
    events = tmp_path / "events"
    holder = driver(sim, "busy-run", events, -1, duration=30)
    try:
        assert wait_until(lambda: os.path.exists(events) and "taken busy-run" in open(events, encoding="utf-8").read())
        run = toolbox("cluster capture_state", {"namespaces": ["default"]}, tmp_path / "look")
        assert run.returncode == 0, run.output
        assert "cluster lease" not in run.output.replace("Give the cluster back", "")
        # with -e cluster_lock=true it waits, and gives up after clusters.lease.wait_timeout_s
        run = toolbox("cluster capture_state", {"namespaces": ["default"]}, tmp_path / "wait", "-e",
                      "cluster_lock=true", "-e", "overrides=" + json.dumps({"clusters.lease.poll_s": 0.3,
                                                                            "clusters.lease.wait_timeout_s": 2}))
        assert run.returncode != 0
        # at least the 2 s asked (one more poll on a loaded machine)
        waited = re.search(r"cluster lease: waited (\d+)s for the cluster \(clusters.lease.wait_timeout_s\); it is held "
                           r"by run busy-run", run.flat)
        assert waited and 2 <= int(waited.group(1)) <= 10, run.output[-3000:]
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)


@pytest.fixture(autouse=True)
def _no_lease_left(kube):
    """Each test starts with the cluster free (a test's holder may have left its lease behind)."""
    for name, item in leases(kube).items():
        if name == "perfscale-cluster-lock":
            kube.dynamic.resources.get(api_version="coordination.k8s.io/v1", kind="Lease").delete(
                name=name, namespace=NAMESPACE)
            del item
    yield
