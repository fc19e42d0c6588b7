"""The kubernetes executor's pure parts: the Job it renders (validated strictly against the
core schemas), the argv the pod runs, and the point archive that brings the files back
through the pod log (pod_point.py run as the pod runs it)."""

import io
import os
import subprocess
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import section as benchmark_section
from ansible_collections.perfscale.topsail.plugins.module_utils import executors
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import kubernetes as k8s
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import pod_point
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.base import PointCommand
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.validation import validate_manifest
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix.engine import Point

POD_POINT = pod_point.__file__.replace(".pyc", ".py")


def _point(index=3, name="matmul_float32_1024"):
    command = PointCommand([sys.executable, "-P", os.path.join(k8s.CONTROLLER_COLLECTION, "plugins", "x.py"), "size=4"],
                           {"PERFSCALE_SETTINGS": '{"size": 4}'})
    return Point(index, name, {"size": 4}, command), command


def test_the_defaults_are_those_of_the_configuration_schema():
    model = benchmark_section.benchmark_model()
    assert model().model_dump()["kubernetes"] == k8s.DEFAULTS


def test_the_job_of_a_point_validates_strictly_with_every_setting():
    point, command = _point()
    settings = dict(k8s.DEFAULTS, image="registry.example/perfscale/topsail:1.2", image_pull_policy="IfNotPresent",
                    python="/usr/bin/python3", collection_path="/usr/share/ansible/collections/ansible_collections/p/t",
                    node_selector={"nvidia.com/gpu.present": "true"},
                    tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    resources={"limits": {"nvidia.com/gpu": 1}, "requests": {"cpu": "2"}},
                    service_account="benchmark", pass_env=["HTTPS_PROXY", "NOT_SET_HERE"])
    name = k8s.job_name("matbenchmarking", point.index, "abc123")
    job = k8s.render_job(settings, name, point, command, 600.5, "matbenchmarking", environ={"HTTPS_PROXY": "http://p:3128"})
    assert validate_manifest(job, strict=True) == []
    assert job["spec"]["activeDeadlineSeconds"] == 601 and job["spec"]["backoffLimit"] == 0
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["/usr/bin/python3", "-S", "-P", settings["collection_path"] + "/" + k8s.POD_ENTRY]
    assert container["args"] == ["/usr/bin/python3", "-P", settings["collection_path"] + "/plugins/x.py", "size=4"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["PERFSCALE_SETTINGS"] == '{"size": 4}' and env["HTTPS_PROXY"] == "http://p:3128"
    assert "NOT_SET_HERE" not in env and env[pod_point.LIMIT_ENV] == str(8 * 1024 * 1024)
    assert job["metadata"]["annotations"][k8s.POINT_ANNOTATION] == "matmul_float32_1024"
    # a wrong key is what strict validation is for
    job["spec"]["template"]["spec"]["nodeSelectr"] = {}
    problems = validate_manifest(job, strict=True)
    assert len(problems) == 1 and "nodeSelectr" in str(problems[0])


def test_job_names_are_dns_labels_short_enough_for_their_pods():
    name = k8s.job_name("My_Very Long Matrix Name " * 4, 1234, "ab12cd")
    assert len(name) <= 52 and name.endswith("-1234-ab12cd") and name == name.lower()
    assert k8s.job_name("___", 1, "x") == "point-0001-x"


def test_the_pod_runs_this_controllers_paths_unless_the_image_has_its_own():
    argv = [sys.executable, "-P", k8s.CONTROLLER_COLLECTION + "/plugins/a.py", "/elsewhere/b"]
    assert k8s.pod_argv(argv) == argv
    assert k8s.pod_argv(argv, "python3", "/c/") == ["python3", "-P", "/c/plugins/a.py", "/elsewhere/b"]


def test_a_wrong_executor_setting_is_one_line():
    with pytest.raises(ConfigError, match=r"tests\.benchmark\.kubernetes\.clustr"):
        config_schema.read_section({"tests": {"benchmark": {"executor": "kubernetes", "kubernetes": {"clustr": "x"}}}},
                                   "tests.benchmark")
    with pytest.raises(ConfigError, match=r"tests\.benchmark\.kubernetes\.namespace"):
        config_schema.read_section({"tests": {"benchmark": {"kubernetes": {"namespace": "Not_A_Label"}}}}, "tests.benchmark")
    assert "kubernetes" in executors.executor_names()


def _run_pod_point(tmp_path, argv, limit=None, env=None):
    env = dict(os.environ, **(env or {}))
    if limit is not None:
        env[pod_point.LIMIT_ENV] = str(limit)
    return subprocess.run([sys.executable, "-S", "-P", POD_POINT] + argv, env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60, check=False)


def _extract(tmp_path, log):
    code, files = k8s.parse_archive(log)
    target = tmp_path / "point"
    target.mkdir()
    k8s.extract_archive(files, str(target))
    return code, target


def test_the_pod_entry_sends_the_point_directory_back_through_its_log(tmp_path):
    script = ("import json, os, sys; os.makedirs('sub'); open('sub/data.txt', 'w').write('x' * 100000);"
              "open('b\u00e9 t.bin', 'wb').write(bytes(range(256)));"
              "print(json.dumps({'ok': 1})); sys.stderr.write('done\\n'); sys.exit(4)")
    done = _run_pod_point(tmp_path, [sys.executable, "-c", script], env={"TMPDIR": str(tmp_path)})
    assert done.returncode == 4, done.stderr
    code, target = _extract(tmp_path, done.stdout)
    assert code == 4
    assert (target / "stdout.log").read_text() == '{"ok": 1}\n'
    assert (target / "stderr.log").read_text() == "done\n"
    assert (target / "sub" / "data.txt").read_text() == "x" * 100000
    assert (target / "b\u00e9 t.bin").read_bytes() == bytes(range(256))
    assert len(done.stdout) < 10000  # compressed
    assert sorted(os.listdir(tmp_path)) == ["point"]  # the pod's working directory was removed


def test_files_over_the_limit_are_left_out_and_listed(tmp_path):
    script = "open('big.bin', 'wb').write(b'0' * 5000); open('small.txt', 'w').write('s')"
    done = _run_pod_point(tmp_path, [sys.executable, "-c", script], limit=1000)
    assert done.returncode == 0 and "left out (over 1000 bytes): big.bin" in done.stderr
    _code, target = _extract(tmp_path, done.stdout)
    assert sorted(os.listdir(target)) == sorted([pod_point.SKIPPED_FILE, "small.txt", "stdout.log", "stderr.log"])
    assert (target / pod_point.SKIPPED_FILE).read_text() == "big.bin\n"


@pytest.mark.parametrize("argv, limit, message", [
    ([], None, "pod_point: no command"),
    (["true"], "lots", "PERFSCALE_POINT_ARCHIVE_LIMIT='lots': expected a number of bytes"),
])
def test_a_pod_entry_without_a_usable_command_says_so(tmp_path, argv, limit, message):
    done = _run_pod_point(tmp_path, argv, limit=limit)
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr


def test_a_command_that_cannot_start_is_127_with_its_reason_in_stderr(tmp_path):
    done = _run_pod_point(tmp_path, [str(tmp_path / "missing-binary")])
    assert done.returncode == 127
    code, target = _extract(tmp_path, done.stdout)
    assert code == 127 and "could not be started" in (target / "stderr.log").read_text()


def _archive_log(files, exit_code=0):
    stream = io.StringIO()
    stream.write("%s %d %d\n" % (pod_point.BEGIN, exit_code, len(files)))
    for name, data in files.items():
        pod_point.write_file_entry(stream, name, data)
    stream.write(pod_point.END + "\n")
    return stream.getvalue()


def test_a_damaged_or_missing_archive_is_told_apart():
    log = "some line\n" + _archive_log({"a.txt": b"a" * 300})
    assert k8s.parse_archive(log) == (0, {"a.txt": b"a" * 300})
    assert k8s.parse_archive("only the command's own output\n") is None
    assert k8s.parse_archive(log.replace(pod_point.END, "")) is None  # cut short: the pod was stopped
    lines = log.splitlines()
    lines[3] = lines[3][:8] + ("AAAA" if lines[3][8:12] != "AAAA" else "BBBB") + lines[3][12:]
    with pytest.raises(ValueError, match="archive file a.txt"):
        k8s.parse_archive("\n".join(lines))
    with pytest.raises(ValueError, match="its header announced 2"):
        k8s.parse_archive(log.replace(pod_point.BEGIN + " 0 1", pod_point.BEGIN + " 0 2"))


@pytest.mark.parametrize("name", ["../escape.txt", "/abs.txt", "sub/../../escape.txt", ".", "sub/", "a\\b", "fine.txt/x"])
def test_an_archive_cannot_write_outside_the_point_directory(tmp_path, name):
    _code, files = k8s.parse_archive(_archive_log({"fine.txt": b"1", name: b"x"}))
    target = tmp_path / "point"
    target.mkdir()
    with pytest.raises(ValueError, match="archive member\\(s\\) refused: .*nothing was written"):
        k8s.extract_archive(files, str(target))
    assert os.listdir(target) == [] and not (tmp_path / "escape.txt").exists()


def test_an_archive_announcing_more_than_it_holds_or_past_the_limit_is_refused(monkeypatch):
    log = _archive_log({"big.bin": b"\0" * 100000})
    # a file header announcing fewer bytes than its data unpacks to: decompression stops one byte past it
    lines = log.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith(pod_point.FILE + " "))
    fields = lines[header].split()
    lines[header] = " ".join(fields[:2] + ["10"] + fields[3:])
    with pytest.raises(ValueError, match="11 bytes with crc32 .* expected 10 bytes"):
        k8s.parse_archive("\n".join(lines))
    monkeypatch.setattr(k8s, "MAX_ARCHIVE_BYTES", 1000)
    with pytest.raises(ValueError, match="past its limit of 1000 bytes"):
        k8s.parse_archive(log)
