"""Artifacts written as YAML (run/artifacts.py ``dump_yaml``): PyYAML's pure-Python emitter, which it
used before, against libyaml's, which it uses when PyYAML has it, on what a capture writes - a list of
distinct pods. Side by side in one run, interleaved rounds, medians of process CPU; both texts read
back to the pods (checked every round).

    .venv/bin/python benchmarks/yaml_emitters.py        (PODS=100 ROUNDS=7)

Records benchmarks/results/yaml_emitters.json.
"""

import os
import time

import yaml

import _common

PODS = int(os.environ.get("PODS", "100"))
ROUNDS = int(os.environ.get("ROUNDS", "7"))


def pods(count):
    return [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "worker-%d" % index, "namespace": "bench", "labels": {"app": "bench", "index": str(index)},
                          "annotations": {"note": "restarted after an eviction " * 6}},
             "spec": {"nodeName": "node-%d" % (index % 8), "containers": [
                 {"name": "main", "image": "quay.io/example/worker:1.%d" % index,
                  "env": [{"name": "VAR_%d" % var, "value": "value %d of pod %d" % (var, index)} for var in range(20)],
                  "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}}]},
             "status": {"phase": "Running", "conditions": [
                 {"type": kind, "status": "True", "lastTransitionTime": "2026-11-29T0%d:00:00Z" % (index % 10)}
                 for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]}}
            for index in range(count)]


def dump(data, dumper):
    return yaml.dump(data, Dumper=dumper, default_flow_style=False, sort_keys=False, allow_unicode=True)


def main():
    if not hasattr(yaml, "CSafeDumper"):
        raise SystemExit("yaml_emitters: this PyYAML has no libyaml (yaml.CSafeDumper); nothing to compare")
    data = pods(PODS)
    samples = {"python": [], "libyaml": []}
    for _round in range(ROUNDS):
        for name, dumper in (("python", yaml.SafeDumper), ("libyaml", yaml.CSafeDumper)):
            start = time.process_time()
            text = dump(data, dumper)
            samples[name].append(round(time.process_time() - start, 4))
            if yaml.safe_load(text) != data:
                raise SystemExit("yaml_emitters: the %s emitter's text does not read back to the pods" % name)
    medians = {name: _common.median(values) for name, values in samples.items()}
    _common.record("yaml_emitters", {
        "pods": PODS, "rounds": ROUNDS, "bytes": len(dump(data, yaml.CSafeDumper)),
        "medians_cpu_s": medians, "samples_cpu_s": samples,
        "speedup_libyaml": round(medians["python"] / medians["libyaml"], 1)})


if __name__ == "__main__":
    main()
