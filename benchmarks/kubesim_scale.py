"""kubesim at scale, through the kubernetes Python client (not a timed test).

Measures, in a few rounds on a fresh in-process kubesim each: creating 1,000
ConfigMaps one request at a time; listing 10,000 ConfigMaps paged by 500; the
server process's resident memory with 10,000 objects stored. The server is a
``python -m kubesim`` child process started from a state directory preloaded
with 9,000 ConfigMaps (made through the internal API to keep the run short).
Then, on a fresh ``python -m kubesim`` (which runs Jobs' commands locally by
default, with its default bound of local processes), 1,000 Jobs of a trivial
command (``true``) created one request at a time, until all are Complete (the
client polls the Job list every 0.5 s). Goals: 1,000 creates <= 5 s, the paged
list <= 2 s, <= 300 MB, 1,000 local Jobs <= 60 s. Writes results/kubesim_scale.json
with the medians.

    .venv/bin/python benchmarks/kubesim_scale.py [--rounds 3]
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kubesim.app import KubeSim  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from kube_fixtures import kubesim_cluster  # noqa: E402

GOALS = {"create_1000_s": 5.0, "list_10000_paged_500_s": 2.0, "rss_10000_objects_mb": 300.0,
         "jobs_1000_local_s": 60.0}


def rss_mb(pid):
    with open("/proc/%d/status" % pid, encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def one_round(workdir):
    """A kubesim child process (as ``make kubesim`` runs it) preloaded with 9,000 ConfigMaps."""
    from kubernetes import client, config
    state = tempfile.mkdtemp(prefix="state-", dir=workdir)
    seed = KubeSim(state_dir=state)
    seed.start()
    cms = seed.cluster.resource("v1", "ConfigMap")
    for i in range(1000, 10000):
        seed.cluster.create(cms, {"metadata": {"name": "bench-%05d" % i, "labels": {"bench": "yes"}},
                                  "data": {"key": "value %d" % i}}, "default")
    seed.stop()
    with kubesim_cluster(subprocess=True, state_dir=state) as sim:
        configuration = client.Configuration()
        config.load_kube_config(config_file=sim.kubeconfig, client_configuration=configuration)
        api = client.ApiClient(configuration)
        core = client.CoreV1Api(api)
        start = time.perf_counter()
        for i in range(1000):
            core.create_namespaced_config_map("default", client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name="bench-%05d" % i, labels={"bench": "yes"}), data={"key": "value %d" % i}))
        create = time.perf_counter() - start
        start = time.perf_counter()
        total, token = 0, None
        while True:
            page = core.list_namespaced_config_map("default", limit=500, _continue=token)
            total += len(page.items)
            token = page.metadata._continue
            if not token:
                break
        listing = time.perf_counter() - start
        assert total >= 10000, total
        memory = rss_mb(sim.process.pid)
        api.close()
    shutil.rmtree(state, ignore_errors=True)
    return {"create_1000_s": create, "list_10000_paged_500_s": listing, "rss_10000_objects_mb": memory}


def jobs_round():
    """1,000 Jobs running ``true`` locally on a ``python -m kubesim`` child: seconds until all are Complete."""
    from kubernetes import client, config
    with kubesim_cluster(subprocess=True) as sim:
        configuration = client.Configuration()
        config.load_kube_config(config_file=sim.kubeconfig, client_configuration=configuration)
        api = client.ApiClient(configuration)
        batch = client.BatchV1Api(api)
        start = time.perf_counter()
        for i in range(1000):
            batch.create_namespaced_job("default", {
                "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "point-%04d" % i},
                "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
                    {"name": "main", "image": "harness", "command": ["true"]}]}}}})
        complete = 0
        while complete < 1000 and time.perf_counter() - start < 600:
            time.sleep(0.5)
            jobs = batch.list_namespaced_job("default").items
            complete = sum(1 for j in jobs if j.status is not None and j.status.completion_time)
        elapsed = time.perf_counter() - start
        api.close()
    assert complete == 1000, complete
    return {"jobs_1000_local_s": elapsed}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                         "kubesim_scale.json"))
    args = parser.parse_args(argv)
    rounds = []
    for index in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="kubesim-bench-") as workdir:
            rounds.append(one_round(workdir))
        rounds[-1].update(jobs_round())
        print("round %d: %s" % (index + 1, ", ".join("%s=%.2f" % kv for kv in rounds[-1].items())), flush=True)
    medians = {key: round(statistics.median(r[key] for r in rounds), 3) for key in GOALS}
    medians["jobs_per_s"] = round(1000 / medians["jobs_1000_local_s"], 1)
    result = {"benchmark": "kubesim_scale", "rounds": args.rounds, "medians": medians, "goals": GOALS,
              "met": {key: medians[key] <= GOALS[key] for key in GOALS},
              "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
              "note": "server: a python -m kubesim child process; RSS is that process's; Jobs: its default local "
                      "process bound (twice the CPUs, at least 4)"}
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    print(json.dumps(result["medians"]), "met:", result["met"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
