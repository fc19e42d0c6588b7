"""The matrix on inventory hosts: planning on the controller, running from the payload alone,
the archive checked before it is unpacked, the verdict over hosts."""

import io
import json
import os
import sys
import tarfile

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg
from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import inventory_hosts as host_matrix
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.inventory_hosts import InventoryHostsExecutor as Hosts
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as mx
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import MatrixError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.local import LocalExecutor
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import perf_indicator

SHIPPED = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml"))
SMALL = {"tests.benchmark.name_template": "{indicator}_{size}",
         "tests.benchmark.matrix": {"factors": {"indicator": "matmul", "size": [16, 32]},
                                    "common_settings": {"backend": "numpy", "reps": 2, "warmup": 0},
                                    "include": [], "exclude": []}}


def host_plan(**overrides):
    config = cfg.resolve_config(SHIPPED, overrides=dict(SMALL, **overrides)).config
    return benchmark.plan_benchmark(config, python=host_matrix.PYTHON_TOKEN)


def plan_host(plan, run_root, host):
    return Hosts.for_plan(plan).plan_host(plan.points, run_root, host)


def test_the_payload_names_the_hosts_python_and_the_shipped_script_never_the_controllers_paths(tmp_path):
    matrix_dir, resumed, payload = plan_host(host_plan(), str(tmp_path), "gpu-1")
    assert not resumed
    assert os.path.dirname(matrix_dir) == str(tmp_path / "hosts" / "gpu-1")
    assert (tmp_path / "hosts" / "gpu-1" / "settings.yaml").read_text().strip() == "benchmark_host: gpu-1"
    assert sorted(payload["files"]) == ["indicators.py"]
    assert payload["files"]["indicators.py"] == open(perf_indicator.indicator_script()).read()
    assert [p["directory"] for p in payload["points"]] == ["000__matmul_16", "001__matmul_32"]
    for point in payload["points"]:
        assert point["argv"][:3] == ["@python@", "-P", "@harness_dir@/indicators.py"]
        assert all(os.path.dirname(perf_indicator.indicator_script()) not in part for part in point["argv"])
        assert json.loads(point["env"][mx.SETTINGS_ENV])["indicator"] == "matmul"
    # the payload is what travels: plain JSON
    json.dumps(payload)


def test_the_payload_runs_with_nothing_but_itself_and_comes_back_into_the_controllers_tree(tmp_path):
    matrix_dir, _resumed, payload = plan_host(host_plan(), str(tmp_path / "run"), "h1")
    work = tmp_path / "host-work"
    summary = Hosts.run_payload(json.loads(json.dumps(payload)), str(work), harnesses.get_harness("perf_indicator"),
                                sys.executable, LocalExecutor())
    assert (summary["done"], summary["succeeded"], summary["failed"]) == (2, 2, 0)
    assert (work / "harness" / "indicators.py").exists()
    finished = Hosts.unpack(summary["archive"], matrix_dir, [p["directory"] for p in payload["points"]])
    assert finished == ["000__matmul_16", "001__matmul_32"]
    for name in finished:
        directory = os.path.join(matrix_dir, name)
        assert mx.read_exit_code(directory) == 0
        assert os.path.exists(os.path.join(directory, "settings.yaml"))  # the controller's, kept
        assert json.load(open(os.path.join(directory, "point.json")))["command"][2] == str(work / "harness" / "indicators.py")
    # planned again: nothing left to send
    _matrix_dir, resumed, again = plan_host(host_plan(), str(tmp_path / "run"), "h1")
    assert resumed and again["points"] == []


def test_the_host_runs_its_points_through_the_executor_protocol_and_closes_it(tmp_path):
    """On the host too, the executor gets the matrix (``run``) and is closed after, as on the controller."""
    calls = []

    class Recording(LocalExecutor):
        def run(self, matrix):
            calls.append(("run", [p.name for p in matrix.points], matrix.timeout, matrix.parallelism,
                          matrix.stop_on_error, matrix.section))
            return super().run(matrix)

        def close(self):
            calls.append(("close",))

    _matrix_dir, _resumed, payload = plan_host(host_plan(), str(tmp_path / "run"), "h1")
    summary = Hosts.run_payload(payload, str(tmp_path / "work"), harnesses.get_harness("perf_indicator"),
                                sys.executable, Recording())
    assert calls == [("run", ["matmul_16", "matmul_32"], payload["timeout_s"], payload["parallelism"],
                      payload["stop_on_error"], payload["section"]), ("close",)]
    assert (summary["succeeded"], summary["failed"]) == (2, 0)


def test_a_point_that_fails_on_the_host_comes_back_failed_and_an_earlier_attempt_moves_aside(tmp_path):
    matrix_dir, _resumed, payload = plan_host(host_plan(), str(tmp_path / "run"), "h1")
    stale = os.path.join(matrix_dir, "000__matmul_16", "stderr.log")
    open(stale, "w").write("an earlier attempt\n")
    summary = Hosts.run_payload(payload, str(tmp_path / "work"), harnesses.get_harness("perf_indicator"),
                                "/nonexistent/python", LocalExecutor())
    assert summary["failed"] == 2 and summary["failed_points"][0]["directory"] == "000__matmul_16"
    Hosts.unpack(summary["archive"], matrix_dir, [p["directory"] for p in payload["points"]])
    point = os.path.join(matrix_dir, "000__matmul_16")
    assert "could not be started" in open(os.path.join(point, "FAILURE")).read()
    assert open(os.path.join(point, "_previous", "attempt_1", "stderr.log")).read() == "an earlier attempt\n"


def _archive(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for name, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(info)
            else:
                info.size = 2
                tar.addfile(info, io.BytesIO(b"ok"))
    return str(path)


@pytest.mark.parametrize("member", [("../escape", "file"), ("/abs/file", "file"), ("other_point/exit_code", "file"),
                                    ("000__a/link", "link"), ("000__a", "file"), ("000__a/", "file"),
                                    ("000__a//x", "file"), ("000__a/./x", "file"), ("000__a/settings.yaml/x", "file"),
                                    ("000__a/_previous", "file")])
def test_an_archive_with_anything_but_files_of_the_given_points_is_refused_before_anything_is_written(tmp_path, member):
    matrix_dir = tmp_path / "matrix"
    (matrix_dir / "000__a").mkdir(parents=True)
    (matrix_dir / "000__a" / "stdout.log").write_text("kept")
    archive = _archive(tmp_path / "points.tar.gz", [("000__a/exit_code", "file"), member])
    with pytest.raises(MatrixError, match="is not a file of a point directory the host was given; nothing was unpacked"):
        Hosts.unpack(archive, str(matrix_dir), ["000__a"])
    assert sorted(os.listdir(matrix_dir / "000__a")) == ["stdout.log"]
    assert sorted(os.listdir(matrix_dir)) == ["000__a"]


def test_a_file_where_another_member_needs_a_directory_leaves_the_earlier_attempt_in_place(tmp_path):
    matrix_dir = tmp_path / "matrix"
    (matrix_dir / "000__a").mkdir(parents=True)
    (matrix_dir / "000__a" / "stdout.log").write_text("kept")
    archive = _archive(tmp_path / "points.tar.gz", [("000__a/exit_code", "file"), ("000__a/out", "file"),
                                                    ("000__a/out/x", "file")])
    with pytest.raises(MatrixError, match="'000__a/out/x' \\(needs '000__a/out' as a directory.*nothing was written"):
        Hosts.unpack(archive, str(matrix_dir), ["000__a"])
    assert sorted(os.listdir(matrix_dir / "000__a")) == ["stdout.log"]
    assert sorted(os.listdir(matrix_dir)) == ["000__a"]


def test_an_archive_that_breaks_while_unpacking_leaves_every_point_as_it_was(tmp_path, monkeypatch):
    matrix_dir = tmp_path / "matrix"
    (matrix_dir / "000__a").mkdir(parents=True)
    (matrix_dir / "000__a" / "stdout.log").write_text("kept")
    archive = _archive(tmp_path / "points.tar.gz", [("000__a/exit_code", "file"), ("000__a/stdout.log", "file")])

    def broken(self, *args, **kwargs):
        raise tarfile.ReadError("unexpected end of data")
    monkeypatch.setattr(tarfile.TarFile, "extractall", broken)
    with pytest.raises(MatrixError, match="unreadable: unexpected end of data"):
        Hosts.unpack(archive, str(matrix_dir), ["000__a"])
    assert (matrix_dir / "000__a" / "stdout.log").read_text() == "kept"
    assert sorted(os.listdir(matrix_dir)) == ["000__a"] and sorted(os.listdir(matrix_dir / "000__a")) == ["stdout.log"]


def test_a_damaged_archive_is_one_line(tmp_path):
    damaged = tmp_path / "points.tar.gz"
    damaged.write_bytes(b"\x1f\x8b not really")
    with pytest.raises(MatrixError, match="archive of its point directories is unreadable"):
        Hosts.unpack(str(damaged), str(tmp_path), ["000__a"])


def test_a_harness_that_needs_the_controller_or_another_executor_is_refused(tmp_path):
    with pytest.raises(MatrixError, match="executor kubernetes with the inventory group benchmark_hosts: expected local"):
        plan_host(host_plan(**{"tests.benchmark.executor": "kubernetes"}), str(tmp_path), "h")
    plan = host_plan()
    plan.harness = harnesses.get_harness("toolbox_flow")
    with pytest.raises(MatrixError, match="harness toolbox_flow cannot run on the inventory group benchmark_hosts"):
        plan_host(plan, str(tmp_path), "h")


@pytest.mark.parametrize("host", ["", "..", "a/b"])
def test_a_host_name_that_cannot_be_a_directory_is_refused(tmp_path, host):
    with pytest.raises(MatrixError, match="cannot name a directory of the run"):
        Hosts.host_parent(str(tmp_path), host)


def test_a_payload_from_another_release_or_with_a_path_for_a_directory_is_refused(tmp_path):
    run = dict(harness=harnesses.get_harness("perf_indicator"), python=sys.executable, executor=LocalExecutor())
    with pytest.raises(MatrixError, match="expected format 1"):
        Hosts.run_payload({"format": 99, "points": []}, str(tmp_path), **run)
    with pytest.raises(MatrixError, match="is not a directory name"):
        Hosts.run_payload({"format": 1, "points": [{"directory": "../x"}]}, str(tmp_path), **run)


def test_the_verdict_over_hosts_names_each_failed_host_and_failed_point():
    outcome = Hosts.outcomes({
        "ok": {"msg": "ok: matrix m: 2 point(s)", "failed_points": []},
        "pts": {"msg": "pts: matrix", "failed_points": [{"name": "000__a", "exit_code": 1}]},
        "gone": {"unreachable": True, "msg": "Failed to connect\nto the host"},
        "broken": {"failed": True, "msg": "matrix_host_run on broken: boom"},
        "never": None,
        "off": {"skipped": True},
    })
    assert [h["host"] for h in outcome["failed_hosts"]] == ["broken", "gone", "never"]
    assert outcome["failed_hosts"][1]["msg"] == "unreachable: Failed to connect to the host"
    assert [p["label"] for p in outcome["failed_points"]] == ["pts:000__a"]
    assert "off: skipped" in outcome["lines"] and "gone: FAILED: unreachable: Failed to connect to the host" in outcome["lines"]
