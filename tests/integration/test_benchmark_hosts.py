"""The main job on inventory hosts: the `benchmark_hosts` group runs the matrix, the controller
post-processes it.

Two hosts on this machine, each with its own Python: a virtualenv holding only the harness's
own dependency (numpy; no PyYAML, pandas, plotly or pydantic), reached over a real SSH
connection to 127.0.0.1 when Debian's openssh-server is installed (`make setup-test` installs it
where it can), else over the local connection.
"""

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time

import pytest
import yaml

from helpers import run_playbook

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)
# two small points: the test is about where they run and what comes back, not about numbers
MATRIX = {"overrides": {
    "tests.benchmark.name_template": "{indicator}_{size}",
    "tests.benchmark.matrix": {"factors": {"indicator": "matmul", "size": [64, 128]},
                               "common_settings": {"backend": "numpy", "reps": 3, "warmup": 1},
                               "include": [], "exclude": []},
    "tests.capture_environment.gpu": False,
}}
HIDDEN_FROM_HOSTS = ("yaml", "pandas", "plotly", "pydantic", "scipy")


def harness_venv(path, with_numpy=True):
    """A virtualenv without pip holding only numpy (this interpreter's, linked in)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = os.path.join(str(path), "bin", "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    if with_numpy:
        import numpy

        source = os.path.dirname(os.path.dirname(numpy.__file__))
        for name in ("numpy", "numpy.libs"):
            if os.path.exists(os.path.join(source, name)):
                os.symlink(os.path.join(source, name), os.path.join(purelib, name))
    return python


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def ssh_server(tmp_path_factory):
    """An sshd of its own on 127.0.0.1 (key authentication for this user), or None."""
    if SSHD is None:
        yield None
        return
    root = tmp_path_factory.mktemp("sshd")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / "host_key")], check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / "client_key")], check=True)
    shutil.copy(root / "client_key.pub", root / "authorized_keys")
    port = _free_port()
    (root / "sshd_config").write_text("\n".join([
        "Port %d" % port, "ListenAddress 127.0.0.1", "HostKey %s" % (root / "host_key"),
        "PidFile %s" % (root / "sshd.pid"), "AuthorizedKeysFile %s" % (root / "authorized_keys"),
        "StrictModes no", "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
        "PermitRootLogin prohibit-password", "Subsystem sftp internal-sftp", ""]))
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # its privilege separation directory
    log = open(root / "sshd.log", "w")
    server = subprocess.Popen([SSHD, "-D", "-e", "-f", str(root / "sshd_config")], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and server.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.05)
    if server.poll() is not None:
        log.close()
        yield None  # cannot run here (no privilege separation user...): the local connection instead
        return
    try:
        yield {"port": port, "key": str(root / "client_key")}
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


def host_entry(ssh_server, python):
    if ssh_server is None:
        return {"ansible_connection": "local", "ansible_python_interpreter": python}
    return {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": ssh_server["port"],
            "ansible_user": os.environ.get("USER") or __import__("pwd").getpwuid(os.getuid()).pw_name,
            "ansible_ssh_private_key_file": ssh_server["key"],
            "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
            "ansible_python_interpreter": python}


def write_inventory(path, hosts):
    path.write_text(yaml.safe_dump({"all": {"children": {"benchmark_hosts": {"hosts": hosts}}}}))
    return str(path)


def run_on_hosts(inventory, root, remote_tmp):
    return run_playbook("playbooks/benchmark.yml", "-i", inventory, "-e", "preset=cpu_smoke",
                        "-e", "artifact_dir=%s" % root, "-e", json.dumps(MATRIX),
                        env={"ANSIBLE_REMOTE_TMP": str(remote_tmp)})


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory, ssh_server):
    base = tmp_path_factory.mktemp("hosts")
    python = harness_venv(base / "venv")
    inventory = write_inventory(base / "hosts.yml", {"bench1": host_entry(ssh_server, python),
                                                     "bench2": host_entry(ssh_server, python)})
    root, remote_tmp = base / "run", base / "remote-tmp"
    return {"root": root, "python": python, "inventory": inventory, "remote_tmp": remote_tmp,
            "run": run_on_hosts(inventory, root, remote_tmp), "ssh": ssh_server is not None}


def test_the_harness_python_of_the_hosts_has_only_numpy(two_hosts):
    for module in HIDDEN_FROM_HOSTS:
        probe = subprocess.run([two_hosts["python"], "-c", "import %s" % module], capture_output=True, check=False)
        assert probe.returncode != 0, module
    subprocess.run([two_hosts["python"], "-c", "import numpy"], check=True)


def test_each_host_runs_the_matrix_and_its_points_come_back_under_the_run(two_hosts):
    run, root = two_hosts["run"], two_hosts["root"]
    assert run.returncode == 0, run.output
    print("connection: %s" % ("ssh to 127.0.0.1" if two_hosts["ssh"] else "local (no sshd here)"))
    for host in ("bench1", "bench2"):
        assert "%s: running 2 of 2 point(s)" % host in run.flat
        parent = root / "hosts" / host
        assert yaml.safe_load((parent / "settings.yaml").read_text()) == {"benchmark_host": host}
        [matrix_dir] = glob.glob(str(parent / "*__matbenchmarking"))
        points = sorted(p for p in os.listdir(matrix_dir) if os.path.isdir(os.path.join(matrix_dir, p)))
        assert points == ["000__matmul_64", "001__matmul_128"]
        for point in points:
            directory = os.path.join(matrix_dir, point)
            assert open(os.path.join(directory, "exit_code")).read() == "0\n"
            assert yaml.safe_load(open(os.path.join(directory, "settings.yaml")))["size"] in (64, 128)
            output = json.load(open(os.path.join(directory, "output.json")))
            assert output["@result"]["rate"] > 0
            # the point ran under the host's Python, not the controller's
            assert json.load(open(os.path.join(directory, "point.json")))["command"][0] == two_hosts["python"]
        # the host's fingerprint, captured on the host beside its matrix
        [capture] = glob.glob(str(parent / "*__host__capture_environment"))
        environment = json.load(open(os.path.join(capture, "environment.json")))
        assert environment["python"]["executable"] == two_hosts["python"]
        assert environment["cpu"]["count"] == os.cpu_count()
    # the controller ran no point of its own
    assert not glob.glob(str(root / "*__matbenchmarking"))
    # nothing is left in the hosts' remote temporary directory
    remote_tmp = two_hosts["remote_tmp"]
    assert not remote_tmp.exists() or os.listdir(str(remote_tmp)) == []


def test_the_controller_post_processes_every_host_point_with_the_host_fingerprint(two_hosts):
    root = two_hosts["root"]
    [plots] = glob.glob(str(root / "*__plots"))
    summary = json.load(open(os.path.join(plots, "summary.json")))
    assert (summary["tests"], summary["failed_tests"]) == (4, [])
    records = json.load(open(os.path.join(plots, "kpi_records.json")))
    paths = {r["test_path"] for r in records}
    assert paths == {"hosts/bench%d/%s" % (i, os.path.relpath(p, root / "hosts" / ("bench%d" % i)))
                     for i in (1, 2) for p in glob.glob(str(root / "hosts" / ("bench%d" % i) / "*__matbenchmarking" / "0*"))}
    for record in records:
        assert record["cpu_count"] == os.cpu_count()
        assert record["python_version"] == sysconfig.get_python_version() or record["python_version"].startswith(
            sysconfig.get_python_version())


def test_a_second_run_resumes_every_host_without_running_a_point_again(two_hosts):
    root = two_hosts["root"]
    uuids = sorted(open(p).read() for p in glob.glob(str(root / "hosts" / "*" / "*__matbenchmarking" / "*" / ".uuid")))
    run = run_on_hosts(two_hosts["inventory"], root, two_hosts["remote_tmp"])
    assert run.returncode == 0, run.output
    assert "bench1: all 2 point(s) already finished" in run.flat
    assert "bench2: all 2 point(s) already finished" in run.flat
    assert sorted(open(p).read() for p in glob.glob(str(root / "hosts" / "*" / "*__matbenchmarking" / "*" / ".uuid"))) \
        == uuids


def test_one_host_failing_does_not_stop_the_others(tmp_path, ssh_server):
    good = harness_venv(tmp_path / "good")
    bare = harness_venv(tmp_path / "bare", with_numpy=False)
    unreachable = dict(host_entry(ssh_server, good), ansible_connection="ssh", ansible_host="127.0.0.1",
                       ansible_port=_free_port(), ansible_ssh_common_args="-o StrictHostKeyChecking=no "
                       "-o UserKnownHostsFile=/dev/null -o ConnectTimeout=5")
    inventory = write_inventory(tmp_path / "hosts.yml", {
        "good": host_entry(ssh_server, good),
        # numpy missing there: its points fail, with the reason in FAILURE
        "no_numpy": host_entry(ssh_server, bare),
        "gone": unreachable,
    })
    root = tmp_path / "run"
    run = run_on_hosts(inventory, root, tmp_path / "remote-tmp")
    assert run.returncode != 0
    assert "1 benchmark host(s) could not run the matrix: gone (unreachable" in run.flat
    good_points = glob.glob(str(root / "hosts" / "good" / "*__matbenchmarking" / "0*"))
    assert len(good_points) == 2
    assert all(open(os.path.join(p, "exit_code")).read() == "0\n" for p in good_points)
    failed = glob.glob(str(root / "hosts" / "no_numpy" / "*__matbenchmarking" / "0*" / "FAILURE"))
    assert len(failed) == 2
    assert "No module named 'numpy'" in open(failed[0]).read()
    # the others were post-processed, and the verdict names the failed points with their host
    [plots] = glob.glob(str(root / "*__plots"))
    summary = json.load(open(os.path.join(plots, "summary.json")))
    assert (summary["tests"], len(summary["failed_tests"])) == (4, 2)
    assert not (root / "hosts" / "gone").exists() or not glob.glob(str(root / "hosts" / "gone" / "*" / "0*" / "exit_code"))


def test_a_harness_that_needs_the_controller_is_refused_on_hosts_in_one_line(tmp_path):
    python = harness_venv(tmp_path / "venv")
    inventory = write_inventory(tmp_path / "hosts.yml", {"bench1": {"ansible_connection": "local",
                                                                    "ansible_python_interpreter": python}})
    run = run_playbook("playbooks/benchmark.yml", "-i", inventory, "-e", "preset=cpu_smoke",
                       "-e", "artifact_dir=%s" % (tmp_path / "run"),
                       "-e", json.dumps({"overrides": dict(MATRIX["overrides"], **{"tests.benchmark.executor": "tekton"})}))
    assert run.returncode != 0
    assert ("tests.benchmark.executor tekton with the inventory group benchmark_hosts: expected local" in run.flat), \
        run.output


def test_inventory_hosts_selected_explicitly_runs_on_the_group(tmp_path):
    python = harness_venv(tmp_path / "venv")
    inventory = write_inventory(tmp_path / "hosts.yml", {"bench1": {"ansible_connection": "local",
                                                                    "ansible_python_interpreter": python}})
    root = tmp_path / "run"
    overrides = dict(MATRIX["overrides"], **{"tests.benchmark.executor": "inventory_hosts",
                                             "tests.capture_environment.enabled": False})
    run = run_playbook("playbooks/benchmark.yml", "-i", inventory, "-e", "preset=cpu_smoke",
                       "-e", "artifact_dir=%s" % root, "-e", json.dumps({"overrides": overrides}),
                       env={"ANSIBLE_REMOTE_TMP": str(tmp_path / "remote-tmp")})
    assert run.returncode == 0, run.output
    # matrix_run ran nothing here and said who does; the host ran both points
    assert "the hosts run it (perfscale.topsail.matrix_host_run)" in run.flat
    assert "bench1: running 2 of 2 point(s)" in run.flat
    assert not glob.glob(str(root / "*__matbenchmarking"))
    points = glob.glob(str(root / "hosts" / "bench1" / "*__matbenchmarking" / "0*" / "exit_code"))
    assert sorted(open(p).read() for p in points) == ["0\n", "0\n"]


def test_inventory_hosts_with_an_empty_group_is_one_line_before_any_point_runs(tmp_path):
    root = tmp_path / "run"
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root,
                       "-e", json.dumps({"overrides": dict(MATRIX["overrides"],
                                                           **{"tests.benchmark.executor": "inventory_hosts"})}))
    assert run.returncode != 0
    assert ("tests.benchmark.executor inventory_hosts: the inventory group benchmark_hosts is empty or missing"
            in run.flat), run.output
    assert not glob.glob(str(root / "**" / "*__matbenchmarking"), recursive=True)
    assert not glob.glob(str(root / "*__host__capture_environment"))
