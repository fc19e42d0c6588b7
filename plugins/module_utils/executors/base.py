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
    (nothing to do when the point ran there).
``cancel(handle)``  stop a running point now (its whole process tree).

``close()`` releases what the executor holds once the matrix is done.
Executors register in ``executors/__init__.py``.
"""

from __future__ import annotations

EXIT_TIMEOUT = 124          # as coreutils timeout
EXIT_BAD_OUTPUT = 65        # EX_DATAERR: ran, but did not honour the contract
EXIT_NOT_STARTED = 127      # the command could not be started
EXIT_CANCELLED = 130        # stopped from outside (as SIGINT)


class Execution:
    """How one point's command ended."""

    __slots__ = ("exit_code", "duration", "error", "timed_out", "signal_name")

    def __init__(self, exit_code, duration, error=None, timed_out=False, signal_name=None):
        self.exit_code = exit_code
        self.duration = duration
        self.error = error
        self.timed_out = timed_out
        self.signal_name = signal_name

    @property
    def ok(self):
        return self.exit_code == 0

    def as_dict(self):
        return {"exit_code": self.exit_code, "duration_s": round(self.duration, 6), "error": self.error,
                "timed_out": self.timed_out, "signal": self.signal_name}


class Executor:
    name = None
    description = ""

    def start(self, point, command, directory):
        raise NotImplementedError

    def wait(self, handle, timeout):
        raise NotImplementedError

    def collect(self, handle, directory):
        """Nothing to collect by default: the point wrote into its directory."""

    def cancel(self, handle):
        raise NotImplementedError

    def close(self):
        """Nothing held by default."""
