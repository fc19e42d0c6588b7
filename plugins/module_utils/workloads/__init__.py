# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Built-in post-processing workloads.

A workload is a module (see ``analysis/workload.py`` for what it declares); a built-in one lives in
this package and is registered by its short name in ``analysis/workload.py`` (``BUILTIN``,
``PROM_BUILTIN``), which ``postprocess.workload`` accepts besides an importable module or a ``.py``
path. The registry is the loader's: the workloads stand on ``analysis`` (KPIs, reports), and the
loader imports them by name, as it does a team's own.
"""
