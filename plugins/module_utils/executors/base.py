# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an executor is: where and how a matrix point's command runs.

The matrix engine drives an executor through four calls per point, and knows
nothing else about it:

``start(point, command, directory)``  start the point's ``PointCommand``; its
    stdout and stderr end up as ``stdout.log`` / ``stderr.log`` in ``directory``;
    returns a handle.
``wait(handle, timeout)``  wait until the point ends or ``timeout`` seconds
    passed (then it is killed); returns an ``Execution``.
``collect(handle, directory)``  bring the point's files into its directory
    (nothing to do when the point ran there); returns ``None``, or an
    ``Execution`` replacing the one of ``wait`` when collecting failed (a
    point whose files did not come back did not succeed).
``cancel(handle)``  stop a running point now (its whole process tree).

``close()`` releases what the executor holds once the matrix is done.
``from_section(section, base_env, connections)`` creates one from the
benchmark section (``tests.benchmark``), the environment of the points and
the connection options of the clusters (``clusters.connection_options``).
Executors register in ``executors/__init__.py``.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_engine

EXIT_TIMEOUT = 124          # as coreutils timeout
EXIT_BAD_OUTPUT = matrix_engine.EXIT_BAD_OUTPUT   # EX_DATAERR: ran, but did not honour the contract
EXIT_NOT_STARTED = 127      # the command could not be started
EXIT_CANCELLED = 130        # stopped from outside (as SIGINT)


class Execution:
    """How one point's command ended."""

    __slots__ = ("exit_code", "duration", "error", "timed_out", "signal_name", "details", "resources")

    def __init__(self, exit_code, duration, error=None, timed_out=False, signal_name=None, details=None,
                 resources=None):
        self.exit_code = exit_code
        self.duration = duration
        self.error = error
        self.timed_out = timed_out
        self.signal_name = signal_name
        # where it ran, for a post-mortem (the kubernetes executor: namespace, Job, pod, node)
        self.details = details
        # what the point's process tree used, when the executor can measure it (``resource_usage``)
        self.resources = resources

    @property
    def ok(self):
        return self.exit_code == 0

    def as_dict(self):
        document = {"exit_code": self.exit_code, "duration_s": round(self.duration, 6), "error": self.error,
                    "timed_out": self.timed_out, "signal": self.signal_name}
        if self.details:
            document["executor"] = dict(self.details)
        if self.resources:
            document["resources"] = dict(self.resources)
        return document


def resource_usage(rusage):
    """The performance-indicator contract's resource figures of a finished process tree, from its
    ``struct rusage`` (``os.wait4``): CPU user and kernel seconds, voluntary and involuntary context
    switches, the largest resident set (Linux reports ``ru_maxrss`` in KiB)."""
    return {"cpu_user_s": round(rusage.ru_utime, 6), "cpu_system_s": round(rusage.ru_stime, 6),
            "voluntary_context_switches": int(rusage.ru_nvcsw),
            "involuntary_context_switches": int(rusage.ru_nivcsw),
            "max_rss_mib": round(rusage.ru_maxrss / 1024.0, 3)}


class Executor:
    name = None
    description = ""
    # False: the executor hands the whole matrix to another engine (``render(points, matrix_dir)``
    # writes what that engine runs) instead of running each point through start/wait/collect
    runs_points = True

    @classmethod
    def from_section(cls, section, base_env=None, connections=None):
        """The executor for a benchmark section; by default it needs only the environment."""
        return cls(base_env=base_env)

    @classmethod
    def cluster_role(cls, section):
        """The cluster role (sutest, driver) whose API the executor reaches for this section, checked
        before any point runs; None (the default) when it reaches no cluster."""
        return None

    def start(self, point, command, directory):
        raise NotImplementedError

    def wait(self, handle, timeout):
        raise NotImplementedError

    def collect(self, handle, directory):
        """Nothing to collect by default: the point wrote into its directory."""
        return None

    def cancel(self, handle):
        raise NotImplementedError

    def render(self, points, matrix_dir):
        raise NotImplementedError

    def run_rendered(self, points, matrix_dir, harness, rendered):
        """Have the other engine run what ``render`` wrote and finish the points it ran
        (``matrix.record_outcome``); the matrix summary, or None when it is only written."""
        return None

    def close(self):
        """Nothing held by default."""
