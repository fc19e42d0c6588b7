"""Ray's scheduling and object-transfer overhead across the cluster's nodes.

num_samples rounds of ``tasks_per_round`` remote tasks spread over every node (SPREAD), each
returning ``payload_kib`` KiB that the driver fetches; prints the reference's result line
``--- PASSED: RESULT NETWORK OVERHEAD ::: <seconds>`` and the numbers as ``PERFSCALE_RESULT {...}``.
"""

import json
import os
import time

import ray

CONFIG = os.environ.get("CONFIG_JSON_PATH", "/mnt/config/config.json")


@ray.remote(scheduling_strategy="SPREAD")
def produce(size):
    return b"x" * size


def main():
    with open(CONFIG, encoding="utf-8") as handle:
        config = json.load(handle)
    rounds = int(config.get("num_samples") or 20)
    tasks = int(config.get("tasks_per_round") or 100)
    size = int(config.get("payload_kib") or 1024) * 1024
    ray.init()
    nodes = len([n for n in ray.nodes() if n.get("Alive")])
    start = time.monotonic()
    moved = 0
    for _round in range(rounds):
        moved += sum(len(part) for part in ray.get([produce.remote(size) for _task in range(tasks)]))
    elapsed = time.monotonic() - start
    print("PERFSCALE_RESULT %s" % json.dumps({"time_s": round(elapsed, 3), "nodes": nodes,
                                              "tasks_per_s": round(rounds * tasks / elapsed, 2),
                                              "transfer_gbps": round(moved * 8 / elapsed / 1e9, 3)}), flush=True)
    print("--- PASSED: RESULT NETWORK OVERHEAD ::: %.3f" % elapsed, flush=True)


if __name__ == "__main__":
    main()
