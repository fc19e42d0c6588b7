"""What each download mode moves, for a tree of 1,000 test directories.

The tree: `tests/fixtures/trees.make_tree` (a run with its environment capture and 1,000 matmul
points: settings.yaml, exit_code, .uuid, point.json, output.json, stdout.log, stderr.log), each
point with a 16 KiB harness trace (a file the workload does not declare important, as real
harness logs are), parsed once so every test has its parse cache. It is uploaded once to moto's S3
server on 127.0.0.1 (.venv/s3-server), then downloaded ROUNDS times in each mode, the modes
interleaved, each into a new directory. Reported: bytes and files moved (the same every round) and
the median seconds, and the bytes of prefer_cache and important as a fraction of all.

    .venv/bin/python benchmarks/download_modes.py   (ROUNDS=3 TESTS=1000)
"""

import os
import shutil
import sys
import tempfile

import _common

sys.path.insert(0, os.path.join(_common.REPO, "tests"))
sys.path.insert(0, os.path.join(_common.REPO, "tests", "fixtures"))
import s3_server  # noqa: E402  pylint: disable=wrong-import-position
import trees  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import artifact_transfer  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "3"))
TESTS = int(os.environ.get("TESTS", "1000"))
TRACE_BYTES = 16 * 1024
MODES = ("prefer_cache", "important", "all")


def main():
    if not s3_server.available():
        sys.exit("moto's S3 server is missing: make setup-test installs it in .venv/s3-server")
    work = tempfile.mkdtemp(prefix="perfscale-download-bench-")
    try:
        root = os.path.join(work, "run")
        for directory in trees.make_tree(root, points=TESTS):
            with open(os.path.join(directory, "harness_trace.log"), "wb") as handle:
                handle.write(os.urandom(TRACE_BYTES // 2).hex().encode())
        workload = workload_lib.load_workload("perf_indicators")
        results_tree.parse_results(root, workload)
        with s3_server.running("bench", "bench-secret", buckets=["bench"]) as (_url, client):
            url = "s3://bench/ci/run"
            upload = artifact_transfer.upload_tree(client, root, url, "bench", parallel=8)
            assert upload["complete"], upload["failed"][:3]
            seconds = {mode: [] for mode in MODES}
            moved = {}
            for round_index in range(ROUNDS):
                for mode in MODES:
                    dest = os.path.join(work, "%s-%d" % (mode, round_index))
                    summary = artifact_transfer.download_tree(client, url, dest, mode, workload, parallel=8)
                    seconds[mode].append(summary["seconds"])
                    moved[mode] = {"files": summary["downloaded"], "bytes": summary["bytes_downloaded"]}
                    shutil.rmtree(dest)
        medians = {mode: _common.median(values) for mode, values in seconds.items()}
        result = {
            "tests": TESTS, "rounds": ROUNDS, "tree": {"files": upload["files"], "bytes": upload["bytes_total"]},
            "upload_s": upload["seconds"], "moved": moved, "seconds": seconds, "median_s": medians,
            "bytes_fraction_of_all": {mode: moved[mode]["bytes"] / moved["all"]["bytes"] for mode in MODES},
            "time_fraction_of_all": {mode: medians[mode] / medians["all"] for mode in MODES},
        }
        _common.record("download_modes", result)
        for mode in MODES:
            print("%-12s %6d files %11d bytes (%5.1f%% of all)  %.2f s median" % (
                mode, moved[mode]["files"], moved[mode]["bytes"], 100 * result["bytes_fraction_of_all"][mode],
                medians[mode]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
