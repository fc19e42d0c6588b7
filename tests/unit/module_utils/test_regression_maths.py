import numpy as np
import pytest
from scipy import stats

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import maths as rg
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import methods
from ansible_collections.perfscale.topsail.plugins.module_utils.regression.verdicts import judge as judge_documents


def judge(values, current, *args):
    """judge() on plain values: history documents one hour apart."""
    history = [{"value": v, "@timestamp": "2026-11-01T%02d:%02d:00+00:00" % (i // 60, i % 60), "run_id": "r%d" % i}
               for i, v in enumerate(values)]
    return judge_documents(history, current, *args)


METHODS = ("edivisive", "zscore", "relative")


def noisy(n, level=100.0, cv=0.01, seed=0):
    return level * (1 + np.random.default_rng(seed).normal(0, cv, n))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("index,step", [(40, 0.10), (25, -0.15), (60, 0.30)])
def test_a_clear_step_is_found_at_its_index(method, index, step):
    values = noisy(80, seed=index)
    values[index:] *= 1 + step
    changes = methods.find_change_points(values, method)
    assert [c.index for c in changes] == [index]
    change = changes[0]
    assert change.relative_change == pytest.approx(step, abs=0.02)
    assert change.mean_before == pytest.approx(100, rel=0.02)
    assert (change.pvalue is None) == (method == "relative")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(5))
def test_flat_noise_finds_nothing(method, seed):
    assert methods.find_change_points(noisy(100, cv=0.02, seed=seed), method) == []


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("position,size", [(30, 0.4), (55, -0.5), (70, 0.25)])
def test_a_single_spike_is_not_a_change(method, position, size):
    values = noisy(90, seed=position)
    values[position] *= 1 + size
    assert methods.find_change_points(values, method) == []


@pytest.mark.parametrize("method", METHODS)
def test_two_steps_are_both_found(method):
    values = noisy(100, seed=9)
    values[30:] *= 1.2
    values[70:] /= 1.2
    assert [c.index for c in methods.find_change_points(values, method)] == [30, 70]


@pytest.mark.parametrize("method", METHODS)
def test_the_newest_value_alone_can_be_a_change(method):
    values = list(noisy(30, seed=4)) + [80.0]
    changes = methods.find_change_points(values, method)
    assert changes and changes[-1].index == 30 and changes[-1].relative_change < -0.15


def test_the_newest_value_is_tested_even_when_the_segmentation_splits_elsewhere():
    # a long history with a change inside: the best split of the whole series is that change,
    # never the last point; a 6 % drop of the newest value under 1 % noise is still found
    values = list(noisy(60, seed=21))
    values[20:] = [v * 1.2 for v in values[20:]]
    values.append(values[-1] * 0.94)
    changes = methods.find_change_points(values, "edivisive")
    assert [c.index for c in changes] == [20, 60]
    # the newest value's own threshold decides it; the change inside keeps max_pvalue's
    assert [c.index for c in methods.find_change_points(values, "edivisive", newest_max_pvalue=1e-12)] == [20]


def test_a_change_inside_the_series_has_the_stricter_threshold():
    # a 2 % step under 1 % noise, p = 2.7e-4 with 10 points a side: a change at max_pvalue 0.001,
    # not at the default 0.0001 (an interior split of pure noise passes 0.001 about 2 % of the time)
    values = noisy(60, seed=1)
    values[30:] *= 1.02
    found = methods.find_change_points(values, "edivisive", max_pvalue=0.001, min_magnitude=0.01)
    assert [c.index for c in found] == [30] and 1e-4 < found[0].pvalue < 1e-3
    assert methods.find_change_points(values, "edivisive", min_magnitude=0.01) == []


@pytest.mark.parametrize("method", ["edivisive", "linear_segments"])
def test_gaps_keep_their_place(method):
    """None and NaN are left out of the maths, but a change point is reported at its position in the
    series as given: the step at 20 comes back at 21 after the gap at 10 (the run it happened at)."""
    values = list(noisy(40, seed=2))
    values[20:] = [v * 1.2 for v in values[20:]]
    with_gaps = values[:10] + [None] + values[10:30] + [float("nan")] + values[30:]
    assert [c.index for c in methods.find_change_points(with_gaps, method)] == [21]
    assert [c.index for c in methods.find_change_points(values, method)] == [20]


@pytest.mark.parametrize("method", METHODS)
def test_a_method_builds_its_options_model_once(method):
    # a verdict per KPI asks for it: building a pydantic class per call cost 82 % of a verdict
    model = methods.get_method(method).options_model()
    assert methods.get_method(method).options_model() is model
    assert methods.resolve_options(method, {}) == methods.get_method(method).defaults()


def _q_direct(x, a, t, b):
    left, right = x[a:t], x[t:b]
    m, n = len(left), len(right)
    between = np.abs(left[:, None] - right[None, :]).sum()
    within_l = np.abs(left[:, None] - left[None, :]).sum() / (m * (m - 1)) if m > 1 else 0
    within_r = np.abs(right[:, None] - right[None, :]).sum() / (n * (n - 1)) if n > 1 else 0
    return m * n / (m + n) * (2 * between / (m * n) - within_l - within_r)


def test_edivisive_statistic_matches_its_definition():
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, 40)
    x[25:] += 2
    distances = rg._Distances(x)
    # segments from the start, inside, to the end; one-point sides allowed or not
    for a, b in ((0, 40), (5, 33), (10, 40), (0, 12), (25, 40)):
        for min_left, min_right in ((2, 1), (1, 1), (3, 3)):
            tau, q = rg._best_split(distances, a, b, min_left, min_right)
            best = max(range(a + min_left, b - min_right + 1), key=lambda t: _q_direct(x, a, t, b))
            assert tau == best and q == pytest.approx(_q_direct(x, a, best, b)), (a, b, min_left, min_right)
    # a segment too short for both sides has no split
    assert rg._best_split(distances, 3, 7, 3, 3) == (None, 0.0)
    # a series longer than the shapes kept between series: the same statistic, built for it
    long_series = rng.normal(0, 1, rg.CACHED_LENGTH + 40)
    long_series[150:] += 1
    long_distances = rg._Distances(long_series)
    for a, b, min_right in ((0, long_series.size, 1), (100, 250, 3)):
        tau, q = rg._best_split(long_distances, a, b, 3, min_right)
        best = max(range(a + 3, b - min_right + 1), key=lambda t: _q_direct(long_series, a, t, b))
        assert tau == best and q == pytest.approx(_q_direct(long_series, a, best, b)), (a, b)


def test_pooled_t_test_matches_scipy():
    rng = np.random.default_rng(1)
    left, right = rng.normal(10, 1, 12), rng.normal(11, 1.5, 7)
    t, p = rg.student_t(left, right)
    expected = stats.ttest_ind(right, left, equal_var=True)
    assert t == pytest.approx(expected.statistic) and p == pytest.approx(expected.pvalue)
    # a one-point side is the prediction test: t = (x - mean) / (s * sqrt(1 + 1/n))
    t, _p = rg.student_t(left, [15.0])
    assert t == pytest.approx((15.0 - left.mean()) / (left.std(ddof=1) * np.sqrt(1 + 1 / left.size)))


def test_constant_series_and_short_series():
    assert methods.find_change_points([5.0] * 30) == []
    assert methods.find_change_points([1.0]) == []
    assert [c.index for c in methods.find_change_points([5.0] * 20 + [7.0] * 20)] == [20]
    assert methods.find_change_points([1.0, None, 1.0]) == []


def test_unknown_method_and_option_are_errors():
    with pytest.raises(errors.RegressionError, match=r"regression method 'hunter': expected one of edivisive, linear_segments, relative, zscore"):
        methods.find_change_points([1, 2, 3], "hunter")
    with pytest.raises(errors.RegressionError, match=r"regression method zscore has no option window; its options: confirm, "):
        methods.find_change_points([1, 2, 3], "zscore", window=3)


def test_options_change_the_sensitivity():
    values = noisy(60, cv=0.01, seed=2)
    values[30:] *= 1.03
    assert [c.index for c in methods.find_change_points(values, "edivisive")] == [30]
    assert methods.find_change_points(values, "edivisive", min_magnitude=0.05) == []


@pytest.mark.parametrize("higher_is_better,drop,verdict", [
    (True, True, "regression"), (True, False, "improvement"), (False, True, "improvement"), (False, False, "regression")])
@pytest.mark.parametrize("method", METHODS)
def test_direction_decides_regression_or_improvement(higher_is_better, drop, verdict, method):
    history = list(noisy(30, seed=5))
    current = 80.0 if drop else 125.0
    got, evidence = judge(history, current, higher_is_better, method, methods.resolve_options(method, {}), 0.1)
    assert got == verdict
    assert evidence["history_points"] == 30 and evidence["method"] == method


def test_a_regression_already_in_the_history_persists_and_names_the_run_that_introduced_it():
    history = list(noisy(20, seed=6)) + list(noisy(10, level=80, seed=7))
    verdict, evidence = judge(history, 80.5, True, "edivisive", methods.resolve_options("edivisive", {}), 0.1)
    assert verdict == "persisting_regression"
    assert [c["index"] for c in evidence["change_points"]] == [20]
    assert evidence["since"]["run_id"] == "r20"
    assert evidence["pre_change_mean"] == pytest.approx(100, rel=0.02)
    assert evidence["relative_change_since"] == pytest.approx(-0.195, abs=0.02)


def test_an_improvement_already_in_the_history_is_the_new_baseline():
    history = list(noisy(20, level=80, seed=6)) + list(noisy(10, level=100, seed=7))
    verdict, evidence = judge(history, 100.5, True, "edivisive", methods.resolve_options("edivisive", {}), 0.1)
    assert verdict == "no_change"
    assert evidence["baseline_points"] == 10 and 0 < evidence["pvalue"] <= 1
    assert abs(evidence["effect_size"]) < 2


def test_a_regression_that_recovered_no_longer_persists():
    history = list(noisy(20, seed=6)) + list(noisy(10, level=80, seed=7))
    verdict, _evidence = judge(history, 99.0, True, "edivisive", methods.resolve_options("edivisive", {}), 0.1)
    assert verdict != "persisting_regression"


def test_one_slow_run_in_the_history_then_an_equally_slow_one_is_a_persisting_regression():
    """The case a user saw: after one slow run entered the history, the next equally slow run
    read no_change (the change point sat on the previous run)."""
    history = list(noisy(12, seed=8)) + [25.0]
    verdict, evidence = judge(history, 24.0, True, "edivisive", methods.resolve_options("edivisive", {}), 0.1)
    assert verdict == "persisting_regression"
    assert evidence["since"]["run_id"] == "r12"


def test_no_change_comes_with_a_pvalue_and_an_effect_size():
    verdict, evidence = judge(list(noisy(30, seed=9)), 100.3, True, "edivisive",
                              methods.resolve_options("edivisive", {}), 0.1)
    assert verdict == "no_change"
    assert 0.05 < evidence["pvalue"] <= 1 and abs(evidence["effect_size"]) < 1


def test_short_history_compares_with_the_mean_and_no_history_is_said():
    options = methods.resolve_options("edivisive", {})
    assert judge([], 10.0, True, "edivisive", options, 0.1)[0] == "not_enough_history"
    # a change the magnitude threshold sees, and a steady history tells apart from noise
    verdict, evidence = judge([100.0, 100.4, 99.8, 100.1], 85.0, True, "edivisive", options, 0.1)
    assert verdict == "regression" and evidence["method"] == "short_history" and evidence["pvalue"] <= 0.01
    assert evidence["relative_change"] == pytest.approx(85 / 100.075 - 1)
    # the same magnitude within two points' spread: inconclusive, leaning to a regression
    verdict, evidence = judge([100.0, 102.0], 85.0, True, "edivisive", options, 0.1)
    assert verdict == "inconclusive" and evidence["leaning"] == "regression"
    assert judge([100.0, 102.0], 95.0, True, "edivisive", options, 0.1)[0] == "no_change"


def test_a_regression_persists_only_while_the_value_stays_at_least_half_of_the_change_below():
    """docs/regression.md: persisting while the current value is still worse than the baseline
    before the change by at least half of the change. Here the change is -20.9 % (100.4 -> 79.4):
    89 is still 11.4 % below (more than half: persisting), 90 is 10.4 % below (less: no_change)."""
    history = list(noisy(20, seed=6)) + list(noisy(10, level=80, cv=0.04, seed=7))
    options = methods.resolve_options("edivisive", {})
    verdict, evidence = judge(history, 89.0, True, "edivisive", options, 0.1)
    assert verdict == "persisting_regression"
    assert abs(evidence["relative_change_since"]) >= abs(evidence["change_at_since"]) / 2
    verdict, evidence = judge(history, 90.0, True, "edivisive", options, 0.1)
    assert verdict == "no_change" and [c["index"] for c in evidence["change_points"]] == [20]


def test_pooled_t_at_its_edges():
    # no degree of freedom: nothing can be told
    assert rg.pooled_t(1, 10.0, 0.0, 1, 14.0, 0.0) == (0.0, 1.0)
    # one degree of freedom is a test (Cauchy: p = 1 - 2/pi atan(t))
    t, p = rg.pooled_t(2, 10.0, 2.0, 1, 14.0, 0.0)
    assert t == pytest.approx(4 / np.sqrt(3)) and p == pytest.approx(1 - 2 / np.pi * np.arctan(4 / np.sqrt(3)))
    # no spread at all: equal means tell nothing, different means differ for sure, with their sign
    assert rg.pooled_t(5, 3.0, 0.0, 5, 3.0, 0.0) == (0.0, 1.0)
    assert rg.pooled_t(5, 3.0, 0.0, 5, 4.0, 0.0) == (np.inf, 0.0)
    assert rg.pooled_t(5, 4.0, 0.0, 5, 3.0, 0.0) == (-np.inf, 0.0)
    # a spread that is the rounding noise of large values (relative to both sides' sums of squares)
    # is no spread: a one-point side against ten points of 1e6, either way round
    assert rg.pooled_t(1, 1e6, 5.0, 10, 1e6 + 1e-3, 0.0) == (np.inf, 0.0)
    assert rg.pooled_t(10, 1e6, 5.0, 1, 1e6 + 1e-3, 0.0) == (np.inf, 0.0)


def test_a_change_is_accepted_at_its_thresholds_inclusive():
    inside = rg.ChangePoint(10, 100.0, 103.0, pvalue=1e-4)
    assert rg._accepted(inside, 40, 1e-4, 1e-3, 0.03)              # p and magnitude exactly at the limits
    assert not rg._accepted(inside, 40, 0.9e-4, 1e-3, 0.03)
    assert not rg._accepted(inside, 40, 1e-4, 1e-3, 0.031)
    # the first pass scales the thresholds, never past 0.05
    weak = rg.ChangePoint(10, 100.0, 110.0, pvalue=0.06)
    assert not rg._accepted(weak, 40, 0.01, 0.01, 0.02, scale=10)
    assert rg._accepted(rg.ChangePoint(10, 100.0, 110.0, pvalue=0.04), 40, 0.01, 0.01, 0.02, scale=10)
    # the newest point alone has its own threshold
    newest = rg.ChangePoint(39, 100.0, 94.0, pvalue=5e-4)
    assert rg._accepted(newest, 40, 1e-4, 1e-3, 0.02) and not rg._accepted(newest, 40, 1e-4, 1e-4, 0.02)


def test_the_newest_value_alone_is_tested_against_three_windows_of_history():
    values = np.array([100.0] * 20 + [50.0] * 20 + [52.0] * 10 + [47.0])
    values[20:50] += np.tile([0.5, -0.5], 15)
    change = rg._test(rg.Moments(values), 0, 50, 51, 10)
    # the 30 points before it (3 windows of 10: twenty at 50, ten at 52), none of those at 100
    assert change.mean_before == pytest.approx(152 / 3) and change.mean_after == 47.0
    assert change.statistic < 0 and change.pvalue < 0.05
    # a change with points on both sides: one window each side
    inside = rg._test(rg.Moments(values), 0, 20, 51, 10)
    assert inside.mean_before == 100.0 and inside.mean_after == pytest.approx(50.0)


def test_a_newest_value_the_segmentation_did_not_propose_is_still_found():
    # flat history (1 % noise, seed 2) then a 4.5 % drop: the best split of the series is elsewhere
    # and is rejected, so only the explicit test of the newest value finds it
    values = 100 * (1 + np.random.default_rng(2).normal(0, 0.01, 30))
    series = np.append(values, values.mean() * 0.955)
    options = methods.resolve_options("edivisive", {})
    assert [c.index for c in rg.edivisive(series, **options)] == [30]
    assert rg.edivisive(series, **dict(options, newest_max_pvalue=1e-9)) == []


def test_a_change_point_reads_as_the_evidence_says():
    change = rg.ChangePoint(7, 100, 90, pvalue=0.001, statistic=-4)
    assert change.as_dict() == {"index": 7, "mean_before": 100.0, "mean_after": 90.0, "relative_change": -0.1,
                                "pvalue": 0.001}
    assert change.statistic == -4.0 and isinstance(change.statistic, float)
    assert rg.ChangePoint(7, 100, 90).pvalue is None and rg.ChangePoint(7, 100, 90).statistic is None


# -- each method against a plain, slow reference of what docs/regression.md says it does

def _zscore_reference(x, threshold, min_history, min_magnitude, confirm):
    from scipy import special

    def z_of(value, mean, std):
        deviation = value - mean if abs(value - mean) > rg.SAME_VALUE * abs(mean) else 0.0
        if std > rg.NO_SPREAD * abs(mean):
            return deviation / std
        return 0.0 if deviation == 0 else np.inf * np.sign(deviation)

    changes, start, scan, excluded = [], 0, 0, set()
    while scan < len(x):
        candidate = None
        for i in range(scan, len(x)):
            history = [x[j] for j in range(start, i) if j not in excluded]
            if len(history) < min_history or not history:
                continue
            mean = sum(history) / len(history)
            std = np.sqrt(max(sum((h - mean) ** 2 for h in history) / (len(history) - 1), 0.0)) \
                if len(history) > 1 else np.nan
            score = z_of(x[i], mean, std)
            if abs(score) >= threshold and abs(x[i] - mean) / abs(mean) >= min_magnitude:
                candidate = (i, mean, std, score)
                break
        if candidate is None:
            break
        index, mean, std, score = candidate
        following = [z_of(value, mean, std) for value in x[index + 1:index + 1 + confirm]]
        if not all(f * score > 0 and abs(f) >= threshold / 2 for f in following):
            excluded.add(index)
            scan = index + 1
            continue
        after = x[index:index + max(1, min_history)]
        pvalue = float(2 * special.ndtr(-abs(score))) if np.isfinite(score) else 0.0
        changes.append((index, mean, float(np.mean(after)), pvalue, score))
        start, scan, excluded = index, index + 1, set()
    return changes


def _relative_reference(x, threshold, window, min_previous):
    changes, stack = [], [(0, len(x))]
    while stack:
        start, stop = stack.pop()
        best = None
        for i in range(start + min_previous, stop):
            before = np.mean(x[start:i])
            after = np.mean(x[i:min(stop, i + window)])
            change = abs(after - before) / abs(before) if before != 0 else 0.0
            if best is None or change > best[0]:
                best = (change, i, before, after)
        if best is None or best[0] < threshold:
            continue
        changes.append((best[1], best[2], best[3]))
        stack += [(start, best[1]), (best[1], stop)]
    return sorted(changes)


def _reference_series(seed):
    """Steps, spikes, flat stretches (exact repeats: zero spread) and noise of several sizes."""
    rng = np.random.default_rng(seed)
    x = 100 * (1 + rng.normal(0, rng.choice([0.002, 0.01, 0.03]), int(rng.integers(8, 60))))
    for _step in range(int(rng.integers(0, 3))):
        x[int(rng.integers(1, x.size)):] *= 1 + rng.choice([-0.3, -0.1, -0.05, 0.05, 0.1, 0.3])
    if rng.random() < 0.3:
        x[int(rng.integers(0, x.size))] *= 1.5
    if rng.random() < 0.2:
        x[: x.size // 2] = x[0]
    return x


@pytest.mark.parametrize("seed", range(40))
def test_zscore_is_its_definition(seed):
    x = _reference_series(seed)
    for options in ({"threshold": 3.0, "min_history": 12, "min_magnitude": 0.02, "confirm": 3},
                    {"threshold": 2.0, "min_history": 4, "min_magnitude": 0.0, "confirm": 1},
                    {"threshold": 4.0, "min_history": 2, "min_magnitude": 0.05, "confirm": 0}):
        found = [(c.index, c.mean_before, c.mean_after, c.pvalue, c.statistic) for c in rg.zscore(x, **options)]
        expected = _zscore_reference(list(x), **options)
        assert [f[0] for f in found] == [e[0] for e in expected], options
        for got, want in zip(found, expected):
            assert got[1:4] == pytest.approx(want[1:4], rel=1e-6, abs=1e-12), options
            # no spread: z is infinite, or as good as (the rounding of a two-pass variance)
            assert got[4] == pytest.approx(want[4], rel=1e-6) or \
                (np.sign(got[4]) == np.sign(want[4]) and min(abs(got[4]), abs(want[4])) > 1e6), options


@pytest.mark.parametrize("seed", range(40))
def test_relative_windows_is_its_definition(seed):
    x = _reference_series(seed)
    for options in ({"threshold": 0.08, "window": 10, "min_previous": 10},
                    {"threshold": 0.03, "window": 3, "min_previous": 2}):
        found = [(c.index, c.mean_before, c.mean_after) for c in rg.relative_windows(x, **options)]
        expected = _relative_reference(x, **options)
        assert [f[0] for f in found] == [e[0] for e in expected], options
        for got, want in zip(found, expected):
            assert got[1:] == pytest.approx(want[1:], rel=1e-9)


def test_zscore_sees_no_change_in_a_constant_history_whatever_the_rounding():
    # the mean of 101.776491303817 repeated, from prefix sums, is not exactly the value: that
    # rounding once made every point of a constant history an infinite z (min_magnitude 0)
    values = np.array([101.776491303817] * 17 + [109.97, 111.52, 109.0, 110.4, 109.6])
    found = rg.zscore(values, threshold=2.0, min_history=4, min_magnitude=0.0, confirm=1)
    assert [c.index for c in found] == [17] and found[0].statistic == np.inf


@pytest.mark.parametrize("before, after, change", [
    (0, 0, 0.0), (0.0, 5.0, float("inf")), (0, -5, float("-inf")), (1, 2, 1.0), (1, 1, 0.0), (-4, -2, 0.5),
    (2, 1, -0.5),
])
def test_a_relative_change_from_zero_is_none_or_infinite_with_the_sign_of_the_new_value(before, after, change):
    assert rg.relative_change(before, after) == change


def test_the_moments_of_a_constant_slice_have_no_spread():
    moments = rg.Moments(np.array([2.0, 2.0, 2.0, 5.0]))
    assert moments.stats(0, 3) == (3, 2.0, 0.0)
    count, mean, deviation = moments.stats(1, 4)
    assert (count, mean) == (3, 3.0) and deviation == pytest.approx(6.0)      # (2-3)^2 + (2-3)^2 + (5-3)^2


def test_a_two_point_series_is_looked_at_by_a_method_that_can_judge_it():
    found = methods.find_change_points([10.0, 20.0], "relative", window=1, min_previous=1)
    assert [(c.index, c.relative_change) for c in found] == [(1, 1.0)]
    assert methods.find_change_points([10.0], "relative", window=1, min_previous=1) == []
    assert methods.find_change_points([None, 10.0, float("nan")], "relative", window=1, min_previous=1) == []


@pytest.mark.parametrize("min_size, history", [(1, 4), (2, 4), (3, 6), (5, 10)])
def test_edivisive_needs_two_segments_of_min_size_and_at_least_four_runs(min_size, history):
    options = methods.resolve_options("edivisive", {"min_size": min_size})
    assert methods.get_method("edivisive").minimum_history(options) == history


def test_an_unknown_method_names_the_known_ones():
    with pytest.raises(errors.RegressionError) as refused:
        methods.get_method("nope")
    assert str(refused.value) == "regression method 'nope': expected one of edivisive, linear_segments, relative, zscore"


def test_unknown_options_are_named_together_with_the_methods_options():
    with pytest.raises(errors.RegressionError) as refused:
        methods.resolve_options("edivisive", {"zz": 1, "aa": 2})
    assert str(refused.value) == ("regression method edivisive has no option aa, zz; its options: max_pvalue, "
                                  "min_magnitude, min_size, newest_max_pvalue, window")


def test_every_invalid_option_value_is_named_in_one_line():
    with pytest.raises(errors.RegressionError) as refused:
        methods.resolve_options("edivisive", {"window": 1, "max_pvalue": 2})
    assert str(refused.value) == ("regression method edivisive: invalid option(s): window: Input should be greater "
                                  "than 1; max_pvalue: Input should be less than 1")


@pytest.mark.parametrize("name, model_name, fields", [
    ("edivisive", "EDivisiveOptions", {"window", "max_pvalue", "newest_max_pvalue", "min_magnitude", "min_size"}),
    ("zscore", "ZScoreOptions", {"threshold", "min_history", "min_magnitude", "confirm"}),
    ("relative", "RelativeOptions", {"threshold", "window", "min_previous"}),
])
def test_each_methods_options_model_is_named_for_it_and_refuses_unknown_keys(name, model_name, fields):
    import pydantic

    model = type(methods.get_method(name)).options_model.__wrapped__()    # built afresh, not the cached one
    assert model.__name__ == model_name and set(model.model_fields) == fields
    assert model.model_validate({}).model_dump() == methods.resolve_options(name)
    with pytest.raises(pydantic.ValidationError, match="Extra inputs are not permitted"):
        model.model_validate({"unknown": 1})


def test_without_spread_a_point_is_zero_or_an_infinite_z_score_by_its_side():
    assert rg._z_scores(np.array([3.0, 4.0, 2.0]), 3.0, 0.0).tolist() == [0.0, float("inf"), float("-inf")]


@pytest.mark.parametrize("series, method, options, changes", [
    ([5.0] * 15 + [6.0], "zscore", {}, [15]),                         # a constant history: z is infinite
    ([1.0] * 10 + [2.0] * 10, "relative", {}, [10]),                   # from a window whose mean is exactly 1
    ([1.0] * 10 + [1.5] * 10, "relative", {"threshold": 0.5}, [10]),   # a change of exactly the threshold counts
    ([0.0] * 10 + [2.0] * 10, "relative", {}, [11]),                   # a window of zeros has no relative change
])
def test_divisions_by_no_spread_or_zero_give_no_numpy_warning(series, method, options, changes):
    """Ansible shows a module's warnings to the user: the maths handles these cases itself."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [c.index for c in methods.find_change_points(series, method, **options)] == changes
        rg._z_scores(np.array([0.0, 1.0]), 0.0, 0.0)


def _edivisive_reference(x, window, max_pvalue, min_magnitude, min_size, newest_max_pvalue):
    """docs/regression.md, step by step: split at argmax Q (sides of min_size points, one point
    alone at the end), the newest point alone against the segment before it, then the merge."""
    total = len(x)

    def test(a, tau, b):
        before = x[max(a, tau - (3 * window if b - tau == 1 else window)):tau]
        after = x[tau:min(b, tau + window)]
        return tau, float(np.mean(before)), float(np.mean(after)), rg.student_t(before, after)[1]

    def limit(change):
        return newest_max_pvalue if change[0] == total - 1 else max_pvalue

    def magnitude(change):
        return abs(change[2] - change[1]) / abs(change[1])

    def accepted(change, scale=1):
        return change[3] <= min(limit(change) * scale, 0.05) and magnitude(change) >= min_magnitude

    found = []

    def split(a, b):
        taus = range(a + min_size, b - (1 if b == total else min_size) + 1)
        if taus:
            tau = max(taus, key=lambda t: _q_direct(x, a, t, b))
            if accepted(test(a, tau, b), scale=10):
                found.append(tau)
                split(a, tau)
                split(tau, b)

    split(0, total)
    found.sort()
    last = found[-1] if found else 0
    if total - 1 not in found and total - 1 - last >= min_size and accepted(test(last, total - 1, total), scale=10):
        found.append(total - 1)
    while found:
        bounds = [0] + found + [total]
        changes = [test(bounds[i], bounds[i + 1], bounds[i + 2]) for i in range(len(found))]
        if all(accepted(c) for c in changes):
            return changes
        weakest = max(changes, key=lambda c: (c[3] / limit(c), -magnitude(c)))
        if accepted(weakest):
            weakest = min(changes, key=magnitude)
        found.remove(weakest[0])
    return []


@pytest.mark.parametrize("seed", range(40))
def test_edivisive_is_its_definition(seed):
    x = _reference_series(seed)
    for options in (methods.resolve_options("edivisive", {}),
                    {"window": 5, "max_pvalue": 1e-3, "newest_max_pvalue": 1e-2, "min_magnitude": 0.01, "min_size": 2},
                    {"window": 3, "max_pvalue": 1e-2, "newest_max_pvalue": 1e-3, "min_magnitude": 0.0, "min_size": 1}):
        found = [(c.index, c.mean_before, c.mean_after, c.pvalue) for c in rg.edivisive(x, **options)]
        expected = _edivisive_reference(x, **options)
        assert [f[0] for f in found] == [e[0] for e in expected], options
        for got, want in zip(found, expected):
            assert got[1:] == pytest.approx(want[1:], rel=1e-6, abs=1e-12), options


def test_a_constant_stretch_is_no_change_even_without_a_minimum_magnitude():
    # the means of a constant stretch from prefix sums differ in their last digit: that is no change
    # (it once read as p = 0 and a change of -0.0 % wherever the stretch was split)
    value = 101.776491303817
    assert methods.find_change_points([value] * 30, "edivisive", min_magnitude=0.0) == []
    found = methods.find_change_points([value] * 20 + [110.0] * 10, "edivisive", min_magnitude=0.0)
    assert [c.index for c in found] == [20] and found[0].pvalue == 0.0
    assert rg.pooled_t(3, value, 0.0, 7, value * (1 + 2e-16), 0.0) == (0.0, 1.0)
    # two stretches of zeros: no spread, the same mean
    assert rg.pooled_t(5, 0.0, 0.0, 5, 0.0, 0.0) == (0.0, 1.0)


def test_moments_give_count_mean_and_squared_deviations_of_any_slice():
    moments = rg.Moments(np.array([1.0, 2.0, 3.0, 4.0, 10.0]))
    assert moments.stats(0, 4) == (4, 2.5, 5.0)        # 2.25 + 0.25 + 0.25 + 2.25
    assert moments.stats(1, 3) == (2, 2.5, 0.5)
    assert moments.stats(4, 5) == (1, 10.0, 0.0)


def test_student_t_takes_any_numbers():
    # Decimal (as some stores return numbers), int and float are all numbers to the test
    from decimal import Decimal

    left, right = [10.0, 11.0, 12.0, 11.0], [14.0, 15.0, 13.0]
    expected = stats.ttest_ind(right, left, equal_var=True)
    for a, b in (([Decimal(str(v)) for v in left], right), (left, [Decimal(str(v)) for v in right]), ([10, 11, 12, 11], [14, 15, 13])):
        t, p = rg.student_t(a, b)
        assert t == pytest.approx(expected.statistic) and p == pytest.approx(expected.pvalue)


def test_shapes_are_shared_up_to_the_cached_length_and_built_per_call_beyond():
    built = []

    def build(length, *args):
        built.append((length,) + args)
        return object()

    shared = rg._shared_up_to_cached_length(maxsize=2)(build)
    assert shared(10, 1) is shared(10, 1) and built == [(10, 1)]
    assert shared(rg.CACHED_LENGTH + 1, 1) is not shared(rg.CACHED_LENGTH + 1, 1)
    assert built == [(10, 1), (rg.CACHED_LENGTH + 1, 1), (rg.CACHED_LENGTH + 1, 1)]
    # at most maxsize shapes are kept: the least recently used one is built again
    shared(20, 1)
    shared(30, 1)
    shared(10, 1)
    assert built[-3:] == [(20, 1), (30, 1), (10, 1)]


def test_a_segment_with_room_for_one_split_only_has_that_split():
    x = np.array([1.0, 2.0, 1.5, 5.0, 6.0, 5.5])
    tau, q = rg._best_split(rg._Distances(x), 0, 6, 3, 3)
    assert tau == 3 and q == pytest.approx(_q_direct(x, 0, 3, 6))


def test_the_newest_point_threshold_defaults_to_max_pvalue():
    history = noisy(30, seed=4)
    values = np.append(history, 95.0)
    # the prediction test of 95 against the 30 points before it: p between 1e-4 and 1e-3
    t = (95.0 - history.mean()) / (history.std(ddof=1) * np.sqrt(1 + 1 / 30))
    assert 1e-4 < 2 * stats.t.sf(abs(t), 29) < 1e-3
    options = {"window": 10, "max_pvalue": 1e-3, "min_magnitude": 0.02, "min_size": 3}
    assert [c.index for c in rg.edivisive(values, **options)] == [30]
    assert rg.edivisive(values, **{**options, "max_pvalue": 1e-4}) == []
    assert [c.index for c in rg.edivisive(values, **{**options, "max_pvalue": 1e-4, "newest_max_pvalue": 1e-3})] == [30]


def test_a_change_right_after_the_first_points_is_measured_from_the_series_start():
    values = np.concatenate([[98.0, 101.0, 101.0], noisy(20, level=120, seed=1)])
    changes = methods.find_change_points(values, "edivisive")
    assert [c.index for c in changes] == [3]
    assert changes[0].mean_before == pytest.approx(100.0) and changes[0].mean_after == pytest.approx(values[3:13].mean())


def test_a_newest_value_less_than_min_size_after_a_change_belongs_to_that_change():
    # sides have at least min_size points: [80, 80, 50] is one segment, not 80 -> 50 on two points
    values = list(noisy(20, seed=2)) + [80.0, 80.0, 50.0]
    changes = methods.find_change_points(values, "edivisive")
    assert [c.index for c in changes] == [20] and changes[0].mean_after == pytest.approx(70.0)


@pytest.mark.parametrize("length", [8, 15])
def test_a_change_inside_is_found_when_the_first_split_is_a_large_newest_change(length):
    values = list(noisy(length, seed=4)) + list(noisy(length, level=110, seed=5)) + [20.0]
    assert rg._best_split(rg._Distances(np.array(values)), 0, len(values), 3, 1)[0] == 2 * length
    assert [c.index for c in methods.find_change_points(values, "edivisive")] == [length, 2 * length]


@pytest.mark.parametrize("threshold,values,expected", [
    # history 98, 100, 102: mean 100, standard deviation 2
    (3.0, [106.0], [3]),                    # z = 3 exactly: |z| >= threshold
    (3.0, [105.9], []),
    (1.5, [103.0, 101.5], [3]),             # the next point at z = 0.75, half the threshold exactly, confirms
    (1.5, [103.0, 101.4], []),              # 0.7: not enough, a spike
    (1.0, [103.0, 101.2], [3]),             # z = 1.5 then 0.6 (>= 0.5) the same way
    (1.0, [103.0, 99.0], []),               # the other way
])
def test_zscore_thresholds_are_inclusive(threshold, values, expected):
    series = np.array([98.0, 100.0, 102.0] + values)
    found = rg.zscore(series, threshold=threshold, min_history=3, min_magnitude=0.0, confirm=1)
    assert [c.index for c in found] == expected
    if found:
        assert found[0].mean_before == 100.0 and found[0].statistic == pytest.approx((values[0] - 100) / 2)


def test_zscore_min_magnitude_is_inclusive():
    series = np.array([98.0, 100.0, 102.0, 106.0])
    assert [c.index for c in rg.zscore(series, threshold=3.0, min_history=3, min_magnitude=0.06, confirm=0)] == [3]
    assert rg.zscore(series, threshold=3.0, min_history=3, min_magnitude=0.061, confirm=0) == []


def test_zscore_with_one_point_of_history():
    # the first point has no history; each next one is judged against the points since the last change
    found = rg.zscore(np.array([100.0, 100.0, 100.0, 120.0, 140.0]), threshold=3.0, min_history=1, min_magnitude=0.0, confirm=0)
    assert [(c.index, c.mean_before, c.mean_after) for c in found] == [(3, 100.0, 120.0), (4, 120.0, 140.0)]
    assert [c.pvalue for c in found] == [0.0, 0.0] and found[0].statistic == np.inf


SHORT_OPTIONS = {"edivisive": {}, "zscore": {"min_history": 2}, "relative": {"window": 3, "min_previous": 2}}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("values", [[0.0] * 10, [0.0] * 5 + [1.0] * 5, [1.0] * 5 + [0.0] * 5])
def test_zeros_raise_no_numpy_warning(method, values):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        methods.find_change_points(values, method, **SHORT_OPTIONS[method])


def test_the_newest_value_is_tested_against_the_segment_since_the_last_change():
    # 100 then 120 from index 30 (a 1.5 % step inside it, too small to count), then a 6 % drop
    values = np.concatenate([noisy(30, seed=0), noisy(12, level=120, cv=0.005, seed=10), noisy(13, level=121.8, cv=0.005, seed=20)])
    values = np.append(values, 112.8)
    # the best split after 30 is the small step, not the newest value: only its own test finds it
    assert rg._best_split(rg._Distances(values), 30, values.size, 3, 1)[0] != values.size - 1
    changes = methods.find_change_points(values, "edivisive")
    assert [c.index for c in changes] == [30, 55]
    # against the 25 points since 30, not the 30 points before it (five of them at 100)
    assert changes[1].mean_before == pytest.approx(values[30:55].mean())


def test_a_change_that_shrinks_below_min_magnitude_between_its_neighbours_is_dropped():
    # 108 (3 % noise), 100 from 20, 101.8 from 50 for four points, 104 from 54 (0.2 % noise): the first
    # pass sees 100 -> 103 at 50 (its right window reaches into 104), the merge 100 -> 101.96, under 2 %
    values = np.concatenate([noisy(20, level=108, cv=0.03, seed=31), noisy(30, cv=0.002, seed=1),
                             noisy(4, level=101.8, cv=0.002, seed=11), noisy(15, level=104, cv=0.002, seed=21)])
    moments = rg.Moments(values)
    between = rg._test(moments, 20, 50, 54, 10)
    assert between.pvalue < 1e-6 and abs(between.relative_change) < 0.02
    # the change at 20 is the weakest by p-value and passes: the magnitude decides
    assert rg._test(moments, 0, 20, 50, 10).pvalue > between.pvalue
    assert [c.index for c in methods.find_change_points(values, "edivisive")] == [20, 54]


def test_the_merge_weighs_each_p_value_against_its_own_threshold():
    # a 4 % step at 30 under 2.5 % noise (p 3e-4: above max_pvalue 1e-4), then a 2.5 % drop of the
    # newest value (p 6e-4: below newest_max_pvalue 1e-3): the step goes, the newest value stays
    values = np.concatenate([noisy(30, cv=0.025, seed=1), noisy(30, level=104, cv=0.007, seed=41)])
    values = np.append(values, 104 * 0.975)
    moments = rg.Moments(values)
    assert 1e-4 < rg._test(moments, 0, 30, 60, 10).pvalue < rg._test(moments, 30, 60, 61, 10).pvalue < 1e-3
    changes = methods.find_change_points(values, "edivisive")
    assert [c.index for c in changes] == [60] and changes[0].pvalue < 1e-3
