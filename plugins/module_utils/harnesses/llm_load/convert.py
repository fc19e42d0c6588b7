# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Convert another tool's output into llm-d benchmark reports v0.2.1::

    python -m ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.convert \\
        --from guidellm results.json --output DIR

It writes ``benchmark_report_<tool>_<i>.json`` (one per stage/benchmark of the input)
and prints ``{"converter", "input", "reports"}`` as JSON on stdout; a bad input is
one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import converters
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import metrics


def build_parser():
    lines = ["%s: %s (input: %s)" % (name, converters.get_converter(name).DESCRIPTION, converters.get_converter(name).INPUT)
             for name in converters.known_converters()]
    parser = argparse.ArgumentParser(prog="llm_load.convert", description="Convert load-tool outputs to llm-d benchmark reports v0.2.1.",
                                     epilog="converters: " + "; ".join(lines))
    parser.add_argument("--from", dest="source", required=True, choices=converters.known_converters())
    parser.add_argument("input", help="the tool's output file (or directory, for inference-perf)")
    parser.add_argument("--output", required=True, metavar="DIR")
    parser.add_argument("--tool-version", help="version of the tool, when its output does not say")
    return parser


def main(argv=None):
    options = build_parser().parse_args(argv)
    try:
        reports = converters.convert_path(options.source, options.input)
        os.makedirs(options.output, exist_ok=True)
    except converters.ConversionError as exc:
        sys.stderr.write("llm_load.convert: %s\n" % exc)
        return 2
    except OSError as exc:
        sys.stderr.write("llm_load.convert: --output %s: %s\n" % (options.output, exc.strerror or exc))
        return 2
    written = []
    for index, report in enumerate(reports):
        if options.tool_version:
            report["scenario"]["load"]["standardized"]["tool_version"] = options.tool_version
            report["results"]["observability"]["converted_from"]["tool_version"] = options.tool_version
        path = os.path.join(options.output, "benchmark_report_%s_%d.json" % (options.source, index))
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(metrics.sanitize(report, {}), handle, indent=1, allow_nan=False)
            handle.write("\n")
        written.append(path)
    sys.stdout.write(json.dumps({"converter": options.source, "input": options.input, "reports": written}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
