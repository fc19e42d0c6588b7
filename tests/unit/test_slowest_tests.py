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
