import os
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import checks as config_checks
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import clusters
from ansible_collections.perfscale.topsail.plugins.module_utils.run import lock as run_lock
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import flows
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import parallel_commands
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError, CommandArgsError, ConfigError

STEPS = {"cleanup_before": ["cluster cleanup_namespaces/demo"],
         "prepare": [{"parallel": ["cluster capture_environment",
                                   {"command": "cluster deploy_operator/nfd", "args": {"channel": "stable"}}],
                      "timeout": 60}],
         "test": [{"tasks": "run_matrix.yml"}],
         "cleanup_after": ["sutest/cluster cleanup_namespaces/demo"]}


def test_a_flow_is_checked_and_planned():
    planned = flows.plan(STEPS, "tests.demo.steps")
    assert [(p["step"], p["run"]) for p in planned] == [("cleanup_before", True), ("prepare", True), ("test", True),
                                                        ("cleanup_after", True)]
    prepare = planned[1]["items"][0]
    assert prepare["kind"] == "parallel" and prepare["timeout"] == 60
    assert prepare["commands"][1] == {"command": "cluster deploy_operator/nfd", "args": {"channel": "stable"},
                                      "from_config": True}
    cleanup = planned[3]["items"][0]
    assert (cleanup["name"], cleanup["prefix"], cleanup["suffix"]) == ("cluster cleanup_namespaces", "sutest", "demo")


def test_selection_skip_keep_and_empty_steps():
    planned = flows.plan(dict(STEPS, test=[]), "w", only="prepare,test,cleanup_after", skip=["prepare"], keep=True)
    assert [(p["step"], p["reason"]) for p in planned] == [
        ("cleanup_before", "not in -e steps"), ("prepare", "skipped with -e skip"), ("test", "nothing to do"),
        ("cleanup_after", "kept (clusters.keep / -e keep=true)")]
    lines = flows.outcome_lines(flows.plan(STEPS, "w"), {"cleanup_before": "ok", "prepare": "FAILED: x"})
    assert lines[2] == "test            not run (an earlier step failed)"


@pytest.mark.parametrize("steps, message", [
    ({"prepare": "cluster x"}, "tests.demo.steps.prepare: expected a list of commands"),
    ({"prepare": ["cluster"]}, "tests.demo.steps.prepare[0]: command args entry 'cluster': expected"),
    ({"prepare": [{"parallel": []}]}, "tests.demo.steps.prepare[0].parallel: expected a non-empty list of commands"),
    ({"prepare": [{"parallel": ["a b"], "max_parallel": -1}]},
     "tests.demo.steps.prepare[0].max_parallel: expected a whole number, 0 or more (0: no limit), got -1"),
    ({"prepare": [{"tasks": "x.yml", "extra": 1}]}, "tests.demo.steps.prepare[0]: a tasks item is {tasks: <tasks file"),
    ({"prepare": [{"tasks": "x.yml", "parallel": []}]}, "tests.demo.steps.prepare[0]: expected 'group command', or a"),
    ({"prepare": [{"command": "a b", "args": []}]}, "tests.demo.steps.prepare[0]: args must be a mapping"),
    ({"prepare": [{"command": "a b", "argz": {}}]}, "tests.demo.steps.prepare[0]: unknown key(s) argz"),
    ({"later": []}, "tests.demo.steps: unknown step(s) later"),
])
def test_a_wrong_definition_is_one_line_naming_the_key(steps, message):
    with pytest.raises(ConfigError) as raised:
        flows.check_definition(steps, "tests.demo.steps")
    assert str(raised.value).startswith(message)


def test_the_configuration_checks_every_flow_at_resolve_time():
    with pytest.raises(ConfigError, match="tests.mine.steps.test\\[0\\]"):
        config_checks.validate_config({"tests": {"mine": {"steps": {"test": [42]}}}})


def test_parallel_children_get_the_parent_run_and_their_own_directory(tmp_path):
    commands = parallel_commands.reserve_directories(str(tmp_path), [
        parallel_commands.Command("cluster capture_environment"),
        parallel_commands.Command.from_item({"command": "sutest/cluster deploy_operator/nfd", "args": {"a": 1}})])
    names = [os.path.basename(c.directory) for c in commands]
    assert names == ["000__cluster__capture_environment", "001__cluster__deploy_operator_nfd"]
    argv = parallel_commands.child_argv(["ansible-playbook"], commands[1], "/tmp/c.yaml", str(tmp_path),
                                        inventories=["inv.yml"], cluster="driver", verbosity=2)
    assert argv[:4] == ["ansible-playbook", "-i", "inv.yml", "-vv"] and argv[-1] == "perfscale.topsail.toolbox"
    import json

    extra = json.loads(argv[-2])
    assert extra["command"] == "cluster deploy_operator" and extra["prefix"] == "sutest" and extra["suffix"] == "nfd"
    assert extra["perfscale_reserved_artifact_dir"] == commands[1].directory and extra["cluster"] == "driver"
    with pytest.raises(CommandArgsError):
        parallel_commands.Command.from_item({"command": "a b", "args": []})


def test_run_all_waits_for_every_command_and_reports_each(tmp_path):
    commands = parallel_commands.reserve_directories(str(tmp_path), [
        parallel_commands.Command("g ok"), parallel_commands.Command("g fails"), parallel_commands.Command("g slow")])
    scripts = {"g ok": "print('fine')", "g fails": "open('FAILURE', 'w').write('it broke\\nmore\\n'); raise SystemExit(2)",
               "g slow": "import time; time.sleep(30)"}

    def argv_of(command):
        return [sys.executable, "-c", "import os; os.chdir(%r); %s" % (command.directory, scripts[command.name])]

    results = parallel_commands.run_all(commands, argv_of, max_parallel=2, timeout_s=3)
    assert [(r["ok"], r["rc"]) for r in results][:2] == [(True, 0), (False, 2)]
    assert results[1]["failure"] == "it broke"
    assert results[2]["ok"] is False and results[2]["failure"].startswith("not finished after 3s")
    with open(os.path.join(commands[0].directory, parallel_commands.OUTPUT_FILE), encoding="utf-8") as handle:
        assert handle.read() == "fine\n"
    lines, failure = parallel_commands.summary(results)
    assert failure.startswith("2 of 3 command(s) failed: g fails: it broke; g slow: not finished")


def test_a_descendant_of_the_run_lock_holder_shares_the_run(tmp_path):
    import subprocess

    holder = run_lock.acquire(str(tmp_path), os.getpid())
    assert not holder.already_held
    # the child loads run_lock by path (standard library only), as the lock keeper does
    code = ("import importlib.util, os; spec = importlib.util.spec_from_file_location('run_lock', %r); "
            "lock = importlib.util.module_from_spec(spec); spec.loader.exec_module(lock); "
            "print(lock.acquire(%r, os.getpid()).already_held)" % (run_lock.__file__, str(tmp_path)))
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert child.stdout.strip() == "True", child.stderr
    assert run_lock.is_ancestor(os.getppid(), os.getpid()) and not run_lock.is_ancestor(os.getpid(), os.getppid())


def test_cluster_connection_options(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("{}")
    assert clusters.connection_options({}) == {}
    assert clusters.connection_options({"perfscale_kubeconfig": str(kubeconfig), "perfscale_kube_context": "c"}) == {
        "kubeconfig": str(kubeconfig), "context": "c"}
    with pytest.raises(ClusterError, match="cluster driver: kubeconfig /nope does not exist .perfscale_kubeconfig of "
                                           "the inventory host d1."):
        clusters.connection_options({"perfscale_kubeconfig": "/nope"}, "driver", "d1")
