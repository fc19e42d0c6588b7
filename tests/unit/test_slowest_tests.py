"""tools/slowest_tests.py: the slowest tests of a make test run, across its steps' JUnit files."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import slowest_tests  # noqa: E402  pylint: disable=wrong-import-position

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.unit.test_a" name="test_fast" time="0.25"/>
<testcase classname="tests.unit.test_a" name="test_slow[x]" time="7.5"/>
<testcase classname="tests.unit.test_b" name="test_odd" time="n/a"/>
</testsuite></testsuites>"""


def test_the_slowest_across_steps_in_order_with_each_steps_total(tmp_path, capsys):
    unit = tmp_path / "unit.xml"
    unit.write_text(JUNIT)
    cluster = tmp_path / "cluster.xml"
    cluster.write_text(JUNIT.replace("7.5", "30.0").replace("tests.unit", "tests.cluster"))
    assert slowest_tests.main(["--top", "3", "unit=%s" % unit, "cluster=%s" % cluster,
                               "kubesim=%s" % (tmp_path / "none.xml")]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "the 3 slowest tests of this run:",
        "  rank  seconds  step         test",
        "     1     30.0  cluster      tests/cluster/test_a.py::test_slow[x]",
        "     2      7.5  unit         tests/unit/test_a.py::test_slow[x]",
        "     3      0.2  unit         tests/unit/test_a.py::test_fast",
        "test time per step: unit 8 s (3 tests), cluster 30 s (3 tests)"]
    assert err.startswith("slowest tests: %s: unreadable (" % (tmp_path / "none.xml")) and err.count("\n") == 1


def test_an_argument_without_a_step_is_one_line(capsys):
    assert slowest_tests.main(["unit.xml"]) == 2
    assert capsys.readouterr().err == "slowest tests: 'unit.xml': expected STEP=FILE.xml\n"


@pytest.mark.parametrize("content", ["", "<not xml", "<testsuites/>"])
def test_an_empty_or_broken_file_is_left_out_or_empty(tmp_path, capsys, content):
    path = tmp_path / "unit.xml"
    path.write_text(content)
    assert slowest_tests.main(["unit=%s" % path]) == 0
    out = capsys.readouterr().out
    assert out.startswith("the 0 slowest tests of this run:") or "unit 0 s (0 tests)" in out


def test_file_times_add_up_each_file_longest_first_and_a_test_class_counts_for_its_file(tmp_path, capsys):
    unit = tmp_path / "unit.xml"
    unit.write_text(JUNIT.replace('<testcase classname="tests.unit.test_b"',
                                  '<testcase classname="tests.unit.test_b.TestGroup" name="test_in_class" time="9.0"/>'
                                  '<testcase classname="tests.unit.test_b"'))
    times = tmp_path / "file_times.json"
    assert slowest_tests.main(["--file-times", str(times), "unit=%s" % unit]) == 0
    capsys.readouterr()
    written = times.read_text()
    assert list(__import__("json").loads(written).items()) == [("tests/unit/test_b.py", 9.0),
                                                               ("tests/unit/test_a.py", 7.8)]
    assert not (tmp_path / "file_times.json.tmp").exists()


class _Item:
    def __init__(self, nodeid):
        self.nodeid = nodeid


def test_the_longest_files_go_first_a_new_file_before_them_and_each_file_keeps_its_order():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "tests_root_conftest", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conftest.py"))
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    items = [_Item(n) for n in ("tests/a.py::one", "tests/a.py::two", "tests/b.py::one", "tests/new.py::one",
                                "tests/c.py::one", "tests/b.py::two")]
    ordered = conftest.longest_files_first(items, {"tests/a.py": 1.0, "tests/b.py": 30.0, "tests/c.py": 5.0})
    assert [i.nodeid for i in ordered] == [
        "tests/new.py::one", "tests/b.py::one", "tests/b.py::two", "tests/c.py::one", "tests/a.py::one", "tests/a.py::two"]
