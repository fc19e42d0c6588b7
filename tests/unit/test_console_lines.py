"""benchmarks/console_lines.py: a run under a label replaces that label's demos only; an unknown demo is
one line."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))

import console_lines  # noqa: E402  pylint: disable=wrong-import-position


def test_a_label_replaces_its_own_demos_and_keeps_the_others(tmp_path):
    path = tmp_path / "console_lines.json"
    path.write_text(json.dumps({"runs": {"before": {"demo": {"lines": 150}, "demo-k8s": {"lines": 563}}}}))
    record = console_lines.merge(str(path), "before", {"demo": {"lines": 151}})
    assert record["runs"]["before"] == {"demo": {"lines": 151}, "demo-k8s": {"lines": 563}}
    record = console_lines.merge(str(path), "after", {"demo": {"lines": 38}})
    assert record["runs"]["after"] == {"demo": {"lines": 38}} and record["runs"]["before"]["demo"] == {"lines": 150}
    assert console_lines.merge(str(tmp_path / "absent.json"), "after", {"demo": {"lines": 1}})["runs"] == \
        {"after": {"demo": {"lines": 1}}}


def test_an_unknown_demo_is_one_line(capsys):
    with pytest.raises(SystemExit) as exited:
        console_lines.main(["--label", "x", "--demos", "demo,dmeo"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == \
        "console_lines.py: error: --demos: dmeo: expected some of demo, demo-k8s, demo-flows"


def test_the_demos_are_the_makefiles_commands():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "Makefile"), encoding="utf-8") as handle:
        makefile = handle.read()
    assert "ansible-playbook playbooks/benchmark.yml -e preset=$(PRESET)" in makefile
    assert console_lines.DEMOS["demo"][1:] == ["playbooks/benchmark.yml", "-e", "preset=cpu_smoke"]
    assert "-m kubesim.run --profile openshift --time-scale 20 --" in makefile
    assert console_lines.DEMOS["demo-k8s"][1:8] == ["-m", "kubesim.run", "--profile", "openshift", "--time-scale",
                                                    "20", "--"]
    assert "tools/demo_flows.py" in makefile and console_lines.DEMOS["demo-flows"][1:] == ["tools/demo_flows.py"]
