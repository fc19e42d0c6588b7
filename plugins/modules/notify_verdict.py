#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: notify_verdict
short_description: Post a run's verdict where the team looks - a pull request comment, a Slack thread
version_added: 0.4.0
description:
  - One message per run - the verdict (regressions, persisting regressions, improvements, inconclusive, failed
    points), the top changes with their values and p-values, the run's duration and links to the reports and
    artifacts - to every notifier the C(notifications) section enables.
  - GitHub (C(notifications.github) - C(api_url), C(repo), C(pr_number), C(token_file)) - one comment per pull
    request and test, found again by a hidden marker and updated by later runs; GitHub Enterprise through its
    C(api_url). Only a marker comment written by the token's own account (C(GET /user), or GraphQL's
    C(viewer) for an app installation token) is edited; another account's is left alone and a new one posted.
  - Slack (C(notifications.slack) - C(api_url), C(channel), C(token_file)) - one message per run, in a thread per
    pull request when C(notifications.github) names one; only a thread the token's own bot (or user, per
    C(auth.test)) started is replied to.
  - A notifier that fails (a missing or refused token, a rate limit asking to wait longer than
    C(notifications.max_retry_after_s), a dead endpoint, an answer of an unexpected shape, any exception) is one
    warning line, never a failed task; its message is spooled under C(<run root>/notify_spool/) and O(spool_dir)
    sends it again, and what the other notifiers delivered is kept. Tokens come from the secrets directory and
    never reach the task's output or the artifacts. The outcome goes to C(notifications.json) in the run directory.
  - Skipped when no notifier is enabled. Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  run_root:
    description: The run directory; default the fact C(perfscale_run_root).
    type: path
  summary:
    description:
      - The regression summary (M(perfscale.topsail.analyze_regressions)' RV(perfscale.topsail.analyze_regressions#module:summary)).
      - None - not analysed.
    type: dict
  failed_points:
    description: The names of the points that failed.
    type: list
    elements: str
    default: []
  points:
    description: How many points the run had.
    type: int
  reports:
    description: The reports' index (a path in the run directory, made a URL under O(artifacts_url) when that is one).
    type: str
  artifacts_url:
    description: Where the artifacts were exported (M(perfscale.topsail.export_artifacts)' RV(perfscale.topsail.export_artifacts#module:url)).
    type: str
  spool_dir:
    description: Send the messages spooled in this directory again, instead of a new one.
    type: path
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
- name: Tell the pull request and the channel
  perfscale.topsail.notify_verdict:
    summary: "{{ visualize_regressions.summary | default(omit) }}"
    failed_points: "{{ benchmark_failed_points }}"
    reports: "{{ visualize_result.index | default(omit) }}"
"""

RETURN = r"""
delivered:
  description: One record per notifier that delivered (C(notifier), C(action) - created, updated, posted, replied - and where).
  returned: success
  type: list
  elements: dict
spooled:
  description: The spool files of the messages not delivered.
  returned: success
  type: list
  elements: str
notify_warnings:
  description: Why each notifier that did not deliver failed (one line each, tokens masked).
  returned: success
  type: list
  elements: str
"""
