# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judges of Tekton's runs: PipelineRun and TaskRun.

Upstream: tektoncd/pipeline @ 3ee1745ae5b2d9175b11917d7c1935eaad44910c. Both kinds carry one condition,
``Succeeded`` (pkg/apis/pipeline/v1/pipelinerun_types.go, taskrun_types.go): a run is done when it is
True or False, whatever its reason; ``Unknown`` is still going, including reasons that carry a failure
message (``ToBeRetried``, ``PullImageFailed``, ``ExceededNodeResources``, ``PipelineRunStopping``,
``PipelineRunTimeoutRunningFinally``). A run that outlives ``spec.timeouts.pipeline`` (60 minutes by
default, config/config-defaults.yaml) ends ``False`` with ``PipelineRunTimeout``.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    Judge, condition, condition_text, describe, failed, ready, waiting)

TEKTON = "https://github.com/tektoncd/pipeline"


class RunSucceeded(Judge):
    """A Tekton run done: ``Succeeded=True`` ends the wait well, ``Succeeded=False`` as failed."""

    api_version = "tekton.dev/v1"
    upstream = (TEKTON, "pkg/apis/pipeline/v1/pipelinerun_types.go, pkg/apis/pipeline/v1/taskrun_types.go, "
                        "pkg/reconciler/pipelinerun/resources/pipelinerunstate.go, pkg/pod/status.go")

    def observe(self, found, target):
        run = self.subject(found, target)
        if run is None:
            return self.absent(target)
        succeeded = condition(run, "Succeeded")
        text = "%s: %s" % (describe(run), condition_text(succeeded) if succeeded else "not started yet")
        status = str((succeeded or {}).get("status"))
        if status == "True":
            return ready(text)
        if status == "False":
            return failed(text)
        return waiting(text)


class PipelineRunSucceeded(RunSucceeded):
    name = "pipelinerun"
    description = "a PipelineRun done"
    kind = "PipelineRun"


class TaskRunSucceeded(RunSucceeded):
    name = "taskrun"
    description = "a TaskRun done"
    kind = "TaskRun"


JUDGES = (PipelineRunSucceeded, TaskRunSucceeded)
