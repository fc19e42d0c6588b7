"""How many cluster module calls a role's tasks make (each a Python process loading the kubernetes client):
the roles that apply, read or wait on several objects in one call stay at their count, and no Secret is
applied with ``apply: true`` (kubernetes.core would copy its data into the last-applied annotation).

benchmarks/role_process_counts.py measures the same roles on kubesim; docs/development.md says why."""

import glob
import os

import pytest
import yaml
from test_task_names_and_summaries import tasks_of

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CLUSTER_ACTIONS = ("kubernetes.core.", "perfscale.topsail.k8s")

# role -> the cluster module tasks of its tasks/steps.yml; a task with a loop is a call per item at run
# time: only the loops of LOOPS. Pods' logs are read with the pods, by k8s_read (``logs: true``), in one
# call: kubernetes.core.k8s_log reads one pod a call
BUDGET = {
    "server_deploy_nginx_server": 2,         # apply (namespace, ConfigMap, Deployment, Service), wait
    "server_deploy_redis_server": 2,         # apply (namespace, Deployment, Service), wait
    "server_deploy_opensearch": 3,           # namespace + Secret, apply, wait
    "server_deploy_minio_s3_server": 6,      # namespace + Secret, apply, wait, delete the bucket Job, apply, wait
    "server_deploy_ldap": 7,                 # OAuth, namespace + Secrets, apply, wait, OAuth patch, 2 operator waits
    "storage_deploy_nfs_provisioner": 5,     # classes, apply, defaults patched, PVC + provisioner waits, classes
    "storage_download_to_pvc": 6,            # namespace + PVC, Secret, delete, apply, wait, pods + logs + PVC
    "fine_tuning_run_fine_tuning_job": 5,    # namespace + PVC, delete, apply, wait (with the pods), pods + logs
    "fine_tuning_ray_fine_tuning_job": 6,    # namespace + PVC, delete others, delete, apply, wait, pods + logs
    "gpu_operator_run_gpu_burn": 6,          # nodes, delete, apply, wait, pods + logs, delete
    "pipelines_run_kfp_notebook": 4,         # DSPAs, DSPA wait, workflows wait, workflows + pods + logs
    "kserve_deploy_model": 4,                # namespace + Knative + KServe config + InferenceServices, delete, apply, wait
    "llmd_deploy_inference_pool": 3,         # namespace, apply, picker + pool waits
    "llmd_run_guidellm_benchmark": 4,        # delete, apply, wait (with the pods), log
    "rhods_wait_ods/wait_platform": 2,       # DataScienceCluster, DSCInitialization + DataScienceCluster + Deployments waits
    "cluster_undeploy_operator": 4,          # Subscription + CSVs, delete the Subscription, the CSVs, the namespace
}

# the other RayJobs and RayClusters: one delete per kind; the CSVs an operator leaves
LOOPS = {("fine_tuning_ray_fine_tuning_job", "Delete the other Ray jobs and clusters of the namespace"),
         # the package's CSVs, each deleted and waited for (one, but for an upgrade left half-way)
         ("cluster_undeploy_operator", "Delete the CSVs (the operator's Deployments go with them)")}


def cluster_tasks(role):
    """The cluster module tasks of ``role`` (its tasks/steps.yml), or of ``role/file`` (its tasks/file.yml)."""
    role, _slash, tasks_file = role.partition("/")
    with open(os.path.join(REPO, "roles", role, "tasks", (tasks_file or "steps") + ".yml"), encoding="utf-8") as handle:
        tasks = list(tasks_of(yaml.safe_load(handle)))
    return [(task.get("name"), action, task) for task in tasks for action in task
            if isinstance(action, str) and action.startswith(CLUSTER_ACTIONS)]


@pytest.mark.parametrize("role", sorted(BUDGET))
def test_a_role_makes_no_more_cluster_module_calls_than_its_budget(role):
    found = cluster_tasks(role)
    looped = [name for name, _action, task in found
              if ("loop" in task or "with_items" in task) and (role, name) not in LOOPS]
    assert not looped, "%s: a cluster module call per loop item: %s" % (role, looped)
    assert len(found) <= BUDGET[role], "%s: %d cluster module calls, expected at most %d: %s" % (
        role, len(found), BUDGET[role], [name for name, _action, _task in found])


def test_no_role_applies_a_secret():
    offenders = []
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml"))):
        with open(path, encoding="utf-8") as handle:
            for task in tasks_of(yaml.safe_load(handle)):
                args = task.get("perfscale.topsail.k8s", task.get("kubernetes.core.k8s"))
                if not isinstance(args, dict) or not args.get("apply"):
                    continue
                definitions = args.get("definition")
                definitions = definitions if isinstance(definitions, list) else [definitions]
                kinds = [d.get("kind") for d in definitions if isinstance(d, dict)]
                if "Secret" in kinds or "kind: Secret" in str(args.get("definition")) or "'Secret'" in str(definitions):
                    offenders.append("%s: %s" % (os.path.relpath(path, REPO), task.get("name")))
    assert not offenders, offenders


def test_no_role_runs_a_module_process_where_the_worker_does_the_same():
    """kubernetes.core's modules (k8s, k8s_info, k8s_log) are each a process importing the kubernetes client at
    every call (each item of a loop too); perfscale.topsail.k8s (kubernetes.core.k8s's own code) and k8s_read
    (reads, and pods' logs with ``logs: true``) do the same work in the controller's worker, k8s_read several
    reads in one call (docs/toolbox.md, "A role that touches a cluster")."""
    offenders = []
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml"))):
        with open(path, encoding="utf-8") as handle:
            offenders.extend("%s: %s (%s)" % (os.path.relpath(path, REPO), task.get("name"), action)
                             for task in tasks_of(yaml.safe_load(handle))
                             for action in task
                             if isinstance(action, str) and (action.startswith("kubernetes.core.")
                                                             or action in ("k8s", "k8s_info", "k8s_log")))
    assert not offenders, offenders
