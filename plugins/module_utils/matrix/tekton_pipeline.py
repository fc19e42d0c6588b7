# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark matrix as a Tekton v1 PipelineRun (the llm-d benchmark proof of concept's shape).

One Task (``perfscale-point``) runs one point: its step plans the matrix from the benchmark
section (a Pipeline parameter) and runs the point whose settings are the Task's parameters
(``benchmark/tekton_point.py``), with ``onError: continue`` so that a failed point never skips
the others; its exit code is the Task's result ``exit-code``. The PipelineRun embeds the
Pipeline; how its tasks are laid out follows the parallelism:

- ``all``: one pipeline task whose ``matrix`` fans out every point at once: ``matrix.params``
  when the points are exactly the cartesian product of their varying settings, else
  ``matrix.include`` (an explicit subset, one named combination per point);
- ``sequential``: one pipeline task per point, each ``runAfter`` the previous one;
- ``barrier:N``: batches of N points, each batch one matrix task ``runAfter`` the previous batch;
- ``sliding:N``: N lanes; point i ``runAfter`` point i-N (at most N at once; the next of a lane
  starts when the lane's previous point ends - Tekton's DAG has no "whichever ends first");
- ``unroll`` (settings): one group per value (or value combination) of those settings, in
  sequence, each laid out by the parallelism above over its own points (the proof of concept's
  unroll, and unroll combined with N).

A ``finally`` task (``gather``) prints every pipeline task's status. Values travel as JSON text
(Tekton parameters are strings); an empty string means "not set for this point".
"""

from __future__ import annotations

import json
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import MatrixError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.names import dns_label

API_VERSION = "tekton.dev/v1"
TASK_NAME = "perfscale-point"
STEP_ENTRY = "plugins/module_utils/benchmark/tekton_point.py"
SECTION_PARAM = "section"
RESULT = "exit-code"
# Tekton's default-max-matrix-combinations-count
MAX_MATRIX_COMBINATIONS = 256
PARAM_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]*$")
LABELS = {"app.kubernetes.io/managed-by": "perfscale.topsail"}


def encode(value):
    return json.dumps(value, sort_keys=True)


def parse_tekton_parallelism(value):
    """``(policy, width)``: ``all`` (width None) or a matrix parallelism policy."""
    if value == "all":
        return "all", None
    return matrix_lib.parse_parallelism(value)


def setting_names(points):
    names = []
    for point in points:
        for name in point.settings:
            if name not in names:
                names.append(name)
    for name in names:
        if not PARAM_NAME.match(name) or name == SECTION_PARAM:
            raise MatrixError("setting %r cannot be a Tekton parameter name (letters, digits, _ and -; not %r)"
                              % (name, SECTION_PARAM))
    return names


def _groups(points, unroll):
    """Points grouped by their values of the ``unroll`` settings, groups in order of appearance."""
    if not unroll:
        return [((), list(points))]
    missing = [name for name in unroll if not any(name in p.settings for p in points)]
    if missing:
        raise MatrixError("tests.benchmark.tekton.unroll: %s is not a setting of any point" % ", ".join(missing))
    groups = {}
    for point in points:
        key = tuple((name, encode(point.settings.get(name))) for name in unroll)
        groups.setdefault(key, []).append(point)
    return list(groups.items())


def _is_product(points, varying):
    values = {name: [] for name in varying}
    for point in points:
        for name in varying:
            value = encode(point.settings.get(name))
            if value not in values[name]:
                values[name].append(value)
    combinations = {tuple(encode(p.settings.get(n)) for n in varying) for p in points}
    expected = 1
    for name in varying:
        expected *= len(values[name])
    same_keys = len({tuple(sorted(p.settings)) for p in points}) == 1
    return same_keys and len(combinations) == len(points) == expected, values


def _task_params_and_matrix(points):
    """The params and the matrix of a pipeline task running ``points``."""
    names = setting_names(points)
    constant = [n for n in names if all(n in p.settings for p in points)
                and len({encode(p.settings[n]) for p in points}) == 1]
    params = [{"name": SECTION_PARAM, "value": "$(params.%s)" % SECTION_PARAM}]
    params += [{"name": n, "value": encode(points[0].settings[n])} for n in constant]
    if len(points) == 1:     # every setting of a single point is constant
        return params, None
    if len(points) > MAX_MATRIX_COMBINATIONS:
        raise MatrixError("a Tekton matrix task would fan out %d points (Tekton's limit: %d); use barrier:N, "
                          "sliding:N or tests.benchmark.tekton.unroll" % (len(points), MAX_MATRIX_COMBINATIONS))
    varying = [n for n in names if n not in constant]
    product, values = _is_product(points, varying)
    if product:
        return params, {"params": [{"name": n, "value": values[n]} for n in varying]}
    include = [{"name": "point-%d" % p.index,
                "params": [{"name": n, "value": encode(p.settings[n])} for n in varying if n in p.settings]}
               for p in points]
    return params, {"include": include}


def _layout(points, policy, width):
    """Units of one group: ``(points, index of the unit it runs after or None)``."""
    if policy == "all":
        return [(points, [])]
    if policy == "barrier":
        batches = [points[i:i + width] for i in range(0, len(points), width)]
        return [(batch, [i - 1] if i else []) for i, batch in enumerate(batches)]
    # sliding lanes; sequential is one lane (its width is 1)
    return [([p], [i - width] if i >= width else []) for i, p in enumerate(points)]


def pipeline_tasks(points, parallelism, unroll=()):
    """The Pipeline's tasks (plain dicts) for ``points`` (planned ``matrix.Point``s)."""
    policy, width = parse_tekton_parallelism(parallelism)
    tasks, previous_tails = [], []
    for number, (key, members) in enumerate(_groups(points, list(unroll))):
        units = _layout(members, policy, width)
        names = []
        for position, (unit, after) in enumerate(units):
            if len(unit) == 1:
                name = "point-%d" % unit[0].index
            else:
                name = "group-%d-batch-%d" % (number, position) if policy == "barrier" else "group-%d" % number
            names.append(name)
            params, matrix = _task_params_and_matrix(unit)
            task = {"name": name, "taskRef": {"name": TASK_NAME}, "params": params}
            if matrix:
                task["matrix"] = matrix
            run_after = [names[i] for i in after] if after else list(previous_tails)
            if run_after:
                task["runAfter"] = run_after
            if key:
                task["displayName"] = ", ".join("%s=%s" % (k, v) for k, v in key)
            tasks.append(task)
        has_successor = {names[i] for _unit, after in units for i in after}
        previous_tails = [n for n in names if n not in has_successor]
    return tasks


def render_task(settings, setting_params, python, collection_path):
    """The Task running one point (tests.benchmark.tekton's image, python, collection)."""
    collection = collection_path.rstrip("/")
    collections_root = collection.rsplit("/ansible_collections/", 1)[0] if "/ansible_collections/" in collection else ""
    args = ["--section", "$(params.%s)" % SECTION_PARAM, "--result", "$(results.%s.path)" % RESULT]
    for name in setting_params:
        args += ["--set", "%s=$(params.%s)" % (name, name)]
    step = {"name": "point", "image": settings["image"], "command": [python, "-P", collection + "/" + STEP_ENTRY],
            "args": args, "onError": "continue"}
    if collections_root:
        step["env"] = [{"name": "PYTHONPATH", "value": collections_root}]
    if settings.get("resources"):
        step["computeResources"] = settings["resources"]
    return {
        "apiVersion": API_VERSION,
        "kind": "Task",
        "metadata": {"name": TASK_NAME, "namespace": settings["namespace"], "labels": dict(LABELS)},
        "spec": {
            "description": "One point of a perfscale.topsail benchmark matrix",
            "params": [{"name": SECTION_PARAM, "type": "string"}]
            + [{"name": n, "type": "string", "default": ""} for n in setting_params],
            "results": [{"name": RESULT, "type": "string", "description": "the point's exit code"}],
            "steps": [step],
        },
    }


# what a point's TaskRun gets beyond the point's own timeout (pod start, the archive in its log)
TASK_MARGIN_S = 60


def go_duration(seconds):
    """Seconds as a Go duration Tekton accepts: ``1h41m0s``, ``11m0s``, ``45s``."""
    seconds = int(-(-seconds // 1))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return "%dh%dm%ds" % (hours, minutes, secs)
    return "%dm%ds" % (minutes, secs) if minutes else "%ds" % secs


def matrix_deadline_s(section, count):
    """How long the whole matrix may run: every point's timeout one after the other, plus a margin.
    Tekton's default (60 minutes, config-defaults.yaml) would cancel a longer matrix; this is what the
    PipelineRun's ``spec.timeouts.pipeline`` says and how long the executor follows it."""
    return float(section.get("timeout_s", 600)) * max(int(count), 1) + TASK_MARGIN_S


def render_pipelinerun(section, points, settings):
    """The PipelineRun of the matrix (``section``: the validated benchmark section, ``points``:
    its planned points, ``settings``: tests.benchmark.tekton)."""
    parallelism = settings.get("parallelism") or section["parallelism"]
    tasks = pipeline_tasks(points, parallelism, settings.get("unroll") or ())
    statuses = {task["name"]: "$(tasks.%s.status)" % task["name"] for task in tasks}
    gather = {
        "name": "gather",
        "params": [{"name": "statuses", "value": json.dumps(statuses)}],
        "taskSpec": {
            "params": [{"name": "statuses", "type": "string"}],
            "steps": [{"name": "gather", "image": settings["image"],
                       "command": ["python3", "-c", "import sys; print(sys.argv[1])", "$(params.statuses)"]}],
        },
    }
    run = {
        "apiVersion": API_VERSION,
        "kind": "PipelineRun",
        "metadata": {"generateName": dns_label(section["name"], 40, fallback="matrix") + "-", "namespace": settings["namespace"],
                     "labels": dict(LABELS)},
        "spec": {
            "params": [{"name": SECTION_PARAM, "value": json.dumps(section, sort_keys=True)}],
            # the matrix's own deadline: Tekton's 60-minute default would cancel a longer matrix
            "timeouts": {"pipeline": go_duration(matrix_deadline_s(section, len(points)))},
            "pipelineSpec": {
                "description": "perfscale.topsail matrix %s: %d point(s), parallelism %s%s"
                               % (section["name"], len(points), parallelism,
                                  ", unroll " + ", ".join(settings["unroll"]) if settings.get("unroll") else ""),
                "params": [{"name": SECTION_PARAM, "type": "string"}],
                "tasks": tasks,
                "finally": [gather],
            },
        },
    }
    if settings.get("service_account"):
        run["spec"]["taskRunTemplate"] = {"serviceAccountName": settings["service_account"]}
    return run
