# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: trainer_summary
short_description: The summary metrics and loss records of a Hugging Face Trainer log
version_added: 0.2.0
description:
  - Parses the records a Hugging Face C(Trainer) (fms-hf-tuning) logs - the loss records during the run and the final
    summary (C(train_runtime), C(train_samples_per_second), C(train_steps_per_second), C(train_tokens_per_second) when
    logged, C(train_loss), C(epoch)).
  - A log without the summary (the training did not finish) fails in one line.
author:
  - perfscale.topsail developers (@perfscale)
positional: _input
options:
  _input:
    description: The log of the rank-0 pod.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Parse the trainer's summary
  ansible.builtin.set_fact:
    summary: "{{ master_log.log | perfscale.topsail.trainer_summary }}"
"""

RETURN = r"""
_value:
  description: C(summary) (the metrics, numbers), C(losses) (the loss records, in order) and C(final_loss).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.perfscale.topsail.plugins.module_utils.parsers import trainer_log
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError


def trainer_summary(log):
    try:
        return trainer_log.parse(str(log or ""))
    except HarnessOutputError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"trainer_summary": trainer_summary}
