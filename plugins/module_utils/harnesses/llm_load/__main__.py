# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``python -m ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load --help``"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
