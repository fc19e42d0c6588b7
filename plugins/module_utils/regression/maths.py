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
        import numpy as np

        self.sums = np.concatenate(([0.0], np.cumsum(series))).tolist()
        self.squares = np.concatenate(([0.0], np.cumsum(series * series))).tolist()

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
        return (0.0, 1.0) if m1 == m2 else (math.copysign(math.inf, m2 - m1), 0.0)
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


def _row_prefix(series):
    """Row-wise prefix sums of the distance matrix: row[i][j] = sum(|x_i - x_k|, k < j)."""
    import numpy as np

    distances = np.abs(series[:, None] - series[None, :])
    prefix = np.zeros((series.size, series.size + 1))
    np.cumsum(distances, axis=1, out=prefix[:, 1:])
    return prefix


def _best_split(prefix, start, stop, min_left, min_right):
    """Index maximizing the e-divisive statistic Q in [start, stop), or None.

    For each split tau of the segment: B = sum |x_i - x_j| across the split,
    W_l and W_r the sums within each side (each pair twice), m and n the sizes;
    Q = m n / (m + n) * (2 B / (m n) - W_l / (m (m - 1)) - W_r / (n (n - 1))).
    """
    import numpy as np

    if stop - start < min_left + min_right:
        return None, 0.0
    rows = np.arange(start, stop)
    # distances of each point to the points of the segment before it / after it
    to_before = prefix[rows, rows] - prefix[rows, start]
    to_after = prefix[rows, stop] - prefix[rows, rows + 1]
    within_left = 2 * np.concatenate(([0.0], np.cumsum(to_before)))       # W_l(tau), tau = start..stop
    within_right = 2 * np.concatenate((np.cumsum(to_after[::-1])[::-1], [0.0]))
    total = within_left[-1]
    taus = np.arange(min_left, stop - start - min_right + 1)
    between = (total - within_left[taus] - within_right[taus]) / 2
    m = taus.astype(float)
    n = (stop - start - taus).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        term_left = np.where(m > 1, within_left[taus] / (m * (m - 1)), 0.0)
        term_right = np.where(n > 1, within_right[taus] / (n * (n - 1)), 0.0)
    q = m * n / (m + n) * (2 * between / (m * n) - term_left - term_right)
    best = int(np.argmax(q))
    return start + int(taus[best]), float(q[best])


# a change made of the newest point alone is tested against this many windows of history:
# one point on the right leaves the t-test little power, more points on the left give it back
NEWEST_POINT_WINDOWS = 3


def _test(moments, start, tau, stop, window):
    left = window * NEWEST_POINT_WINDOWS if stop - tau == 1 else window
    n1, m1, ss1 = moments.stats(max(start, tau - left), tau)
    n2, m2, ss2 = moments.stats(tau, min(stop, tau + window))
    statistic, pvalue = pooled_t(n1, m1, ss1, n2, m2, ss2)
    return ChangePoint(tau, m1, m2, pvalue, statistic)


def _accepted(change, max_pvalue, min_magnitude):
    return change.pvalue <= max_pvalue and abs(change.relative_change) >= min_magnitude


def edivisive(series, window, max_pvalue, min_magnitude, min_size):
    total = series.size
    prefix = _row_prefix(series)
    moments = Moments(series)
    found = []
    # split: recursive binary segmentation; a one-point segment is allowed at the
    # end of the series, so that the newest value alone can be a change
    first_pass = min(max_pvalue * 10, 0.05)
    stack = [(0, total)]
    while stack:
        start, stop = stack.pop()
        min_right = 1 if stop == total else min_size
        tau, _q = _best_split(prefix, start, stop, min_size, min_right)
        if tau is None:
            continue
        change = _test(moments, start, tau, stop, window)
        if change.pvalue <= first_pass and abs(change.relative_change) >= min_magnitude:
            found.append(tau)
            stack.append((start, tau))
            stack.append((tau, stop))
    # merge: re-test each change point between its neighbours and drop the weakest
    # until all of them are significant and large enough (Hunter's merge step)
    found.sort()
    while found:
        bounds = [0] + found + [total]
        changes = [_test(moments, bounds[i], bounds[i + 1], bounds[i + 2], window) for i in range(len(found))]
        weakest = max(range(len(changes)), key=lambda i: (changes[i].pvalue, -abs(changes[i].relative_change)))
        if _accepted(changes[weakest], max_pvalue, min_magnitude):
            smallest = min(range(len(changes)), key=lambda i: abs(changes[i].relative_change))
            if _accepted(changes[smallest], max_pvalue, min_magnitude):
                return changes
            weakest = smallest
        del found[weakest]
    return []


# --------------------------------------------------------------------------
# z-score


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
            z = np.where(stds > 0, (segment - means) / stds, np.where(segment == means, 0.0, np.inf * np.sign(segment - means)))
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
        if std > 0:
            follow_z = (following - mean) / std
        else:
            follow_z = np.where(following == mean, 0.0, np.inf * np.sign(following - mean))
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
