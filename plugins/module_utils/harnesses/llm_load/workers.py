# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Entry point of a worker process (``--workers N``); spawned by ``orchestrate``, not by hand.

Protocol (JSON lines): stdin gets the run spec, then one ``{"stage": ..., "start_at": t}``
per stage; stdout answers ``{"ready": w}``, then one ``{"records_file": ...}`` per stage.
The worker ends when its stdin closes.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.orchestrate import worker_main

if __name__ == "__main__":
    raise SystemExit(worker_main())
