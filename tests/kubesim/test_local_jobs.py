"""Jobs whose pods run their command locally, as ``make kubesim`` (``python -m kubesim``) does by default.

The Kubernetes executor runs the real benchmark harness as Job pods this way:
the exit code decides Complete/Failed and the output is the pod log.
"""

import json
import os
import time

from kube_fixtures import kubesim_cluster


def _client(sim):
    from kubernetes import client, config
    configuration = client.Configuration()
    config.load_kube_config(config_file=sim.kubeconfig, client_configuration=configuration)
    return client.ApiClient(configuration)


def _job(name, command):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": "registry.example.com/harness:1", "command": command,
                 "env": [{"name": "POINT", "value": name}]}]}}}}


def run_jobs(sim, count, command, timeout):
    """Create ``count`` Jobs through the API and wait for all to finish; returns (seconds, jobs)."""
    from kubernetes import client
    api = _client(sim)
    batch = client.BatchV1Api(api)
    start = time.monotonic()
    for index in range(count):
        batch.create_namespaced_job("default", _job("point-%04d" % index, command))
    while True:
        jobs = api.sanitize_for_serialization(batch.list_namespaced_job("default"))["items"]
        finished = [j for j in jobs if any(c["type"] in ("Complete", "Failed") and c["status"] == "True"
                                           for c in (j.get("status") or {}).get("conditions") or ())]
        if len(finished) >= count or time.monotonic() - start > timeout:
            break
        time.sleep(0.5)
    elapsed = time.monotonic() - start
    api.close()
    return elapsed, jobs


def test_make_kubesim_runs_job_commands_locally_by_default():
    # no --run-local-pods flag: it is the default of `python -m kubesim`
    with kubesim_cluster(subprocess=True, time_scale=10) as sim:
        elapsed, jobs = run_jobs(sim, 10, ["sh", "-c", 'echo "{\\"point\\": \\"$POINT\\"}"; test "$POINT" != point-0003'],
                                 timeout=60)
        status = {j["metadata"]["name"]: j["status"] for j in jobs}
        assert all(any(c["type"] == "Complete" for c in s.get("conditions") or ()) for n, s in status.items()
                   if n != "point-0003")
        assert any(c["type"] == "Failed" for c in status["point-0003"]["conditions"])
        from kubernetes import client
        api = _client(sim)
        core = client.CoreV1Api(api)
        pod = core.list_namespaced_pod("default", label_selector="job-name=point-0001").items[0]
        assert json.loads(core.read_namespaced_pod_log(pod.metadata.name, "default")) == {"point": "point-0001"}
        failed = core.list_namespaced_pod("default", label_selector="job-name=point-0003").items[0]
        assert failed.status.container_statuses[0].state.terminated.exit_code == 1
        api.close()
    # --no-run-local-pods: pods are simulated (they succeed without running anything)
    with kubesim_cluster(subprocess=True, time_scale=10, run_local_pods=False) as sim:
        _, jobs = run_jobs(sim, 1, ["sh", "-c", "exit 3"], timeout=30)
        assert any(c["type"] == "Complete" for c in jobs[0]["status"]["conditions"])


def test_a_thousand_local_jobs():
    """1,000 Jobs of a trivial local command through the API (about 10 s on 2 CPUs; benchmarks/kubesim_scale.py)."""
    with kubesim_cluster(subprocess=True) as sim:
        elapsed, jobs = run_jobs(sim, 1000, ["true"], timeout=120)
    done = [j for j in jobs if any(c["type"] == "Complete" for c in (j.get("status") or {}).get("conditions") or ())]
    print("1000 local Jobs: %.1f s, %.1f Jobs/s (%d CPUs)" % (elapsed, 1000 / elapsed, os.cpu_count()))
    assert len(done) == 1000 and elapsed < 120
