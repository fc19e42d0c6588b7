# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The maths of change-point detection (docs/regression.md writes it down).

Pure functions on an ordered numpy series, each returning ``ChangePoint``s
(``index`` = first point of the new segment, ``mean_before``, ``mean_after``,
``relative_change``, ``pvalue`` where the method has one):

``edivisive``        E-divisive means (Matteson & James) to propose splits, Student's
                     t-test to accept them (as Hunter / Apache Otava do): recursive
                     binary segmentation, then a merge pass that drops the weakest
                     change points until every one is significant (``max_pvalue``) and
                     large enough (``min_magnitude``, relative). The t-test uses at
                     most ``window`` points on each side.
``zscore``           each point against the points since the last change (at least
                     ``min_history``): a change where |z| >= ``threshold``.
``relative_windows`` mean of the next ``window`` points against the mean of the
                     points before (at least ``min_previous``): a change where the
                     relative difference >= ``threshold``; segmentation like edivisive.

The methods, their options and defaults are registered in ``methods.py``.
Only numpy and scipy.special are used, both imported lazily.
"""

from __future__ import annotations

import functools
import itertools
import math


class ChangePoint:
    __slots__ = ("index", "mean_before", "mean_after", "relative_change", "pvalue", "statistic")

    def __init__(self, index, mean_before, mean_after, pvalue=None, statistic=None):
        self.index = int(index)
        self.mean_before = float(mean_before)
        self.mean_after = float(mean_after)
        self.relative_change = relative_change(self.mean_before, self.mean_after)
        self.pvalue = None if pvalue is None else float(pvalue)
        self.statistic = None if statistic is None else float(statistic)

    def as_dict(self):
        return {"index": self.index, "mean_before": self.mean_before, "mean_after": self.mean_after,
                "relative_change": self.relative_change, "pvalue": self.pvalue}

    def __repr__(self):
        return "ChangePoint(index=%d, %.4g -> %.4g, %+.1f%%, p=%s)" % (
            self.index, self.mean_before, self.mean_after, 100 * self.relative_change, self.pvalue)


def relative_change(before, after):
    if before == 0:
        return 0.0 if after == 0 else math.copysign(math.inf, after)
    return (after - before) / abs(before)


# --------------------------------------------------------------------------
# Student's t-test (pooled variance) on slices, from prefix sums


class Moments:
    """Prefix sums of x and x**2: mean and sum of squared deviations of any slice in O(1)."""

    def __init__(self, series):
        values = series.tolist()
        self.sums = [0.0, *itertools.accumulate(values)]
        self.squares = [0.0, *itertools.accumulate(value * value for value in values)]

    def stats(self, start, stop):
        count = stop - start
        total = self.sums[stop] - self.sums[start]
        mean = total / count
        deviation = max(self.squares[stop] - self.squares[start] - total * mean, 0.0)
        return count, mean, deviation


def pooled_t(n1, m1, ss1, n2, m2, ss2):
    """Two-sided pooled-variance t-test from summary statistics; a one-point side is
    a prediction test (the variance comes from the other side)."""
    from scipy import special

    dof = n1 + n2 - 2
    if dof < 1:
        return 0.0, 1.0
    ss = ss1 + ss2
    # relative tolerance: prefix sums of large values leave rounding noise in ss
    if ss <= 1e-12 * (m1 * m1 * n1 + m2 * m2 * n2):
        # means that differ by the rounding of prefix sums (a constant stretch) are the same mean
        same = abs(m2 - m1) <= SAME_VALUE * max(abs(m1), abs(m2))
        return (0.0, 1.0) if same else (math.copysign(math.inf, m2 - m1), 0.0)
    se = math.sqrt(ss / dof * (1.0 / n1 + 1.0 / n2))
    t = (m2 - m1) / se
    return t, float(2 * special.stdtr(dof, -abs(t)))


def student_t(left, right):
    """Pooled t-test of two arrays: (t, two-sided p-value)."""
    import numpy as np

    left, right = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    return pooled_t(left.size, left.mean(), float(((left - left.mean()) ** 2).sum()),
                    right.size, right.mean(), float(((right - right.mean()) ** 2).sum()))


# --------------------------------------------------------------------------
# e-divisive


# shapes up to this length are kept between series (a verdict's history is rarely longer); longer
# ones are built per series, so that one long series does not pin its n x n triangle in memory
CACHED_LENGTH = 256


def _shared_up_to_cached_length(maxsize):
    """Keep what ``build(length, ...)`` returns for lengths up to CACHED_LENGTH (read-only arrays
    shared between series); build longer ones per call."""
    def decorate(build):
        cached = functools.lru_cache(maxsize=maxsize)(build)

        @functools.wraps(build)
        def shared(length, *args):
            return cached(length, *args) if length <= CACHED_LENGTH else build(length, *args)
        return shared
    return decorate


@_shared_up_to_cached_length(maxsize=4 * CACHED_LENGTH)
def _split_weights(length, min_left, min_right):
    """n / (m - 1) and m / (n - 1) for the splits of a segment of ``length`` (m points on the
    left, n = length - m on the right, m from min_left to length - min_right): they depend on
    the shape only. A one-point side has no pair within (W = 0): its divisor need only be non-zero."""
    import numpy as np

    m = np.arange(min_left, length - min_right + 1, dtype=float)
    n = length - m
    left, right = n / np.maximum(m - 1, 1), m / np.maximum(n - 1, 1)
    left.flags.writeable = right.flags.writeable = False
    return left, right


@_shared_up_to_cached_length(maxsize=32)
def _lower_triangle(size):
    """The strictly lower triangle of ones (size x size), read-only."""
    import numpy as np

    lower = np.tri(size, size, -1)
    lower.flags.writeable = False
    return lower


class _Distances:
    """The distances |x_i - x_j| of a series, and the sums e-divisive scores splits with.

    With S[a, b] the sum of d(i, j) over i < a, j < b (symmetric), a segment [start, stop)
    needs, for each split tau, S[tau, tau] (``within``: every pair before tau, twice), the row
    S[start, .] and the column S[., stop], which is the row S[stop, .]. ``within`` is one pass
    over the lower triangle; a row is one reduction of a slice of the matrix, kept per bound
    (segments share their bounds). No n x n prefix table: a 2-D cumulative sum costs more than
    all of this together.
    """

    def __init__(self, series):
        import numpy as np

        size = series.size
        self.matrix = np.subtract.outer(series, series)
        np.abs(self.matrix, out=self.matrix)
        self.size = size
        # c_k = sum of d(k, j), j < k; S[k, k] = 2 (c_0 + ... + c_{k-1})
        before = np.einsum("ij,ij->i", _lower_triangle(size), self.matrix)
        self.within = np.zeros(size + 1)
        np.cumsum(before, out=self.within[1:])
        self.within *= 2
        self._rows = {}

    def row(self, start):
        """S[start, b] for b = 0..n: the distances of the points before ``start`` to those before b."""
        import numpy as np

        found = self._rows.get(start)
        if found is None:
            found = np.zeros(self.size + 1)
            if start:
                np.cumsum(self.matrix[:start].sum(axis=0), out=found[1:])
            self._rows[start] = found
        return found


def _best_split(distances, start, stop, min_left, min_right):
    """Index maximizing the e-divisive statistic Q in [start, stop), or None.

    For each split tau of the segment: B = sum |x_i - x_j| across the split,
    W_l and W_r the sums within each side (each pair twice), m and n the sizes;
    Q = m n / (m + n) * (2 B / (m n) - W_l / (m (m - 1)) - W_r / (n (n - 1))).
    With S the table of ``_Distances``: W_l = S[tau, tau] - 2 S[start, tau] + S[start, start],
    W_r = S[stop, stop] - 2 S[tau, stop] + S[tau, tau], B = S[tau, stop] - S[start, stop]
    - S[tau, tau] + S[start, tau].
    """
    import numpy as np

    first, last = start + min_left, stop - min_right   # the candidate taus, both included
    if last < first:
        return None, 0.0
    row, column = distances.row(start), distances.row(stop)
    within = distances.within[first:last + 1]
    to_start = row[first:last + 1]
    to_stop = column[first:last + 1]
    left_weight, right_weight = _split_weights(stop - start, min_left, min_right)
    # Q (m + n) = 2 B - n W_l / (m - 1) - m W_r / (n - 1); m + n is the segment's length, the same for all
    q = 2 * (to_stop + to_start - within - column[start])
    q -= left_weight * (within - 2 * to_start + row[start])
    q -= right_weight * (distances.within[stop] - 2 * to_stop + within)
    best = int(np.argmax(q))
    return first + best, float(q[best]) / (stop - start)


# a change made of the newest point alone is tested against this many windows of history:
# one point on the right leaves the t-test little power, more points on the left give it back
NEWEST_POINT_WINDOWS = 3


def _test(moments, start, tau, stop, window):
    left = window * NEWEST_POINT_WINDOWS if stop - tau == 1 else window
    n1, m1, ss1 = moments.stats(max(start, tau - left), tau)
    n2, m2, ss2 = moments.stats(tau, min(stop, tau + window))
    statistic, pvalue = pooled_t(n1, m1, ss1, n2, m2, ss2)
    return ChangePoint(tau, m1, m2, pvalue, statistic)


def _accepted(change, total, max_pvalue, newest_max_pvalue, min_magnitude, scale=1.0):
    """Significant (p at most the threshold of its kind, times ``scale``) and large enough. A change
    made of the newest point alone has its own threshold: one point on its side leaves the test
    less power, and whether the newest run changed is the verdict's question."""
    threshold = newest_max_pvalue if change.index == total - 1 else max_pvalue
    return change.pvalue <= min(threshold * scale, 0.05) and abs(change.relative_change) >= min_magnitude


def edivisive(series, window, max_pvalue, min_magnitude, min_size, newest_max_pvalue=None):
    """Change points by e-divisive proposals accepted by t-tests (see the module docstring).

    ``newest_max_pvalue`` (default: ``max_pvalue``) is the threshold of a change made of the
    newest point alone, which is also tested explicitly when the segmentation did not propose
    it (the best split of a long segment is rarely its last point: Q weighs a one-point side
    by about 1, a split in the middle by about n / 4).
    """
    if newest_max_pvalue is None:
        newest_max_pvalue = max_pvalue
    total = series.size
    distances = _Distances(series)
    moments = Moments(series)
    found = []
    # split: recursive binary segmentation (proposals at ten times the thresholds); a one-point
    # segment is allowed at the end of the series, so that the newest value alone can be a change
    stack = [(0, total)]
    while stack:
        start, stop = stack.pop()
        min_right = 1 if stop == total else min_size
        tau, _q = _best_split(distances, start, stop, min_size, min_right)
        if tau is None:
            continue
        change = _test(moments, start, tau, stop, window)
        if _accepted(change, total, max_pvalue, newest_max_pvalue, min_magnitude, scale=10):
            found.append(tau)
            stack.append((start, tau))
            stack.append((tau, stop))
    found.sort()
    # the newest point alone, against the segment before it, when nothing proposed it
    if total - 1 not in found and total - 1 - (found[-1] if found else 0) >= min_size:
        newest = _test(moments, found[-1] if found else 0, total - 1, total, window)
        if _accepted(newest, total, max_pvalue, newest_max_pvalue, min_magnitude, scale=10):
            found.append(total - 1)
    # merge: re-test each change point between its neighbours and drop the weakest
    # until all of them are significant and large enough (Hunter's merge step)
    while found:
        bounds = [0] + found + [total]
        changes = [_test(moments, bounds[i], bounds[i + 1], bounds[i + 2], window) for i in range(len(found))]
        # the weakest: the largest p-value for its threshold (the newest point alone has its own)
        limits = [newest_max_pvalue if c.index == total - 1 else max_pvalue for c in changes]
        weakest = max(range(len(changes)), key=lambda i: (changes[i].pvalue / limits[i], -abs(changes[i].relative_change)))
        if _accepted(changes[weakest], total, max_pvalue, newest_max_pvalue, min_magnitude):
            smallest = min(range(len(changes)), key=lambda i: abs(changes[i].relative_change))
            if _accepted(changes[smallest], total, max_pvalue, newest_max_pvalue, min_magnitude):
                return changes
            weakest = smallest
        del found[weakest]
    return []


# --------------------------------------------------------------------------
# z-score


# relative to the mean: a standard deviation below NO_SPREAD is the rounding of the prefix sums of a
# constant history (their cancellation leaves about 1e-8), a difference below SAME_VALUE no difference
NO_SPREAD = 1e-7
SAME_VALUE = 1e-12


def _z_scores(values, mean, std):
    """(value - mean) / std; without spread, 0 for the same value and +-inf for another (a
    difference below SAME_VALUE of the mean is the rounding of the mean, no difference)."""
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        deviation = np.where(np.abs(values - mean) > SAME_VALUE * np.abs(mean), values - mean, 0.0)
        return np.where(std > 0, deviation / std, np.where(deviation == 0, 0.0, np.inf * np.sign(deviation)))


def zscore(series, threshold, min_history, min_magnitude, confirm):
    """Each point against the points since the last change.

    A candidate (|z| >= threshold, relative difference >= min_magnitude) becomes a
    change when the next ``confirm`` points (those that exist) deviate the same
    way by at least half the threshold: a single spike is not a change, and is
    left out of the history it would distort. The newest point, which has no
    successor yet, is judged alone.
    """
    import numpy as np
    from scipy import special

    changes = []
    start, scan = 0, 0
    excluded = []
    while scan < series.size:
        # history of index i: series[start:i] without the excluded spikes
        segment = series[start:]
        keep = np.ones(segment.size)
        for index in excluded:
            keep[index - start] = 0.0
        counts = np.concatenate(([0.0], np.cumsum(keep)[:-1]))
        sums = np.concatenate(([0.0], np.cumsum(segment * keep)[:-1]))
        squares = np.concatenate(([0.0], np.cumsum(segment * segment * keep)[:-1]))
        with np.errstate(divide="ignore", invalid="ignore"):
            means = sums / counts
            stds = np.sqrt(np.maximum((squares - counts * means * means) / (counts - 1), 0.0))
            # the rounding of prefix sums is no spread, and no difference (a constant history)
            stds = np.where(stds > NO_SPREAD * np.abs(means), stds, 0.0)
            z = _z_scores(segment, means, stds)
            magnitude = np.abs(segment - means) / np.abs(means)
        positions = np.arange(segment.size) + start
        candidates = np.nonzero((positions >= scan) & (counts >= min_history) & (np.abs(z) >= threshold)
                                & (magnitude >= min_magnitude))[0]
        if candidates.size == 0:
            break
        local = int(candidates[0])
        index = start + local
        mean, std, score = means[local], stds[local], float(z[local])
        following = series[index + 1:index + 1 + confirm]
        follow_z = _z_scores(following, mean, std)
        if not np.all((follow_z * score > 0) & (np.abs(follow_z) >= threshold / 2)):
            excluded.append(index)
            scan = index + 1
            continue
        after = series[index:index + max(1, min_history)]
        pvalue = float(2 * special.ndtr(-abs(score))) if math.isfinite(score) else 0.0
        changes.append(ChangePoint(index, mean, after.mean(), pvalue, score))
        start, scan, excluded = index, index + 1, []
    return changes


# --------------------------------------------------------------------------
# relative difference of windows


def relative_windows(series, threshold, window, min_previous):
    import numpy as np

    prefix = np.concatenate(([0.0], np.cumsum(series)))
    changes = []
    stack = [(0, series.size)]
    while stack:
        start, stop = stack.pop()
        indexes = np.arange(start + min_previous, stop)
        if indexes.size == 0:
            continue
        before = (prefix[indexes] - prefix[start]) / (indexes - start)
        ends = np.minimum(stop, indexes + window)
        after = (prefix[ends] - prefix[indexes]) / (ends - indexes)
        with np.errstate(divide="ignore", invalid="ignore"):
            change = np.where(before != 0, np.abs(after - before) / np.abs(before), 0.0)
        best = int(np.argmax(change))
        if change[best] < threshold:
            continue
        index = int(indexes[best])
        changes.append(ChangePoint(index, before[best], after[best]))
        stack.append((start, index))
        stack.append((index, stop))
    changes.sort(key=lambda c: c.index)
    return changes
