# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Other load tools' outputs into the llm-d benchmark report v0.2.1: the converter registry.

Each converter is a module of this package with ``NAME``, ``DESCRIPTION``,
``INPUT`` (what to point it at) and ``convert_path(path) -> [report, ...]`` (one
report per stage/benchmark of the input). ``CONVERTERS`` maps the names used on the
command line (``--from``) to those modules; they are imported when asked for.
"""

from __future__ import annotations

import importlib

PACKAGE = "ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.converters"

CONVERTERS = {
    "guidellm": "guidellm",
    "vllm-bench": "vllm_bench",
    "inference-perf": "inference_perf",
    "llm-load-test": "llm_load_test",
}


class ConversionError(ValueError):
    """An input that cannot be converted (one line naming the file and what was expected)."""


def known_converters():
    return sorted(CONVERTERS)


def get_converter(name):
    if name not in CONVERTERS:
        raise ConversionError("unknown converter %r; known: %s" % (name, ", ".join(known_converters())))
    return importlib.import_module("%s.%s" % (PACKAGE, CONVERTERS[name]))


def convert_path(name, path):
    """The reports of ``path`` read by converter ``name``."""
    return get_converter(name).convert_path(path)
