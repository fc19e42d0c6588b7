# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stop a load in which every request fails for the same reason.

A server that refuses every request (a field it does not accept, a wrong route behind a
proxy, no model loaded) would otherwise get the whole schedule - minutes of stages - and
the run would only say at its end that nothing succeeded. ``FailureStreak`` watches the
requests as they finish: after ``limit`` failures in a row of the same error class, with
no success since the run started, it gives the reason to stop (one line). A success
anywhere in the run turns it off: later failures are the server's behaviour under load,
which is what the run measures.
"""

from __future__ import annotations

DEFAULT_LIMIT = 20
CANCELLED = "cancelled"     # the error class of requests in flight when the run stopped


class FailureStreak:
    """Count consecutive failures of one error class until the first success."""

    def __init__(self, limit=DEFAULT_LIMIT):
        self.limit = limit or 0
        self.error = None
        self.count = 0
        self.detail = None
        self.succeeded = False
        self.reason = None

    def add(self, record):
        """Take one finished request; True when it is the one that stops the run."""
        if record.error is None:
            self.succeeded = True
            self.count = 0
            return False
        if record.error == CANCELLED or self.succeeded or self.reason is not None or self.limit <= 0:
            return False
        if record.error == self.error:
            self.count += 1
        else:
            self.error, self.count = record.error, 1
        self.detail = record.error_detail
        if self.count < self.limit:
            return False
        self.reason = ("stopped early: %d requests in a row failed with %s and none succeeded%s "
                       "(stop_after_failures: %d)" % (self.count, self.error,
                                                      " (%s)" % self.detail if self.detail else "", self.limit))
        return True
