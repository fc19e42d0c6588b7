"""make mutation's tool (tools/mutation.py): stages per module, what a later run re-tests, how a module is scored."""

import importlib.util
import json
import os

import pytest

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools",
                    "mutation.py")
PREFIX = "ansible_collections.perfscale.topsail.plugins.module_utils.safe_paths."


def load_tool():
    spec = importlib.util.spec_from_file_location("mutation_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tool(tmp_path, monkeypatch):
    module = load_tool()
    monkeypatch.setattr(module, "STAGES", str(tmp_path / "stages"))
    monkeypatch.setattr(module, "EQUIVALENTS", str(tmp_path / "equivalents"))
    return module


def write_meta(tool, label, codes):
    path = tool.meta_path(label, "safe_paths.py")
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"exit_code_by_key": codes, "durations_by_key": {}}, handle)
    return path


def test_each_module_has_its_own_stage_named_after_its_label(tool):
    assert tool.stage_of("path safety").endswith(os.sep + "path-safety")
    assert tool.stage_of("llm harness metrics and arrivals").endswith(os.sep + "llm-harness-metrics-and-arrivals")
    assert len({tool.stage_of(label) for label in tool.MODULES}) == len(tool.MODULES)


def test_a_later_run_retests_the_survivors_and_the_unreached_and_keeps_the_killed(tool):
    codes = {PREFIX + "a__mutmut_1": 1, PREFIX + "a__mutmut_2": 0, PREFIX + "a__mutmut_3": 33,
             PREFIX + "a__mutmut_4": -24, PREFIX + "a__mutmut_5": None}
    path = write_meta(tool, "path safety", codes)
    tool.retest_undecided("path safety")
    with open(path, encoding="utf-8") as handle:
        kept = json.load(handle)
    assert kept["exit_code_by_key"] == {PREFIX + "a__mutmut_1": 1, PREFIX + "a__mutmut_2": None,
                                        PREFIX + "a__mutmut_3": None, PREFIX + "a__mutmut_4": -24,
                                        PREFIX + "a__mutmut_5": None}
    assert kept["durations_by_key"] == {}


def test_the_score_leaves_out_the_equivalent_and_the_unreached(tool):
    write_meta(tool, "path safety", {PREFIX + "a__mutmut_%d" % n: code
                                     for n, code in enumerate([1, 1, 1, -24, 0, 0, 33, 5], start=1)})
    os.makedirs(tool.EQUIVALENTS)
    with open(os.path.join(tool.EQUIVALENTS, "path-safety.yml"), "w", encoding="utf-8") as handle:
        handle.write("---\n%sa__mutmut_6: {reason: a cache key}\n" % PREFIX)
    table, survivors = tool.scores(["path safety"])
    row = table["path safety"]
    assert (row["killed"], row["survived"], row["no tests"], row["equivalent"]) == (4, 1, 2, 1)
    assert row["score"] == 4 / 5
    assert survivors == {"path safety": [PREFIX + "a__mutmut_5"]}


def test_an_equivalent_without_a_reason_is_refused_with_its_name(tool):
    os.makedirs(tool.EQUIVALENTS)
    with open(os.path.join(tool.EQUIVALENTS, "path-safety.yml"), "w", encoding="utf-8") as handle:
        handle.write("---\n%sa__mutmut_6: {reason: ''}\n" % PREFIX)
    with pytest.raises(SystemExit, match=r"path-safety.yml: .*a__mutmut_6 needs a 'reason'"):
        tool.equivalents()


def test_an_unknown_module_label_is_one_line_naming_the_known_ones(tool, capsys):
    with pytest.raises(SystemExit) as stopped:
        tool.main(["no such module"])
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "unknown module(s) no such module; expected one of: regression maths;" in error


def test_a_module_never_run_is_reported_as_not_run_without_a_score(tool):
    table, survivors = tool.scores(["run lock"])
    assert table["run lock"]["not run"] == 1 and table["run lock"]["score"] is None
    assert not survivors
