"""What the console shows of the playbooks and roles: no task name renders an empty label, and the
summaries a run ends with are flat lists of lines."""

import glob
import os

import pytest
import yaml
from ansible.errors import AnsibleUndefinedVariable
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TASK_FILES = sorted(glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml"))
                    + glob.glob(os.path.join(REPO, "roles", "*", "handlers", "*.yml")))
PLAYBOOKS = sorted(glob.glob(os.path.join(REPO, "playbooks", "*.yml")))


def tasks_of(entries):
    """Every task of a task list, those of blocks, rescues and always sections included."""
    for entry in entries or ():
        if not isinstance(entry, dict):
            continue
        yield entry
        for section in ("block", "rescue", "always"):
            yield from tasks_of(entry.get(section))


def named_tasks():
    found = []
    for path in TASK_FILES:
        with open(path, encoding="utf-8") as handle:
            found.extend((path, task) for task in tasks_of(yaml.safe_load(handle)))
    for path in PLAYBOOKS:
        with open(path, encoding="utf-8") as handle:
            for play in yaml.safe_load(handle) or ():
                for section in ("pre_tasks", "tasks", "post_tasks", "handlers"):
                    found.extend((path, task) for task in tasks_of(play.get(section)))
    return [(os.path.relpath(path, REPO), task["name"]) for path, task in found if "{{" in str(task.get("name", ""))]


def render(template, variables=None):
    return Templar(loader=DataLoader(), variables=variables or {}).template(trust_as_template(template))


NAMES = named_tasks()


def test_the_task_names_with_a_template_are_found():
    assert ("roles/test_flow/tasks/item.yml", "Run the toolbox command | {{ test_flow_item.command | "
            "default('(a ' ~ test_flow_item.kind ~ ' item)') }}") in NAMES
    assert len(NAMES) > 50


@pytest.mark.parametrize("path, name", NAMES, ids=["%s: %s" % (path, name.split("|")[0].strip())
                                                   for path, name in NAMES])
def test_no_task_name_renders_an_empty_label(path, name):
    """A name whose variables are not there is shown as written by Ansible; one that renders must say
    something after its ``|`` (``Run the toolbox command |`` said nothing for every non-command item)."""
    try:
        rendered = render(name)
    except AnsibleUndefinedVariable:
        return
    label = rendered.rpartition("|")[2] if "|" in name else rendered
    assert label.strip(), "%s: the task name %r renders as %r" % (path, name, rendered)


def summary_message(playbook, task_name):
    with open(os.path.join(REPO, "playbooks", playbook), encoding="utf-8") as handle:
        for play in yaml.safe_load(handle):
            for task in tasks_of(play.get("tasks")):
                if task.get("name") == task_name:
                    return task["ansible.builtin.debug"]["msg"]
    raise AssertionError("%s has no task %r" % (playbook, task_name))


def test_the_flow_summary_is_one_flat_list_of_lines():
    message = summary_message("flow.yml", "Show where the artifacts and reports are")
    variables = {"test_flow_matrices": {"fine_tuning": {"msg": "matrix fine_tuning: 2 point(s), 2 succeeded"},
                                        "other": {}},
                 "perfscale_run_root": "/runs/r1", "perfscale_run_id": "abc",
                 "visualize_regressions": {"msg": "4 KPI(s) compared"},
                 "visualize_result": {"index": "/runs/r1/002__plots/reports_index.html"}}
    assert render(message, variables) == [
        "matrix fine_tuning: 2 point(s), 2 succeeded", "(not run)", "Regression: 4 KPI(s) compared",
        "Artifacts: /runs/r1 (run id abc)", "Exported artifacts: (not exported: export_artifacts.enabled is false)",
        "Reports: /runs/r1/002__plots/reports_index.html"]


def test_the_benchmark_summary_is_one_flat_list_of_lines():
    message = summary_message("benchmark.yml", "Show where the artifacts and reports are")
    variables = {"benchmark_matrix": {"msg": "matrix /r/001__matbenchmarking: 8 point(s)"}, "perfscale_run_root": "/r",
                 "perfscale_run_id": "abc", "visualize_regressions": {"msg": "8 KPI(s) compared"},
                 "visualize_result": {"index": "/r/002__plots/reports_index.html"}}
    lines = [render(line, variables) for line in message]
    assert lines == ["matrix /r/001__matbenchmarking: 8 point(s)", "Regression: 8 KPI(s) compared",
                     "Artifacts: /r (run id abc)",
                     "Exported artifacts: (not exported: export_artifacts.enabled is false)",
                     "Reports: /r/002__plots/reports_index.html"]
