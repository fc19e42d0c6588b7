# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From results to KPIs and reports: KPI models (``kpi``), the workload interface (``workload``; the built-in
workloads are in ``workloads``), post-processing and the HTML reports."""
