# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a gpu-burn run says about each GPU (``gpu_operator run_gpu_burn``).

gpu-burn prints progress lines, one value per GPU separated by `` - ``::

    100.0%  proc'd: 2392 (14235 Gflop/s) - 2390 (14225 Gflop/s)   errors: 0 - 0   temps: 57 C - 55 C

and ends with the verdict of each GPU::

    Tested 2 GPUs:
        GPU 0: OK
        GPU 1: FAULTY

The last progress line gives each GPU's GFLOP/s and error count.
"""

from __future__ import annotations

import re

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError

PROGRESS = re.compile(r"proc'd:(?P<procd>.*?)errors:(?P<errors>.*?)(?:temps:|$)")
GFLOPS = re.compile(r"\(\s*([0-9.]+)\s*Gflop/s\)")
TESTED = re.compile(r"Tested (\d+) GPUs?:")
VERDICT = re.compile(r"^\s*GPU (\d+): (OK|FAULTY)\b", re.MULTILINE)


def parse(log, source="gpu-burn log"):
    """``{"tested", "gpus": [{"gpu", "status", "gflops", "errors"}], "total_gflops", "ok"}``."""
    text = log or ""
    tested = TESTED.search(text)
    if not tested:
        raise HarnessOutputError("%s: no 'Tested N GPUs' line: gpu-burn did not finish (expected its final verdict)" % source)
    count = int(tested.group(1))
    verdicts = {int(index): status for index, status in VERDICT.findall(text[tested.end():])}
    if len(verdicts) != count:
        raise HarnessOutputError("%s: %d GPU(s) tested but %d verdict(s) (expected 'GPU i: OK|FAULTY' for each)"
                                 % (source, count, len(verdicts)))
    progress = list(PROGRESS.finditer(text))
    gflops, errors = [], []
    if progress:
        last = progress[-1]
        gflops = [float(value) for value in GFLOPS.findall(last.group("procd"))]
        errors = [int(value) for value in re.findall(r"\d+", last.group("errors"))]
    gpus = []
    for index in range(count):
        gpus.append({"gpu": index, "status": verdicts[index],
                     "gflops": gflops[index] if index < len(gflops) else None,
                     "errors": errors[index] if index < len(errors) else None})
    return {"tested": count, "gpus": gpus, "total_gflops": sum(g["gflops"] or 0.0 for g in gpus),
            "ok": all(g["status"] == "OK" for g in gpus)}


def summarize(logs):
    """Per node (``{node: log}``) results and the cluster's totals, for the artifacts and the KPIs."""
    nodes = {node: parse(log, "gpu-burn log of %s" % node) for node, log in sorted(logs.items())}
    faulty = ["%s GPU %d" % (node, gpu["gpu"]) for node, result in nodes.items() for gpu in result["gpus"]
              if gpu["status"] != "OK"]
    return {"nodes": nodes, "gpus_tested": sum(r["tested"] for r in nodes.values()),
            "total_gflops": sum(r["total_gflops"] for r in nodes.values()), "faulty": faulty, "ok": not faulty}
