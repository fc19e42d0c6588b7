"""Simulated time: wall-clock start plus elapsed real time times ``scale``.

With ``scale=10`` a pod annotated with a 60 s duration finishes after 6 real
seconds, and its status timestamps are 60 simulated seconds apart. Object
timestamps (creationTimestamp, conditions) use simulated time.
"""

import datetime
import time


class Clock:
    def __init__(self, scale=1.0):
        if scale <= 0:
            raise ValueError("time scale must be positive, got %r" % (scale,))
        self.scale = float(scale)
        self._wall0 = time.time()
        self._mono0 = time.monotonic()

    def time(self):
        """Simulated seconds since the epoch."""
        return self._wall0 + (time.monotonic() - self._mono0) * self.scale

    def now(self):
        return datetime.datetime.fromtimestamp(self.time(), tz=datetime.timezone.utc)

    def timestamp(self):
        """RFC 3339 with second precision, as ``metav1.Time`` serializes."""
        return self.now().strftime("%Y-%m-%dT%H:%M:%SZ")

    def micro_timestamp(self):
        """RFC 3339 with microseconds (``metav1.MicroTime``)."""
        return self.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def real_seconds(self, simulated):
        """How long ``simulated`` seconds take in real time."""
        return max(0.0, float(simulated)) / self.scale

    def simulated_seconds(self, real):
        return float(real) * self.scale


def parse_timestamp(text):
    """Seconds since the epoch of an RFC 3339 timestamp (None when empty or malformed)."""
    if not text:
        return None
    try:
        return datetime.datetime.strptime(text.replace(".000000", "")[:19], "%Y-%m-%dT%H:%M:%S").replace(
            tzinfo=datetime.timezone.utc).timestamp()
    except ValueError:
        return None
