import subprocess

from ansible_collections.perfscale.topsail.plugins.module_utils.run import host_environment as he

CPUINFO = """processor\t: 0
model name\t: Test CPU @ 2.0GHz
physical id\t: 0
core id\t: 0
flags\t\t: fpu sse avx2
processor\t: 1
model name\t: Test CPU @ 2.0GHz
physical id\t: 0
core id\t: 1
"""


def test_parse_cpuinfo():
    assert he.parse_cpuinfo(CPUINFO) == {
        "model": "Test CPU @ 2.0GHz", "logical_cpus_in_cpuinfo": 2, "physical_cores": 2,
        "has_avx2": True, "has_avx512f": False,
    }


def test_parse_meminfo_in_bytes():
    assert he.parse_meminfo("MemTotal:  1024 kB\nMemAvailable: 512 kB\n") == {"total_bytes": 1048576, "available_bytes": 524288}


def test_parse_os_release():
    assert he.parse_os_release('ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12"\n')["pretty_name"] == "Debian GNU/Linux 12"


def test_gpu_inventory_from_nvidia_smi_is_typed():
    document = ("<nvidia_smi_log><driver_version>550.1</driver_version><gpu id='00000000:00:04.0'>"
                "<product_name>NVIDIA A100-SXM4-40GB</product_name><uuid>GPU-1</uuid>"
                "<fb_memory_usage><total>40960 MiB</total></fb_memory_usage></gpu></nvidia_smi_log>")

    def run(command, **kwargs):
        if command[1:] == ["-q", "-x"]:
            return subprocess.CompletedProcess(command, 0, document, "")
        return subprocess.CompletedProcess(command, 0, "00000000:00:04.0, 8.0\n", "")

    gpus, warning = he.capture_gpus(5, which=lambda name: "/usr/bin/nvidia-smi" if name == "nvidia-smi" else None,
                                    run=run)
    assert warning is None
    gpu, = gpus
    assert (gpu["index"], gpu["product_name"], gpu["uuid"], gpu["driver_version"], gpu["pci_bus_id"]) == (
        0, "NVIDIA A100-SXM4-40GB", "GPU-1", "550.1", "00000000:00:04.0")
    assert gpu["memory"]["total_mib"] == 40960 and gpu["compute_capability"] == "8.0"


def test_no_nvidia_smi_means_no_gpus():
    assert he.capture_gpus(5, which=lambda _name: None) == ([], None)


def test_nvidia_smi_timeout_and_failure_degrade_with_a_warning():
    def slow(command, **kwargs):
        raise subprocess.TimeoutExpired(command, kwargs["timeout"])

    gpus, warning = he.capture_gpus(2, which=lambda name: "/x/nvidia-smi" if name == "nvidia-smi" else None, run=slow)
    assert gpus is None and warning == "nvidia-smi did not answer within 2 s"

    def broken(command, **kwargs):
        return subprocess.CompletedProcess(command, 9, "", "driver mismatch")

    gpus, warning = he.capture_gpus(2, which=lambda name: "/x/nvidia-smi" if name == "nvidia-smi" else None, run=broken)
    assert gpus is None and warning == "nvidia-smi exited with 9: driver mismatch"


def test_capture_environment_degrades_on_missing_proc(tmp_path):
    environment = he.capture_environment(packages=["pytest", "no-such-package-xyz"], gpu=False,
                                         environ={"OMP_NUM_THREADS": "2"}, proc_dir=str(tmp_path),
                                         os_release=str(tmp_path / "os-release"))
    assert environment["packages"]["no-such-package-xyz"] is None
    assert environment["packages"]["pytest"]
    assert environment["threads"]["OMP_NUM_THREADS"] == "2"
    assert environment["cpu"]["count"] >= 1
    assert environment["memory"] == {}
    assert len(environment["warnings"]) == 3
    assert any(w.startswith("cpu info:") for w in environment["warnings"])
