# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The step of the Tekton Task ``perfscale-point`` (``module_utils/matrix/tekton_pipeline.py``), run as a script.

``python -P tekton_point.py --section JSON --result PATH --set name=JSON ...`` plans the matrix
of the benchmark section exactly as the controller does, finds the point whose settings are
the ``--set`` values (an empty value: not set for this point), prints which point it is, then
runs its command as the kubernetes executor's pods do (``pod_point.py``: the point's directory
comes back through the log as an archive) and writes the exit code into the Task's result file.
Needs the collection on ``PYTHONPATH`` (the Task sets it) and its Python requirements.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

POINT_LINE = "PERFSCALE-POINT"


def parse_settings(pairs):
    """``name=JSON`` pairs as settings; an empty value is a setting this point does not have."""
    settings = {}
    for pair in pairs:
        name, separator, text = pair.partition("=")
        if not separator or not name:
            raise ValueError("--set %r: expected name=JSON" % pair)
        if text == "":
            continue
        try:
            settings[name] = json.loads(text)
        except ValueError as exc:
            raise ValueError("--set %s: not JSON (%s)" % (name, exc)) from None
    return settings


def find_point(section, settings):
    """The planned point of ``section`` whose settings are ``settings``."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark

    plan = benchmark.plan_benchmark({"tests": {"benchmark": section}})
    for point in plan.points:
        if point.settings == settings:
            return point, len(plan.points)
    raise ValueError("the settings %s are no point of the matrix %s (%d points)"
                     % (json.dumps(settings, sort_keys=True), section.get("name"), len(plan.points)))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tekton_point.py")
    parser.add_argument("--section", required=True, help="the benchmark section (JSON)")
    parser.add_argument("--result", help="file receiving the exit code (the Task's result)")
    parser.add_argument("--set", action="append", default=[], dest="settings", metavar="NAME=JSON")
    args = parser.parse_args(argv)
    # the point's command runs in a directory of its own: the result file stays where it was named
    result = os.path.abspath(args.result) if args.result else None
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError
    from ansible_collections.perfscale.topsail.plugins.module_utils.executors import pod_point

    try:
        section = json.loads(args.section)
        point, total = find_point(section, parse_settings(args.settings))
    except (ValueError, PerfscaleError) as exc:
        sys.stderr.write("tekton_point: %s\n" % exc)
        code = 2
    else:
        from ansible_collections.perfscale.topsail.plugins.module_utils.run.artifacts import index_digits

        sys.stdout.write("%s %d %0*d__%s\n" % (POINT_LINE, point.index, index_digits(total), point.index, point.name))
        sys.stdout.flush()
        # the point's environment (its settings for a command of your own, thread settings...)
        os.environ.update(point.command.env)
        code = pod_point.main(point.command.argv)
    if result:
        os.makedirs(os.path.dirname(result), exist_ok=True)
        with open(result, "w", encoding="utf-8") as handle:
            handle.write("%d" % code)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
