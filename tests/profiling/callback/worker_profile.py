# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A callback for profiling the test suite (not part of the collection): where the CPU of
ansible-playbook goes, in its main process and in the worker it forks for every task. Each
process writes a cProfile file into ``$PERFSCALE_WORKER_PROFILE`` (a directory);
tests/profiling/summarize_profiles.py adds them up. Each worker also writes the modules it imported
(``worker-PID.imports``: its task, action and module names): a worker's imports are lost when it
exits, and the next worker that needs them imports them again.

    PERFSCALE_WORKER_PROFILE=/tmp/wprof .venv/bin/python -m pytest tests/cluster/test_kserve.py
    .venv/bin/python tests/profiling/summarize_profiles.py /tmp/wprof
"""

from __future__ import annotations

DOCUMENTATION = """
name: worker_profile
type: aggregate
short_description: cProfile of ansible-playbook and its task workers (test-suite profiling)
description: Writes one cProfile file per process into the directory named by PERFSCALE_WORKER_PROFILE.
"""

import cProfile
import json
import os
import sys

from ansible.executor.process import worker
from ansible.plugins.callback import CallbackBase


def _dump(profile, directory, kind):
    profile.disable()
    profile.dump_stats(os.path.join(directory, "%s-%d.prof" % (kind, os.getpid())))


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "worker_profile"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._directory = os.environ.get("PERFSCALE_WORKER_PROFILE")
        self._profile = None
        if not self._directory:
            return
        os.makedirs(self._directory, exist_ok=True)
        self._profile = cProfile.Profile()
        self._profile.enable()
        directory = self._directory
        original = worker.WorkerProcess._run

        def profiled_run(process):
            before = set(sys.modules)
            profile = cProfile.Profile()
            profile.enable()
            try:
                return original(process)
            finally:
                _dump(profile, directory, "worker")
                # what this worker imported: lost when it exits, imported again by the next one
                with open(os.path.join(directory, "worker-%d.imports" % os.getpid()), "w", encoding="utf-8") as handle:
                    json.dump({"task": process._task.get_name(), "action": process._task.action,
                               "imported": sorted(set(sys.modules) - before)}, handle)

        worker.WorkerProcess._run = profiled_run

    def v2_playbook_on_stats(self, stats):
        if self._profile is not None:
            _dump(self._profile, self._directory, "main")
            self._profile = None
