"""A workload shaped like the reference project's parsers (benchmark only).

Per test it reads a YAML dump of the Kubernetes objects of the test (as `oc get -oyaml`
captures them) and scans the test's log with regular expressions: the kind of
parse_once work that makes a parse cache worth having.
"""

import re

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis.kpi import HigherBetter, KPIMetadata

ARTIFACT_DIRNAMES = {}
IMPORTANT_FILES = ["state.yaml", "run.log"]
LINE = re.compile(r"step (\d+) loss=([0-9.]+) tokens/s=([0-9.]+)")


def parse_once(ctx, settings):
    state = ctx.read_yaml("state.yaml") or {}
    containers = [c for item in state.get("items", []) for c in item.get("spec", {}).get("containers", [])]
    throughput = [float(m.group(3)) for m in LINE.finditer(ctx.read_text("run.log") or "")]
    return {"containers": len(containers), "images": sorted({c.get("image") for c in containers}),
            "tokens_per_s": sum(throughput) / len(throughput) if throughput else None}


def labels_model():
    import pydantic

    class Labels(pydantic.BaseModel):
        test: str

    return Labels


def kpi_labels(entry):
    return {"test": entry.relative}


@HigherBetter
@KPIMetadata(help="Mean tokens per second in the log", unit="tokens/s")
def tokens_per_s(payload):
    return payload["results"]["tokens_per_s"]


KPIS = [tokens_per_s]


def pod(index):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "worker-%d" % index, "namespace": "bench", "labels": {"app": "bench", "index": str(index)},
                         "annotations": {"note": "x" * 200}},
            "spec": {"nodeName": "node-%d" % (index % 4), "containers": [
                {"name": "c%d" % c, "image": "quay.io/bench/worker:%d" % c,
                 "resources": {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"nvidia.com/gpu": "1"}},
                 "env": [{"name": "VAR_%d" % e, "value": "value-%d" % e} for e in range(12)],
                 "volumeMounts": [{"name": "data", "mountPath": "/data/%d" % v} for v in range(4)]}
                for c in range(3)]},
            "status": {"phase": "Succeeded", "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-11-20T10:00:0%dZ" % i}
                for i, t in enumerate(("Initialized", "Ready", "ContainersReady", "PodScheduled"))]}}


def add_artifacts(test_dir, write):
    """Write state.yaml (8 pods) and run.log (800 lines) into a synthetic test directory."""
    import yaml

    write(test_dir + "/state.yaml", yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [pod(i) for i in range(8)]}))
    write(test_dir + "/run.log", "".join("step %d loss=%.4f tokens/s=%.1f\\n" % (s, 1.0 / (s + 1), 1000.0 + s % 50)
                                         for s in range(800)))
