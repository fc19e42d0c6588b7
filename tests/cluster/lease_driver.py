"""A run that takes the cluster's lease (tests/cluster/test_cluster_lease.py): one process of many.

    python lease_driver.py KUBECONFIG RUN_ID EVENTS_FILE HOLD_SECONDS DURATION [--renewer]

Takes the lease (module_utils/kube/cluster_lease.py against the cluster), appends
``taken <run> <ticket> <time>`` and ``released <run> <time>`` to EVENTS_FILE around holding it
for HOLD_SECONDS (forever when negative); with --renewer, starts the real renewer for itself
(this process as the controller) instead of releasing by hand.
"""

import os
import sys
import time

from ansible_collections.perfscale.topsail.plugins.module_utils.kube import cluster_lease as cl
from ansible_collections.perfscale.topsail.plugins.module_utils.run import lock as run_lock


def event(path, text):
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("%s %.6f\n" % (text, time.time()))


def main(argv):
    kubeconfig, run_id, events, hold, duration = argv[1], argv[2], argv[3], float(argv[4]), int(argv[5])
    store = cl.KubeLeases(cl.api_client(kubeconfig), cl.DEFAULT_NAMESPACE)
    store.ensure_namespace()
    holder = cl.Holder(run_id, pid=os.getpid(), pid_start=run_lock.process_start_time(os.getpid()))
    lease = cl.ClusterLease(store, holder, duration_s=duration, poll_s=0.2)
    outcome = lease.acquire(notify=lambda line: print(line, flush=True))
    print(outcome.message(), flush=True)
    event(events, "taken %s %s" % (run_id, outcome.ticket))
    if "--renewer" in argv:
        pid = cl.start_renewer(cl.renewer_argv(sys.executable, cl.DEFAULT_NAMESPACE, run_id, duration, os.getpid(),
                                               holder.pid_start, kubeconfig=kubeconfig,
                                               log_path=events + "." + run_id + ".renewer"))
        print("renewer %d" % pid, flush=True)
    if hold < 0:
        while True:
            time.sleep(1)
    time.sleep(hold)
    event(events, "released %s" % run_id)
    if "--renewer" not in argv:
        assert lease.release()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
