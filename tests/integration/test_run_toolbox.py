"""run_toolbox.py, the reference's command line, end to end on this machine (the cluster commands:
tests/cluster/test_run_toolbox.py), and the toolbox's help in the user's words."""

import os
import re
import shutil
import subprocess
import sys

import yaml

from helpers import BIN, REPO, ansible_env, run_playbook, run_toolbox, tree

MARKUP = re.compile(r"(?<![A-Za-z0-9_])(RV|[CIBMUVOELP])\(")


def test_the_reference_command_line_runs_the_command_as_the_playbook_does(tmp_path):
    # the reference's ARTIFACT_DIR, its --name value / --noflag / - in names, a list as YAML
    run = run_toolbox("host", "capture_environment", "--nogpu", "--nvidia-smi-timeout", "7",
                      "--packages=[pytest, pyyaml]", env={"ARTIFACT_DIR": str(tmp_path / "cli")})
    assert run.returncode == 0, run.output
    assert "[WARNING]" not in run.output, run.output
    command_dir = tmp_path / "cli" / "000__host__capture_environment"
    params = yaml.safe_load((command_dir / "_params.yaml").read_text())
    assert params["gpu"] is False and params["nvidia_smi_timeout"] == 7 and params["packages"] == ["pytest", "pyyaml"]
    assert "Artifacts of host capture_environment: %s" % command_dir in run.flat
    # the playbook form gives the same parameters and the same layout
    playbook = run_playbook("perfscale.topsail.toolbox", "-e", "command='host capture_environment'", "-e", "gpu=false",
                            "-e", "nvidia_smi_timeout=7", "-e", "packages=[pytest, pyyaml]",
                            "-e", "artifact_dir=%s" % (tmp_path / "playbook"))
    assert playbook.returncode == 0, playbook.output
    assert tree(str(tmp_path / "cli")) == tree(str(tmp_path / "playbook"))
    assert yaml.safe_load((tmp_path / "playbook" / "000__host__capture_environment" / "_params.yaml").read_text()) \
        == params


def test_a_parameter_named_like_an_ansible_keyword_draws_no_warning_and_a_failure_keeps_the_exit_code(tmp_path):
    # llm_load run given a url is local; nothing listens there, so the command fails in its directory
    run = run_toolbox("llm_load", "run", "--model=m", "--url=http://127.0.0.1:9", "--timeout=5", "--duration", "1",
                      "--", "-e", "artifact_dir=%s" % (tmp_path / "cli"))
    assert run.returncode == 2, run.output
    assert "reserved name" not in run.output and "[WARNING]" not in run.output, run.output
    assert (tmp_path / "cli" / "000__llm_load__run" / "FAILURE").exists()
    params = yaml.safe_load((tmp_path / "cli" / "000__llm_load__run" / "_params.yaml").read_text())
    assert params["timeout"] == 5.0 and params["url"] == "http://127.0.0.1:9"


def test_a_mistake_is_one_line_and_nothing_runs(tmp_path):
    cases = [
        (("cluster", "capture_state", "--namespace=my-ns"),
         "toolbox command 'cluster capture_state': unknown parameter 'namespace' (did you mean 'namespaces'?); its "
         "parameters: artifact_dir_suffix, events, kinds, label_selectors, logs, namespaces, tail_lines"),
        (("cluster", "capture_stat", "--namespaces=my-ns"),
         "unknown toolbox command 'cluster capture_stat' (did you mean 'cluster capture_state'?); 'run_toolbox.py "
         "--help' lists the"),
        (("clustr", "capture_state"), "unknown toolbox command 'clustr capture_state' (did you mean "
                                      "'cluster capture_state'?)"),
        (("host", "capture_environment", "--nvidia_smi_timeout=soon"),
         "toolbox command 'host capture_environment': parameter 'nvidia_smi_timeout': expected int, got 'soon'"),
        (("cluster", "deploy_operator", "--catalog=redhat-operators"),
         "toolbox command 'cluster deploy_operator': missing required parameter(s) manifest_name, namespace "
         "(--manifest_name=...)"),
    ]
    for argv, line in cases:
        run = run_toolbox(*argv, env={"ARTIFACT_DIR": str(tmp_path / "run")})
        assert run.returncode == 2, run.output
        assert run.stdout == "" and run.stderr.count("\n") == 1 and run.stderr.startswith(line), run.output
    assert not (tmp_path / "run").exists()


def test_help_at_each_level_in_the_user_s_words(tmp_path):
    top = run_toolbox("--help")
    assert top.returncode == 0 and top.stdout.startswith("usage: run_toolbox.py GROUP COMMAND"), top.output
    group = run_toolbox("nfd", "--help")
    assert group.returncode == 0 and group.stdout.splitlines()[0].startswith("nfd has_gpu_nodes "), group.output
    command = run_toolbox("llm_load", "run", "--help")
    assert command.returncode == 0, command.output
    assert ("  --inference_service_name (str, optional): (new) Load the InferenceService (or LLMInferenceService) of "
            "this name - its `status.url` - when `--url` is empty") in command.stdout
    assert "llm_load_run_" not in command.stdout and not MARKUP.search(command.stdout)
    # the playbook form's help too
    playbook = run_playbook("perfscale.topsail.toolbox", "-e", "command='llm_load run'", "-e", "help=true",
                            "-e", "artifact_dir=%s" % (tmp_path / "help"))
    assert playbook.returncode == 0, playbook.output
    assert ("  inference_service_name (str, optional): (new) Load the InferenceService (or LLMInferenceService) of "
            "this name - its `status.url` - when `url` is empty") in playbook.output
    assert "llm_load_run_" not in playbook.output and not MARKUP.search(playbook.output), playbook.output


def test_run_toolbox_of_an_installed_collection_and_of_a_copy_elsewhere(tmp_path):
    galaxy = os.path.join(BIN, "ansible-galaxy")
    built = subprocess.run([galaxy, "collection", "build", "--output-path", str(tmp_path), REPO], capture_output=True,
                           text=True, check=False, cwd=REPO)
    assert built.returncode == 0, built.stdout + built.stderr
    collections = tmp_path / "collections"
    env = ansible_env({"ANSIBLE_COLLECTIONS_PATH": str(collections)})
    for name in ("ANSIBLE_CONFIG", "ANSIBLE_ROLES_PATH"):
        env.pop(name)
    installed = subprocess.run([galaxy, "collection", "install", "--offline", "--no-deps", "--force", "-p",
                                str(collections), str(next(tmp_path.glob("perfscale-topsail-*.tar.gz")))],
                               capture_output=True, text=True, check=False, cwd=str(tmp_path), env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    script = collections / "ansible_collections" / "perfscale" / "topsail" / "run_toolbox.py"

    def run(path, *args, environ=None):
        done = subprocess.run([sys.executable, str(path)] + list(args), capture_output=True, text=True, check=False,
                              cwd=str(tmp_path), env=env if environ is None else environ)
        return done, done.stdout + done.stderr

    done, output = run(script, "host", "capture_environment", "--nogpu", "--", "-e",
                       "artifact_dir=%s" % (tmp_path / "run"))
    assert done.returncode == 0, output
    params = yaml.safe_load((tmp_path / "run" / "000__host__capture_environment" / "_params.yaml").read_text())
    assert params["gpu"] is False
    # a copy elsewhere finds the collection with ansible-galaxy
    copy = tmp_path / "bin" / "run_toolbox.py"
    copy.parent.mkdir()
    shutil.copy(str(script), str(copy))
    done, output = run(copy, "nfd", "--help")
    assert done.returncode == 0 and done.stdout.startswith("nfd has_gpu_nodes"), output
    # and says so in one line when there is none
    elsewhere = dict(env, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "none"))
    done, output = run(copy, "nfd", "--help", environ=elsewhere)
    assert done.returncode == 2 and done.stdout == "", output
    assert done.stderr == ("run_toolbox.py: the collection perfscale.topsail is not found: this file is neither in a "
                           "checkout set up with 'make setup' nor in an installed collection, and 'ansible-galaxy "
                           "collection list perfscale.topsail' finds none\n")
