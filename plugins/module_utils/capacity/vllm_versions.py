# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vLLM release lines the planner's activation and non-torch terms are calibrated on.

vLLM's memory profile changed between releases: the V1 engine of 0.10 and 0.11 logs 4.8-7.4 GiB of
activation for models that 0.19 profiles in 1.9-2.9 GiB (its sampler's dummy pass over ``max_num_seqs``
rows of float32 logits keeps about 9.7 copies of them where 0.19 keeps 3.8, as fitted on their logs), and books less memory as
"non-torch" with tensor parallelism (0.55 GiB where 0.19 books 2.1). A plan made with the wrong line
promises KV cache that does not exist, so the planner is told the release (``vllm_version``) and
refuses a line it has no calibration for.

``release_line(text)`` reads ``0.10``, ``0.10.2``, ``v0.11.0``, ``0.11.0rc1``, ``0.11.0+cu128`` as their
release line (major.minor); ``calibration(text)`` is ``(line, Calibration, statement)`` of that line (the
default line when ``text`` is None or empty), or one CapacityError line naming the calibrated lines. The figures and the
logs they were fitted on: ``benchmarks/results/capacity_vllm_measured.json`` (each log's URL), the
fit and the errors per line: ``benchmarks/results/capacity_validation.md``.
"""

from __future__ import annotations

import re

from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import architectures
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError

# major.minor, then any patch numbers, then a pre/dev/post release and a local version, as pip and vLLM's
# own banner write them ("0.10.1.1", "0.11.0rc3", "0.10.1.dev636+g92ff41abe", "0.11.0+582e4e37.nv25.11")
_RELEASE = re.compile(r"^[vV]?(?P<major>\d{1,4})\.(?P<minor>\d{1,4})(?:\.\d{1,6}){0,3}"
                      r"(?:[.-]?(?:rc|a|b|dev|post)\d{0,8})*(?:\+[0-9A-Za-z.]{1,64})?$")
MAX_TEXT = 100


class Calibration:
    """The release-dependent terms of one vLLM release line."""

    def __init__(self, line, sampler_copies, non_torch_gib, non_torch_tp_gib, fitted_on):
        self.line = line
        # float32 copies of the sampler's (max_num_seqs x vocabulary) logits in the profile's peak
        self.sampler_copies = sampler_copies
        # memory outside PyTorch that the profile books: one GPU, and any tensor-parallel size above one
        self.non_torch_gib = non_torch_gib
        self.non_torch_tp_gib = non_torch_tp_gib
        self.fitted_on = fitted_on

    def non_torch(self, tp):
        return self.non_torch_gib if tp == 1 else self.non_torch_tp_gib


# vLLM 0.19: llm-d-planner's sweep on H100 80GB (41 raw logs); the sampler's 3.8 on its cases with a large
# vocabulary, non-torch 0.25 GiB on one GPU and 2.1 GiB with tensor parallelism ("non-torch forward increase")
V0_19 = Calibration("0.19", 3.8, 0.25, 2.1, "vLLM 0.19.0 startup logs on H100 80GB (llm-d-planner's sweep)")
# vLLM 0.10-0.11 (the V1 engine before the sampler's profile shrank): llm-d-planner's 0.11.0 table (7 runs
# on H100 80GB: 9.6-9.9 sampler copies, non-torch 0.13-0.14 GiB on one GPU and 0.54-0.55 with two) and the
# gpt-oss-120b logs of vLLM issues 23278 (0.10.1) and 27508 (0.11), which it predicts within 0.15 GiB
V0_11 = Calibration("0.10-0.11", 9.7, 0.13, 0.55, "vLLM 0.10.1 and 0.11 startup logs on H100 80GB "
                    "(llm-d-planner's 0.11.0 table, vLLM issues 23278 and 27508)")
# release line -> its calibration (0.10 and 0.11 profile alike: the same logs fit both)
CALIBRATIONS = {"0.10": V0_11, "0.11": V0_11, "0.19": V0_19}
DEFAULT_LINE = "0.19"


def known_lines():
    """The calibrated release lines, oldest first."""
    return sorted(CALIBRATIONS, key=lambda line: tuple(int(part) for part in line.split(".")))


def release_line(text):
    """The release line (``"0.11"``) of a vLLM version (``"v0.11.0"``); CapacityError in one line otherwise."""
    lines = ", ".join(known_lines())
    if isinstance(text, bool) or not isinstance(text, str):
        hint = " (YAML reads 0.10 as the number 0.1: quote it)" if isinstance(text, float) else ""
        raise CapacityError("vllm_version %s: expected a vLLM release as text, such as \"0.11\" or \"v0.10.2\"%s; "
                            "calibrated lines: %s" % (architectures.shown(text), hint, lines))
    match = _RELEASE.match(text.strip()) if len(text) <= MAX_TEXT else None
    if not match:
        raise CapacityError("vllm_version %s: expected a vLLM release such as 0.11 or v0.10.2; calibrated lines: %s"
                            % (architectures.shown(text), lines))
    return "%d.%d" % (int(match.group("major")), int(match.group("minor")))


def calibration(text=None):
    """``(line, Calibration, statement)`` of ``text`` (None or "": the default line); ``statement`` is what a
    plan says of it (``calibrated on vLLM 0.19 (default; set vllm_version to yours)``). An uncalibrated line
    is one CapacityError line naming the calibrated ones."""
    if text is None or text == "":
        return DEFAULT_LINE, CALIBRATIONS[DEFAULT_LINE], \
            "calibrated on vLLM %s (default; set vllm_version to yours)" % DEFAULT_LINE
    line = release_line(text)
    if line not in CALIBRATIONS:
        raise CapacityError("vllm_version %s: release line %s is not calibrated; calibrated lines: %s "
                            "(docs/capacity.md says what to do with another release)"
                            % (text.strip(), line, ", ".join(known_lines())))
    found = CALIBRATIONS[line]
    return line, found, "calibrated on vLLM %s (vllm_version %s)" % (found.line, text.strip())
