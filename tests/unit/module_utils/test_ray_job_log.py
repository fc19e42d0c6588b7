"""The Ray benchmark's log as the reference's post-processing reads it (module_utils/parsers/ray_job.py)."""

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError
from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import ray_job

IPERF = """Connecting to host 10.128.0.5, port 5201
[ ID] Interval           Transfer     Bitrate         Retr  Cwnd
[  5]   0.00-1.00   sec   800 MBytes  6.71 Gbits/sec    0   3.00 MBytes
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Retr
[  5]   0.00-10.04  sec  7.79 GBytes  6.66 Gbits/sec  receiver
iperf Done.
SCRIPT SUCCEEDED
"""


def test_network_overhead_time_and_the_end_marker():
    log = "Job 'x' submitted successfully\n--- PASSED: RESULT NETWORK OVERHEAD ::: 312.5 (300 s expected)\nSCRIPT SUCCEEDED\n"
    parsed = ray_job.parse(log, "network_overhead")
    assert parsed == {"succeeded": True, "result": {"time_s": 312.5}, "marker": "--- PASSED:"}


def test_iperf_receiver_bitrate_from_the_second_header():
    assert ray_job.parse(IPERF, "iperf")["result"] == {"bitrate_gbps": 6.66}
    assert ray_job.parse(IPERF.replace("6.66 Gbits/sec  receiver", "950 Mbits/sec  receiver"),
                         "iperf")["result"] == {"bitrate_gbps": pytest.approx(0.95)}


def test_a_declared_result_line_and_a_failure_marker():
    log = 'PERFSCALE_RESULT {"tasks_per_s": 812.5, "label": "x", "ok": true}\n--- FAILED: RESULT ::: 1\nSCRIPT FAILED\n'
    parsed = ray_job.parse(log)
    assert parsed["succeeded"] is False and parsed["result"] == {"tasks_per_s": 812.5, "time_s": 1.0}


@pytest.mark.parametrize("log, message", [
    ("Job submitted\nstill running\n", "none of 'SCRIPT SUCCEEDED'"),
    ("--- PASSED: X ::: soon\n", "has no number of seconds"),
    ("PERFSCALE_RESULT [1, 2]\nSCRIPT SUCCEEDED\n", "expects a JSON object"),
    ("PERFSCALE_RESULT {oops\nSCRIPT SUCCEEDED\n", "is not followed by a JSON object"),
    (IPERF.replace("Gbits/sec  receiver", "furlongs  receiver"), "bitrate unit 'furlongs'"),
])
def test_bad_logs_are_one_line(log, message):
    with pytest.raises(HarnessOutputError, match=message):
        ray_job.parse(log)
