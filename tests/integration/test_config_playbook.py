import json
import os

import yaml

from helpers import REPO, run_playbook

CYCLE = os.path.join(REPO, "tests", "fixtures", "configs", "cycle.yaml")
MALFORMED = os.path.join(REPO, "tests", "fixtures", "configs", "malformed.txt")


def record_config(*args, **kwargs):
    """A run that records its configuration and runs nothing: benchmark.yml with the rehearsal
    preset after the presets given (playbooks/config.yml only prints)."""
    args = list(args)
    for position, arg in enumerate(args):
        if arg.startswith("preset="):
            args[position] = arg + ",rehearsal"
            break
    else:
        args += ["-e", "preset=rehearsal"]
    return run_playbook("playbooks/benchmark.yml", *args, **kwargs)


def error_lines(output):
    return [line for line in output.splitlines() if "msg:" in line or "[ERROR]" in line]


def test_config_playbook_prints_without_creating_a_run_directory(tmp_path):
    run = run_playbook("playbooks/config.yml", "-e", "preset=cpu_smoke", cwd=str(tmp_path))
    assert run.returncode == 0, run.output
    assert "presets applied: cpu_smoke" in run.flat and "capture_environment:" in run.output
    assert "changed=0" in run.flat and "failed=0" in run.flat
    assert os.listdir(tmp_path) == []


def test_a_run_records_the_effective_configuration(tmp_path):
    run = record_config("-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode == 0, run.output
    written = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert written["tests"]["capture_environment"]["gpu"] is False
    assert "ci_presets" not in written
    assert (tmp_path / "presets_applied").read_text() == "cpu_smoke\nrehearsal\n"
    assert "Resolve the configuration" in (tmp_path / "_ansible.log").read_text()
    assert len(json.loads((tmp_path / "run.json").read_text())["run_id"]) == 32


def test_overrides_inline_and_from_file(tmp_path):
    overrides_file = tmp_path / "o.yaml"
    overrides_file.write_text("tests.capture_environment.nvidia_smi_timeout: 5\n")
    run = record_config("-e", "preset=cpu_smoke",
                        "-e", '{"overrides": {"tests.capture_environment.packages": ["numpy"]}}',
                        "-e", "overrides_file=%s" % overrides_file, "-e", "artifact_dir=%s" % (tmp_path / "run"))
    assert run.returncode == 0, run.output
    written = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert written["tests"]["capture_environment"]["packages"] == ["numpy"]
    assert written["tests"]["capture_environment"]["nvidia_smi_timeout"] == 5
    assert yaml.safe_load((tmp_path / "run" / "config_overrides.yaml").read_text()) == {
        "tests.capture_environment.nvidia_smi_timeout": 5, "tests.capture_environment.packages": ["numpy"]}


def test_overrides_as_a_json_string_on_the_command_line(tmp_path):
    run = record_config("-e", 'overrides={"tests.capture_environment.gpu": true}', "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode == 0, run.output
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["tests"]["capture_environment"]["gpu"] is True


def _assert_fails_cleanly(run, artifact_dir, expected):
    assert run.returncode != 0
    matching = [line for line in run.output.splitlines() if expected in line]
    assert matching, run.output
    assert not os.path.exists(artifact_dir), "nothing may be written when the configuration is wrong"


def test_preset_cycle_fails_with_the_chain_in_one_line(tmp_path):
    run = run_playbook("playbooks/config.yml", "-e", "config_file=%s" % CYCLE, "-e", "preset=a",
                       "-e", "artifact_dir=%s" % (tmp_path / "run"))
    _assert_fails_cleanly(run, tmp_path / "run", "preset cycle in 'extends': a -> b -> c -> a")


def test_unknown_preset_lists_known_presets(tmp_path):
    run = run_playbook("playbooks/config.yml", "-e", "preset=cpu_smok", "-e", "artifact_dir=%s" % (tmp_path / "run"))
    _assert_fails_cleanly(run, tmp_path / "run", "unknown preset 'cpu_smok' (did you mean 'cpu_smoke'?); known presets:")


def test_override_of_a_missing_key_names_it_and_close_matches(tmp_path):
    run = run_playbook("playbooks/config.yml", "-e", 'overrides={"tests.capture_environment.gpus": true}',
                       "-e", "artifact_dir=%s" % (tmp_path / "run"))
    _assert_fails_cleanly(run, tmp_path / "run", "key 'tests.capture_environment.gpus' does not exist")
    assert "closest existing keys: tests.capture_environment.gpu" in run.flat


def test_malformed_document_names_file_and_line(tmp_path):
    run = run_playbook("playbooks/config.yml", "-e", "config_file=%s" % MALFORMED,
                       "-e", "artifact_dir=%s" % (tmp_path / "run"))
    _assert_fails_cleanly(run, tmp_path / "run", "config file %s: line" % MALFORMED)


def test_artifact_dir_from_environment(tmp_path):
    run = record_config(env={"ARTIFACT_DIR": str(tmp_path / "from_env")})
    assert run.returncode == 0, run.output
    assert (tmp_path / "from_env" / "config.yaml").exists()


def test_default_artifact_dir_is_timestamped_under_cwd(tmp_path):
    run = record_config(cwd=str(tmp_path))
    assert run.returncode == 0, run.output
    runs = os.listdir(tmp_path / "artifacts")
    assert len(runs) == 1 and len(runs[0]) == len("20261122-101500")
    assert (tmp_path / "artifacts" / runs[0] / "config.yaml").exists()


def lab_inventory(tmp_path, group_vars, host_vars=None):
    """An inventory where localhost is in group 'lab', with group_vars (and host_vars)."""
    inventory = tmp_path / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    (inventory / "hosts.yml").write_text(yaml.safe_dump({"lab": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}}}}))
    (inventory / "group_vars" / "lab.yml").write_text(yaml.safe_dump(group_vars))
    if host_vars:
        (inventory / "host_vars").mkdir()
        (inventory / "host_vars" / "localhost.yml").write_text(yaml.safe_dump(host_vars))
    return str(inventory / "hosts.yml")


def test_presets_and_overrides_from_the_inventory_then_the_command_line(tmp_path):
    inventory = lab_inventory(
        tmp_path,
        {"perfscale_presets": ["no_capture"],
         "perfscale_overrides": {"tests.benchmark.timeout_s": 77, "tests.capture_environment.nvidia_smi_timeout": 9}},
        {"perfscale_overrides": {"tests.benchmark.timeout_s": 88, "tests.benchmark.stop_on_error": True}})
    root = tmp_path / "run"
    run = record_config("-i", inventory, "-e", "preset=cpu_smoke",
                        "-e", '{"overrides": {"tests.benchmark.stop_on_error": false}}', "-e", "artifact_dir=%s" % root)
    assert run.returncode == 0, run.output
    written = yaml.safe_load((root / "config.yaml").read_text())
    # group_vars' presets, then host_vars' overrides (they replace group_vars' as Ansible variables do)
    assert written["tests"]["capture_environment"]["enabled"] is False
    assert written["tests"]["benchmark"]["timeout_s"] == 88
    assert written["tests"]["capture_environment"]["nvidia_smi_timeout"] == 30
    # -e preset and -e overrides win
    assert written["tests"]["benchmark"]["stop_on_error"] is False
    assert written["tests"]["benchmark"]["name_template"] == "{indicator}_{dtype}_{size}"
    assert (root / "presets_applied").read_text() == "no_capture\ncpu_smoke\nrehearsal\n"
    assert yaml.safe_load((root / "config_inventory.yaml").read_text()) == {
        "perfscale_presets": ["no_capture"],
        "perfscale_overrides": {"tests.benchmark.timeout_s": 88, "tests.benchmark.stop_on_error": True}}


def test_inventory_mistakes_are_one_line_errors_and_nothing_is_written(tmp_path):
    for group_vars, message in (
            ({"perfscale_presets": "cpu_smok"}, "unknown preset 'cpu_smok' (did you mean 'cpu_smoke'?)"),
            ({"perfscale_overrides": {"tests.benchmark.timeout": 5}},
             "perfscale_overrides (inventory): key 'tests.benchmark.timeout' does not exist"),
            ({"perfscale_overrides": ["tests.benchmark.timeout_s"]},
             "perfscale_overrides: expected a mapping of dotted keys to values, got list")):
        case = tmp_path / ("case%d" % len(os.listdir(tmp_path)))
        root = case / "run"
        run = run_playbook("playbooks/config.yml", "-i", lab_inventory(case, group_vars), "-e", "artifact_dir=%s" % root)
        assert run.returncode != 0
        assert message in run.flat, run.output
        assert not root.exists()


def test_credentials_in_a_url_never_reach_files_or_verbose_output(tmp_path):
    password = "Pa55-in-url-7731"
    root = tmp_path / "run"
    overrides = '{"overrides": {"export.opensearch.hosts": ["https://admin:%s@os.example.com:9200"]}}' % password
    shown = run_playbook("playbooks/config.yml", "-vv", "-e", overrides)
    assert shown.returncode == 0, shown.output
    assert "https://***@os.example.com:9200" in shown.output
    assert password not in shown.output
    run = record_config("-vv", "-e", "artifact_dir=%s" % root, "-e", overrides)
    assert run.returncode == 0, run.output
    assert password not in run.output
    for name in ("config.yaml", "config_overrides.yaml", "_ansible.log"):
        assert password not in (root / name).read_text(), name


def test_an_artifact_dir_that_cannot_be_created_is_named_once(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    run = record_config("-e", "artifact_dir=%s" % (blocker / "run"))
    assert run.returncode != 0
    line = next(l for l in run.output.splitlines() if "[ERROR]" in l)
    assert line.count("artifact directory") == 1, line
    assert "artifact directory %s: cannot be created" % (blocker / "run") in line


def test_a_missing_python_package_is_one_line_naming_the_requirements_file(tmp_path):
    hide = tmp_path / "hide"
    hide.mkdir()
    # the controller's Python cannot import pydantic
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pydantic' or name.startswith('pydantic.'):\n"
        "            raise ModuleNotFoundError('No module named %r' % name, name=name)\n"
        "sys.meta_path.insert(0, Hide())\n")
    run = run_playbook("playbooks/config.yml", env={"PYTHONPATH": str(hide)})
    assert run.returncode != 0
    line = next(l for l in run.output.splitlines() if "[ERROR]" in l)
    assert "the Python package 'pydantic' is missing in" in line
    assert "pip install -r" in line and "meta/ee-requirements.txt" in line
    assert "Traceback" not in run.output


def test_check_mode_either_works_or_fails_at_the_start_saying_why(tmp_path):
    listed = run_playbook("playbooks/benchmark.yml", "--check", "-e", "preset=cpu_smoke", cwd=str(tmp_path))
    assert listed.returncode == 0, listed.output
    assert "rehearsal: 8 point(s) would run; nothing was run" in listed.flat
    assert os.listdir(tmp_path) == []
    refused = run_playbook("playbooks/export.yml", "--check", "-e", "results_dir=%s" % tmp_path)
    assert refused.returncode != 0
    assert "check mode: export.yml cannot simulate writing to the results store" in refused.flat


def test_launch_arguments_from_a_ci_comment_file_or_environment_variable(tmp_path):
    comment = tmp_path / "comment.txt"
    comment.write_text("LGTM, let's run it\n/test benchmark cpu_smoke rehearsal\n"
                       "/var tests.capture_environment.nvidia_smi_timeout: 9\n")
    run = run_playbook("playbooks/benchmark.yml", "-e", "launch_file=%s" % comment,
                       "-e", 'overrides={"tests.capture_environment.gpu": true}', "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode == 0, run.output
    written = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert written["tests"]["capture_environment"]["nvidia_smi_timeout"] == 9
    assert written["tests"]["capture_environment"]["gpu"] is True  # -e overrides on top of the comment
    assert (tmp_path / "presets_applied").read_text() == "cpu_smoke\nrehearsal\n"
    launch = yaml.safe_load((tmp_path / "launch.yaml").read_text())
    assert launch["job"] == "benchmark" and launch["text"].startswith("LGTM")

    from_env = run_playbook("playbooks/benchmark.yml", "-e", "launch_env=PR_COMMENT", "-e", "artifact_dir=%s" % (
        tmp_path / "env"), env={"PR_COMMENT": "/test benchmark rehearsal"})
    assert from_env.returncode == 0, from_env.output
    assert (tmp_path / "env" / "presets_applied").read_text() == "rehearsal\n"


def test_wrong_launch_arguments_are_one_line_and_write_nothing(tmp_path):
    bad_line = run_playbook("playbooks/config.yml", "-e", "launch_text=/test x\n/varr a: 1",
                            "-e", "artifact_dir=%s" % (tmp_path / "a"))
    _assert_fails_cleanly(bad_line, tmp_path / "a", "launch_text line 2: unknown directive /varr")
    bad_key = run_playbook("playbooks/config.yml", "-e", "launch_text=/test x\n/var tests.nope: 1",
                           "-e", "artifact_dir=%s" % (tmp_path / "b"))
    _assert_fails_cleanly(bad_key, tmp_path / "b", "key 'tests.nope' does not exist")
    bad_preset = run_playbook("playbooks/config.yml", "-e", "launch_text=/test x cpu_smok",
                              "-e", "artifact_dir=%s" % (tmp_path / "c"))
    _assert_fails_cleanly(bad_preset, tmp_path / "c", "unknown preset 'cpu_smok'")
