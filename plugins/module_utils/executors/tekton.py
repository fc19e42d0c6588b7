# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tekton executor: the whole matrix as a Tekton v1 PipelineRun (``module_utils/tekton.py``).

It runs no point itself: ``render`` writes ``task.yaml`` (the Task running one point) and
``pipelinerun.yaml`` (the PipelineRun embedding the Pipeline) into the matrix directory, both
validated strictly first (the CRDs, and the embedded Pipeline against Tekton's v1 OpenAPI
definitions), for ``kubectl create -f`` on a cluster with Tekton. Creating the PipelineRun,
following it and bringing its results back into the matrix tree are not done here yet.
"""

from __future__ import annotations

import os
import sys

from ansible_collections.perfscale.topsail.plugins.module_utils import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils import tekton
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import MatrixError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import base
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.kubernetes import CONTROLLER_COLLECTION
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import validation

PIPELINERUN_FILE = "pipelinerun.yaml"
TASK_FILE = "task.yaml"

# the defaults of tests.benchmark.tekton (config_schema.benchmark_model has the same)
DEFAULTS = {"namespace": "perfscale-benchmark", "image": "quay.io/perfscale/topsail:latest", "python": None,
            "collection_path": None, "service_account": None, "resources": {}, "unroll": [], "parallelism": None}


def check(obj, validator):
    problems = validation.validate_pipelinerun(obj, validator=validator) if obj["kind"] == "PipelineRun" \
        else validator.validate(obj) + validator.validate_definition(obj["spec"], "v1.TaskSpec", "spec", kind=obj["kind"],
                                                                     name=obj["metadata"]["name"])
    if problems:
        raise MatrixError("tekton: the rendered %s is invalid: %s" % (obj["kind"], "; ".join(str(p) for p in problems)))


class TektonExecutor(base.Executor):
    name = "tekton"
    description = "The whole matrix as a Tekton PipelineRun (pipelinerun.yaml in the matrix directory); runs nothing here"
    runs_points = False

    def __init__(self, section, settings=None):
        self.section = section
        self.settings = dict(DEFAULTS, **(settings or {}))

    @classmethod
    def from_section(cls, section, base_env=None, connections=None):
        return cls(section, section.get("tekton"))

    def render(self, points, matrix_dir):
        """Write task.yaml and pipelinerun.yaml for ``points`` into ``matrix_dir``; what was written."""
        names = tekton.setting_names(points)
        task = tekton.render_task(self.settings, names, self.settings.get("python") or sys.executable,
                                  self.settings.get("collection_path") or CONTROLLER_COLLECTION)
        run = tekton.render_pipelinerun(self.section, points, self.settings)
        validator = validation.OpenAPIDefinitionsValidator()
        check(task, validator)
        check(run, validator)
        paths = {"task": os.path.join(matrix_dir, TASK_FILE), "pipelinerun": os.path.join(matrix_dir, PIPELINERUN_FILE)}
        artifacts.write_yaml_atomic(paths["task"], task)
        artifacts.write_yaml_atomic(paths["pipelinerun"], run)
        return dict(paths, pipeline_tasks=len(run["spec"]["pipelineSpec"]["tasks"]))

    def start(self, point, command, directory):
        raise MatrixError("the tekton executor runs no point itself (render the PipelineRun)")

    def wait(self, handle, timeout):
        raise MatrixError("the tekton executor runs no point itself")

    def cancel(self, handle):
        """Nothing runs here."""
