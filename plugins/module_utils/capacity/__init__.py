# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Capacity planning before GPU-hours are spent (docs/capacity.md).

``architectures``: a model's ``config.json`` as a shape (layers, attention, experts, quantization) and
its parameter counts; ``gpus``: the memory of GPU products; ``model_table``: configs of common models,
offline; ``memory``: vLLM's per-GPU memory (weights, activation peak, non-torch, KV cache) and the
feasibility of a serving point; ``training``: the same for a fine-tuning job; ``placement``: whether a
point's pods fit the cluster's GPU nodes; ``requests``: what a flow's point asks for; ``estimate``: what
a matrix will cost, from the history of earlier points.
"""
