# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The result of a Ray benchmark job, from its submitter's log (``ray job logs --follow``).

As the reference's ray_benchmark post-processing reads ``job_pod.log``:

- the end marker: ``SCRIPT SUCCEEDED``, ``--- PASSED:``, ``--- FAILED:`` or ``iperf Done`` must be
  there (Ray may swallow the last lines of a log: ray-project/ray#48701), and ``SCRIPT FAILED`` /
  ``--- FAILED:`` mean the benchmark failed;
- ``network_overhead``: the first line starting with ``---`` holds ``::: <seconds>`` -> ``time_s``;
- ``iperf``: the line after the second ``[ ID] Interval`` header is the receiver's summary ->
  ``bitrate_gbps`` (its 7th field, Gbits/sec);
- any workload may also print one ``PERFSCALE_RESULT {json}`` line: its numbers are the result.
"""

from __future__ import annotations

import json

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError

END_MARKERS = ("SCRIPT SUCCEEDED", "--- PASSED:", "--- FAILED:", "iperf Done")
FAILURE_MARKERS = ("SCRIPT FAILED", "--- FAILED:")
RESULT_PREFIX = "PERFSCALE_RESULT "
UNITS = {"Gbits/sec": 1.0, "Mbits/sec": 1e-3, "Kbits/sec": 1e-6, "bits/sec": 1e-9}


def _network_overhead(lines):
    for line in lines:
        if line.startswith("---") and ":::" in line:
            value = line.strip().split("::: ")[-1].split()[0]
            try:
                return {"time_s": float(value)}
            except ValueError:
                raise HarnessOutputError("ray job log: the network overhead line has no number of seconds: %r"
                                         % line.strip()) from None
    return {}


def _iperf(lines):
    headers = [index for index, line in enumerate(lines) if line.startswith("[ ID] Interval")]
    if len(headers) < 2 or headers[1] + 1 >= len(lines):
        return {}
    fields = lines[headers[1] + 1].split()
    try:
        value, unit = float(fields[6]), fields[7]
    except (IndexError, ValueError):
        raise HarnessOutputError("ray job log: the iperf summary line has no bitrate: %r"
                                 % lines[headers[1] + 1].strip()) from None
    if unit not in UNITS:
        raise HarnessOutputError("ray job log: iperf bitrate unit %r is not one of %s" % (unit, ", ".join(UNITS)))
    return {"bitrate_gbps": value * UNITS[unit]}


def _declared(lines):
    result = {}
    for line in lines:
        if line.startswith(RESULT_PREFIX):
            try:
                values = json.loads(line[len(RESULT_PREFIX):])
            except ValueError:
                raise HarnessOutputError("ray job log: %s is not followed by a JSON object: %r"
                                         % (RESULT_PREFIX.strip(), line.strip())) from None
            if not isinstance(values, dict):
                raise HarnessOutputError("ray job log: %s expects a JSON object" % RESULT_PREFIX.strip())
            result.update({k: v for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)})
    return result


def parse(log, flavor=None):
    """``{"succeeded": bool, "result": {...numbers}, "marker": str}`` of a Ray job's log;
    HarnessOutputError when the log has no end marker (the job did not finish, or Ray lost its end)."""
    lines = str(log or "").splitlines()
    marker = next((m for line in lines for m in END_MARKERS if m in line), None)
    if marker is None:
        raise HarnessOutputError("ray job log: none of %s found (the job did not finish, or Ray lost the end of its "
                                 "log)" % ", ".join(repr(m) for m in END_MARKERS))
    failed = any(m in line for line in lines for m in FAILURE_MARKERS)
    result = {}
    if flavor in (None, "network_overhead"):
        result.update(_network_overhead(lines))
    if flavor in (None, "iperf"):
        result.update(_iperf(lines))
    result.update(_declared(lines))
    return {"succeeded": not failed, "result": result, "marker": marker}
