#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: llm_load
short_description: Run the LLM load harness once against an OpenAI-compatible endpoint
version_added: 0.2.0
description:
  - Runs C(python -m ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load) with
    O(options) (the harness's options with underscores - C(url), C(model), C(load), C(rate), C(duration),
    C(output_tokens)...; see docs/llm-load.md) and writes its files into O(dest) - one llm-d benchmark report
    per stage, C(requests.jsonl), C(result.json) - and its messages into C(llm_load.log).
  - Fails with the harness's own one-line message when it cannot start (wrong URL, refused connection,
    TLS, HTTP 401/403/404), when no measured request succeeded, or on a misspelt option.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  options:
    description: Harness options; empty and null values are left out.
    type: dict
    required: true
  token_secret:
    description:
      - Name of a file of the secrets directory holding the bearer token (see the configuration's
        C(secrets)); given to the harness as a file, never as a value.
    type: str
    default: ""
  dest:
    description: Directory of the files. Defaults to the artifact directory currently open.
    type: path
  timeout:
    description: Seconds after which the run is stopped and the task fails.
    type: float
    default: 3600
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Load the model server at 20 requests per second for a minute
  perfscale.topsail.llm_load:
    options:
      url: http://127.0.0.1:8000
      model: Qwen/Qwen3-0.6B
      load: constant
      rate: 20
      duration: 60
    token_secret: vllm-token
"""

RETURN = r"""
dest:
  description: Where the files are.
  returned: success
  type: str
result:
  description: The headline numbers of the run (the last stage) - requests, rates, TTFT, ITL, throughput, errors.
  returned: success
  type: dict
"""
