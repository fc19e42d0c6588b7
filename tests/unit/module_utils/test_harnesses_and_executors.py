import json
import os
import sys
import time

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils import executors
from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import base as executor_base
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base as harness_base
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import perf_indicator

SCRIPTED = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "indicators", "scripted.py")
VALID = {"name": "x", "framework": "numpy", "@parameters": {"size": 1}, "@result": {"rate": 2.0}}


def test_valid_document_passes_with_optional_score():
    assert harness_base.validate_output(json.dumps(dict(VALID, overall_score=0.5)))["name"] == "x"
    assert harness_base.validate_output("\n" + json.dumps(VALID) + "\n")["@result"] == {"rate": 2.0}


@pytest.mark.parametrize("text,message", [
    ("", "harness printed nothing on stdout"),
    ("rate: 3", "harness output is not JSON"),
    ("[1, 2]", "harness output must be a JSON object, got list"),
    (json.dumps({"name": "x"}), "lacks required key(s): framework, @parameters, @result"),
    (json.dumps(dict(VALID, name=3)), "key name must be a string, got int"),
    (json.dumps(dict(VALID, **{"@result": [1]})), "key @result must be a object, got list"),
    (json.dumps(dict(VALID, **{"@result": {"size": 1}})), "keys appear in both @parameters and @result: size"),
    (json.dumps(dict(VALID, overall_score=1.5)), "overall_score must be a number in [0, 1], got 1.5"),
    (json.dumps(dict(VALID, overall_score=-0.1)), "overall_score must be a number in [0, 1]"),
    (json.dumps(dict(VALID, overall_score="high")), "overall_score must be a number in [0, 1], got 'high'"),
    (json.dumps(dict(VALID, overall_score=True)), "overall_score must be a number in [0, 1], got True"),
])
def test_contract_violations_are_one_line_errors(text, message):
    with pytest.raises(errors.HarnessOutputError) as error:
        harness_base.validate_output(text)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


class Outcome:
    def __init__(self, execution, document):
        self.__dict__.update({name: getattr(execution, name) for name in executor_base.Execution.__slots__})
        self.ok = execution.ok
        self.document = document


def run_scripted(tmp_path, timeout=30, **settings):
    execution, document = run(tmp_path, [sys.executable, SCRIPTED], timeout,
                              env={"PERFSCALE_SETTINGS": json.dumps(settings)})
    return Outcome(execution, document)


def run(tmp_path, argv, timeout=30, env=None, base_env=None):
    executor = executors.create_executor("local", base_env=base_env)
    handle = executor.start(None, harness_base.PointCommand(argv, env), str(tmp_path))
    execution = executor.wait(handle, timeout)
    document = None
    if execution.ok:
        try:
            document = harnesses.get_harness("perf_indicator").read_output(str(tmp_path))
        except errors.HarnessOutputError as exc:
            execution.exit_code, execution.error = executor_base.EXIT_BAD_OUTPUT, str(exc)
    return execution, document


def test_success_keeps_stdout_and_stderr(tmp_path):
    outcome = run_scripted(tmp_path, value=4)
    assert outcome.ok and outcome.document["@result"]["rate"] == 8.0
    assert "mode=ok" in (tmp_path / "stderr.log").read_text()
    assert json.loads((tmp_path / "stdout.log").read_text())["name"] == "scripted"


def test_the_point_s_process_tree_resource_usage_is_measured(tmp_path):
    # a child that burns CPU and holds ~64 MiB, waited for by the point's process: counted in its usage
    child = "import time; b = bytearray(64 << 20); t = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
    parent = "import subprocess, sys; subprocess.run([sys.executable, '-c', %r], check=True)" % child
    executor = executors.create_executor("local")

    def execute(argv):
        return executor.wait(executor.start(None, harness_base.PointCommand(argv), str(tmp_path)), 30)

    execution = execute([sys.executable, "-c", parent])
    assert execution.exit_code == 0, execution.error
    usage = execution.as_dict()["resources"]
    assert usage["cpu_user_s"] + usage["cpu_system_s"] >= 0.25, usage
    assert usage["max_rss_mib"] >= 60, usage
    assert usage["voluntary_context_switches"] >= 1 and usage["involuntary_context_switches"] >= 0
    # a failed point has its usage too; one that could not start has none
    failed = execute([sys.executable, "-c", "raise SystemExit(4)"])
    assert failed.exit_code == 4 and failed.resources["max_rss_mib"] > 0
    missing = execute(["/nonexistent/harness"])
    assert missing.resources is None and "resources" not in missing.as_dict()


def test_non_zero_exit_reports_code_and_stderr(tmp_path):
    outcome = run_scripted(tmp_path, mode="fail")
    assert outcome.exit_code == 3
    assert outcome.error == "harness exited with 3: something went wrong"


def test_crash_reports_the_signal(tmp_path):
    outcome = run_scripted(tmp_path, mode="crash")
    assert outcome.signal_name == "SIGSEGV" and outcome.exit_code == 128 + 11
    assert outcome.error.startswith("harness crashed with signal SIGSEGV")
    assert "mode=crash" in (tmp_path / "stderr.log").read_text()


def test_timeout_kills_the_whole_process_group(tmp_path):
    started = time.monotonic()
    outcome = run_scripted(tmp_path, timeout=1.0, mode="hang")
    assert time.monotonic() - started < 10
    assert outcome.timed_out and outcome.exit_code == executor_base.EXIT_TIMEOUT
    assert outcome.error == "harness timed out after 1.0 s (killed)"
    time.sleep(0.2)
    leftovers = os.popen("pgrep -f 'import time; time.sleep(60)'").read().split()
    assert leftovers == []


@pytest.mark.parametrize("mode,message", [
    ("not_json", "harness output is not JSON"),
    ("missing_keys", "lacks required key(s): framework"),
    ("overlap", "keys appear in both @parameters and @result: mode"),
    ("bad_score", "overall_score must be a number in [0, 1], got 1.5"),
])
def test_contract_violation_is_a_failed_run(tmp_path, mode, message):
    outcome = run_scripted(tmp_path, mode=mode)
    assert outcome.exit_code == executor_base.EXIT_BAD_OUTPUT
    assert message in outcome.error


def test_command_that_cannot_start(tmp_path):
    execution, _document = run(tmp_path, [str(tmp_path / "no-such-binary")], 5)
    assert execution.exit_code == executor_base.EXIT_NOT_STARTED
    assert "harness could not be started" in execution.error


def test_cancel_kills_a_running_point(tmp_path):
    executor = executors.create_executor("local")
    handle = executor.start(None, harness_base.PointCommand([sys.executable, "-c", "import time; time.sleep(60)"]),
                            str(tmp_path))
    started = time.monotonic()
    executor.cancel(handle)
    assert handle.process.poll() is not None and time.monotonic() - started < 5


def test_builtin_indicator_runs_as_a_script_outside_the_collection_path(tmp_path):
    command = harnesses.get_harness("perf_indicator").plan_point("p", {"indicator": "matmul", "size": 32, "reps": 2,
                                                                       "threads": 1}, {})
    assert command.env["OMP_NUM_THREADS"] == "1" and command.threads == 1
    execution, document = run(tmp_path, command.argv, 60, env=command.env, base_env={"PATH": os.environ["PATH"]})
    assert execution.ok, execution.error
    assert document["environment"]["thread_env"]["OMP_NUM_THREADS"] == "1"


def test_non_finite_numbers_are_refused_by_the_contract():
    with pytest.raises(errors.HarnessOutputError, match="contains NaN, which is not a number in JSON"):
        harness_base.validate_output('{"name": "x", "framework": "f", "@parameters": {}, "@result": {"rate": NaN}}')


def test_registries_name_their_entries_and_refuse_unknown_ones():
    assert harnesses.harness_names() == ["llm_load", "perf_indicator", "toolbox_flow"]
    assert executors.executor_names() == ["inventory_hosts", "kubernetes", "local", "tekton"]
    with pytest.raises(errors.HarnessError, match="tests.benchmark.harness 'nope': expected one of llm_load, perf_indicator"):
        harnesses.get_harness("nope")
    with pytest.raises(errors.ExecutorError, match="tests.benchmark.executor 'k8s': expected one of inventory_hosts, kubernetes, local, tekton"):
        executors.create_executor("k8s")
    assert perf_indicator.builtin_command("matmul", {"size": 8})[2].endswith("harnesses/indicators.py")


def test_llm_load_harness_plans_options_keeps_factors_out_and_takes_the_token_by_reference(tmp_path):
    (tmp_path / "tok").write_text("value")
    harness = harnesses.get_harness("llm_load")
    config = {"secrets": {"dir_env": "LLM_TEST_SECRETS"}}
    os.environ["LLM_TEST_SECRETS"] = str(tmp_path)
    try:
        command = harness.plan_point("p", {"url": "http://127.0.0.1:1", "model": "m", "rate": 5, "stream": False,
                                           "token": "secret:tok"}, {}, python="py", config=config)
    finally:
        del os.environ["LLM_TEST_SECRETS"]
    assert command.argv[:3] == ["py", "-m", "ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load"]
    assert command.argv[-2:] == ["--output", "."]
    assert "--no-stream" in command.argv and command.argv[command.argv.index("--rate") + 1] == "5"
    assert command.argv[command.argv.index("--token-file") + 1] == str(tmp_path / "tok")
    assert "value" not in " ".join(command.argv)
    # the child finds the collection by -m: its PYTHONPATH starts at the directory holding ansible_collections
    assert os.path.isdir(os.path.join(command.env["PYTHONPATH"].split(os.pathsep)[0], "ansible_collections", "perfscale"))
    with pytest.raises(errors.MatrixError, match="never the token itself"):
        harness.plan_point("p", {"url": "u", "model": "m", "token": "plain"}, {})
    with pytest.raises(errors.MatrixError, match="needs url and model"):
        harness.plan_point("p", {"rate": 1}, {})
    with pytest.raises(errors.MatrixError, match=r"no option rat \(did you mean rate\?\), replicas; list labels"):
        harness.plan_point("p", {"url": "u", "model": "m", "rat": 1, "replicas": 1}, {})


def test_deployment_factors_label_points_and_stay_out_of_the_harness():
    section = {"deployment_factors": ["replicas"]}
    planned = matrix.plan_points([{"url": "u", "model": "m", "replicas": r} for r in (1, 2)],
                                 harnesses.get_harness("llm_load"), section)
    assert [p.name for p in planned] == ["replicas=1", "replicas=2"]
    assert all("--replicas" not in p.command.argv for p in planned)
    assert planned[1].settings["replicas"] == 2


def test_token_lengths_are_not_secrets_but_tokens_are():
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs  # pylint: disable=import-outside-toplevel

    assert not secret_refs.is_sensitive_name("max_output_tokens")
    assert not secret_refs.is_sensitive_name("prompt_tokens")
    assert secret_refs.is_sensitive_name("token") and secret_refs.is_sensitive_name("api_token")
    assert not secret_refs.is_sensitive_name("token_file")
