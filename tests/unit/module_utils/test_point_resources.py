"""Each point's resource usage (point.json ``resources``, measured by the executor) in its payload and as
KPIs of any workload, ignored for regression; a point without them is not missing data, strict or not."""

import json
import os
import socket
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import point_resources, postprocess
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fixtures"))
import bounded_call  # noqa: E402  pylint: disable=wrong-import-position
import trees  # noqa: E402  pylint: disable=wrong-import-position

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml")
# bounded_input.MAX_TREE_FILE_BYTES, spelled out (the test states the limit)
TREE_FILE_LIMIT = 256 * 1024 * 1024
USAGE = {"cpu_user_s": 1.25, "cpu_system_s": 0.5, "voluntary_context_switches": 40,
         "involuntary_context_switches": 7, "max_rss_mib": 88.5}


def test_the_payload_records_the_usage_and_its_kpis_are_ignored_for_regression(tmp_path):
    root = str(tmp_path / "run")
    measured, unmeasured = trees.make_tree(root, points=2)
    path = os.path.join(measured, "point.json")
    with open(path, encoding="utf-8") as handle:
        point = json.load(handle)
    point["resources"] = dict(USAGE, note="not a number")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(point, handle)
    config = config_lib.resolve_config(SHIPPED, presets="cpu_smoke").config
    config["export"]["enabled"] = False
    config["regression"]["enabled"] = False
    config["postprocess"]["strict"] = True
    summary = postprocess.visualize(root, config, ["cpu_smoke"])
    with open(os.path.join(summary["plots_dir"], "kpis.json"), encoding="utf-8") as handle:
        payloads = {p["labels"]["test_path"].rsplit("/", 1)[-1]: p for p in json.load(handle)}
    with_usage = payloads[os.path.basename(measured)]["kpis"]
    assert with_usage["point_cpu_user_time"]["value"] == 1.25
    assert with_usage["point_max_rss"]["value"] == 88.5 and with_usage["point_max_rss"]["unit"] == "MiB"
    assert with_usage["point_involuntary_context_switches"]["value"] == 7
    assert all(with_usage[name]["ignored_for_regression"] for name in
               ("point_cpu_user_time", "point_cpu_system_time", "point_voluntary_context_switches",
                "point_involuntary_context_switches", "point_max_rss"))
    # the workload's own KPIs are still there; a point with no usage measured has none of these, strict mode or not
    assert with_usage["rate"]["value"] is not None
    assert not any(name.startswith("point_cpu") for name in payloads[os.path.basename(unmeasured)]["kpis"])
    assert results_tree.point_resources(measured) == USAGE
    assert results_tree.point_resources(str(tmp_path)) is None
    # the usage travels in the parse cache: a replot from a downloaded cache (prefer_cache) has it too
    with open(os.path.join(measured, results_tree.CACHE_FILE), encoding="utf-8") as handle:
        assert json.load(handle)["results"][results_tree.RESOURCES_KEY] == USAGE


def _set_usage(point_dir, resources):
    path = os.path.join(point_dir, "point.json")
    with open(path, encoding="utf-8") as handle:
        point = json.load(handle)
    point["resources"] = resources
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(point, handle)


def _replace_point_json(point_dir, make):
    path = os.path.join(point_dir, "point.json")
    os.remove(path)
    make(path)


def _parse(root):
    """(resources, warnings) of each test of the tree, parsed by the built-in perf_indicators workload."""
    entries, _tree_warnings = results_tree.parse_results(root, workload_lib.load_workload("perf_indicators"))
    return [(entry.results[results_tree.RESOURCES_KEY], entry.warnings) for entry in entries]


def _unix_socket(path):
    previous = os.getcwd()
    os.chdir(os.path.dirname(path))   # a socket's path is at most 108 bytes: bind it by its name
    try:
        server = socket.socket(socket.AF_UNIX)
        server.bind(os.path.basename(path))
        server.close()
    finally:
        os.chdir(previous)


def _huge(path):
    with open(path, "wb") as handle:   # sparse: costs no disk
        handle.truncate(TREE_FILE_LIMIT + 1)


@pytest.mark.parametrize("make, reason", [
    (lambda path: os.symlink("/dev/zero", path), "point.json: a link out of the results directory (to /dev/zero), not "
                                                 "followed; expected a file inside {root}"),
    (os.mkfifo, "point.json: a FIFO, not a regular file; expected a regular file"),
    (os.mkdir, "point.json: a directory, not a regular file; expected a regular file"),
    (_unix_socket, "point.json: a socket, not a regular file; expected a regular file"),
    (_huge, "point.json: 268435457 bytes, more than the limit of 268435456; expected at most 268435456"),
], ids=["link-to-dev-zero", "fifo", "directory", "socket", "huge"])
def test_a_point_json_that_is_not_a_small_regular_file_degrades_that_point_with_its_reason(tmp_path, make, reason):
    # on main, /dev/zero was read until memory ran out and a FIFO blocked the parse for ever: in a child process
    # with a deadline and a memory limit, such a regression is one failed test
    root = str(tmp_path / "run")
    bad, good = trees.make_tree(root, points=2)
    _set_usage(good, USAGE)
    _replace_point_json(bad, make)
    assert bounded_call.call(_parse, root) == ("returned", [(None, [reason.format(root=root)]), (USAGE, [])])


def test_a_point_json_linked_out_of_the_results_directory_is_not_read(tmp_path):
    root = str(tmp_path / "run")
    (point,) = trees.make_tree(root, points=1)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "point.json").write_text(json.dumps({"resources": USAGE}))
    _replace_point_json(point, lambda path: os.symlink(elsewhere / "point.json", path))
    assert _parse(root) == [(None, ["point.json: a link out of the results directory (to %s), not followed; expected "
                                    "a file inside %s" % (elsewhere / "point.json", root)])]


def test_a_point_json_that_is_not_utf8_degrades_with_one_warning(tmp_path):
    root = str(tmp_path / "run")
    (point,) = trees.make_tree(root, points=1)
    _replace_point_json(point, lambda path: open(path, "wb").write(b"\xff{not json"))
    assert _parse(root) == [(None, ["point.json: not UTF-8 text (byte 0); expected UTF-8"])]


def test_only_finite_numbers_of_point_json_resources_are_kept(tmp_path):
    root = str(tmp_path / "run")
    (point,) = trees.make_tree(root, points=1)
    with open(os.path.join(point, "point.json"), "w", encoding="utf-8") as handle:
        handle.write('{"resources": {"cpu_user_s": NaN, "max_rss_mib": 1e999, "cpu_system_s": 0.5, '
                     '"voluntary_context_switches": 1%s, "involuntary_context_switches": true}}' % ("0" * 400))
    assert _parse(root) == [({"cpu_system_s": 0.5}, [])]


def test_a_test_parsed_without_its_resources_reads_point_json_through_the_bounded_reader(tmp_path):
    # an entry whose results lack the key (an older cache) reads point.json itself: a FIFO blocked it on main
    root = str(tmp_path / "run")
    (point,) = trees.make_tree(root, points=1)
    _replace_point_json(point, os.mkfifo)
    entry = results_tree.Entry(point, os.path.relpath(point, root), {}, 0, "u", {}, [], True)
    entry.results_dir = root

    def read():
        return point_resources.read(entry), entry.warnings
    assert bounded_call.call(read) == ("returned", (None, ["point.json: a FIFO, not a regular file; expected a "
                                                           "regular file"]))


def test_post_processing_goes_on_past_point_json_files_linked_to_dev_zero_or_fifos(tmp_path):
    # on main: MemoryError, a bare "Task failed." (or a hang); now each such point loses its resources, with a reason
    root = str(tmp_path / "run")
    to_zero, fifo, measured = trees.make_tree(root, points=3)
    _set_usage(measured, USAGE)
    _replace_point_json(to_zero, lambda path: os.symlink("/dev/zero", path))
    _replace_point_json(fifo, os.mkfifo)
    config = config_lib.resolve_config(SHIPPED, presets="cpu_smoke").config
    config["export"]["enabled"] = False
    config["regression"]["enabled"] = False

    def run():
        summary = postprocess.visualize(root, config, ["cpu_smoke"])
        with open(os.path.join(summary["plots_dir"], "kpis.json"), encoding="utf-8") as handle:
            kpis = {p["labels"]["test_path"].rsplit("/", 1)[-1]: sorted(p["kpis"]) for p in json.load(handle)}
        with open(os.path.join(summary["plots_dir"], postprocess.PARSE_LOG), encoding="utf-8") as handle:
            return kpis, handle.read()
    kind, outcome = bounded_call.call(run, timeout=120)
    assert kind == "returned", outcome
    kpis, log = outcome
    assert ("    warning: point.json: a link out of the results directory (to /dev/zero), not followed; expected a "
            "file inside %s\n" % root) in log
    assert "    warning: point.json: a FIFO, not a regular file; expected a regular file\n" in log
    assert "point_cpu_user_time" in kpis[os.path.basename(measured)]
    for point in (to_zero, fifo):
        assert "rate" in kpis[os.path.basename(point)] and "point_cpu_user_time" not in kpis[os.path.basename(point)]


def test_a_point_json_that_is_not_json_degrades_with_one_warning(tmp_path):
    root = str(tmp_path / "run")
    (point,) = trees.make_tree(root, points=1)
    _replace_point_json(point, lambda path: open(path, "w", encoding="utf-8").write('{"resources": [1, 2'))
    assert _parse(root) == [(None, ["point.json: unreadable, ignored: not JSON: Expecting ',' delimiter: line 1 column "
                                    "20 (char 19)"])]
