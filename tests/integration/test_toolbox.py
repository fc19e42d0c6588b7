import json
import os

import yaml

from helpers import grep_tree, run_playbook, tree

ENV_FILES = {"cpu.json", "memory.json", "os.json", "python.json", "packages.json", "gpus.json", "threads.json",
             "collection.json", "environment.json", "_params.yaml", "_ansible.log"}


def test_benchmark_playbook_captures_the_environment(tmp_path):
    # the capture alone: the demo's matrix and reports are test_benchmark_playbook.py's
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % tmp_path,
                       "-e", 'overrides={"tests.benchmark.enabled": false}')
    assert run.returncode == 0, run.output
    capture = tmp_path / "000__host__capture_environment"
    assert set(os.listdir(capture)) == ENV_FILES
    cpu = json.loads((capture / "cpu.json").read_text())
    assert cpu["count"] == os.cpu_count()
    params = yaml.safe_load((capture / "_params.yaml").read_text())
    assert params["gpu"] is False  # from the cpu_smoke preset, through command_args.yml.j2
    collection = json.loads((capture / "collection.json").read_text())
    assert collection["name"] == "perfscale.topsail" and collection["version"]
    log = (capture / "_ansible.log").read_text()
    assert "Probe CPU, memory, OS, Python, packages and GPUs" in log
    assert "Resolve the configuration" not in log  # the run-level task is in the run root's log
    assert "Resolve the configuration" in (tmp_path / "_ansible.log").read_text()
    assert "Artifacts: %s" % tmp_path in run.flat


def test_from_config_prefix_suffix_extra_and_named_steps(tmp_path):
    run = run_playbook("tests/integration/playbooks/toolbox.yml", "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode == 0, run.output
    listed = sorted(n for n in os.listdir(tmp_path) if n not in (".perfscale-run.lock", "run.json"))
    assert listed == ["000__prepare_step", "001__host__capture_environment", "_ansible.log", "config.yaml",
                      "presets_applied"]
    step = tmp_path / "000__prepare_step"
    assert sorted(d for d in os.listdir(step) if os.path.isdir(step / d)) == [
        "000__host__capture_environment_second", "001__host__capture_environment"]
    second = yaml.safe_load((step / "000__host__capture_environment_second" / "_params.yaml").read_text())
    assert second == {"gpu": False, "nvidia_smi_timeout": 7, "packages": ["pytest"], "artifact_dir_suffix": "second"}
    sutest = yaml.safe_load((step / "001__host__capture_environment" / "_params.yaml").read_text())
    assert sutest["nvidia_smi_timeout"] == 3 and sutest["artifact_dir_suffix"] == ""
    # a later direct call is not affected by the parameters passed from config
    direct = yaml.safe_load((tmp_path / "001__host__capture_environment" / "_params.yaml").read_text())
    assert direct["nvidia_smi_timeout"] == 30 and direct["packages"] is None  # None: the default list
    assert "Open a named orchestration step" in (step / "_ansible.log").read_text()


def test_from_config_unknown_entry_lists_known_entries(tmp_path):
    run = run_playbook("tests/integration/playbooks/from_config_error.yml", "-e", "entry_prefix=driver",
                       "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode != 0
    assert "no entry 'driver/host capture_environment'" in run.flat
    assert "known entries: host capture_environment, host capture_environment/second" in run.flat
    assert not any(name.startswith("000__") for name in os.listdir(tmp_path))


def test_from_config_placeholder_left_is_an_error(tmp_path):
    run = run_playbook("tests/integration/playbooks/from_config_error.yml", "-e", "entry_prefix=sutest",
                       "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode != 0
    assert "parameter(s) nvidia_smi_timeout still set to SET_AT_RUNTIME" in run.flat


def test_from_config_unknown_parameter_lists_role_parameters(tmp_path):
    run = run_playbook("tests/integration/playbooks/from_config_error.yml", "-e", "entry_suffix=typo",
                       "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode != 0
    assert ("toolbox command 'host capture_environment': unknown parameter 'colour'; its parameters: "
            "artifact_dir_suffix, gpu") in run.flat


def test_failed_command_keeps_its_artifacts_and_records_failure(tmp_path):
    secret = "hunter2-very-secret"
    run = run_playbook("tests/integration/playbooks/failing_command.yml", "-e", "artifact_dir=%s" % tmp_path,
                       "-e", "test_failing_command_password=%s" % secret)
    assert run.returncode != 0
    command_dir = tmp_path / "000__test__failing_command"
    assert (command_dir / "partial.txt").read_text() == "written before the failure\n"
    assert (command_dir / "FAILURE").read_text() == "Fail like a broken step does: boom\n"
    # the command's on_failure tasks ran before FAILURE was written, in its directory
    assert (command_dir / "captured_state.txt").read_text() == "state captured after Fail like a broken step does\n"
    params = yaml.safe_load((command_dir / "_params.yaml").read_text())
    assert params == {"password": "********", "label": "demo"}
    log = (command_dir / "_ansible.log").read_text()
    assert "| FAILED | test_failing_command : Fail like a broken step does" in log
    assert grep_tree(str(tmp_path), secret) == []
    assert secret not in run.output


def test_secret_is_read_at_use_time_and_never_written(tmp_path):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    secret = "tok-1234567890-abcdef"
    (secrets / "api.token").write_text(secret + "\n")
    playbook = tmp_path / "use_secret.yml"
    playbook.write_text("""
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Resolve the configuration
      perfscale.topsail.resolve_config:
    - name: Use the secret
      ansible.builtin.set_fact:
        token_length: "{{ lookup('perfscale.topsail.secret', 'api.token') | length }}"
      no_log: true
    - name: Use it in a command
      ansible.builtin.command:
        argv: [/bin/echo, "{{ lookup('perfscale.topsail.secret', 'secret:api.token') }}"]
      changed_when: false
      no_log: true
    - name: Show that it was read
      ansible.builtin.debug:
        msg: "token of {{ token_length }} characters"
""")
    artifacts = tmp_path / "artifacts"
    run = run_playbook(str(playbook), "-e", "artifact_dir=%s" % artifacts, "-v",
                       env={"PERFSCALE_SECRETS_DIR": str(secrets)})
    assert run.returncode == 0, run.output
    assert "token of %d characters" % len(secret) in run.flat
    assert secret not in run.output
    assert tree(str(artifacts))  # the run wrote its artifacts...
    assert grep_tree(str(artifacts), secret) == []  # ...without the secret


def test_missing_secrets_directory_is_a_clear_error(tmp_path):
    playbook = tmp_path / "p.yml"
    playbook.write_text("""
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Resolve the configuration
      perfscale.topsail.resolve_config:
    - name: Use the secret
      ansible.builtin.debug:
        msg: "{{ lookup('perfscale.topsail.secret', 'api.token') }}"
""")
    run = run_playbook(str(playbook), "-e", "artifact_dir=%s" % tmp_path, env={"PERFSCALE_SECRETS_DIR": ""})
    assert run.returncode != 0
    assert "environment variable PERFSCALE_SECRETS_DIR is not set" in run.flat


# --------------------------------------------------------------------------
# the toolbox playbook, as a user of the reference's run_toolbox.py types it


def toolbox(tmp_path, *extra):
    return run_playbook("playbooks/toolbox.yml", "-e", "artifact_dir=%s" % tmp_path, *extra)


def error_lines(run):
    return [line for line in run.output.splitlines() if line.startswith("[ERROR]")]


def test_parameters_typed_as_extra_vars_are_taken_and_the_run_says_where_its_artifacts_are(tmp_path):
    run = toolbox(tmp_path, "-e", "command='host capture_environment'", "-e", "gpu=false",
                  "-e", "nvidia_smi_timeout=7", "-e", "packages=[pytest, pyyaml]")
    assert run.returncode == 0, run.output
    command_dir = tmp_path / "000__host__capture_environment"
    params = yaml.safe_load((command_dir / "_params.yaml").read_text())
    assert params["gpu"] is False and params["nvidia_smi_timeout"] == 7 and params["packages"] == ["pytest", "pyyaml"]
    assert "Artifacts of host capture_environment: %s" % command_dir in run.flat
    # the documented mapping form runs without a warning (-e args= is the older spelling Ansible warns about)
    again = toolbox(tmp_path, "-e", "command='host capture_environment'", "-e", 'params={"gpu": false}')
    assert again.returncode == 0, again.output
    assert "[WARNING]" not in again.output, again.output


def test_a_wrong_parameter_is_one_line_naming_it_and_leaves_no_artifact_directory(tmp_path):
    cases = [
        (("-e", 'params={"nvidia_smi_timout": 3}'),
         "toolbox command 'host capture_environment': unknown parameter 'nvidia_smi_timout' (did you mean "
         "'nvidia_smi_timeout'?)"),
        (("-e", "nvidia_smi_timout=3"), "toolbox command 'host capture_environment': -e nvidia_smi_timout=...: "
                                        "unknown parameter 'nvidia_smi_timout' (did you mean 'nvidia_smi_timeout'?)"),
        (("-e", "nvidia_smi_timeout=soon"), "toolbox command 'host capture_environment': parameter "
                                            "'nvidia_smi_timeout': expected int, got 'soon'"),
        (("-e", "gpu=maybe"), "toolbox command 'host capture_environment': parameter 'gpu': expected bool, got 'maybe'"),
    ]
    for extra, line in cases:
        run = toolbox(tmp_path / "run", "-e", "command='host capture_environment'", *extra)
        assert run.returncode != 0
        assert line in run.flat, run.output
        # one line, in the command's words: no role variable, no code excerpt
        assert len(error_lines(run)) == 1, run.output
        assert "host_capture_environment_" not in run.output and "toolbox_from_config" not in run.output
    # a misspelt command too: one line, and nothing written
    run = toolbox(tmp_path / "run", "-e", "command='host capture_enviroment'")
    assert run.returncode != 0 and "did you mean 'host capture_environment'" in run.flat
    assert not (tmp_path / "run").exists()


def test_a_required_parameter_missing_is_named_before_anything_runs(tmp_path):
    run = toolbox(tmp_path / "run", "-e", "command='cluster deploy_operator'", "-e", "catalog=redhat-operators")
    assert run.returncode != 0
    assert ("toolbox command 'cluster deploy_operator': missing required parameter(s) manifest_name, namespace"
            in run.flat), run.output
    assert not (tmp_path / "run").exists()


def test_an_unreachable_cluster_is_one_line_naming_it_before_any_work(tmp_path):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "kubeconfig"
    config.write_text("apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster:\n    server: https://127.0.0.1:%d\n"
                      "contexts:\n- name: gone\n  context: {cluster: gone, user: u}\ncurrent-context: gone\n"
                      "users:\n- name: u\n  user: {token: t}\n" % port)
    run = run_playbook("playbooks/toolbox.yml", "-i", "inventories/clusters/hosts.yml", "-e", "artifact_dir=%s" % (tmp_path / "run"),
                       "-e", "command='cluster capture_state'", env={"KUBECONFIG": str(config)})
    assert run.returncode != 0
    # the clusters inventory takes KUBECONFIG when SUTEST_KUBECONFIG is not set
    assert ("cluster sutest (https://127.0.0.1:%d, from KUBECONFIG=%s, context gone) is unreachable: connection refused"
            % (port, config)) in run.flat, run.output
    assert len(error_lines(run)) == 1 and "urllib3" not in run.output
    assert not (tmp_path / "run").exists()
    # a flow checks its cluster first too
    flow = run_playbook("playbooks/cluster_demo.yml", "-e", "artifact_dir=%s" % (tmp_path / "flow"),
                        env={"KUBECONFIG": str(config)})
    assert flow.returncode != 0 and "cluster sutest (https://127.0.0.1:%d" % port in flow.flat, flow.output
    assert len(error_lines(flow)) == 1 and not (tmp_path / "flow").exists()
    # and a matrix whose points run as Jobs on the driver cluster, before any point runs
    overrides = json.dumps({"overrides": {"tests.benchmark.executor": "kubernetes"}})
    matrix = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", overrides,
                          "-e", "artifact_dir=%s" % (tmp_path / "matrix"), env={"KUBECONFIG": str(config)})
    assert matrix.returncode != 0 and "cluster driver (https://127.0.0.1:%d" % port in matrix.flat, matrix.output
    assert len(error_lines(matrix)) == 1
    assert not list((tmp_path / "matrix").glob("*__matbenchmarking"))


def test_the_command_list_is_one_line_per_command_and_a_group_lists_its_own(tmp_path):
    listing = toolbox(tmp_path / "list", "-e", "command=list")
    assert listing.returncode == 0, listing.output
    lines = listing.output.splitlines()
    # one line each, never wrapped by the result format
    assert any(line.startswith("cluster apply_manifests ") and line.endswith("and wait for Kubernetes manifests")
               for line in lines), listing.output
    assert any(line.startswith("busy_cluster ") and "not provided (6 commands)" in line for line in lines)
    group = toolbox(tmp_path / "group", "-e", "command=nfd")
    assert group.returncode == 0, group.output
    assert [line.split()[:2] for line in group.output.splitlines() if line.startswith("nfd ")] == [
        ["nfd", "has_gpu_nodes"], ["nfd", "has_labels"], ["nfd", "wait_gpu_nodes"], ["nfd", "wait_labels"]]
    assert not (tmp_path / "list").exists() and not (tmp_path / "group").exists()
