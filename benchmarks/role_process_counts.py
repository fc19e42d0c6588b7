"""The module processes a toolbox role starts, and its wall time, on kubesim: each role of CASES run once
as a user runs it (ansible-playbook perfscale.topsail.toolbox), for the checkout as it is ("after") and
for a git ref exported beside it ("before", default main), on a fresh kubesim per label and cluster kind.

Every task result is counted by benchmarks/callback/module_calls.py: a module call is a new Python process
(one per loop item and per until attempt), and one of kubernetes.core or of this collection's modules over
its client imports the kubernetes client first (~1.3 CPU-s each, benchmarks/playbook_unit_costs.py). The
counts are exact and machine-independent; wall and CPU seconds (of ansible-playbook and its children;
kubesim runs in this process) are one run's, on a shared machine.

    .venv/bin/python benchmarks/role_process_counts.py [--before-ref main] [--only ROLE ...]

Records benchmarks/results/role_process_counts.json.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import _common

sys.path.insert(0, os.path.join(_common.REPO, "tests"))
from kube_fixtures import kubesim_cluster  # noqa: E402

CALLBACKS = os.path.join(_common.REPO, "benchmarks", "callback")
VANILLA = dict(profile="vanilla", time_scale=20, pod_start_delay=0)
OPENSHIFT = dict(profile="openshift", time_scale=20, pod_start_delay=0.1)
KUBEFLOW = dict(profile="vanilla", addons=["kubeflow"], time_scale=20, pod_start_delay=0.1)
KSERVE = dict(profile="openshift", addons=["kserve"], time_scale=20, pod_start_delay=0.1)
FT_SUMMARY = {"train_runtime": 12.5, "train_samples_per_second": 40.0, "train_steps_per_second": 2.5,
              "train_loss": 1.25, "epoch": 1.0}


def _files(tmp):
    content = os.path.join(tmp, "content")
    os.makedirs(content, exist_ok=True)
    for name, text in (("index.html", "<h1>models</h1>\n"), ("data.txt", "x" * 100)):
        with open(os.path.join(content, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    return content


def _namespace(kube, name, pvc=None):
    kube.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": name}})
    if pvc:
        kube.resources.get(api_version="v1", kind="PersistentVolumeClaim").create(namespace=name, body={
            "metadata": {"name": pvc},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}})


def _guidellm_report(sim):
    """guidellm's image prints a real report (tests/fixtures/llm_load) after the marker the role looks for."""
    with open(os.path.join(_common.REPO, "tests", "fixtures", "llm_load", "guidellm_report_v2.json"),
              encoding="utf-8") as handle:
        report = json.load(handle)
    sim.image_behaviours.add("ghcr.io/vllm-project/guidellm:*", log="Benchmarks completed\n%s\n%s" % (
        "--- perfscale.topsail: guidellm report ---", json.dumps(report)), **{"duration-s": "5"})


# (role, sim settings, toolbox command, args(tmp), setup(kube, sim) or None); the arguments of the roles'
# cluster tests (tests/cluster/)
CASES = [
    ("server_deploy_nginx_server", VANILLA, "server deploy_nginx_server",
     lambda tmp: {"namespace": "files", "directory": _files(tmp)}, None),
    ("server_deploy_redis_server", VANILLA, "server deploy_redis_server", lambda tmp: {"namespace": "barrier"}, None),
    ("server_deploy_opensearch", VANILLA, "server deploy_opensearch",
     lambda tmp: {"secret_properties_file": "secret:opensearch.properties", "namespace": "results", "name": "kpis"},
     None),
    ("server_deploy_minio_s3_server", VANILLA, "server deploy_minio_s3_server",
     lambda tmp: {"secret_properties_file": "secret:minio.properties", "namespace": "s3", "bucket_name": "results"},
     None),
    ("server_deploy_ldap", OPENSHIFT, "server deploy_ldap",
     lambda tmp: {"idp_name": "perf-ldap", "username_prefix": "user", "username_count": 3,
                  "secret_properties_file": "secret:ldap.properties", "wait": True, "delay": 1, "timeout": 300},
     None),
    ("storage_deploy_nfs_provisioner", OPENSHIFT, "storage deploy_nfs_provisioner",
     lambda tmp: {"pvc_size": "10Gi", "default_sc": True, "timeout": 60}, None),
    ("storage_download_to_pvc", OPENSHIFT, "storage download_to_pvc",
     lambda tmp: {"name": "granite-3b", "source": "hf://ibm-granite/granite-3.0-3b-a800m-instruct",
                  "pvc_name": "models", "namespace": "models", "creds": "", "pvc_size": "20Gi", "delay": 1,
                  "timeout": 120},
     lambda kube, sim: _namespace(kube, "models")),
    ("fine_tuning_run_fine_tuning_job", KUBEFLOW, "fine_tuning run_fine_tuning_job",
     lambda tmp: {"name": "granite-ft", "namespace": "ft", "pvc_name": "storage", "model_name": "granite-3b",
                  "dataset_name": "alpaca.jsonl", "pod_count": 2, "gpu": 0, "dataset_replication": 4, "delay": 1,
                  "timeout": 120, "hyper_parameters": {"num_train_epochs": 1, "per_device_train_batch_size": 4}},
     lambda kube, sim: (_namespace(kube, "ft", pvc="storage"), sim.image_behaviours.add(
         "quay.io/modh/fms-hf-tuning:*", **{"trainer-summary": json.dumps(FT_SUMMARY), "duration-s": "5"}))),
    ("kserve_deploy_model", KSERVE, "kserve deploy_model",
     lambda tmp: {"namespace": "serving", "model_name": "granite-3b", "sr_name": "vllm-runtime",
                  "sr_kserve_image": "quay.io/modh/vllm:rhoai-2.25", "inference_service_name": "granite",
                  "raw_deployment": True, "gpu_count": 0, "delay": 1, "timeout": 120},
     lambda kube, sim: _namespace(kube, "serving")),
    ("llmd_run_guidellm_benchmark", KSERVE, "llmd run_guidellm_benchmark",
     lambda tmp: {"endpoint_url": "http://openshift-ai-inference.openshift-ingress.gateway.kubesim.example.com/llm/qwen",
                  "guidellm_args": ["--rate-type=synchronous", "--max-requests=20"], "timeout": 120},
     lambda kube, sim: _guidellm_report(sim)),
]
SECRETS = {"opensearch.properties": "admin_password=Op3nS-earch!9b2\n",
           "minio.properties": "user_password=Mini0-S3cret\n",
           "ldap.properties": "user_password=Ld4p-users\nadmin_password=Ld4p-admin\n"}


def export_ref(ref, directory):
    """The tree of ``ref`` in ``directory``, laid out as a checkout (.venv/collections, .venv/bin)."""
    os.makedirs(directory)
    archive = subprocess.run(["git", "archive", ref], cwd=_common.REPO, check=True, stdout=subprocess.PIPE).stdout
    subprocess.run(["tar", "-x", "-C", directory], input=archive, check=True)
    collections = os.path.join(directory, ".venv", "collections", "ansible_collections", "perfscale")
    os.makedirs(collections)
    os.symlink(directory, os.path.join(collections, "topsail"))
    os.symlink(_common.BIN, os.path.join(directory, ".venv", "bin"))
    return directory


def run_role(checkout, command, args, kubeconfig, tmp, secrets):
    """``(wall, cpu, returncode, [task records])`` of one toolbox run of ``checkout``."""
    calls = os.path.join(tmp, "calls.jsonl")
    env = dict(os.environ, KUBECONFIG=kubeconfig, ANSIBLE_CONFIG=os.path.join(checkout, "ansible.cfg"),
               PATH=_common.BIN + os.pathsep + os.environ["PATH"], ANSIBLE_CALLBACK_PLUGINS=CALLBACKS,
               ANSIBLE_CALLBACKS_ENABLED="perfscale.topsail.toolbox_log,perfscale.topsail.kpi_export,module_calls",
               BENCH_MODULE_CALLS=calls, BENCH_COLLECTION_DIR=checkout, PERFSCALE_SECRETS_DIR=secrets,
               XDG_DATA_HOME=os.path.join(tmp, "data"), ANSIBLE_HOME=os.path.join(tmp, "ansible-home"))
    inventory = os.path.join(checkout, "inventories", "local", "hosts.yml")
    argv = [os.path.join(_common.BIN, "ansible-playbook"), "-i", inventory,
            "perfscale.topsail.toolbox", "-e", json.dumps({"command": command, "args": args}),
            "-e", "artifact_dir=%s" % os.path.join(tmp, "run")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=False, timeout=900)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        print(done.stdout[-3000:], file=sys.stderr)
    with open(calls, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    return wall, cpu, done.returncode, records


def counts(records, role):
    by_action = {}
    for record in records:
        if record["processes"]:
            by_action[record["action"]] = by_action.get(record["action"], 0) + record["processes"]
    own = [r for r in records if (r["role"] or "").split(".")[-1] == role]
    return {"module_processes": sum(r["processes"] for r in records),
            "k8s_module_processes": sum(r["k8s_processes"] for r in records),
            "role_k8s_module_processes": sum(r["k8s_processes"] for r in own),
            "by_action": dict(sorted(by_action.items()))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-ref", default="main", help="the git ref measured as 'before' (default: main)")
    parser.add_argument("--only", nargs="*", help="only these roles (the others keep what was recorded for them)")
    options = parser.parse_args()
    cases = [case for case in CASES if not options.only or case[0] in options.only]
    results = {}
    from kubernetes import config as kube_config
    from kubernetes.dynamic import DynamicClient
    with tempfile.TemporaryDirectory(prefix="perfscale-roles-") as tmp:
        before = export_ref(options.before_ref, os.path.join(tmp, "before"))
        before_commit = subprocess.run(["git", "rev-parse", "--short", options.before_ref], cwd=_common.REPO, check=True,
                                       stdout=subprocess.PIPE, text=True).stdout.strip()
        secrets = os.path.join(tmp, "secrets")
        os.makedirs(secrets)
        for name, text in SECRETS.items():
            with open(os.path.join(secrets, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        for role, settings, command, make_args, setup in cases:
            for label, checkout in (("before", before), ("after", _common.REPO)):
                work = tempfile.mkdtemp(prefix="%s-%s-" % (role, label), dir=tmp)
                with kubesim_cluster(**settings) as sim:
                    if setup:
                        setup(DynamicClient(kube_config.new_client_from_config(config_file=sim.kubeconfig)), sim)
                    wall, cpu, code, records = run_role(checkout, command, make_args(work), sim.kubeconfig, work,
                                                        secrets)
                entry = dict(counts(records, role), wall_s=round(wall, 2), cpu_s=round(cpu, 2), returncode=code)
                results.setdefault(role, {"before_ref": before_commit})[label] = entry
                print("%-34s %-6s k8s module processes %3d (role's own %3d), all %3d, wall %6.1f s, cpu %6.1f s%s" % (
                    role, label, entry["k8s_module_processes"], entry["role_k8s_module_processes"],
                    entry["module_processes"], wall, cpu, "" if code == 0 else "  FAILED (%d)" % code),
                    file=sys.stderr)
    if options.only:
        results = dict(_recorded_roles(), **results)
    totals = {label: {key: sum(results[role][label][key] for role in results)
                      for key in ("k8s_module_processes", "module_processes", "wall_s", "cpu_s")}
              for label in ("before", "after")}
    _common.record("role_process_counts", {"roles": results, "totals": totals, "load_average": os.getloadavg()})


def _recorded_roles():
    """The roles of the last recording, each with the ref its 'before' was measured at."""
    path = os.path.join(_common.RESULTS, "role_process_counts.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        recorded = json.load(handle)
    return {role: dict(entry, before_ref=entry.get("before_ref", recorded.get("before_ref")))
            for role, entry in recorded["roles"].items()}


if __name__ == "__main__":
    main()
