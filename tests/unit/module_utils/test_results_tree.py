import json
import os
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input, errors
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree as store
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fixtures"))
import bounded_call  # noqa: E402  pylint: disable=wrong-import-position
import trees  # noqa: E402  pylint: disable=wrong-import-position


WORKLOAD_SOURCE = '''
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis.kpi import HigherBetter, KPIMetadata
ARTIFACT_DIRNAMES = {"ENV": "*__host__capture_environment", "PRESETS": "presets_applied"}
IMPORTANT_FILES = ["output.json", "ENV/environment.json", "PRESETS"]
CALLS = []
def parse_once(ctx, settings):
    CALLS.append(ctx.test_dir)
    output = ctx.read_json("output.json")
    env = ctx.read_json("environment.json", artifact="ENV")
    notes = ctx.read_text("notes.txt")
    return {"rate": (output or {}).get("@result", {}).get("rate"), "cpu": (env or {}).get("cpu", {}).get("model"),
            "presets": ctx.read_text(artifact="PRESETS"), "notes": notes}
def parse_always(entry):
    entry.results["where"] = entry.relative
def labels_model():
    import pydantic
    class L(pydantic.BaseModel):
        cpu: str
    return L
def kpi_labels(entry):
    return {"cpu": entry.results["cpu"]}
@HigherBetter
@KPIMetadata(help="rate", unit="GFLOP/s")
def rate(payload):
    return payload["results"]["rate"]
KPIS = [rate]
'''


@pytest.fixture
def workload(tmp_path):
    path = tmp_path / "my_workload.py"
    path.write_text(WORKLOAD_SOURCE)
    return workload_lib.load_workload(str(path))


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=3, failed=(1,))
    return root


def test_test_roots_skip_files_nested_roots_and_previous_attempts(tmp_path):
    root = tmp_path / "results"
    trees.make_tree(str(root), points=2)
    point = root / "001__matbenchmarking" / "000__matmul_float32_64"
    nested = point / "inner"
    trees.write(str(nested / "settings.yaml"), "a: 1\n")
    trees.write(str(nested / "exit_code"), "0\n")
    trees.write(str(point / "_previous" / "attempt_1" / "exit_code"), "1\n")
    skipped = root / "002__skipped"
    trees.write(str(skipped / "skip"), "")
    trees.write(str(skipped / "sub" / "settings.yaml"), "a: 1\n")
    trees.write(str(skipped / "sub" / "exit_code"), "0\n")
    trees.write(str(root / "003__no_exit_code" / "settings.yaml"), "a: 1\n")
    roots = [os.path.relpath(r, root) for r in store.find_test_roots(str(root))]
    assert roots == ["001__matbenchmarking/000__matmul_float32_64", "001__matbenchmarking/001__matmul_float64_128"]


def test_settings_merge_from_parents_deeper_wins(tmp_path):
    root = tmp_path / "results"
    trees.write(str(tmp_path / "settings.yaml"), "outside: yes\n")
    trees.write(str(root / "settings.yaml"), "platform: a\nsize: 1\n")
    trees.write(str(root / "group" / "settings.yaml"), "size: 2\ngroup: g\n")
    trees.write(str(root / "group" / "test" / "settings.yaml"), "size: 3\n")
    warnings = []
    reader = store.SettingsReader(str(root), warnings)
    assert reader.merged(str(root / "group" / "test")) == {"platform": "a", "size": 3, "group": "g"}
    trees.write(str(root / "group" / "settings.yaml"), "size: [unclosed\n")
    reader = store.SettingsReader(str(root), warnings)
    assert reader.merged(str(root / "group" / "test")) == {"platform": "a", "size": 3}
    assert warnings and "unreadable settings, ignored" in warnings[0]


def test_artifact_globs_resolve_per_test_last_match_wins_none_when_absent(tmp_path):
    root = tmp_path / "results"
    os.makedirs(root / "000__host__capture_environment")
    os.makedirs(root / "005__host__capture_environment")
    test = root / "001__matbenchmarking" / "000__point"
    os.makedirs(test / "010__local__thing")
    found = store.resolve_artifact_paths(str(test), str(root), {
        "ENV": "*__host__capture_environment", "LOCAL": "*__local__thing", "NONE": "*__nothing"})
    assert found["ENV"] == str(root / "005__host__capture_environment")
    assert found["LOCAL"] == str(test / "010__local__thing")
    assert found["NONE"] is None


def test_parse_degrades_on_missing_and_malformed_files(tree, workload):
    first = tree / "001__matbenchmarking" / "000__matmul_float32_64"
    os.remove(first / "output.json")
    (tree / "000__host__capture_environment" / "environment.json").write_text("{not json")
    entries, _warnings = store.parse_results(str(tree), workload)
    entry = entries[0]
    assert entry.results["rate"] is None and entry.results["cpu"] is None
    text = "\n".join(entry.warnings)
    assert "output.json: missing" in text
    assert "ENV/environment.json: unreadable, ignored" in text
    assert "notes.txt was read but is not listed in the workload's important files" in text
    assert entries[1].exit_code == 3 and entries[1].failed
    assert entries[2].results["rate"] == 102.0
    assert entries[2].results["where"] == "001__matbenchmarking/002__matmul_float32_256"


def test_second_parse_comes_from_the_cache(tree, workload):
    entries, _ignored = store.parse_results(str(tree), workload)
    assert not any(e.from_cache for e in entries)
    calls = len(workload.module.CALLS)
    again, _ignored = store.parse_results(str(tree), workload)
    assert all(e.from_cache for e in again)
    assert len(workload.module.CALLS) == calls
    assert [e.results for e in again] == [e.results for e in entries]


def test_cache_invalidated_when_a_file_read_changes(tree, workload):
    store.parse_results(str(tree), workload)
    output = tree / "001__matbenchmarking" / "002__matmul_float32_256" / "output.json"
    document = json.loads(output.read_text())
    document["@result"]["rate"] = 555.5
    output.write_text(json.dumps(document))
    entries, _ignored = store.parse_results(str(tree), workload)
    assert [e.from_cache for e in entries] == [True, True, False]
    assert entries[2].results["rate"] == 555.5


def test_cache_invalidated_when_a_shared_parent_file_changes(tree, workload):
    store.parse_results(str(tree), workload)
    env = tree / "000__host__capture_environment" / "environment.json"
    env.write_text(json.dumps(dict(trees.ENVIRONMENT, cpu={"model": "Other CPU", "count": 4})))
    entries, _ignored = store.parse_results(str(tree), workload)
    assert not any(e.from_cache for e in entries)
    assert entries[0].results["cpu"] == "Other CPU"


def test_cache_invalidated_when_a_missing_file_appears(tree, workload):
    store.parse_results(str(tree), workload)
    (tree / "001__matbenchmarking" / "000__matmul_float32_64" / "notes.txt").write_text("hello")
    entries, _ignored = store.parse_results(str(tree), workload)
    assert [e.from_cache for e in entries] == [False, True, True]
    assert entries[0].results["notes"] == "hello"


def test_cache_invalidated_when_the_parser_code_changes(tree, tmp_path, workload):
    store.parse_results(str(tree), workload)
    path = tmp_path / "my_workload.py"
    path.write_text(WORKLOAD_SOURCE.replace('"notes": notes}', '"notes": notes, "version": 2}'))
    changed = workload_lib.load_workload(str(path))
    entries, _ignored = store.parse_results(str(tree), changed)
    assert not any(e.from_cache for e in entries)
    assert entries[0].results["version"] == 2


def test_environment_variable_forces_a_full_parse(tree, workload):
    store.parse_results(str(tree), workload)
    entries, _ignored = store.parse_results(str(tree), workload, environ={store.IGNORE_CACHE_ENV: "1"})
    assert not any(e.from_cache for e in entries)


def test_corrupt_cache_is_ignored_with_a_warning_and_rebuilt(tree, workload):
    store.parse_results(str(tree), workload)
    cache = tree / "001__matbenchmarking" / "000__matmul_float32_64" / store.CACHE_FILE
    cache.write_text("{truncated")
    entries, _ignored = store.parse_results(str(tree), workload)
    assert not entries[0].from_cache
    assert any("corrupt parse cache ignored and rebuilt" in w for w in entries[0].warnings)
    assert json.loads(cache.read_text())["format"] == store.CACHE_FORMAT
    entries, _ignored = store.parse_results(str(tree), workload)
    assert entries[0].from_cache


def test_missing_uuid_and_bad_exit_code_degrade(tree, workload):
    point = tree / "001__matbenchmarking" / "002__matmul_float32_256"
    os.remove(point / ".uuid")
    (point / "exit_code").write_text("garbage")
    entries, _ignored = store.parse_results(str(tree), workload)
    assert entries[2].exit_code is None and entries[2].failed
    assert len(entries[2].uuid) == 32
    assert any("exit_code: not an integer" in w for w in entries[2].warnings)


def test_workload_errors_are_clear(tmp_path):
    expected = r"workload 'nope.nothing' cannot be imported .*; built-in workloads: fine_tuning, llm_load, perf_indicators"
    with pytest.raises(errors.WorkloadError, match=expected):
        workload_lib.load_workload("nope.nothing")
    broken = tmp_path / "broken.py"
    broken.write_text("ARTIFACT_DIRNAMES = {}\n")
    with pytest.raises(errors.WorkloadError, match=r"lacks parse_once, kpi_labels, labels_model, KPIS"):
        workload_lib.load_workload(str(broken))
    crashing = tmp_path / "crashing.py"
    crashing.write_text("raise RuntimeError('bad import')\n")
    with pytest.raises(errors.WorkloadError, match=r"failed to load: RuntimeError: bad import"):
        workload_lib.load_workload(str(crashing))


def test_links_out_of_the_results_directory_are_not_followed(tree, workload, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "settings.yaml").write_text("api_token: stolen-value\n")
    (outside / "output.json").write_text('{"@result": {"rate": 999}}')
    (outside / "999__host__capture_environment").mkdir()
    point = tree / "001__matbenchmarking" / "000__matmul_float32_64"
    os.remove(point / "settings.yaml")
    os.symlink(outside / "settings.yaml", point / "settings.yaml")
    os.remove(point / "output.json")
    os.symlink(outside / "output.json", point / "output.json")
    os.symlink(outside / "999__host__capture_environment", tree / "999__host__capture_environment")
    entries, _warnings = store.parse_results(str(tree), workload)
    entry = next(e for e in entries if e.relative.endswith("000__matmul_float32_64"))
    assert "api_token" not in entry.settings
    assert entry.results["rate"] is None
    assert any("settings.yaml: a link out of the results directory" in w for w in _warnings)
    assert any("output.json: a link out of the results directory" in w for w in entry.warnings)
    # the capture directory the link pretends to be is not used: the real one is
    assert entry.results["cpu"] is not None


def test_a_workload_written_against_the_old_kpi_path_still_loads(tmp_path):
    # the decorators moved to analysis/kpi.py; a team's workload importing module_utils.kpi keeps working
    path = tmp_path / "old_workload.py"
    path.write_text(WORKLOAD_SOURCE.replace("plugins.module_utils.analysis.kpi import", "plugins.module_utils.kpi import"))
    assert "module_utils.kpi import" in path.read_text()
    loaded = workload_lib.load_workload(str(path))
    assert [definition.name for definition in loaded.kpis] == ["rate"] and loaded.kpis[0].higher_is_better


# --------------------------------------------------------------------------
# the one bounded reader of the tree's files


def test_the_bounded_reader_reads_a_regular_file_inside_its_root_up_to_its_limit(tmp_path):
    (tmp_path / "ten").write_bytes(b"0123456789")
    (tmp_path / "eleven").write_bytes(b"0123456789a")
    assert bounded_input.read_file(str(tmp_path / "ten"), str(tmp_path), max_bytes=10) == b"0123456789"
    with pytest.raises(bounded_input.FileRefused) as refused:
        bounded_input.read_file(str(tmp_path / "eleven"), str(tmp_path), max_bytes=10, name="eleven")
    assert str(refused.value) == "eleven: 11 bytes, more than the limit of 10; expected at most 10"
    assert not refused.value.missing


def test_the_bounded_reader_reads_no_more_than_its_limit_from_a_file_whose_size_says_less():
    # /proc files say they are empty: the read itself stops at the limit plus one byte
    with pytest.raises(bounded_input.FileRefused) as refused:
        bounded_input.read_file("/proc/self/status", "/proc/self", max_bytes=10, name="status")
    assert str(refused.value) == "status: more than 10 bytes, more than its size said; expected at most 10"


def test_the_bounded_reader_refusals_name_the_file_and_what_was_expected(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    os.mkfifo(root / "fifo")
    (root / "dir").mkdir()
    os.symlink("/dev/null", root / "null")
    os.symlink(tmp_path, root / "up")
    (root / "latin1").write_bytes("caf\u00e9".encode("latin-1"))
    refusals = {}
    for name in ("fifo", "dir", "null", "up/root/fifo", "absent", "latin1"):
        with pytest.raises(bounded_input.FileRefused) as refused:
            bounded_input.read_text(str(root / name), str(root), name=name)
        refusals[name] = (str(refused.value), refused.value.missing)
    assert refusals == {
        "fifo": ("fifo: a FIFO, not a regular file; expected a regular file", False),
        "dir": ("dir: a directory, not a regular file; expected a regular file", False),
        "null": ("null: a link out of the results directory (to /dev/null), not followed; expected a file inside %s"
                 % root, False),
        "up/root/fifo": ("up/root/fifo: a FIFO, not a regular file; expected a regular file", False),
        "absent": ("absent: missing (%s)" % (root / "absent"), True),
        "latin1": ("latin1: not UTF-8 text (byte 3); expected UTF-8", False),
    }
    assert bounded_input.read_text(str(root / "latin1"), str(root), errors="replace") == "caf\ufffd"


def test_every_file_of_a_test_read_by_the_tree_is_bounded_a_fifo_never_blocks_the_walk(tree, workload):
    # on main every one of these blocked the parse for ever, waiting for a writer
    store.parse_results(str(tree), workload)
    point = tree / "001__matbenchmarking" / "000__matmul_float32_64"
    for name in ("exit_code", ".uuid", "settings.yaml", "output.json", "notes.txt", store.CACHE_FILE):
        if os.path.lexists(point / name):
            os.remove(point / name)
        os.mkfifo(point / name)

    def parse():
        entries, tree_warnings = store.parse_results(str(tree), workload)
        return [(e.exit_code, e.results["rate"], e.warnings) for e in entries], tree_warnings
    kind, (entries, tree_warnings) = bounded_call.call(parse)
    assert kind == "returned"
    fifo = "%s: a FIFO, not a regular file; expected a regular file"
    assert tree_warnings == [fifo % (point / "settings.yaml")]
    assert entries[0] == (None, None, [
        "%s: corrupt parse cache ignored and rebuilt (%s)" % (point / store.CACHE_FILE, fifo % store.CACHE_FILE),
        fifo % "exit_code", "exit_code: not an integer (None), the test counts as failed",
        fifo % ".uuid", ".uuid: missing; an id is derived from the test path",
        fifo % "output.json", "notes.txt was read but is not listed in the workload's important files",
        fifo % "notes.txt"])
    # the other tests are parsed as ever
    assert [(code, rate) for code, rate, _w in entries[1:]] == [(3, None), (0, 102.0)]


def test_an_exit_code_linked_to_dev_zero_is_not_read(tree, workload):
    # on main it was read until memory ran out
    point = tree / "001__matbenchmarking" / "000__matmul_float32_64"
    os.remove(point / "exit_code")
    os.symlink("/dev/zero", point / "exit_code")
    kind, warnings = bounded_call.call(lambda: store.parse_results(str(tree), workload)[0][0].warnings)
    assert kind == "returned", warnings
    assert warnings[:2] == ["exit_code: a link out of the results directory (to /dev/zero), not followed; expected a "
                            "file inside %s" % tree, "exit_code: not an integer (None), the test counts as failed"]


def _laughs(levels=9, width=10):
    """A 'billion laughs' YAML document: a few lines, width ** levels leaves through aliases."""
    lines = ['l0: &l0 [%s]' % ", ".join(['"x"'] * width)]
    lines += ['l%d: &l%d [%s]' % (i, i, ", ".join(["*l%d" % (i - 1)] * width)) for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_a_document_of_yaml_aliases_is_checked_once_per_container_not_once_per_place():
    # the settings of a tree are now checked (depth, numbers): on main the check walked every one of the
    # 10^10 places of such a document (for ever); each shared container is checked once per level now
    import yaml

    def parse(text):
        value = bounded_input.parse(yaml.safe_load, text, "settings.yaml", finite=True)
        return len(value)
    assert bounded_call.call(parse, _laughs()) == ("returned", 10)
    assert bounded_call.call(parse, _laughs().replace('"x"', ".nan", 1)) == (
        "raised", ("InputError", "settings.yaml: key l9.9.9.9.9.9.9.9.9.9.0: nan is not a finite number; expected a "
                                 "finite number"))
    assert bounded_call.call(parse, "&a [*a]") == (
        "raised", ("InputError", "settings.yaml: key 0.0.0.0.0.0.0.0...: nested deeper than 64 levels; expected at "
                                 "most 64"))


def test_a_settings_file_of_yaml_aliases_does_not_stall_the_walk(tree, workload):
    (tree / "settings.yaml").write_text(_laughs())
    kind, count = bounded_call.call(lambda: len(store.parse_results(str(tree), workload)[0]))
    assert (kind, count) == ("returned", 3)
