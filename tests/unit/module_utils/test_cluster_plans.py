"""Plain-Python planning behind the cluster commands: set_scale's MachineSet rule, fill_workernodes's free
resources, create_htpasswd_adminuser's htpasswd entry, and the one-line state of a DaemonSet."""

import copy

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import htpasswd
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError, ConfigError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import machinesets, node_resources, state


def machineset(name, instance_type, replicas, role="worker"):
    return {"metadata": {"name": name, "namespace": "openshift-machine-api", "uid": "u-" + name, "resourceVersion": "7",
                         "labels": {"machine.openshift.io/cluster-api-cluster": "infra-x"}},
            "spec": {"replicas": replicas,
                     "selector": {"matchLabels": {"machine.openshift.io/cluster-api-machineset": name}},
                     "template": {"metadata": {"labels": {"machine.openshift.io/cluster-api-machineset": name,
                                                          "machine.openshift.io/cluster-api-machine-role": role}},
                                  "spec": {"providerSpec": {"value": {
                                      "instanceType": instance_type, "placement": {"availabilityZone": "us-east-1a"},
                                      "blockDevices": [{"ebs": {"volumeSize": 120, "volumeType": "gp3"}}]}}}}},
            "status": {"replicas": replicas}}


CLUSTER = [machineset("infra-x-master-a", "m6i.xlarge", 3, role="master"), machineset("infra-x-worker-a", "m6i.4xlarge", 2),
           machineset("infra-x-gpu-a", "g5.2xlarge", 1), machineset("infra-x-gpu-b", "g5.2xlarge", 0)]


def test_set_scale_leaves_a_cluster_that_already_has_the_nodes():
    plan = machinesets.plan_scale(CLUSTER, "g5.2xlarge", 1)
    assert plan == {"create": None, "replicas": {}, "machinesets": ["infra-x-gpu-a", "infra-x-gpu-b"], "unchanged": True}


def test_set_scale_scales_the_first_machineset_and_needs_force_for_the_others():
    assert machinesets.plan_scale(CLUSTER, "g5.2xlarge", 4)["replicas"] == {"infra-x-gpu-a": 4}
    busy = copy.deepcopy(CLUSTER)
    busy[3]["spec"]["replicas"] = 2
    with pytest.raises(ClusterError, match="MachineSet.s. infra-x-gpu-b of g5.2xlarge also have replicas: set force"):
        machinesets.plan_scale(busy, "g5.2xlarge", 4)
    assert machinesets.plan_scale(busy, "g5.2xlarge", 4, force=True)["replicas"] == {"infra-x-gpu-b": 0, "infra-x-gpu-a": 4}


def test_set_scale_creates_a_machineset_from_the_first_worker_one():
    plan = machinesets.plan_scale(CLUSTER, "p4d.24xlarge", 2, taint="nvidia.com/gpu=true:NoSchedule", spot=True,
                                  disk_size=500)
    created = plan["create"]
    assert created["metadata"]["name"] == "infra-x-p4d-24xlarge-us-east-1a" == plan["machinesets"][0]
    assert "uid" not in created["metadata"] and "resourceVersion" not in created["metadata"] and "status" not in created
    provider = created["spec"]["template"]["spec"]["providerSpec"]["value"]
    assert (provider["instanceType"], provider["spotMarketOptions"], provider["blockDevices"][0]["ebs"]["volumeSize"]) \
        == ("p4d.24xlarge", {}, 500)
    assert created["spec"]["template"]["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert created["spec"]["selector"]["matchLabels"]["machine.openshift.io/cluster-api-machineset"] == created["metadata"]["name"]
    assert CLUSTER[1]["spec"]["template"]["spec"]["providerSpec"]["value"]["instanceType"] == "m6i.4xlarge"  # base untouched
    named = machinesets.plan_scale(CLUSTER, "p4d.24xlarge", 1, name="perf-gpus", base_machineset="infra-x-gpu-a")
    assert named["create"]["metadata"]["name"] == "perf-gpus"


@pytest.mark.parametrize("kwargs, message", [
    (dict(taint="gpu:Sometimes"), "taint 'gpu:Sometimes': expected key=value:Effect"),
    (dict(base_machineset="nope"), "base_machineset nope: no such MachineSet"),
    (dict(name="infra-x-worker-a"), "MachineSet infra-x-worker-a has instance type m6i.4xlarge, not x1.large"),
    (dict(scale="many"), "scale: expected a number of nodes, got 'many'"),
    (dict(scale=-1), "scale: expected 0 or more nodes, got -1"),
])
def test_set_scale_refuses_bad_input_in_one_line(kwargs, message):
    kwargs = dict({"scale": 1}, **kwargs)
    with pytest.raises(ClusterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        machinesets.plan_scale(CLUSTER, "x1.large", **kwargs)


def test_free_resources_subtract_the_requests_of_unfinished_pods():
    nodes = [{"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "15500m", "memory": "62Gi"}}},
             {"metadata": {"name": "b"}, "status": {"allocatable": {"cpu": "4", "memory": "16Gi"}}}]
    pods = [
        {"spec": {"nodeName": "a", "containers": [{"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
                                                  {"resources": {"limits": {"cpu": "1", "memory": "512Mi"}}}],
                  "initContainers": [{"resources": {"requests": {"cpu": "4"}}}]}, "status": {"phase": "Running"}},
        {"spec": {"nodeName": "a", "containers": [{"resources": {"requests": {"cpu": "8"}}}]}, "status": {"phase": "Succeeded"}},
        {"spec": {"nodeName": "b", "containers": [{"resources": {"requests": {"cpu": "6"}}}]}, "status": {"phase": "Running"}},
        {"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}, "status": {"phase": "Pending"}},
    ]
    free = node_resources.free_resources(nodes, pods)
    # a: the init container's 4 CPUs exceed the containers' 1.5; the Succeeded pod holds nothing
    assert free == [{"node": "a", "cpu_millicores": 11500, "memory_bytes": 62 * 2 ** 30 - 2 ** 30 - 2 ** 29},
                    {"node": "b", "cpu_millicores": 0, "memory_bytes": 16 * 2 ** 30}]
    with pytest.raises(ClusterError, match="quantity '12 cores': expected a Kubernetes quantity"):
        node_resources.parse_quantity("12 cores")


def test_htpasswd_sets_one_user_keeps_the_others_and_a_matching_entry():
    first, changed = htpasswd.set_user("alice:$apr1$x$y\n", "admin", "s3cret")
    assert changed and first.startswith("alice:$apr1$x$y\nadmin:$2y$")
    again, changed = htpasswd.set_user(first, "admin", "s3cret")
    assert (again, changed) == (first, False)
    replaced, changed = htpasswd.set_user(first, "admin", "other")
    assert changed and replaced.count("admin:") == 1 and replaced != first
    for name, password, message in (("a:b", "x", "username 'a:b': expected a name"), ("admin", "", "password of admin is empty")):
        with pytest.raises(ConfigError, match=message):
            htpasswd.set_user("", name, password)


def test_a_daemonset_state_line_counts_its_ready_pods():
    line = state.conditions_line({"kind": "DaemonSet", "metadata": {"name": "preload", "namespace": "default"},
                                  "status": {"desiredNumberScheduled": 3, "numberReady": 1}})
    assert line == "DaemonSet/preload -n default: ready=1/3"


def test_a_catalog_source_state_line_says_its_connection():
    line = state.conditions_line({"kind": "CatalogSource", "metadata": {"name": "c", "namespace": "openshift-marketplace"},
                                  "status": {"connectionState": {"lastObservedState": "TRANSIENT_FAILURE"}}})
    assert line == "CatalogSource/c -n openshift-marketplace: connection=TRANSIENT_FAILURE"


@pytest.mark.parametrize("text,lines,tail", [
    ("step 1\n\nTraceback (most recent call last)\n  ConnectError: refused  \n", 2,
     "Traceback (most recent call last) / ConnectError: refused"),
    ("only\n", 3, "only"),
    ("", 2, ""),
    (None, 2, ""),
    ("a\nb\n", 0, ""),
])
def test_a_log_tail_is_its_last_non_blank_lines_on_one_line(text, lines, tail):
    assert state.log_tail(text, lines) == tail


GPU_BURN = """GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-a)
GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-b)
10.0%  proc'd: 110 (17000 Gflop/s) - 108 (16900 Gflop/s)   errors: 0 - 0   temps: 40 C - 41 C
100.0%  proc'd: 2200 (17523 Gflop/s) - 2150 (16998.5 Gflop/s)   errors: 0 - 3   temps: 61 C - 60 C
Tested 2 GPUs:
\tGPU 0: OK
\tGPU 1: FAULTY
"""


def test_gpu_burn_verdicts_and_the_last_gflops_of_each_gpu():
    from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import gpu_burn
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError

    result = gpu_burn.parse(GPU_BURN)
    assert result["gpus"] == [{"gpu": 0, "status": "OK", "gflops": 17523.0, "errors": 0},
                              {"gpu": 1, "status": "FAULTY", "gflops": 16998.5, "errors": 3}]
    assert (result["tested"], result["ok"], result["total_gflops"]) == (2, False, 34521.5)
    summary = gpu_burn.summarize({"node-b": GPU_BURN.replace("FAULTY", "OK"), "node-a": GPU_BURN})
    assert summary["faulty"] == ["node-a GPU 1"] and summary["gpus_tested"] == 4 and not summary["ok"]
    with pytest.raises(HarnessOutputError, match="gpu-burn log of node-c: no 'Tested N GPUs' line: gpu-burn did not finish"):
        gpu_burn.summarize({"node-c": GPU_BURN.split("Tested", maxsplit=1)[0]})
    with pytest.raises(HarnessOutputError, match="2 GPU.s. tested but 1 verdict"):
        gpu_burn.parse(GPU_BURN.replace("\tGPU 1: FAULTY\n", ""))


def test_a_reference_camelcase_parameter_reaches_its_lower_case_variable():
    from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CommandArgsError

    role = "gpu_operator_deploy_from_operatorhub"
    options = {role + "_installplan": {"type": "str"}, role + "_channel": {"type": "str"}}
    assert command_args.role_variables(role, {"installPlan": "Automatic", "channel": "v1"}, options) == {
        role + "_installplan": "Automatic", role + "_channel": "v1"}
    assert command_args.known_parameters(role, options) == ["channel", "installPlan", "installplan"]
    with pytest.raises(CommandArgsError, match="role %s has no parameter 'installplans'" % role):
        command_args.role_variables(role, {"installplans": "x"}, options)


def test_dotted_settings_set_nested_values_and_name_a_key_through_a_value():
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import dotted

    dsc = {"spec": {"components": {"kserve": {"managementState": "Managed", "serving": {"managementState": "Managed"}}}}}
    updated = dotted.apply(dsc, {"spec.components.kserve.serving.managementState": "Removed",
                                 "spec.components.kserve.defaultDeploymentMode": "RawDeployment",
                                 "spec.components.kueue.managementState": "Managed"})
    assert updated["spec"]["components"]["kserve"] == {"managementState": "Managed", "defaultDeploymentMode": "RawDeployment",
                                                       "serving": {"managementState": "Removed"}}
    assert updated["spec"]["components"]["kueue"] == {"managementState": "Managed"}
    assert dsc["spec"]["components"]["kserve"]["serving"]["managementState"] == "Managed"   # a copy
    with pytest.raises(ConfigError, match="key 'spec.components.kserve.managementState.x': "
                                          "spec.components.kserve.managementState is a str, not a mapping"):
        dotted.apply(dsc, {"spec.components.kserve.managementState.x": 1})
    with pytest.raises(ConfigError, match="key 'spec..x': expected dotted names"):
        dotted.apply(dsc, {"spec..x": 1})


def test_the_trainer_summary_and_loss_records_of_a_trainer_log():
    from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import trainer_log
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError

    log = "\n".join(["***** Running training *****", "  Num examples = 1,000",
                     "{'loss': 1.9, 'grad_norm': 1.2, 'learning_rate': 1.6e-05, 'epoch': 0.33}",
                     "{'loss': 1.4, 'grad_norm': 0.9, 'learning_rate': 8e-06, 'epoch': 0.67}",
                     "100%|##########| 63/63 [02:03<00:00,  1.96s/it]",
                     "{'train_runtime': 123.4, 'train_samples_per_second': 8.1, 'train_steps_per_second': 0.51, "
                     "'train_loss': 1.62, 'epoch': 1.0}"])
    parsed = trainer_log.parse(log)
    assert parsed["summary"] == {"train_runtime": 123.4, "train_samples_per_second": 8.1, "train_steps_per_second": 0.51,
                                 "train_loss": 1.62, "epoch": 1.0}
    assert [r["loss"] for r in parsed["losses"]] == [1.9, 1.4] and parsed["final_loss"] == 1.4
    with pytest.raises(HarnessOutputError, match="master log: no summary record .* the training did not finish"):
        trainer_log.parse(log.rsplit("\n", 1)[0], "master log")


def test_a_guidellm_job_log_gives_its_report_and_the_llmd_reports():
    import json
    import os

    from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import guidellm_job
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError

    fixture = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "llm_load", "guidellm_report_v2.json")
    with open(fixture, encoding="utf-8") as handle:
        document = json.load(handle)
    log = "Benchmarks completed\n%s\n%s\n" % (guidellm_job.MARKER, json.dumps(document))
    result = guidellm_job.llmd_reports(log)
    assert result["guidellm"] == document and len(result["llmd"]) == len(document["benchmarks"])
    with pytest.raises(HarnessOutputError, match="no report after .* guidellm did not finish"):
        guidellm_job.llmd_reports("Traceback: connection refused\n")
    with pytest.raises(HarnessOutputError, match="expected a guidellm report"):
        guidellm_job.llmd_reports("%s\n{\"benchmarks\": 3}\n" % guidellm_job.MARKER)
