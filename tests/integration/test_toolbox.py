import json
import os

import yaml

from helpers import grep_tree, run_playbook, tree

ENV_FILES = {"cpu.json", "memory.json", "os.json", "python.json", "packages.json", "gpus.json", "threads.json",
             "collection.json", "environment.json", "_params.yaml", "_ansible.log"}


def test_benchmark_playbook_captures_the_environment(tmp_path):
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % tmp_path)
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
    assert "unknown parameter(s) colour for role host_capture_environment; known parameters: artifact_dir_suffix, gpu" in run.flat


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
