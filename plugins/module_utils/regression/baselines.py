# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which history runs a KPI's baseline is made of (``regression.noise.baseline``).

A run is *noisy* when its repetitions spread or its host's load passed the thresholds of
``regression.noise`` (the workload says why). Runs marked forgotten never enter a
baseline. The policy decides the noisy ones:

``prefer_quiet``  (default) the quiet runs when there are as many as the method needs,
                  else every run, noisy ones included: on a shared runner where every run
                  is noisy, KPIs are still compared, and the baseline's spread then holds
                  the noise the verdict is judged against;
``all``           every run, noisy or not;
``quiet_only``    quiet runs only: a KPI whose history is all noisy has no baseline.

A policy is a function ``(quiet runs, noisy runs, runs the method needs) -> whether the noisy
runs enter the baseline`` in
``POLICIES``; ``BASELINE_POLICIES`` lists their names for the configuration schema.
"""

from __future__ import annotations


def _prefer_quiet(quiet, _noisy, needed):
    return quiet < needed


def _all(_quiet, _noisy, _needed):
    return True


def _quiet_only(_quiet, _noisy, _needed):
    return False


POLICIES = {"prefer_quiet": _prefer_quiet, "all": _all, "quiet_only": _quiet_only}
BASELINE_POLICIES = tuple(POLICIES)

# what each policy does, in the words the console, the report and the records share
DESCRIPTIONS = {
    "prefer_quiet": "noisy runs enter a baseline only where there are too few quiet ones",
    "all": "noisy runs enter the baselines",
    "quiet_only": "noisy runs stay out of the baselines",
}


class Split:
    """One KPI's history split by ``policy``: ``baseline`` (oldest first), ``noisy_points`` (noisy
    runs in it), ``left_out`` ({"noisy": n, "forgotten": n}) and ``noisy_history`` (noisy runs seen)."""

    def __init__(self, history, forgotten, policy, needed):
        kept = [document for document in history if document.get("run_id") not in forgotten]
        self.noisy_history = sum(1 for document in kept if document.get("noisy"))
        with_noisy = self.noisy_history > 0 and POLICIES[policy](len(kept) - self.noisy_history,
                                                                 self.noisy_history, needed)
        # the store's order (oldest first) is kept
        self.baseline = [document for document in kept if with_noisy or not document.get("noisy")]
        self.noisy_points = self.noisy_history if with_noisy else 0
        self.left_out = {"noisy": self.noisy_history - self.noisy_points, "forgotten": len(history) - len(kept)}
