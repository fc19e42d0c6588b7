"""Shared helpers of the benchmark scripts (not part of the collection)."""

import json
import os
import platform
import statistics
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
COLLECTIONS = os.path.join(REPO, ".venv", "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
RESULTS = os.path.join(REPO, "benchmarks", "results")


def machine():
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "cpus": os.cpu_count(), "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}


def median(values):
    return statistics.median(values)


def record(name, data):
    os.makedirs(RESULTS, exist_ok=True)
    data = dict(data, benchmark=name, machine=machine())
    path = os.path.join(RESULTS, name + ".json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
    print(json.dumps(data, indent=2))
    return path
