"""The steps stdout callback (plugins/callback/steps.py) on fake results: one line per task that ran,
nothing for what was skipped, failures in full, a short recap; -v gives the default callback back."""

import types

import pytest
from ansible import context
from ansible.executor.stats import AggregateStats
from ansible.executor.task_result import CallbackTaskResult
from ansible.inventory.host import Host
from ansible.module_utils.common.collections import ImmutableDict
from ansible.playbook.task import Task
from ansible.playbook.task_include import TaskInclude

from ansible_collections.perfscale.topsail.plugins.callback import steps

OPTIONS = dict(display_skipped_hosts=True, display_ok_hosts=True, display_failed_stderr=False,
               show_custom_stats=False, show_per_host_start=False, check_mode_markers=False,
               show_task_path_on_failure=False, result_format="json", pretty_results=None)


class Screen:
    """What the callback prints, line by line (the parts of ansible's Display it calls)."""

    def __init__(self, verbosity=0):
        self.verbosity = verbosity
        self.lines = []

    def display(self, msg, color=None, stderr=False, screen_only=False, log_only=False, newline=True):
        if not log_only:
            self.lines.extend(msg.split("\n"))

    def banner(self, msg, color=None, cows=True):
        self.lines.extend(["", msg + " " + "*" * 10])

    def warning(self, msg, formatted=False):
        self.lines.append("[WARNING]: " + msg)

    def _warning(self, warning):
        self.lines.append("[WARNING]: %s" % warning)

    def _error(self, error, stderr=False):
        self.lines.append("[ERROR]: %s" % error)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


@pytest.fixture
def run():
    return Run()


class Run:
    """A callback with a fake screen and clock, and helpers that send it a playbook's events."""

    def __init__(self, verbosity=0):
        self.clock = Clock()
        self.callback = steps.CallbackModule(clock=self.clock)
        self.callback._plugin_options = dict(OPTIONS)
        self.screen = self.callback._display = Screen(verbosity)
        self.stats = AggregateStats()

    def play(self, name):
        self.callback.v2_playbook_on_play_start(types.SimpleNamespace(
            get_name=lambda: name, check_mode=False, strategy="linear"))

    def task(self, name, action="ansible.builtin.set_fact", args=None, **fields):
        task = Task.load(dict(name=name, action=action, args=args or {}, **fields))
        self.callback.v2_playbook_on_task_start(task, False)
        return task

    def result(self, task, data, host="localhost"):
        return CallbackTaskResult(Host(host), task, data, {})

    def ok(self, task, data=None, host="localhost", seconds=0.0):
        self.clock.now += seconds
        data = dict(data or {})
        self.stats.increment("changed" if data.get("changed") else "ok", host)
        self.callback.v2_runner_on_ok(self.result(task, data, host))

    def skipped(self, task, host="localhost"):
        self.stats.increment("skipped", host)
        skipped = {"skipped": True, "changed": False, "false_condition": "x == 1"}
        self.callback.v2_runner_on_skipped(self.result(task, skipped, host))

    def failed(self, task, data, host="localhost", ignore_errors=False):
        self.stats.increment("failures", host)
        self.callback.v2_runner_on_failed(self.result(task, data, host), ignore_errors=ignore_errors)

    def end(self, seconds=0.0):
        self.clock.now += seconds
        self.callback.v2_playbook_on_stats(self.stats)
        return self.screen.lines


def test_each_task_that_ran_is_one_line_and_skipped_tasks_are_not_shown(run):
    run.play("Benchmark on this machine")
    run.ok(run.task("Resolve the configuration"), {"changed": True}, seconds=1.71)
    run.skipped(run.task("Wait for the cluster and take its lease | -"))
    run.ok(run.task("Validating arguments against arg spec 'main' - The skeleton",
                    action="ansible.builtin.validate_argument_spec"), {"changed": False})
    include = TaskInclude.load(dict(name="Run the step's items | prepare", action="ansible.builtin.include_tasks",
                                    args={"file": "item.yml"}))
    run.callback.v2_playbook_on_task_start(include, False)
    run.callback.v2_runner_on_ok(run.result(include, {"changed": False}))
    run.callback.v2_playbook_on_include(types.SimpleNamespace(_filename="item.yml", _hosts=[Host("localhost")],
                                                              _vars={}))
    looped = run.task("Pass the parameters of host capture_environment", loop=[1, 2, 3, 4])
    for number in range(4):
        run.callback.v2_runner_item_on_ok(run.result(looped, {"changed": False, "item": number}))
    run.ok(looped, {"changed": False, "results": [{"item": n} for n in range(4)]})
    matrix = run.task("Run the benchmark matrix")
    run.ok(matrix, {"changed": True}, seconds=19.93)
    assert run.end(seconds=3.0) == [
        "PLAY [Benchmark on this machine]",
        "  changed  Resolve the configuration (1.7 s)",
        "  ok       Pass the parameters of host capture_environment (4 items)",
        "  changed  Run the benchmark matrix (19.9 s)",
        "PLAY RECAP localhost: ok=2 changed=2 failed=0 skipped=1 (24.6 s)",
    ]


def test_a_debug_message_is_printed_flat_under_its_task(run):
    run.play("Verdict of the flow")
    summary = run.task("Show where the artifacts and reports are", action="ansible.builtin.debug")
    run.ok(summary, {"changed": False, "_ansible_verbose_always": True,
                     "msg": [["matrix fine_tuning: 2 point(s), 2 succeeded", "matrix b: 1 point(s)"],
                             "Regression: 4 KPI(s) compared", "Reports: /tmp/run/002__plots/reports_index.html"]})
    secret = run.task("Show a secret", action="ansible.builtin.debug")
    run.ok(secret, {"changed": False, "_ansible_no_log": True,
                    "censored": "the output has been hidden due to the fact that 'no_log: true' was specified"})
    variable = run.task("Show a variable", action="ansible.builtin.debug")
    run.ok(variable, {"changed": False, "_ansible_verbose_always": True, "flow_status": {"steps": 3}})
    assert run.end()[:-1] == [
        "PLAY [Verdict of the flow]",
        "  ok       Show where the artifacts and reports are",
        "           matrix fine_tuning: 2 point(s), 2 succeeded",
        "           matrix b: 1 point(s)",
        "           Regression: 4 KPI(s) compared",
        "           Reports: /tmp/run/002__plots/reports_index.html",
        "  ok       Show a secret",
        "  ok       Show a variable",
        '           flow_status: {"steps": 3}',
    ]


def test_a_play_where_nothing_ran_prints_nothing(run):
    run.play("Benchmark on the inventory's benchmark hosts")
    run.callback.v2_playbook_on_no_hosts_matched()
    run.play("Post-process the run")
    run.skipped(run.task("Post-process"))
    run.play("Verdict")
    run.ok(run.task("Say it"))
    assert run.end() == ["PLAY [Verdict]", "  ok       Say it",
                         "PLAY RECAP localhost: ok=1 changed=0 failed=0 skipped=1 (0.0 s)"]


def test_a_failure_is_shown_in_full_after_its_play(run):
    run.play("Resolve and print the effective configuration")
    task = run.task("Resolve the configuration (presets and overrides from -e)")
    run.failed(task, {"failed": True, "changed": False,
                      "msg": "unknown preset 'cpu_smok' (did you mean 'cpu_smoke'?); known presets: cpt"})
    lines = run.end()
    assert lines == [
        "PLAY [Resolve and print the effective configuration]",
        "",
        "TASK [Resolve the configuration (presets and overrides from -e)] **********",
        'fatal: [localhost]: FAILED! => {"changed": false, "failed": true, "msg": "unknown preset \'cpu_smok\' '
        '(did you mean \'cpu_smoke\'?); known presets: cpt"}',
        "PLAY RECAP localhost: ok=0 changed=0 failed=1 (0.0 s)",
    ]


def test_an_ignored_failure_says_it_is_ignored(run):
    run.play("P")
    run.failed(run.task("Try"), {"failed": True, "msg": "no"}, ignore_errors=True)
    assert run.screen.lines[-2:] == ['fatal: [localhost]: FAILED! => {"failed": true, "msg": "no"}', "...ignoring"]


def test_retries_are_counted_on_the_task_line_not_printed_one_by_one(run):
    run.play("P")
    wait = run.task("Wait for the CSV to succeed | demo-operator.v1")
    for left in (3, 2):
        run.callback.v2_runner_retry(run.result(wait, {"retries": 5, "attempts": 5 - left}))
    run.ok(wait, {"changed": False, "attempts": 3}, seconds=12.0)
    assert run.end()[1] == "  ok       Wait for the CSV to succeed | demo-operator.v1 (2 retries, 12.0 s)"


def test_hosts_other_than_localhost_are_named(run):
    run.play("Benchmark on the inventory's benchmark hosts")
    task = run.task("Run the benchmark matrix on this host")
    run.ok(task, {"changed": True}, host="gpu-1")
    run.ok(task, {"changed": False}, host="gpu-2")
    assert run.end() == [
        "PLAY [Benchmark on the inventory's benchmark hosts]",
        "  changed  Run the benchmark matrix on this host [gpu-1]",
        "  ok       Run the benchmark matrix on this host [gpu-2]",
        "PLAY RECAP gpu-1: ok=0 changed=1 failed=0 (0.0 s)",
        "PLAY RECAP gpu-2: ok=1 changed=0 failed=0 (0.0 s)",
    ]


def test_a_task_warning_is_still_shown(run):
    run.play("P")
    task = run.task("Deprecated thing")
    result = run.result(task, {"changed": False, "warnings": ["use the other thing"]})
    run.callback._current_task_result = types.SimpleNamespace(warnings=["use the other thing"], deprecations=[],
                                                              exception=None)
    run.callback.v2_runner_on_ok(result)
    assert run.screen.lines == ["PLAY [P]", "  ok       Deprecated thing", "[WARNING]: use the other thing"]


def test_with_v_every_event_is_shown_as_the_default_callback_shows_it(monkeypatch):
    monkeypatch.setattr(context, "CLIARGS", ImmutableDict(check=False))
    run = Run(verbosity=1)
    run.play("Benchmark on this machine")
    run.skipped(run.task("Wait for the cluster | -"))
    run.ok(run.task("Resolve the configuration"), {"changed": True})
    lines = run.end()
    assert lines[:2] == ["", "PLAY [Benchmark on this machine] **********"]
    assert "TASK [Wait for the cluster | -] **********" in lines
    assert any(line.startswith("skipping: [localhost]") for line in lines)
    assert any(line.startswith("changed: [localhost]") for line in lines)
    assert "PLAY RECAP **********" in lines
    assert not [line for line in lines if line.startswith("  ok ") or line.startswith("  changed ")]
