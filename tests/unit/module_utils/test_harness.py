import json
import os
import sys
import time

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import harness

SCRIPTED = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "indicators", "scripted.py")
VALID = {"name": "x", "framework": "numpy", "@parameters": {"size": 1}, "@result": {"rate": 2.0}}


def test_valid_document_passes_with_optional_score():
    assert harness.validate_output(json.dumps(dict(VALID, overall_score=0.5)))["name"] == "x"
    assert harness.validate_output("\n" + json.dumps(VALID) + "\n")["@result"] == {"rate": 2.0}


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
    with pytest.raises(harness.HarnessOutputError) as error:
        harness.validate_output(text)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def run_scripted(tmp_path, timeout=30, **settings):
    env = harness.harness_environment(settings)
    return harness.run_harness([sys.executable, SCRIPTED], str(tmp_path), timeout, env=env)


def test_success_keeps_stdout_and_stderr(tmp_path):
    outcome = run_scripted(tmp_path, value=4)
    assert outcome.ok and outcome.document["@result"]["rate"] == 8.0
    assert "mode=ok" in (tmp_path / "stderr.log").read_text()
    assert json.loads((tmp_path / "stdout.log").read_text())["name"] == "scripted"


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
    assert outcome.timed_out and outcome.exit_code == harness.EXIT_TIMEOUT
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
    assert outcome.exit_code == harness.EXIT_BAD_OUTPUT
    assert message in outcome.error


def test_command_that_cannot_start(tmp_path):
    outcome = harness.run_harness([str(tmp_path / "no-such-binary")], str(tmp_path), 5)
    assert outcome.exit_code == harness.EXIT_NOT_STARTED
    assert "harness could not be started" in outcome.error


def test_builtin_indicator_runs_as_a_script_outside_the_collection_path(tmp_path):
    command = harness.builtin_command("matmul", {"size": 32, "reps": 2})
    env = harness.harness_environment({"size": 32}, base={"PATH": os.environ["PATH"]}, threads=1)
    assert env["OMP_NUM_THREADS"] == "1"
    outcome = harness.run_harness(command, str(tmp_path), 60, env=env)
    assert outcome.ok, outcome.error
    assert outcome.document["environment"]["thread_env"]["OMP_NUM_THREADS"] == "1"
