# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""LLM inference load harness: open- and closed-loop load on OpenAI-compatible servers.

Run it as a command (only the Python standard library is needed)::

    python -m ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load \\
        --url http://127.0.0.1:8000 --model MODEL --load constant --rate 10 --duration 60 --output DIR

Modules, by responsibility: ``config`` (stages and their validation), ``arrivals``
(load models on an absolute timeline), ``prompts`` (synthetic and file data, token
counting), ``client`` (HTTP/1.1, TLS, SSE on asyncio), ``runner`` (one stage on the
event loop), ``workers`` (several processes sharing one schedule), ``metrics``
(per-request records and aggregates), ``report`` (llm-d benchmark report v0.2.1),
``converters`` (other tools' outputs into the same report), ``cli``. Definitions of
every number are in docs/llm-load.md.
"""

from __future__ import annotations

import os

HARNESS_NAME = "llm_load"
HARNESS_VERSION = "0.1.0"


def collections_root():
    """The directory holding ``ansible_collections`` (for PYTHONPATH of a child running ``-m``)."""
    root = os.path.abspath(__file__)
    for _level in range(7):     # .../ansible_collections/perfscale/topsail/plugins/module_utils/harnesses/llm_load/__init__.py
        root = os.path.dirname(root)
    return os.path.dirname(root)


def child_pythonpath(environ=None):
    """PYTHONPATH for a child process: the collections root, then what the environment had."""
    environ = os.environ if environ is None else environ
    return os.pathsep.join([collections_root()] + ([environ["PYTHONPATH"]] if environ.get("PYTHONPATH") else []))
