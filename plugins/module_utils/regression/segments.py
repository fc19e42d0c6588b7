# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``linear_segments``: the default change detector (docs/regression.md writes the maths down).

A KPI history is modelled as straight-line segments (a level and a slope each) in noise. A change
point is a *jump* between two segments that stands out of the noise; a slope that is not zero is a
*drift*, reported on its own, never as a chain of steps. Held against real, human-annotated series
(benchmarks/real_corpus.py) and the synthetic corpus (benchmarks/regression_quality.py).

1. Noise: the robust spread of the first differences (median absolute deviation / sqrt 2): one
   run's noise, untouched by a few steps, by a drift (a constant offset of the differences) or by
   outliers.
2. Outliers: an earlier point further than ``outlier_z`` noise deviations from the median of its
   five neighbours (and than that many of its own stretch's deviations: where the noise grew, large
   deviations are not outliers) is set to that median for the segmentation: a spike is not a change.
   The newest point is never touched: whether it starts a change is the verdict's question.
3. Proposals, on the settled history (all but the newest ``min_size - 1`` points, which cannot make
   a segment yet): binary segmentation into straight lines, vectorised on prefix sums; a split is
   proposed where it lowers the residual sum of squares by more than ``penalty`` x log(n) noise
   variances. The bar is low (proposals are cheap, the tests below decide), so segmentation goes on
   inside both halves of every proposal instead of stopping when the whole series does not split.
4. Tests: each proposal's jump (the right segment's line minus the left one's, where they meet)
   against its standard error, whose variance is the residual variance of the two segments times the
   long-run factor (1 + rho) / (1 - rho), rho the lag-1 autocorrelation of all residuals beyond what
   independent noise shows (one standard error, 1 / sqrt(n)). Real series wander (a warming cache, a
   growing data set, seasons): their residuals are correlated and the factor keeps that wander from
   becoming steps; independent noise leaves it at 1. A proposal must also gain half the proposal bar
   in the variance of the noisier of its two segments (a stretch whose noise grew is not judged by the
   quieter rest). The weakest failing proposal (p-value above ``max_pvalue``, a relative jump below
   ``min_magnitude``, or too small a gain) is dropped and the rest re-tested, until all pass.
5. The newest points: for each candidate start among the last ``min_size - 1`` points, the line
   fitted to the last segment before it (its level alone when the slope is not 3 standard errors
   from 0: no extrapolation without a trend) predicts the points after it; their mean residual is
   tested (Student's t, the long-run factor applied; the spread of the 15 points before the candidate
   when it is 1.5 times the segment's: noise that grew lately). The most significant candidate is a
   change at ``newest_max_pvalue`` for the newest point alone, a Bonferroni share of it for a longer
   tail.
6. Drift: the last segment's slope, t-tested with the long-run variance (``drift_max_pvalue``), and
   how far it moved over the segment (at least ``min_magnitude``).

numpy and scipy.special only, imported when called. The constants below were chosen on the corpora
of benchmarks/ (docs/regression.md: what each was measured to do).
"""

from __future__ import annotations

import functools
import math

from ansible_collections.perfscale.topsail.plugins.module_utils.regression.maths import ChangePoint
from ansible_collections.perfscale.topsail.plugins.module_utils.regression.maths import relative_change

# the median absolute deviation of a normal sample is this many standard deviations
MAD_PER_SD = 0.6744897501960817
# the long-run factor's autocorrelation stops here (a random walk's would be 1: an infinite factor)
MAX_AUTOCORRELATION = 0.95
# ... and counts from this many standard errors of independent noise's (1 / sqrt(n)) up
RHO_MARGIN = 1.0
# the tail test extrapolates the last line only when its slope is this many standard errors from 0
SLOPE_Z = 3.0
# an outlier candidate is judged by the noise of this many points either side too
OUTLIER_WINDOW = 10
# a proposal gains at least this share of the proposal bar in its noisier segment's variance
LOCAL_GAIN = 0.5
# the tail test's spread: these points before a candidate, when their spread is this many times larger
RECENT_POINTS = 15
RECENT_RATIO = 1.5


class Drift:
    """The last segment's slope: where it starts, how much it moved, how sure."""

    __slots__ = ("start", "slope", "level_start", "level_end", "relative_change", "pvalue", "points")

    def __init__(self, start, slope, level_start, level_end, pvalue, points):
        self.start = int(start)
        self.slope = float(slope)
        self.level_start = float(level_start)
        self.level_end = float(level_end)
        self.relative_change = relative_change(self.level_start, self.level_end)
        self.pvalue = float(pvalue)
        self.points = int(points)

    def as_dict(self):
        return {"start": self.start, "slope_per_run": self.slope, "level_start": self.level_start,
                "level_end": self.level_end, "relative_change": self.relative_change, "pvalue": self.pvalue,
                "points": self.points}


class Segmentation:
    """What ``analyse`` found: change points (indexes into the series it was given) and the drift of
    the last segment, if any."""

    __slots__ = ("changes", "drift")

    def __init__(self, changes, drift=None):
        self.changes = changes
        self.drift = drift


def _median_in_place(values):
    """The median of an array this module owns (it is reordered, not copied)."""
    size = values.size
    middle = size // 2
    if size % 2:
        values.partition(middle)
        return float(values[middle])
    values.partition((middle - 1, middle))
    return 0.5 * float(values[middle - 1] + values[middle])


def noise_scale(series):
    """The robust standard deviation of one point's noise: MAD of the first differences / sqrt(2)."""
    if series.size < 3:
        return 0.0
    differences = series[1:] - series[:-1]
    deviations = differences - _median_in_place(differences)
    return _median_in_place(abs(deviations)) / (MAD_PER_SD * math.sqrt(2))


def _median_of_three(a, b, c):
    import numpy as np

    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


def _median_of_five(a, b, c, d, e):
    """Elementwise median of five arrays, by a selection network (no sort)."""
    import numpy as np

    lower_of_highs = np.minimum(np.maximum(a, b), np.maximum(c, d))
    return _median_of_three(e, np.maximum(np.minimum(a, b), np.minimum(c, d)), lower_of_highs)


def outliers(series, scale, outlier_z):
    """Boolean mask of the points further than ``outlier_z`` x ``scale`` from the median of the five
    points around them (the ends repeat the first and last point); the newest point is never one.
    Returns (mask, medians)."""
    import numpy as np

    padded = np.concatenate((series[:1], series[:1], series, series[-1:], series[-1:]))
    size = series.size
    medians = _median_of_five(*(padded[shift:shift + size] for shift in range(5)))
    deviation = np.abs(series - medians)
    mask = deviation > outlier_z * scale
    mask[-1] = False
    candidates = np.flatnonzero(mask)
    if candidates.size and size > 2 * OUTLIER_WINDOW:
        # a candidate in a stretch noisier than the series as a whole is judged by that stretch's noise
        # (the median absolute first difference of the OUTLIER_WINDOW points either side): where the
        # spread grew, large deviations are not outliers
        steps = np.abs(np.diff(series))
        first = np.clip(candidates - OUTLIER_WINDOW, 0, steps.size - 2 * OUTLIER_WINDOW)
        windows = steps[first[:, None] + np.arange(2 * OUTLIER_WINDOW)]
        local = np.partition(windows, OUTLIER_WINDOW, axis=1)[:, OUTLIER_WINDOW] / (MAD_PER_SD * math.sqrt(2))
        mask[candidates[deviation[candidates] <= outlier_z * local]] = False
    return mask, medians


@functools.lru_cache(maxsize=256)
def _time_rows(size):
    """What the prefix table of a series of ``size`` points holds whatever its values: centred time t,
    and the prefix sums of 1, t and t^2 (read-only; a verdict's histories share a few lengths)."""
    import numpy as np

    t = np.arange(size, dtype=float) - (size - 1) / 2.0
    rows = np.zeros((3, size + 1))
    rows[0, 1:] = 1.0
    rows[1, 1:] = t
    rows[2, 1:] = t * t
    rows = np.cumsum(rows, axis=1)
    t.flags.writeable = rows.flags.writeable = False
    return t, rows, rows[1].tolist(), rows[2].tolist()


class _Sums:
    """Prefix sums of y, t*y, y^2 and of the lag products y_t*y_(t-1) (t centred; those of 1, t and t^2
    are shared by every series of a length: ``_time_rows``): a straight line's fit of any slice in
    O(1) (``line``), and the lag-1 products of its residuals (``lag_products``), in plain floats."""

    def __init__(self, values):
        import numpy as np

        size = values.size
        self.t, _time, self._t1, self._t2 = _time_rows(size)
        data = np.empty((4, size + 1))
        data[:, 0] = 0.0
        data[0, 1:] = values
        np.multiply(self.t, values, out=data[1, 1:])
        np.multiply(values, values, out=data[2, 1:])
        # the lag products y_t * y_(t-1): row 3 at k sums them for t = 1 .. k - 1
        data[3, 1] = 0.0
        np.multiply(values[1:], values[:-1], out=data[3, 2:])
        np.cumsum(data, axis=1, out=data)
        # y and t*y for the vectorised split search; every other read is a plain float
        self.y1, self.ty = data[0], data[1]
        self._data = data
        self._rows = None

    def prefix_times(self):
        """The prefix sums of t and t^2 as lists."""
        return self._t1, self._t2

    def rows(self):
        """The data rows (y, t*y, y^2, lag products) as lists."""
        if self._rows is None:
            self._rows = self._data.tolist()
        return self._rows

    def lag_products(self, start, stop, mean_t, mean_y, slope):
        """The sum of e_t * e_(t-1) over the pairs inside [start, stop), e the residuals of the line
        ``mean_y + slope * (t - mean_t)``, from the prefix sums."""
        y1, ty, _y2, lag = self.rows()
        t1, t2 = self._t1, self._t2
        first, last = start + 1, stop - 1
        intercept = mean_y - slope * mean_t
        pairs = stop - start - 1
        sum_t = t1[stop] - t1[first]
        # sum of (c + b t_t) y_(t-1) over the pairs: (c + b) sum y_s + b sum t_s y_s, s = start .. stop - 2
        previous = (intercept + slope) * (y1[last] - y1[start]) + slope * (ty[last] - ty[start])
        # sum of (c + b t_(t-1)) y_t: (c - b) sum y_t + b sum t_t y_t, t = start + 1 .. stop - 1
        following = (intercept - slope) * (y1[stop] - y1[first]) + slope * (ty[stop] - ty[first])
        # sum of u_t (u_t - b), u_t = c + b t_t: the line's own lag products
        line = pairs * intercept + slope * sum_t
        squares = pairs * intercept * intercept + 2 * intercept * slope * sum_t + slope * slope * (t2[stop] - t2[first])
        return (lag[stop] - lag[first]) - previous - following + squares - slope * line

    def line(self, start, stop):
        """(points, mean t, Stt, mean y, Sty, Syy) of the slice [start, stop)."""
        y1, ty, y2, _lag = self.rows()
        t1, t2 = self._t1, self._t2
        points = stop - start
        sum_t, sum_y = t1[stop] - t1[start], y1[stop] - y1[start]
        mean_t, mean_y = sum_t / points, sum_y / points
        return (points, mean_t, t2[stop] - t2[start] - sum_t * mean_t, mean_y, ty[stop] - ty[start] - sum_t * mean_y,
                y2[stop] - y2[start] - sum_y * mean_y)


def _line_residual(stt, sty, syy):
    """Residual sum of squares of a line from its centred sums (Python floats; a point: 0)."""
    return max(syy - sty * sty / stt, 0.0) if stt > 0 else max(syy, 0.0)


@functools.lru_cache(maxsize=1024)
def _split_geometry(size, start, stop, min_size):
    """What the splits of ``[start, stop)`` of a series of ``size`` points share whatever its values,
    for the left sides then the right sides: 1 / points, mean t, 1 / Stt (read-only arrays)."""
    import numpy as np

    _t, rows, _t1, _t2 = _time_rows(size)
    splits = np.arange(start + min_size, stop - min_size + 1)
    points = np.concatenate((splits - start, stop - splits)).astype(float)
    sum_t = np.concatenate((rows[1, splits] - rows[1, start], rows[1, stop] - rows[1, splits]))
    sum_tt = np.concatenate((rows[2, splits] - rows[2, start], rows[2, stop] - rows[2, splits]))
    mean_t = sum_t / points
    geometry = (1.0 / points, mean_t, 1.0 / (sum_tt - sum_t * mean_t))
    for array in geometry:
        array.flags.writeable = False
    return geometry


def propose(sums, size, penalty, min_size):
    """Binary segmentation into lines: split points where the residual sum of squares drops by more
    than ``penalty``; each segment at least ``min_size`` points (at least 3: a line's Stt > 0).

    The residual sum of squares of a line is Syy - (sum y)^2 / n - Sty^2 / Stt; Syy of the two sides
    adds up to the whole's whatever the split, so the best split explains the most:
    (sum y)^2 / n + Sty^2 / Stt summed over its two sides (the time terms cached per segment)."""
    import numpy as np

    y1, ty = sums.y1, sums.ty
    whole = sums.t.size
    found = []
    stack = [(0, size)]
    while stack:
        start, stop = stack.pop()
        if stop - start < 2 * min_size:
            continue
        inverse_points, mean_t, inverse_stt = _split_geometry(whole, start, stop, min_size)
        middle = slice(start + min_size, stop - min_size + 1)
        left_y, left_ty = y1[middle] - y1[start], ty[middle] - ty[start]
        sum_y = np.concatenate((left_y, (y1[stop] - y1[start]) - left_y))
        deviation = np.concatenate((left_ty, (ty[stop] - ty[start]) - left_ty)) - sum_y * mean_t
        explained = sum_y * sum_y * inverse_points + deviation * deviation * inverse_stt
        count = left_y.size
        explained = explained[:count] + explained[count:]
        best = int(explained.argmax())
        points, _mt, stt, mean_y, sty, _syy = sums.line(start, stop)
        if float(explained[best]) - (points * mean_y * mean_y + sty * sty / stt) > penalty:
            split = start + min_size + best
            found.append(split)
            stack.append((start, split))
            stack.append((split, stop))
    found.sort()
    return found


def _long_run_factor(lag_sum, energy, points):
    """(1 + rho) / (1 - rho), rho = ``lag_sum`` / ``energy`` (the lag-1 autocorrelation of residuals)
    less RHO_MARGIN standard errors of independent noise's (1 / sqrt(points)), clipped to
    [0, MAX_AUTOCORRELATION]."""
    if not energy > 0:
        return 1.0
    rho = min(max(lag_sum / energy - RHO_MARGIN / math.sqrt(points), 0.0), MAX_AUTOCORRELATION)
    return (1 + rho) / (1 - rho)


class _Fit:
    """Lines fitted to consecutive segments (``edges``), their residual sums of squares and the long-run
    factor of their residuals' autocorrelation, from the prefix sums (no residual is computed), in plain
    floats: a history has few segments, and a few float operations each cost less than numpy calls."""

    def __init__(self, sums, edges):
        self.points, self.mean_t, self.stt, self.mean_y, self.slope, self.rss = [], [], [], [], [], []
        lag_sum = 0.0
        for start, stop in zip(edges[:-1], edges[1:]):
            points, mean_t, stt, mean_y, sty, syy = sums.line(start, stop)
            # every segment has at least three points (min_size >= 3): Stt > 0
            slope = sty / stt
            self.points.append(points)
            self.mean_t.append(mean_t)
            self.stt.append(stt)
            self.mean_y.append(mean_y)
            self.slope.append(slope)
            self.rss.append(max(syy - slope * sty, 0.0))
            lag_sum += sums.lag_products(start, stop, mean_t, mean_y, slope)
        self.long_run = _long_run_factor(lag_sum, sum(self.rss), edges[-1])

    def at(self, index, t):
        """Segment ``index``'s line at time ``t`` and the variance factor of that value (x sigma^2)."""
        offset = t - self.mean_t[index]
        return self.mean_y[index] + self.slope[index] * offset, 1.0 / self.points[index] + offset * offset / self.stt[index]

    def spread(self, index):
        """Segment ``index``'s residual variance."""
        return self.rss[index] / max(self.points[index] - 2, 1)


def _two_sided(z):
    """Two-sided normal p-value of ``z`` (an infinite z: 0)."""
    return math.erfc(abs(z) / math.sqrt(2))


def _jumps(sums, splits, stop):
    """Each split's (level left, level right, z of the jump, gain) where the lines either side meet (the
    last segment ending at ``stop``), and the fit. The gain is what the split lowers the residual sum
    of squares by against one line across both segments, in the noisier side's variance (the proposal
    measured it in the whole series' noise, which a noisier stretch exceeds)."""
    edges = [0] + list(splits) + [stop]
    fit = _Fit(sums, edges)
    centre = (sums.t.size - 1) / 2.0
    found = []
    for index, split in enumerate(splits):
        meet = split - 0.5 - centre
        left, left_factor = fit.at(index, meet)
        right, right_factor = fit.at(index + 1, meet)
        dof = max(fit.points[index] + fit.points[index + 1] - 4, 1)
        variance = (fit.rss[index] + fit.rss[index + 1]) / dof * fit.long_run * (left_factor + right_factor)
        if variance > 0:
            z = (right - left) / math.sqrt(variance)
        else:
            z = 0.0 if right == left else math.copysign(math.inf, right - left)
        _n, _mt, stt, _my, sty, syy = sums.line(edges[index], edges[index + 2])
        joint = _line_residual(stt, sty, syy)
        noisier = max(fit.spread(index), fit.spread(index + 1), 1e-300)
        found.append((left, right, z, (joint - fit.rss[index] - fit.rss[index + 1]) / noisier))
    return found, fit


def _tail(sums, start, min_size, long_run):
    """The most significant change among the last ``min_size - 1`` points of the segment that starts
    at ``start``: (index, level before, level after, t, p) or None. The line fitted before a
    candidate predicts the points after it; their mean residual is tested against the residual
    spread before it (Student's t, the long-run factor applied). Plain-float arithmetic on the prefix
    sums (the hot path of every verdict)."""
    from scipy import special

    y1, ty, y2, _lag = sums.rows()
    t1, t2 = sums.prefix_times()
    size = sums.t.size
    centre = (size - 1) / 2.0
    best = None
    for split in range(max(start + min_size, size - min_size + 1), size):
        # the line over [start, split)
        points = split - start
        sum_t, sum_y = t1[split] - t1[start], y1[split] - y1[start]
        mean_t, mean_y = sum_t / points, sum_y / points
        stt = t2[split] - t2[start] - sum_t * mean_t
        sty = ty[split] - ty[start] - sum_t * mean_y
        syy = y2[split] - y2[start] - sum_y * mean_y
        slope = sty / stt
        dof = points - 2
        spread = _line_residual(stt, sty, syy) / dof * long_run
        # the points after it: their mean time and mean value
        tail_points = size - split
        tail_t = (t1[size] - t1[split]) / tail_points
        tail_y = (y1[size] - y1[split]) / tail_points
        leverage = (tail_t - mean_t) ** 2 / stt
        if slope * slope < SLOPE_Z * SLOPE_Z * spread / stt:
            # no slope to speak of before the candidate: its level predicts better (no extrapolation)
            slope, leverage, dof = 0.0, 0.0, points - 1
            spread = max(syy, 0.0) / dof * long_run
        recent = min(points, RECENT_POINTS)
        if recent < points:
            # noise that grew lately: the spread of the points just before the candidate, if larger
            first = split - recent
            recent_y = y1[split] - y1[first]
            recent_spread = max(y2[split] - y2[first] - recent_y * recent_y / recent, 0.0) / (recent - 1) * long_run
            if recent_spread > RECENT_RATIO * spread:
                spread = recent_spread
        residual = tail_y - (mean_y + slope * (tail_t - mean_t))
        variance = spread * (1.0 / tail_points + 1.0 / points + leverage)
        if variance > 0:
            t = residual / math.sqrt(variance)
        else:
            t = 0.0 if residual == 0 else math.copysign(math.inf, residual)
        # the candidates' degrees of freedom differ by one or two: the largest |t| is the most significant
        if best is None or abs(t) > abs(best[3]):
            before = mean_y + slope * (split - 0.5 - centre - mean_t)
            best = (split, before, before + residual, t, dof)
    if best is None:
        return None
    split, before, after, t, dof = best
    pvalue = float(2 * special.stdtr(dof, -abs(t))) if math.isfinite(t) else 0.0
    return split, before, after, t, pvalue


def _drift(sums, values, fit, index, max_pvalue, min_magnitude, scale, offset):
    """The drift of segment ``index`` (the last one), or None."""
    from scipy import special

    points = int(fit.points[index])
    dof = points - 2
    stop = values.size
    start = stop - points
    first = fit.at(index, sums.t[start])[0]
    last = fit.at(index, sums.t[stop - 1])[0]
    level_start, level_end = float(first) * scale + offset, float(last) * scale + offset
    if dof < 1 or abs(relative_change(level_start, level_end)) < min_magnitude:
        return None
    slope = float(fit.slope[index])
    variance = float(fit.rss[index]) / dof * fit.long_run / float(fit.stt[index])
    if variance > 0:
        pvalue = float(2 * special.stdtr(dof, -abs(slope) / math.sqrt(variance)))
    else:
        pvalue = 1.0 if slope == 0 else 0.0
    if pvalue > max_pvalue:
        return None
    return Drift(start, slope * scale, level_start, level_end, pvalue, points)


def linear_segments(series, penalty, max_pvalue, newest_max_pvalue, min_magnitude, min_size, outlier_z,
                    drift_max_pvalue, with_drift=True):
    """Change points and (``with_drift``) the last segment's drift of a series without gaps (the module
    docstring)."""
    import numpy as np

    size = series.size
    scale = noise_scale(series)
    if scale <= 0:
        # most differences are 0 (a value repeated, a quantised KPI, steps without noise): the plain
        # spread of the differences; nothing to find in a constant series
        scale = float(np.std(np.diff(series))) / math.sqrt(2) if size > 1 else 0.0
        if not scale > 0:
            return Segmentation([])
    values = series
    if outlier_z > 0 and size >= 5:
        mask, medians = outliers(series, scale, outlier_z)
        if mask.any():
            values = np.where(mask, medians, series)
    offset = float(values.sum()) / size
    values = (values - offset) / scale
    sums = _Sums(values)
    # the settled history: the newest min_size - 1 points cannot make a segment of their own yet (the
    # tail test below judges them), and a short last segment's line would bend to swallow them
    settled = size - (min_size - 1)
    proposal_bar = penalty * math.log(size)
    splits = propose(sums, settled, proposal_bar, min_size) if settled >= 2 * min_size else []
    changes = []
    while splits:
        found, fit = _jumps(sums, splits, settled)
        judged = []
        for split, (left, right, z, gain) in zip(splits, found):
            before, after = left * scale + offset, right * scale + offset
            pvalue, change = _two_sided(z), abs(relative_change(before, after))
            judged.append((pvalue > max_pvalue or change < min_magnitude or gain < proposal_bar * LOCAL_GAIN, pvalue, change,
                           ChangePoint(split, before, after, pvalue, z)))
        if not any(failing for failing, _p, _c, _point in judged):
            changes = [point for _f, _p, _c, point in judged]
            break
        # the weakest: the largest p-value among the failing ones, the smallest change on a tie
        weakest = max((i for i, item in enumerate(judged) if item[0]), key=lambda i: (judged[i][1], -judged[i][2]))
        del splits[weakest]
    edges = [0] + [c.index for c in changes] + [size]
    fit = _Fit(sums, edges)
    last_start = edges[-2]
    tail = _tail(sums, last_start, min_size, fit.long_run) if size - last_start > min_size else None
    if tail is not None:
        split, before, after, statistic, pvalue = tail
        before, after = before * scale + offset, after * scale + offset
        # the newest point alone, or a longer tail: one of min_size - 1 candidates (Bonferroni)
        threshold = newest_max_pvalue if split == size - 1 else newest_max_pvalue / (min_size - 1)
        if pvalue <= threshold and abs(relative_change(before, after)) >= min_magnitude:
            changes.append(ChangePoint(split, before, after, pvalue, statistic))
            return Segmentation(changes)
    if not with_drift:
        return Segmentation(changes)
    return Segmentation(changes, _drift(sums, values, fit, len(edges) - 2, drift_max_pvalue, min_magnitude, scale,
                                        offset))
