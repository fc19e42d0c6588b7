# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a Hugging Face ``Trainer`` run (fms-hf-tuning, ``fine_tuning run_fine_tuning_job``) says in its log.

``Trainer`` logs each record as Python's ``str()`` of a metrics dict: loss records during the run
(``{'loss': 1.52, 'grad_norm': 1.1, 'learning_rate': 1.9e-05, 'epoch': 0.2}``) and, at the end, the
summary (``{'train_runtime': 123.4, 'train_samples_per_second': 8.1, 'train_steps_per_second': 0.51,
'train_loss': 1.23, 'epoch': 1.0}``). The summary's metrics become the run's KPIs; the loss records
show how the loss went down.
"""

from __future__ import annotations

import ast
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError

RECORD = re.compile(r"\{'[a-z_]+': [^{}]*\}")
SUMMARY_KEYS = ("train_runtime", "train_samples_per_second", "train_steps_per_second", "train_tokens_per_second",
                "train_loss", "epoch", "total_flos")


def _records(text):
    for match in RECORD.finditer(text or ""):
        try:
            record = ast.literal_eval(match.group(0))
        except (ValueError, SyntaxError):
            continue
        if isinstance(record, dict):
            yield record


def parse(log, source="trainer log"):
    """``{"summary": {...}, "losses": [{"loss", "epoch", ...}], "final_loss"}``; a log without the
    summary record (the training did not finish) is an error naming ``source``."""
    summary, losses = None, []
    for record in _records(log):
        if "train_runtime" in record:
            summary = record
        elif "loss" in record:
            losses.append(record)
    if summary is None:
        raise HarnessOutputError("%s: no summary record ({'train_runtime': ...}): the training did not finish" % source)
    metrics = {key: float(summary[key]) for key in SUMMARY_KEYS if isinstance(summary.get(key), (int, float))}
    final_loss = losses[-1]["loss"] if losses else metrics.get("train_loss")
    return {"summary": metrics, "losses": losses, "final_loss": final_loss}
