#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: dashboard
short_description: Build the long-term dashboard of the results store (a static site)
version_added: 0.4.0
description:
  - From the results store of the C(export) section alone (SQLite or OpenSearch; no run directory) - one page
    per workload with every stored test - choose the KPI, the x axis (C(when), the test's time, or a comparison
    key such as a version), the series and filters among the configuration labels; the regression step's
    verdicts marked on their points, the KPIs' error bars, the machines the tests ran on in the header, a click
    on a point opening its run's artifacts; the view kept in a permalink. Offline (C(plotly.min.js) beside the
    pages).
  - Writes O(dest_dir)C(/dashboard/index.html) and one page per workload.
  - The store is data (docs/security.md) - a stored document that is unusable is skipped and counted (the pages say
    why); a workload's comparison keys are loaded only from a built-in workload or one the configuration
    (C(postprocess.workload)) or O(workloads) names; a click opens only an C(http(s)) or relative URL (others,
    such as C(s3://), are shown as text on hover).
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  dest_dir:
    description: Where the C(dashboard/) directory is written.
    type: path
    required: true
  workloads:
    description: Only these workloads (empty - every workload the store holds).
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Build the dashboard of the configured store
  perfscale.topsail.dashboard:
    dest_dir: /var/www/perf
"""

RETURN = r"""
index:
  description: Path of the dashboard's C(index.html).
  returned: success
  type: str
pages:
  description: The page of each workload (file name in the dashboard directory).
  returned: success
  type: dict
skipped:
  description: How many stored documents were skipped as unusable (the index page and each workload's page say why).
  returned: success
  type: int
"""
