# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an executor is: where and how a matrix's points run.

One protocol for every executor; the runner (``benchmark/job.run_benchmark``, and the
``inventory_hosts`` module on a host) calls the same methods whatever the executor is:

``from_section(section, base_env, connections)``  create one from the benchmark section
    (``tests.benchmark``), the environment of the points and the connection options of the
    clusters (``clusters.connection_options``).
``cluster_role(section)``  the cluster role whose API it reaches (checked before any point
    runs), or None.
``run(matrix)``  run the points of ``matrix`` (a ``matrix.engine.MatrixRun``: its directory,
    points, harness, section, the points skipped before deploy, the parallelism policy and
    callbacks) and return the matrix summary (the counts of ``progress.json``).
``close()``  release what the executor holds once the matrix is done (always called).

How ``run`` runs the points is the executor's own business:

- ``Executor`` (``local``, ``kubernetes``): one point at a time through the matrix engine
  (``matrix.run_points(self)``: the ``MatrixRunner``'s policies, resume, stop_on_error, the
  harness's contract), which drives four calls per point:

  ``start(point, command, directory)``  start the point's ``PointCommand``; its stdout and
      stderr end up as ``stdout.log`` / ``stderr.log`` in ``directory``; returns a handle.
  ``wait(handle, timeout)``  wait until the point ends or ``timeout`` seconds passed (then it
      is killed); returns an ``Execution``.
  ``collect(handle, directory)``  bring the point's files into its directory (nothing to do
      when the point ran there); returns ``None``, or an ``Execution`` replacing the one of
      ``wait`` when collecting failed (a point whose files did not come back did not succeed).
  ``cancel(handle)``  stop a running point now (its whole process tree).

- ``WholeMatrixExecutor`` (``tekton``, ``inventory_hosts``): the whole matrix goes to another
  engine at once: ``render(points, matrix_dir)`` writes (or returns) what that engine runs for
  the points still to run, ``run_rendered(points, matrix_dir, harness, rendered)`` has it run
  there and finishes the points it ran (``matrix.record_outcome``), or returns None when what
  was rendered is only written.

Executors register in ``executors/__init__.py`` (a name -> module and class).
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ExecutorError
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
    """An executor that runs one point at a time through the matrix engine (``run``'s default)."""

    name = None
    description = ""

    @classmethod
    def from_section(cls, section, base_env=None, connections=None):
        """The executor for a benchmark section; by default it needs only the environment."""
        return cls(base_env=base_env)

    @classmethod
    def cluster_role(cls, section):
        """The cluster role (sutest, driver) whose API the executor reaches for this section, checked
        before any point runs; None (the default) when it reaches no cluster."""
        return None

    def run(self, matrix):
        """Run the points of ``matrix`` (a ``matrix.engine.MatrixRun``); the matrix summary. By default
        the engine runs them one by one with this executor's ``start``/``wait``/``collect``/``cancel``."""
        return matrix.run_points(self)

    def start(self, point, command, directory):
        raise NotImplementedError

    def wait(self, handle, timeout):
        raise NotImplementedError

    def collect(self, handle, directory):
        """Nothing to collect by default: the point wrote into its directory."""
        return None

    def cancel(self, handle):
        raise NotImplementedError

    def close(self):
        """Nothing held by default."""


class WholeMatrixExecutor(Executor):
    """An executor that hands the whole matrix to another engine (Tekton, Ansible's play over the
    hosts) instead of running its points one by one here."""

    def run(self, matrix):
        """Render the points still to run (``matrix.points_to_hand_over``), have the other engine run
        them (``run_rendered``), and the matrix summary of what it reported."""
        points = matrix.points_to_hand_over()
        rendered = self.render(points, matrix.matrix_dir)
        summary = self.run_rendered(points, matrix.matrix_dir, matrix.harness, rendered)
        return matrix.handed_over(points, summary, rendered)

    def render(self, points, matrix_dir):
        """What the other engine runs for ``points`` (written into ``matrix_dir``, or returned)."""
        raise NotImplementedError

    def run_rendered(self, points, matrix_dir, harness, rendered):
        """Have the other engine run what ``render`` wrote and finish the points it ran
        (``matrix.record_outcome``); the matrix summary, or None when it is only written."""
        raise NotImplementedError

    def start(self, point, command, directory):
        raise ExecutorError("the %s executor runs no point itself: %s" % (self.name, self.description))

    def wait(self, handle, timeout):
        raise ExecutorError("the %s executor runs no point itself: %s" % (self.name, self.description))

    def cancel(self, handle):
        """Nothing runs here."""
