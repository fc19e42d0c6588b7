"""What the console shows of a run (module_utils/run/console.py): the steps callback's lines and the
line naming the results store."""

import os

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.run import console
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import location as store_location


def test_a_task_line_is_its_status_and_name_in_columns():
    assert console.task_line("changed", "Run the benchmark matrix") == "  changed  Run the benchmark matrix"
    assert console.task_line("ok", "Probe the host") == "  ok       Probe the host"


def test_a_task_line_says_its_items_retries_time_and_a_host_other_than_localhost():
    assert console.task_line("ok", "Pass the parameters", items=4) == "  ok       Pass the parameters (4 items)"
    assert console.task_line("ok", "Wait", retries=1, seconds=6.24) == "  ok       Wait (1 retry, 6.2 s)"
    assert console.task_line("changed", "Run", host="gpu-1", items=1, retries=3, seconds=125) == \
        "  changed  Run [gpu-1] (1 item, 3 retries, 2 min 05 s)"
    # a quick task's time is noise
    assert console.task_line("ok", "Set a fact", seconds=0.4) == "  ok       Set a fact"


@pytest.mark.parametrize("name, shown", [
    ("", "(a task without a name)"),
    ("   ", "(a task without a name)"),
    ("Run | a\nforged line", "Run | a\\x0aforged line"),
    ("Colour \x1b[31mred", "Colour \\x1b[31mred"),
])
def test_a_task_name_is_never_empty_and_always_one_line(name, shown):
    assert console.task_line("ok", name) == "  ok       " + shown


def test_durations_read_in_seconds_then_minutes():
    assert console.duration(0.05) == "0.1 s"
    assert console.duration(59.94) == "59.9 s"
    assert console.duration(60) == "1 min 00 s"
    assert console.duration(3725.4) == "62 min 05 s"


def test_a_message_is_flat_lines_under_its_task():
    indent = " " * 11
    message = ["matrix m: 8 point(s)", ["point a failed", ["deeper"]], "Regression: 0 regression(s)", "", None]
    assert console.message_lines(message) == [indent + "matrix m: 8 point(s)", indent + "point a failed",
                                              indent + "deeper", indent + "Regression: 0 regression(s)"]


def test_a_text_message_keeps_its_indentation_and_a_mapping_is_one_line_per_key():
    indent = " " * 11
    assert console.message_lines("config:\n  tests:\n\n    enabled: true\n") == [
        indent + "config:", indent + "  tests:", indent + "    enabled: true"]
    assert console.message_lines({"answer": {"b": [1, 2], "a": None}, "name": "x"}) == [
        indent + 'answer: {"a": null, "b": [1, 2]}', indent + "name: x"]
    assert console.message_lines("\x1b[2Jcleared") == [indent + "\\x1b[2Jcleared"]


def test_play_lines_and_recap_lines():
    assert console.play_line("Benchmark on this machine") == "PLAY [Benchmark on this machine]"
    assert console.play_line("") == "PLAY"
    counts = {"ok": 23, "changed": 7, "failures": 0, "unreachable": 0, "skipped": 10, "rescued": 0, "ignored": 1}
    assert console.recap_line("localhost", counts, 22.44) == \
        "PLAY RECAP localhost: ok=23 changed=7 failed=0 skipped=10 ignored=1 (22.4 s)"
    assert console.recap_line("h", {"ok": 1, "failures": 1}) == "PLAY RECAP h: ok=1 changed=0 failed=1"


def export(backend="sqlite", **settings):
    return {"backend": backend, "sqlite": {"path": None}, "opensearch": {"hosts": []}, backend: settings}


def test_the_default_sqlite_store_is_named_as_shared_by_every_checkout(tmp_path):
    environ = {"XDG_DATA_HOME": str(tmp_path)}
    assert store_location.store_line(export(path=None), environ) == (
        "results store: sqlite %s/perfscale-topsail/results.sqlite (shared by every checkout of this account; "
        "set export.sqlite.path for one per project)" % tmp_path)


def test_a_configured_sqlite_store_is_named_with_its_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert store_location.store_line(export(path="results/project.sqlite"), {}) == \
        "results store: sqlite %s (export.sqlite.path)" % os.path.join(str(tmp_path), "results", "project.sqlite")


def test_an_opensearch_store_is_named_without_its_credentials():
    hosts = ["https://admin:s3cr3t-value@os.example.com:9200", "https://os2:9200"]
    line = store_location.store_line(export("opensearch", hosts=hosts), {})
    assert line == "results store: opensearch https://***@os.example.com:9200, https://os2:9200"
    assert "s3cr3t-value" not in line


@pytest.mark.parametrize("section", [None, "sqlite", {}, {"backend": None}, {"backend": 3}])
def test_no_export_section_names_no_store(section):
    assert store_location.store_line(section, {}) is None


def test_another_backend_is_named_by_its_name():
    assert store_location.store_line({"backend": "horreum"}, {}) == "results store: horreum"
