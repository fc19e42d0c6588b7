# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark job (``tests.benchmark``): planning the matrix from the configuration and running it
with the configured harness and executor (``job``), and a Tekton task's step (``tekton_point``), which
plans the same matrix. It stands above the matrix engine, the executors, the harnesses, capacity
planning and the results stores it puts together."""
