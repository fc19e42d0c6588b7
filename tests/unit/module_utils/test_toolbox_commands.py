"""The toolbox's command table: roles, aliases and what is not provided."""

import os

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import commands as toolbox
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CommandArgsError

ROLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "roles")


def test_a_command_is_either_provided_or_said_not_to_be():
    provided = set(toolbox.commands(ROLES))
    assert {"cluster deploy_operator", "llm_load run", "llm_load_test run"} <= provided
    assert provided & set(toolbox.NOT_PROVIDED) == set()


def test_unprovided_commands_and_aliases_to_them_fail_in_one_line_with_the_reason():
    with pytest.raises(CommandArgsError, match="toolbox command 'rhods deploy_addon' is not provided: .*cloud account"):
        toolbox.resolve(ROLES, "rhods deploy_addon")
    # an alias is followed, then the target is checked like any name
    assert toolbox.resolve(ROLES, "cluster   download_to_pvc") == "storage download_to_pvc"
    with pytest.raises(CommandArgsError, match="'kserve extract_protos' is not provided: gRPC protos"):
        toolbox.resolve(ROLES, "kserve extract_protos")
    assert toolbox.resolve(ROLES, "pipelines run_kfp_notebook") == "pipelines run_kfp_notebook"
    assert toolbox.resolve(ROLES, "fine_tuning ray_fine_tuning_job") == "fine_tuning ray_fine_tuning_job"
    with pytest.raises(CommandArgsError, match=r"unknown toolbox command 'cluster deploy_operatr' \(did you mean 'cluster deploy_operator'\?\)"):
        toolbox.resolve(ROLES, "cluster deploy_operatr")
    assert toolbox.resolve(ROLES, "llm_load_test run") == "llm_load_test run"


# every group and command of the reference toolbox (openshift-psap/topsail cfc3e8a2d), as its
# projects/*/toolbox/*.py declare them, besides the groups in toolbox.NOT_PROVIDED_GROUPS
REFERENCE = {
    "cluster": "set_scale upgrade_to_image capture_environment deploy_operator reset_prometheus_db dump_prometheus_db "
               "query_prometheus_db destroy_ocp create_osd destroy_osd preload_image create_htpasswd_adminuser "
               "set_project_annotation fill_workernodes update_pods_per_node build_push_image wait_fully_awake "
               "enable_userworkload_monitoring capture_servicemonitor_metrics",
    "gpu_operator": "deploy_cluster_policy deploy_from_bundle deploy_from_operatorhub run_gpu_burn "
                    "undeploy_from_operatorhub wait_deployment capture_deployment_state get_csv_version "
                    "wait_stack_deployed enable_time_sharing extend_metrics",
    "nfd": "has_gpu_nodes has_labels wait_gpu_nodes wait_labels",
    "nfd_operator": "deploy_from_operatorhub undeploy_from_operatorhub",
    "rhods": "deploy_ods wait_ods wait_odh deploy_addon delete_ods undeploy_ods reset_prometheus_db dump_prometheus_db "
             "update_datasciencecluster capture_state",
    "kserve": "deploy_model undeploy_model validate_model capture_state capture_operators_state extract_protos "
              "extract_protos_grpcurl",
    "llmd": "deploy_gateway deploy_llm_inference_service run_guidellm_benchmark capture_isvc_state",
    "fine_tuning": "run_fine_tuning_job ray_fine_tuning_job",
    "storage": "deploy_aws_efs deploy_nfs_provisioner download_to_pvc download_to_image",
    "llm_load_test": "run",
    "local_ci": "run run_multi",
    "server": "deploy_opensearch deploy_nginx_server deploy_redis_server deploy_ldap undeploy_ldap deploy_minio_s3_server",
    "pipelines": "deploy_application run_kfp_notebook capture_state capture_notebooks_state",
}


def test_every_group_and_command_of_the_reference_is_provided_or_not_provided_with_a_reason():
    names = ["%s %s" % (group, command) for group, commands in REFERENCE.items() for command in commands.split()]
    names += ["%s %s" % (group, command) for group, (_why, commands) in toolbox.NOT_PROVIDED_GROUPS.items()
              for command in commands]
    assert set(REFERENCE) & set(toolbox.NOT_PROVIDED_GROUPS) == set()
    for name in names:
        try:
            toolbox.resolve(ROLES, name)
        except CommandArgsError as exc:
            assert "is not provided: " in str(exc), str(exc)
    for group in toolbox.NOT_PROVIDED_GROUPS:
        with pytest.raises(CommandArgsError, match="toolbox group '%s' is not provided: " % group):
            toolbox.resolve(ROLES, group)


def test_a_group_lists_its_commands_and_a_typo_is_matched_within_its_group():
    lines = toolbox.listing(ROLES, group="nfd")
    assert [" ".join(line.split()[:2]) for line in lines] == [
        "nfd has_gpu_nodes", "nfd has_labels", "nfd wait_gpu_nodes", "nfd wait_labels"]
    everything = toolbox.listing(ROLES)
    assert any(line.startswith("busy_cluster ") and "not provided (6 commands)" in line for line in everything)
    with pytest.raises(CommandArgsError, match=r"unknown toolbox command 'clustr' \(did you mean 'cluster'\?\)"):
        toolbox.resolve(ROLES, "clustr")
    with pytest.raises(CommandArgsError, match=r"'busy_cluster create_namespace' is not provided: a deprecated"):
        toolbox.resolve(ROLES, "busy_cluster create_namespace")


def test_which_commands_reach_a_cluster():
    assert toolbox.needs_cluster("cluster capture_state", {})
    assert not toolbox.needs_cluster("host capture_environment", {})
    assert toolbox.needs_cluster("llm_load run", {}) and not toolbox.needs_cluster("llm_load run", {"url": "http://x"})
    assert not toolbox.needs_cluster("cluster reset_prometheus_db", {"prometheus_url": "http://prom:9090"})
    assert toolbox.needs_cluster("cluster reset_prometheus_db", {})
    # the configuration may supply the parameter that makes it local: not asked for then
    assert not toolbox.needs_cluster("cluster query_prometheus_db", {}, from_config=True)
