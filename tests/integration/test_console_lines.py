"""What a newcomer reads: the console of the demo with the checkout's ansible.cfg (the steps callback)."""

import re

from helpers import run_playbook

TASK_LINE = re.compile(r"^  (ok {7}|changed {2})(?=\S)")
MESSAGE_LINE = re.compile(r"^ {11}\S")
# what the collection's actions print while they work (their own one-line reports)
ACTION_LINE = re.compile(r"^(matrix: \d+/\d+ done|reports: |regression: |kpi_export: )")


def test_the_demo_prints_each_step_once_and_names_its_results_store(tmp_path):
    data = tmp_path / "data"
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke",
                       "-e", "artifact_dir=%s" % (tmp_path / "run"), env={"XDG_DATA_HOME": str(data)})
    assert run.returncode == 0, run.output
    lines = run.output.splitlines()
    # the default callback printed 150 lines here: a banner per task, skipped tasks, includes, loop items
    assert len(lines) <= 50, run.output
    expected = (TASK_LINE.match, MESSAGE_LINE.match, ACTION_LINE.match, lambda line: line.startswith("PLAY ["))
    unexpected = [line for line in lines if not any(match(line) for match in expected)]
    assert unexpected == [
        "PLAY RECAP localhost: " + re.search(r"ok=\d+ changed=\d+ failed=0 skipped=\d+ \(.*\)", run.output).group(0),
        "results store: sqlite %s/perfscale-topsail/results.sqlite (shared by every checkout of this account; set "
        "export.sqlite.path for one per project)" % data]
    names = [TASK_LINE.sub("", line) for line in lines if TASK_LINE.match(line)]
    assert not [name for name in names if name.rstrip().endswith("|") or "|  " in name]
    assert "Run the benchmark matrix" in " ".join(names)
    # the summary: one line per item, none nested, the report's path last before the recap
    shown = next(line for line in lines if "Show where the artifacts and reports are" in line)
    summary = lines[lines.index(shown) + 1:]
    assert [line.split(":")[0].strip() for line in summary[1:5]] == ["Regression", "Artifacts", "Exported artifacts",
                                                                     "Reports"]
    assert not [line for line in summary if line.strip().startswith("- ")]


def test_v_brings_the_default_callbacks_detail_back():
    quiet = run_playbook("playbooks/config.yml", "-e", "preset=cpu_smoke")
    verbose = run_playbook("playbooks/config.yml", "-e", "preset=cpu_smoke", "-v")
    assert quiet.returncode == 0 and verbose.returncode == 0, quiet.output + verbose.output
    assert "TASK [" not in quiet.output and "  ok       Print the effective configuration" in quiet.output
    assert "TASK [Print the effective configuration]" in verbose.output
    assert "ok: [localhost]" in verbose.output and "PLAY RECAP ***" in verbose.output
