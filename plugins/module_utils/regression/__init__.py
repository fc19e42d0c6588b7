# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Regression analysis against the history in the results store.

``maths``     change-point detection on a series (pure functions)
``methods``   the registry of methods: name, options and defaults, minimum history
``baselines`` the registry of baseline policies: which history runs (noisy or not) a baseline holds
``verdicts``  each KPI of a run against its history: regression, improvement...
``step``      the play step: payloads of a plots directory in, summary and report out
"""
