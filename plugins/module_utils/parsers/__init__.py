# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of what tools print: gpu-burn's output, the Hugging Face Trainer's log, GuideLLM jobs' reports, htpasswd files."""
