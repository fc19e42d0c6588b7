# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report of a guidellm Job (``llmd run_guidellm_benchmark``), out of its log, as the load harness's
llm-d benchmark reports.

The Job's entrypoint prints, after guidellm's own output, a marker line and the report on one line, so that
the report comes back with the pod's log (no volume to copy from); the guidellm converter of the LLM load
harness turns it into llm-d benchmark reports v0.2.1, one per benchmark (rate) of the run.
"""

from __future__ import annotations

import json

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import converters

MARKER = "--- perfscale.topsail: guidellm report ---"


def report_from_log(log, source="guidellm job log"):
    text = log or ""
    if MARKER not in text:
        raise HarnessOutputError("%s: no report after %r: guidellm did not finish (expected its report)" % (source, MARKER))
    after = text.split(MARKER, 1)[1].strip().splitlines()
    try:
        return json.loads(after[0]) if after else None
    except ValueError as exc:
        raise HarnessOutputError("%s: the report after the marker is not JSON (%s)" % (source, exc)) from None


def llmd_reports(log, source="guidellm job log"):
    """``{"guidellm": the report, "llmd": [llm-d benchmark reports]}``."""
    document = report_from_log(log, source)
    try:
        reports = converters.get_converter("guidellm").convert_document(document, source)
    except converters.ConversionError as exc:
        raise HarnessOutputError(str(exc)) from None
    return {"guidellm": document, "llmd": reports}
